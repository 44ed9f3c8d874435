"""The tile engine: rewritten queries that read only small, fresh tiles answered in the driver
by DuckDB over each tile's Delta snapshot (read with delta-rs at the version freshness approved),
with Spark's semantics — or not at all, when identity with Spark is not proven (`Refusal`)."""

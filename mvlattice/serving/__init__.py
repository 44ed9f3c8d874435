"""Serving a query: one pipeline for every edge (HTTP, the CLI, the Python API).

The steps, in order (`pipeline.STEPS`): a kept answer still approved → Spark's acceptance of
the text → rewrite onto the views freshness allows → the engine (the tile engine in the driver,
else Spark) → the answer, with the views' hits counted. A query Spark must answer leaves the
pipeline as a `Pending` value (rewritten once) that the edge runs in its own time and place.
"""

"""What a tile table records about itself, as Delta table properties (`mvlattice.*`).

The properties are written in the same commit as the data (CREATE OR REPLACE … TBLPROPERTIES …
AS SELECT), so a reader never sees data with another build's versions.

A source version is the Delta version (int) of a Delta source, a file-listing fingerprint (str)
of a Parquet/CSV source, or None when it cannot be known (then the tile is never fresh). A Delta
source also records its table id (`metaData.id` of its log): a table deleted and recreated
restarts its versions, so only the id tells the new table from the old one. A tile recorded
before ids were kept (no `sourceIds`) has an unknown identity and is never fresh.

Every commit mvlattice makes to a tile carries `commit_tag(record)` as its Delta `userMetadata`:
the whole record, so a commit someone else made to the tile (a DELETE, an INSERT) can be told
from ours, and so a commit that cannot also set table properties (a merge written outside Spark,
by delta-rs: see `local_merge`) still carries its record. The record a table holds is its newest
data commit's tag when that is one of ours, else its properties (then the tile is not ours as it
stands: `identity.tile_change`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from mvlattice.lattice.lattice import Measure, TileSpec

PREFIX = "mvlattice."
FORMAT_VERSION = "1"
Version = int | str | None
TableId = str | None  # a Delta table's `metaData.id`; None for other sources or when unreadable


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every source of a target at one moment: its version and, for Delta tables, its table id
    read at that version. What a build records and what freshness compares. `unreadable`:
    sources whose log exists but could not be read, with why (their version is None)."""

    versions: Mapping[str, Version]
    ids: Mapping[str, TableId]
    unreadable: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TileRecord:
    """The build facts of a tile or materialization table."""

    kind: str  # tile | materialization
    name: str  # qualified table name
    definition: str  # the defining SQL, without version pins
    source_versions: tuple[tuple[str, Version], ...]
    rows: int
    built_at: float  # epoch seconds when the source versions were read
    build_seconds: float = 0.0
    built_from: str = "star"  # star | <ancestor table> | <table itself> (incremental) | query
    refresh_path: str = "full"  # full | rollup | incremental | partitions
    origin: str = "declared"
    lattice: str | None = None
    dimensions: tuple[str, ...] = ()
    measures: tuple[Measure, ...] = ()
    # Delta table id per source; None when the tile was recorded before mvlattice kept ids.
    source_ids: tuple[tuple[str, TableId], ...] | None = None
    extra: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # Stored name -> the output's name as written, for outputs Delta would reject
    # (`mvlattice.sql.stored_names`).
    renamed: tuple[tuple[str, str], ...] = ()

    @property
    def versions(self) -> dict[str, Version]:
        return dict(self.source_versions)

    @property
    def ids(self) -> dict[str, TableId] | None:
        return None if self.source_ids is None else dict(self.source_ids)

    @property
    def snapshot(self) -> Snapshot:
        """The sources as recorded; a record without ids knows none (never fresh)."""
        return Snapshot(self.versions, self.ids or {})

    @property
    def spec(self) -> TileSpec | None:
        if self.kind != "tile" or self.lattice is None:
            return None
        return TileSpec(self.lattice, self.dimensions, self.measures)


def to_properties(record: TileRecord) -> dict[str, str]:
    props = {
        "format": FORMAT_VERSION,
        "kind": record.kind,
        "name": record.name,
        "sql": record.definition,
        "sourceVersions": json.dumps(dict(record.source_versions), sort_keys=True),
        **_ids_property(record),
        "rows": str(record.rows),
        "builtAt": _iso(record.built_at),
        "buildSeconds": f"{record.build_seconds:.3f}",
        "builtFrom": record.built_from,
        "refreshPath": str(record.refresh_path),
        "origin": record.origin,
    }
    if record.lattice is not None:
        props["lattice"] = record.lattice
        props["dimensions"] = json.dumps(list(record.dimensions))
        props["measures"] = json.dumps([_measure_json(m) for m in record.measures])
    if record.renamed:
        props["renamed"] = json.dumps(dict(record.renamed))
    return {PREFIX + k: v for k, v in props.items()}


def from_properties(props: Mapping[str, str]) -> TileRecord | None:
    """The record in a table's properties; None when the table is not an mvlattice table
    or its properties are unreadable (treated as 'not built by us')."""
    p = {k[len(PREFIX) :]: v for k, v in props.items() if k.startswith(PREFIX)}
    if p.get("format") != FORMAT_VERSION or "kind" not in p:
        return None
    try:
        versions = json.loads(p["sourceVersions"])
        record = TileRecord(
            p["kind"],
            p["name"],
            p["sql"],
            tuple(sorted((str(k), _version(v)) for k, v in versions.items())),
            int(p["rows"]),
            _epoch(p["builtAt"]),
            float(p.get("buildSeconds", "0")),
            p.get("builtFrom", "star"),
            p.get("refreshPath", "full"),
            p.get("origin", "declared"),
            p.get("lattice"),
            tuple(json.loads(p.get("dimensions", "[]"))),
            tuple(_measure(m) for m in json.loads(p.get("measures", "[]"))),
            _ids(p.get("sourceIds")),
            renamed=_renamed(p.get("renamed")),
        )
    except (KeyError, ValueError, TypeError):
        return None
    return record


TAG_PREFIX = "mvlattice record "


def commit_tag(record: TileRecord) -> str:
    """The `userMetadata` of the commit that writes `record`: the record itself, so a commit
    without it — or with another build's — is not the one the record describes."""
    return TAG_PREFIX + json.dumps(to_properties(record), sort_keys=True, separators=(",", ":"))


def record_from_tag(tag: str | None) -> TileRecord | None:
    """The record a commit's `userMetadata` carries; None when it carries none (a commit by
    someone else, or by an mvlattice that tagged commits by name only)."""
    if tag is None or not tag.startswith(TAG_PREFIX):
        return None
    try:
        props = json.loads(tag[len(TAG_PREFIX) :])
    except ValueError:
        return None
    if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
        return None
    return from_properties(props)


def legacy_tag(record: TileRecord) -> str:
    """What mvlattice before records in commits tagged a build's commit with."""
    return f"mvlattice build {record.name} at {_iso(record.built_at)}"


def spec_json(spec: TileSpec) -> dict:
    return {
        "lattice": spec.lattice,
        "dimensions": list(spec.dimensions),
        "measures": [_measure_json(m) for m in spec.measures],
    }


def spec_from_json(data: Mapping) -> TileSpec:
    return TileSpec(
        str(data["lattice"]),
        tuple(data["dimensions"]),
        tuple(_measure(m) for m in data["measures"]),
    )


def _measure_json(m: Measure) -> dict:
    out = {"agg": m.agg, "args": list(m.args), "distinct": m.distinct}
    if m.approximate:
        out["approximate"] = True
    return out


def _measure(data: Mapping) -> Measure:
    return Measure(
        str(data["agg"]),
        tuple(data.get("args", ())),
        bool(data.get("distinct")),
        bool(data.get("approximate")),
    )


def _ids_property(record: TileRecord) -> dict[str, str]:
    if record.source_ids is None:
        return {}
    return {"sourceIds": json.dumps(dict(record.source_ids), sort_keys=True)}


def _renamed(text: str | None) -> tuple[tuple[str, str], ...]:
    found = json.loads(text) if text else {}
    if not isinstance(found, dict):
        raise ValueError("renamed is not an object")
    return tuple((str(k), str(v)) for k, v in found.items())


def _ids(text: str | None) -> tuple[tuple[str, TableId], ...] | None:
    if text is None:
        return None  # an older tile: its sources' identities are unknown
    ids = json.loads(text)
    if not isinstance(ids, dict) or not all(v is None or isinstance(v, str) for v in ids.values()):
        raise ValueError(f"bad source ids {text!r}")
    return tuple(sorted((str(k), v) for k, v in ids.items()))


def _version(value: object) -> Version:
    if value is None or isinstance(value, int | str):
        return value  # type: ignore[return-value]
    raise ValueError(f"bad source version {value!r}")


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="milliseconds")


def _epoch(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def iso(epoch: float | None) -> str | None:
    """Epoch seconds as ISO 8601 UTC (None stays None), for reports."""
    return None if epoch is None else _iso(epoch)

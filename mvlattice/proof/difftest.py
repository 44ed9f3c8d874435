"""The differential tester: random queries over a star, each rewritten onto the star's tiles
and materializations, then run on Spark as written and as rewritten; the two results must be
equal as multisets (`compare`). Any difference is a wrong rewrite; any exception from the
rewriter, or rewritten SQL that Spark rejects, is an error.

Every rewritten query is also asked of the workspace with `engine="auto"`; when the tile
engine answers it in the driver, its answer must be Spark's exactly, Python types included
(`typed`): Spark's on the base tables (`LOCAL_VS_BASE`) and Spark's on the same rewritten SQL
(`LOCAL_VS_TILES`). When it does not, its reason is counted.

`prepare` loads a star's data, generates its views (declared tiles and materializations in a
generated model), builds them once with the jobs package; `run` then checks queries in batches
of one Spark job each.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from mvlattice.model.loader import known_columns, load_model
from mvlattice.mvrewrite.closest import closest_miss
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext, RewriteResult, rewrite
from mvlattice.proof import compare, querygen, typed
from mvlattice.proof.compare import Row
from mvlattice.proof.querygen import Generated, ViewSpec
from mvlattice.proof.rejected import NearMiss, near_misses
from mvlattice.proof.shape import Shape
from mvlattice.proof.stars import StarDef, read_shape
from mvlattice.sql.quote import qualified

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LATTICE = "difftest"  # the generated model's lattice: its tiles never meet other tests' tiles
MISMATCH, ERROR = "mismatch", "error"
# The tile engine's answer versus Spark's on the base tables, and on the same rewritten SQL.
LOCAL_VS_BASE, LOCAL_VS_TILES = "local-vs-base", "local-vs-tiles"


@dataclass(kw_only=True, frozen=True, slots=True)
class Prepared:
    star: str
    seed: int
    shape: Shape
    specs: tuple[ViewSpec, ...]
    context: RewriteContext
    spark: Any = field(repr=False)
    problems: tuple[str, ...] = ()  # views that failed to build (left out of the context)
    base_tables: tuple[str, ...] = ()
    workspace: Any = field(default=None, repr=False)  # its tile engine answers (None: never)


@dataclass(kw_only=True, frozen=True, slots=True)
class LocalRun:
    """The tile engine's answer to a query (`Workspace.query`, engine auto)."""

    sql: str  # the rewritten SQL it answered (the workspace's own rewrite)
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    schema: Any = field(repr=False)  # Spark's StructType of `sql`: the types to match


@dataclass(frozen=True, slots=True)
class Pending:
    """A rewritten query waiting for its batch."""

    seed: int
    original: str
    rewritten: str
    local: LocalRun | None = None
    constructs: tuple[str, ...] = ()
    approx: tuple[int, ...] = ()  # output positions holding approximate counts

    def queries(self) -> list[str]:
        """What Spark runs: the original, the rewrite, and the tile engine's SQL if another."""
        extra = [self.local.sql] if self.local and self.local.sql != self.rewritten else []
        return [self.original, self.rewritten, *extra]


@dataclass(frozen=True, slots=True)
class Finding:
    star: str
    seed: int  # the query's seed: `query(shape, specs, seed)` gives it again
    kind: str  # MISMATCH or ERROR
    original: str
    rewritten: str
    detail: str
    constructs: tuple[str, ...] = ()  # what the query exercises (querygen.constructs)

    def __str__(self) -> str:
        tags = ",".join(self.constructs)
        return (
            f"{self.kind.upper()} star={self.star} query-seed={self.seed} [{tags}]: "
            f"{self.detail}\n"
            f"  original:  {self.original}\n  rewritten: {' '.join(self.rewritten.split())}"
        )


@dataclass(frozen=True, slots=True)
class Record:
    """One query's fate, for the per-construct counts."""

    constructs: tuple[str, ...]
    rewritten: bool
    local: bool  # the tile engine answered it
    reason: str = ""  # not rewritten: the closest miss's reason code (`closest_reason`)


@dataclass(frozen=True, slots=True)
class Report:
    queries: int = 0
    rewritten: int = 0
    findings: tuple[Finding, ...] = ()
    seconds: float = 0.0
    local: int = 0  # rewritten queries the tile engine answered
    refusals: tuple[str, ...] = ()  # why it did not answer each of the others (normalized)
    records: tuple[Record, ...] = ()

    @property
    def mismatches(self) -> int:
        return sum(f.kind == MISMATCH for f in self.findings)

    @property
    def local_mismatches(self) -> dict[str, int]:
        return {kind: sum(f.kind == kind for f in self.findings) for kind in LOCAL_KINDS}

    @property
    def errors(self) -> int:
        return sum(f.kind == ERROR for f in self.findings)

    def __add__(self, other: Report) -> Report:
        return Report(
            self.queries + other.queries,
            self.rewritten + other.rewritten,
            self.findings + other.findings,
            self.seconds + other.seconds,
            self.local + other.local,
            self.refusals + other.refusals,
            self.records + other.records,
        )

    def by_construct(self) -> dict[str, dict[str, Any]]:
        """Per construct: queries, rewritten (and share), answered locally, mismatches (Spark
        base vs Spark rewritten), local mismatches, errors, and why the others were not
        rewritten (reason code -> queries)."""
        out: dict[str, dict[str, Any]] = {}
        for record in self.records:
            for tag in record.constructs:
                row = out.setdefault(tag, _construct_row())
                row["queries"] += 1
                row["rewritten"] += record.rewritten
                row["local"] += record.local
                if not record.rewritten:
                    row["not_rewritten"][record.reason or "(none)"] += 1
        for finding in self.findings:
            for tag in finding.constructs:
                row = out.setdefault(tag, _construct_row())
                key = finding.kind if finding.kind in (MISMATCH, ERROR) else "local_mismatch"
                row[{MISMATCH: "mismatches", ERROR: "errors"}.get(key, "local_mismatches")] += 1
        for row in out.values():
            row["share"] = round(row["rewritten"] / row["queries"], 3) if row["queries"] else 0.0
            row["not_rewritten"] = dict(row["not_rewritten"].most_common())
        return dict(sorted(out.items()))

    def refusal_histogram(self) -> dict[str, int]:
        return dict(Counter(self.refusals).most_common())

    def summary(self) -> dict[str, Any]:
        local = self.local_mismatches
        return {
            "queries": self.queries,
            "rewritten": self.rewritten,
            "mismatches": self.mismatches,
            "errors": self.errors,
            "local": self.local,
            "local_vs_base_mismatches": local[LOCAL_VS_BASE],
            "local_vs_tiles_mismatches": local[LOCAL_VS_TILES],
            "refusals": self.refusal_histogram(),
            "constructs": self.by_construct(),
        }


def _construct_row() -> dict[str, Any]:
    return {
        "queries": 0,
        "rewritten": 0,
        "local": 0,
        "mismatches": 0,
        "local_mismatches": 0,
        "errors": 0,
        "not_rewritten": Counter(),
    }


def closest_reason(result: RewriteResult) -> str:
    """Why a query was not rewritten: the block's own reason (NOT_REWRITABLE) if any, else the
    reason of the view that got furthest in matching."""
    closest = closest_miss(result)
    return str(closest.reason) if closest is not None else ""


LOCAL_KINDS = (LOCAL_VS_BASE, LOCAL_VS_TILES)


# -- preparing a star -------------------------------------------------------------------------
def prepare(
    spark: SparkSession,
    star: StarDef,
    warehouse: str,
    folder: Path,
    seed: int = 0,
    tiles: int = 6,
    mvs: int = 6,
    say: Callable[[str], None] = lambda _line: None,
) -> Prepared:
    """Load the data, generate views from `seed`, build them, prepare rewriting."""
    from mvlattice.jobs.catalog import register_tiles
    from mvlattice.workspace import Workspace

    star.load(spark, warehouse)
    doc = star.document()
    _lattice_element(doc, star)["name"] = LATTICE
    base = folder / f"{star.name}_base.yaml"
    base.write_text(yaml.safe_dump(doc, sort_keys=False))
    model = load_model(base, warehouse)
    shape = read_shape(spark, star, model, model.lattice(LATTICE))
    specs = querygen.views(shape, random.Random(f"{star.name}-{seed}"), tiles, mvs)
    path = folder / f"{star.name}.yaml"
    path.write_text(yaml.safe_dump(_with_views(doc, star, shape, specs), sort_keys=False))
    refused: tuple[str, ...] = ()
    try:
        load_model(path, warehouse)
    except Exception as exc:  # noqa: BLE001 - a model that cannot read materializations
        # A materialization reading another one (issue 20, class 5) is the only generated
        # view a model may refuse: leave those out, say so, and test the rest.
        if not any(s.style == "nested" for s in specs):
            raise
        specs = tuple(s for s in specs if s.style != "nested")
        refused = (f"nested materializations left out: {_line(exc)}",)
        path.write_text(yaml.safe_dump(_with_views(doc, star, shape, specs), sort_keys=False))
    workspace = Workspace(path, warehouse=warehouse)
    say(f"{star.name}: building {tiles} tiles and {mvs} materializations")
    batch = workspace.materialize()
    failed = {r.target: r.error or r.reason for r in batch.results if r.status == "failed"}
    register_tiles(workspace.spark, workspace.model, warehouse)
    model = workspace.model
    lattice_tiles = [t for t in model.lattice(LATTICE).tiles if not _failed(t, failed)]
    items = [m for m in model.materializations if not _failed(m, failed)]
    context = context_for(model, tiles=lattice_tiles, materializations=items)
    _cache(workspace.spark, model, context)
    problems = refused + tuple(f"{name}: {error}" for name, error in failed.items())
    tables = tuple(t.qualified_name for t in model.tables)
    return Prepared(
        star=star.name,
        seed=seed,
        shape=shape,
        specs=specs,
        context=context,
        spark=workspace.spark,
        problems=problems,
        base_tables=tables,
        workspace=workspace,
    )


def _cache(spark: SparkSession, model: Any, context: RewriteContext) -> None:
    """Every table a query or its rewrite reads, in memory: each is read thousands of times."""
    names = [t.qualified_name for t in model.tables] + [v.table for v in context.views]
    for name in names:
        spark.catalog.cacheTable(_quoted(name))


def release(prepared: Prepared) -> None:
    """Drop the cached copies `prepare` made (another test may change a table after us)."""
    for view in prepared.context.views:
        prepared.spark.catalog.uncacheTable(_quoted(view.table))
    for name in prepared.base_tables:
        prepared.spark.catalog.uncacheTable(_quoted(name))


def _quoted(name: str) -> str:
    return qualified(*name.split("."))


def _lattice_element(doc: dict[str, Any], star: StarDef) -> dict[str, Any]:
    for schema in doc["schemas"]:
        for element in schema.get("lattices") or ():
            if element["name"] in (star.lattice, LATTICE):
                return element
    raise KeyError(star.lattice)


def _with_views(
    doc: dict[str, Any], star: StarDef, shape: Shape, specs: tuple[ViewSpec, ...]
) -> dict[str, Any]:
    lattice = _lattice_element(doc, star)
    lattice["algorithm"] = False  # only the generated tiles: planning needs statistics
    lattice["tiles"] = [querygen.tile_element(v) for v in specs if v.kind == "tile"]
    schema = next(s for s in doc["schemas"] if s["name"] == star.schema)
    schema["materializations"] = [
        {"view": name, "table": name, "sql": sql}
        for name, sql in mv_definitions(shape, specs, star.schema).items()
    ]
    return doc


def mv_definitions(shape: Shape, specs: tuple[ViewSpec, ...], schema: str = "") -> dict[str, str]:
    """Materialization name -> SQL; the name carries a hash of the SQL, so a warehouse that
    keeps a materialization of another seed never offers it under this one's name. A nested
    materialization reads its inner one's table in `schema`."""
    out: dict[str, str] = {}
    names: dict[str, str] = {}  # spec name -> materialization name
    by_name = {spec.name: spec for spec in specs if spec.kind == "mv"}
    for spec in by_name.values():
        if spec.style == "nested":
            table = names[spec.reads]
            sql = querygen.nested_sql(
                spec, by_name[spec.reads], f"{schema}.{table}" if schema else table
            )
        else:
            sql = querygen.mv_sql(shape, spec)
        digest = hashlib.sha1(sql.encode()).hexdigest()[:8]
        names[spec.name] = f"{spec.name}_{digest}"
        out[names[spec.name]] = sql
    return out


def _failed(item: Any, failed: dict[str, str]) -> bool:
    from mvlattice.jobs.naming import tile_qualified_name

    names = (
        {tile_qualified_name(item)}
        if hasattr(item, "dimensions")
        else {item.name, f"{item.schema}.{item.table}"}
    )
    return bool(names & set(failed))


# -- running ----------------------------------------------------------------------------------
def run(
    prepared: Prepared,
    seeds: Iterable[int],
    batch: int = 40,
    on_finding: Callable[[Finding], None] = lambda _f: None,
    stop: Callable[[], bool] = lambda: False,
) -> Report:
    """Generate, rewrite and compare one query per seed; rewritten ones run in batches.
    `stop()` true ends the run early, with a report of the queries checked so far."""
    start = time.perf_counter()
    queries, rewritten, local, findings = 0, 0, 0, []
    refusals: list[str] = []
    records: list[Record] = []
    pending: list[Pending] = []

    def flush() -> None:
        with compare.tuned(prepared.spark):
            found = compare_pairs(prepared, pending)
        for finding in found:
            findings.append(finding)
            on_finding(finding)
        pending.clear()

    for seed in seeds:
        if stop():
            break
        queries += 1
        generated: Generated = querygen.generate(prepared.shape, prepared.specs, seed)
        sql, tags = generated.sql, generated.constructs
        try:
            result = rewrite(sql, prepared.context, explain=False)
            if not result.rewritten:  # again with every view's reason, for the report
                reason = closest_reason(rewrite(sql, prepared.context, explain=True))
        except Exception as exc:  # noqa: BLE001 - any crash of the rewriter is a finding
            finding = Finding(prepared.star, seed, ERROR, sql, "", _crash(exc), tags)
            findings.append(finding)
            on_finding(finding)
            records.append(Record(tags, False, False, "(error)"))
            continue
        if not result.rewritten:
            records.append(Record(tags, False, False, reason))
            continue
        rewritten += 1
        answer = ask_tile_engine(prepared, sql)
        if isinstance(answer, Finding):
            answer = Finding(prepared.star, seed, ERROR, sql, result.sql, answer.detail, tags)
            findings.append(answer)
            on_finding(answer)
            answer = None
        elif isinstance(answer, str):
            refusals.append(answer)
            answer = None
        local += answer is not None
        records.append(Record(tags, True, answer is not None))
        pending.append(Pending(seed, sql, result.sql, answer, tags, generated.approx))
        if len(pending) >= batch:
            flush()
    flush()
    seconds = time.perf_counter() - start
    return Report(
        queries, rewritten, tuple(findings), seconds, local, tuple(refusals), tuple(records)
    )


# -- the rejected corpus ----------------------------------------------------------------------
SPARK_ACCEPTS = "(Spark accepts it: not a near miss)"


def run_rejected(
    prepared: Prepared,
    seeds: Iterable[int],
    on_finding: Callable[[Finding], None] = lambda _f: None,
    stop: Callable[[], bool] = lambda: False,
) -> Report:
    """The rejected corpus: each generated query the tiles answer, changed by every quirk of
    `proof.rejected` into near misses Spark rejects; none may be answered. Each near miss Spark
    really rejects counts as a query, tagged with its quirk; the workspace must fail it as
    Spark does (SqlError, on `query` and `rewrite`), else an ERROR finding. Near misses Spark
    accepts are recorded (SPARK_ACCEPTS) and not checked. `rewritten` counts those answered."""
    start = time.perf_counter()
    report = Report()
    columns = {c for t in prepared.workspace.model.tables for c in known_columns(t) or ()}
    for seed in seeds:
        if stop():
            break
        sql = querygen.generate(prepared.shape, prepared.specs, seed).sql
        if not rewrite(sql, prepared.context, explain=False).rewritten:
            continue  # not a template: only what the tiles answer makes a near miss
        for miss in near_misses(sql, columns):
            checked = check_rejected(prepared, seed, miss)
            for finding in checked.findings:
                on_finding(finding)
            report += checked
    return replace(report, seconds=time.perf_counter() - start)


def check_rejected(prepared: Prepared, seed: int, miss: NearMiss) -> Report:
    """One near miss: skipped when Spark accepts it, else it must not be answered."""
    from mvlattice.errors import SqlError

    tags = (miss.quirk,)
    workspace = prepared.workspace
    try:
        workspace.sql(miss.sql)
    except SqlError as exc:
        spark_says = str(exc)
    else:
        return Report(records=(Record(tags, False, False, SPARK_ACCEPTS),))
    outcomes = []
    for ask in (_rejected_query, _rejected_rewrite):
        try:
            outcomes.append(ask(workspace, miss.sql))
        except SqlError as exc:
            outcomes.append("" if str(exc) == spark_says else f"another error: {_line(exc)}")
        except Exception as exc:  # noqa: BLE001 - whatever else it raises is a finding
            outcomes.append(f"raised {_line(exc)}")
    problems = [o for o in outcomes if o]
    answered = any(o.startswith("answered") for o in problems)
    findings = tuple(
        Finding(prepared.star, seed, ERROR, miss.sql, "", f"{p} (Spark: {spark_says})", tags)
        for p in problems
    )
    return Report(1, int(answered), findings, records=(Record(tags, answered, False, "SqlError"),))


def _rejected_query(workspace: Any, sql: str) -> str:  # noqa: ANN401 - a Workspace
    """What `query` did with it; Spark runs nothing here (the runner returns no rows)."""
    answer = workspace.query(sql, runner=lambda _sql, _limit: ([], []),
                             describe=lambda text: workspace.sql(text).schema)  # fmt: skip
    return f"answered by {answer.engine} from {', '.join(answer.rewrite.materializations)}"


def _rejected_rewrite(workspace: Any, sql: str) -> str:  # noqa: ANN401 - a Workspace
    result = workspace.rewrite(sql, explain=False)
    return f"answered: rewritten onto {', '.join(result.materializations)}" if result.rewritten \
        else "answered: returned unrewritten, not refused"  # fmt: skip


def ask_tile_engine(prepared: Prepared, sql: str) -> LocalRun | str | Finding | None:
    """The tile engine's answer to `sql` through the workspace (rewritten there again, with its
    catalog's freshness); else why it did not answer (normalized), or an error Finding. Spark
    answers nothing here: the runner the workspace would hand the query to returns no rows."""
    workspace = prepared.workspace
    if workspace is None:
        return None
    schemas: dict[str, Any] = {}

    def describe(text: str) -> Any:  # noqa: ANN401 - a StructType, pyspark imported lazily
        schemas[text] = workspace.sql(text).schema
        return schemas[text]

    try:
        result = workspace.query(
            sql, engine="auto", runner=lambda _sql, _limit: ([], []), describe=describe
        )
    except Exception as exc:  # noqa: BLE001 - whatever it raises is a finding
        return Finding(prepared.star, 0, ERROR, sql, "", f"tile engine: {_line(exc)}")
    if str(result.engine) != "local":
        return refusal_kind(result.engine_reason)
    text = result.rewrite.sql
    schema = schemas.get(text) or workspace.sql(text).schema  # the engine cached its plan
    return LocalRun(sql=text, columns=result.columns, rows=result.rows, schema=schema)


_NAMES = (
    (re.compile(r"^(\w+) \(.*\) (is not proven identical)"), r"\1 \2"),
    (re.compile(r"`?\bmvlattice\b`?\.\S+?(?=[,:)]|\s|$)"), "<tile>"),
    (re.compile(r"\b\w+_[0-9a-f]{8}\b"), "<materialization>"),
    (re.compile(r"\bcolumn \S+:"), "column <c>:"),
    (re.compile(r"\bthe value .*? (is|does)"), r"the value <v> \1"),
)


def refusal_kind(reason: str) -> str:
    """A refusal reason without the names of tiles, columns, values and expressions in it."""
    for pattern, kind in _NAMES:
        reason = pattern.sub(kind, reason)
    return reason or "(no reason given)"


def compare_pairs(
    prepared: Prepared, pending: Sequence[Pending | tuple[int, str, str]]
) -> list[Finding]:
    """Rewritten queries (`Pending`, or (seed, original, rewritten) triples) compared in one
    Spark job: a mismatch or error each, and the tile engine's mismatches."""
    items = [p if isinstance(p, Pending) else Pending(*p) for p in pending]
    if not items:
        return []
    queries = [q for item in items for q in item.queries()]
    try:
        found = compare.ordered(prepared.spark, queries)
    except Exception:  # noqa: BLE001 - one bad query fails the batch: find it alone
        return [f for item in items for f in _compare_alone(prepared, item)]
    out, at = [], 0
    for item in items:
        size = len(item.queries())
        out += _findings(prepared, item, found[at : at + size])
        at += size
    return out


def _compare_alone(prepared: Prepared, item: Pending) -> list[Finding]:
    spark = prepared.spark
    for i, label in enumerate(("original", "rewritten", "tile engine's SQL")):
        if i >= len(item.queries()):
            break
        try:
            found = compare.ordered(spark, item.queries()[: i + 1])
        except Exception as exc:  # noqa: BLE001 - the generator / the rewriter wrote bad SQL
            return [_finding(prepared, item, ERROR, f"{label}: {_line(exc)}")]
    return _findings(prepared, item, found)


def _findings(prepared: Prepared, item: Pending, found: list[list[Row]]) -> list[Finding]:
    """`found`: Spark's rows of `item.queries()`, in order."""
    out = []
    if item.approx:
        detail = approximate_difference(found[0], found[1], item.approx)
    else:
        detail = compare.difference(Counter(found[0]), Counter(found[1]))
    if detail:
        out.append(_finding(prepared, item, MISMATCH, detail))
    local = item.local
    if local is None:
        return out
    tiles = typed.spark_values(found[-1], local.schema)
    detail = typed.difference(tiles, local.rows, typed.sort_keys(local.sql, local.columns))
    if detail:
        out.append(_finding(prepared, item, LOCAL_VS_TILES, detail))
    try:
        schema = prepared.spark.sql(item.original).schema
        base = typed.spark_values(found[0], schema)
        keys = typed.sort_keys(item.original, schema.names)
        # An approximate count is another approximation than the base's: the local answer
        # is held to Spark's on the same tile SQL (above), exactly.
        detail = "" if item.approx else typed.difference(base, local.rows, keys)
    except Exception as exc:  # noqa: BLE001 - a finding, not a crash of the tester
        detail = f"cannot compare: {_line(exc)}"
    if detail:
        out.append(_finding(prepared, item, LOCAL_VS_BASE, detail))
    return out


def _finding(prepared: Prepared, item: Pending, kind: str, detail: str) -> Finding:
    rewritten = item.local.sql if kind in LOCAL_KINDS and item.local else item.rewritten
    return Finding(
        prepared.star, item.seed, kind, item.original, rewritten, detail, item.constructs
    )


# approx_count_distinct is answered from HLL sketches, another approximation than Spark's
# HyperLogLog++ on the base rows (the documented contract): equal within this error.
APPROX_REL, APPROX_ABS = 0.1, 2


def approximate_difference(
    base: Sequence[Row], rewritten: Sequence[Row], approx: tuple[int, ...]
) -> str:
    """ "" when the rows are equal as multisets with the approximate columns (`approx`, output
    positions) left out, and each approximate value is within APPROX_REL (or APPROX_ABS) of
    its pair's (rows paired by their other values, approximate values sorted)."""

    def exact(row: Row) -> Row:
        return tuple(v for i, v in enumerate(row) if i not in approx)

    detail = compare.difference(Counter(map(exact, base)), Counter(map(exact, rewritten)))
    if detail:
        return detail
    groups: dict[Row, list[list[Row]]] = {}
    for side, rows in enumerate((base, rewritten)):
        for row in rows:
            key = tuple(compare._key(exact(row)))  # noqa: SLF001 - equal within tolerance
            groups.setdefault(key, [[], []])[side].append(row)
    for left, right in groups.values():
        for i in approx:
            pairs = zip(_counts(left, i), _counts(right, i), strict=True)
            for a, b in pairs:
                if not _near_count(a, b):
                    return f"approximate count {a} vs {b}"
    return ""


def _counts(rows: list[Row], i: int) -> list[float | None]:
    values = [None if r[i] is None else float(r[i]) for r in rows]
    return sorted(values, key=lambda v: (v is not None, v or 0.0))


def _near_count(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= max(APPROX_ABS, APPROX_REL * max(a, b))


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def _crash(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return f"rewrite raised {_line(exc)} at {Path(where.filename).name}:{where.lineno}"

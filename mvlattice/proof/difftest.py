"""The differential tester: random queries over a star, each rewritten onto the star's tiles
and materializations, then run on Spark as written and as rewritten; the two results must be
equal as multisets (`compare`). Any difference is a wrong rewrite; any exception from the
rewriter, or rewritten SQL that Spark rejects, is an error.

`prepare` loads a star's data, generates its views (declared tiles and materializations in a
generated model), builds them once with the jobs package; `run` then checks queries in batches
of one Spark job each.
"""

from __future__ import annotations

import hashlib
import random
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from mvlattice.model.loader import load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext, rewrite
from mvlattice.proof import compare, querygen
from mvlattice.proof.querygen import ViewSpec
from mvlattice.proof.shape import Shape
from mvlattice.proof.stars import StarDef, read_shape
from mvlattice.sql.quote import qualified

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LATTICE = "difftest"  # the generated model's lattice: its tiles never meet other tests' tiles
MISMATCH, ERROR = "mismatch", "error"


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


@dataclass(frozen=True, slots=True)
class Finding:
    star: str
    seed: int  # the query's seed: `query(shape, specs, seed)` gives it again
    kind: str  # MISMATCH or ERROR
    original: str
    rewritten: str
    detail: str

    def __str__(self) -> str:
        return (
            f"{self.kind.upper()} star={self.star} query-seed={self.seed}: {self.detail}\n"
            f"  original:  {self.original}\n  rewritten: {' '.join(self.rewritten.split())}"
        )


@dataclass(frozen=True, slots=True)
class Report:
    queries: int = 0
    rewritten: int = 0
    findings: tuple[Finding, ...] = ()
    seconds: float = 0.0

    @property
    def mismatches(self) -> int:
        return sum(f.kind == MISMATCH for f in self.findings)

    @property
    def errors(self) -> int:
        return sum(f.kind == ERROR for f in self.findings)

    def __add__(self, other: Report) -> Report:
        return Report(
            self.queries + other.queries,
            self.rewritten + other.rewritten,
            self.findings + other.findings,
            self.seconds + other.seconds,
        )

    def summary(self) -> dict[str, int]:
        return {
            "queries": self.queries,
            "rewritten": self.rewritten,
            "mismatches": self.mismatches,
            "errors": self.errors,
        }


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
    problems = tuple(f"{name}: {error}" for name, error in failed.items())
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
        for name, sql in mv_definitions(shape, specs).items()
    ]
    return doc


def mv_definitions(shape: Shape, specs: tuple[ViewSpec, ...]) -> dict[str, str]:
    """Materialization name -> SQL; the name carries a hash of the SQL, so a warehouse that
    keeps a materialization of another seed never offers it under this one's name."""
    out = {}
    for spec in specs:
        if spec.kind == "mv":
            sql = querygen.select_sql(shape, spec.block, alias="c")
            digest = hashlib.sha1(sql.encode()).hexdigest()[:8]
            out[f"{spec.name}_{digest}"] = sql
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
) -> Report:
    """Generate, rewrite and compare one query per seed; rewritten ones run in batches."""
    start = time.perf_counter()
    queries, rewritten, findings = 0, 0, []
    pending: list[tuple[int, str, str]] = []

    def flush() -> None:
        with compare.tuned(prepared.spark):
            found = compare_pairs(prepared, pending)
        for finding in found:
            findings.append(finding)
            on_finding(finding)
        pending.clear()

    for seed in seeds:
        queries += 1
        sql = querygen.query(prepared.shape, prepared.specs, seed)
        try:
            result = rewrite(sql, prepared.context, explain=False)
        except Exception as exc:  # noqa: BLE001 - any crash of the rewriter is a finding
            finding = Finding(prepared.star, seed, ERROR, sql, "", _crash(exc))
            findings.append(finding)
            on_finding(finding)
            continue
        if result.rewritten:
            rewritten += 1
            pending.append((seed, sql, result.sql))
            if len(pending) >= batch:
                flush()
    flush()
    return Report(queries, rewritten, tuple(findings), time.perf_counter() - start)


def compare_pairs(prepared: Prepared, pending: list[tuple[int, str, str]]) -> list[Finding]:
    """(seed, original, rewritten) triples compared in one Spark job; a mismatch or error each."""
    if not pending:
        return []
    try:
        found = compare.results(prepared.spark, [q for _, o, r in pending for q in (o, r)])
    except Exception:  # noqa: BLE001 - one bad query fails the batch: find it alone
        return [f for item in pending for f in _compare_alone(prepared, *item)]
    out = []
    for i, (seed, original, rewritten) in enumerate(pending):
        detail = compare.difference(found[2 * i], found[2 * i + 1])
        if detail:
            out.append(Finding(prepared.star, seed, MISMATCH, original, rewritten, detail))
    return out


def _compare_alone(prepared: Prepared, seed: int, original: str, rewritten: str) -> list[Finding]:
    spark = prepared.spark
    try:
        compare.results(spark, [original])
    except Exception as exc:  # noqa: BLE001 - the generator wrote SQL Spark rejects
        return [Finding(prepared.star, seed, ERROR, original, rewritten, f"original: {_line(exc)}")]
    try:
        a, b = compare.results(spark, [original, rewritten])
    except Exception as exc:  # noqa: BLE001 - the rewriter wrote SQL Spark rejects
        return [
            Finding(prepared.star, seed, ERROR, original, rewritten, f"rewritten: {_line(exc)}")
        ]
    detail = compare.difference(a, b)
    return [Finding(prepared.star, seed, MISMATCH, original, rewritten, detail)] if detail else []


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def _crash(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    return f"rewrite raised {_line(exc)} at {Path(where.filename).name}:{where.lineno}"

"""Benchmark the rewriter at scale: 10, 100, 1,000 and 10,000 views, with and without the
filter tree (GL01 §4, `mvlattice.mvrewrite.index.filter_tree`).

The model is a synthetic retail schema: five fact tables (store_sales, store_returns,
inventory, shipments, web_sales), each with a lattice over its star of shared dimensions
(date, item -> item_class, store, customer, promotion, warehouse, carrier). The views are
tiles of those lattices (1-5 dimensions, 1-3 measures) and, one in five, random SPJG
materializations (a fact with 0-3 dimensions, 0-2 filters, grouped or not). 10,000 views are
generated once (seeded); each smaller size is a prefix of them. The 200 queries are a seeded
mix: 30% group-bys a tile may answer (some with a filter), 10% coarser variants of
materializations, 60% that (almost) no view answers (a fact column no view reads, grouped by,
counted or filtered on; a measure no tile stores; a dimension table alone).

Every query is rewritten with the index and without it (a linear scan with the cheap
prefilter), interleaved and in alternating order so caches favour neither. Latency is
`rewrite()`'s wall time, reported excluding and including the time spent inside sqlglot
parsing and qualification (measured by timing wrappers around the rewriter's
`parse_query` / `qualify_query`). "matched" counts full matching attempts (`match` calls) per
query. Decisions (rewritten SQL and views used) must be the same in both modes. Without the
index, 10,000 views take ~1 s per query, so that case runs every --scan-step'th query only
(say so in the output); --full runs them all.

    python bench/rewrite_scale.py [--json] [--seed N] [--sizes 10,100,1000,10000]
                                  [--scan-step 5] [--full]

Goals (issue 10): with 10,000 views, p50 rewrite excluding parsing < 5 ms and >= 20x faster
than without the index; cost growing sublinearly from 100 to 10,000 views.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from mvlattice.lattice.lattice import Lattice, Measure, TileSpec
from mvlattice.model.loader import Materialization, Model, load_model
from mvlattice.mvrewrite import rewriter
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.index.filter_tree import index_for
from mvlattice.mvrewrite.rewriter import RewriteContext, rewrite

SCHEMA = "shop"
SIZES = (10, 100, 1_000, 10_000)
QUERIES = 200
MV_SHARE = 0.2

# -- the schema -----------------------------------------------------------------------------
DIMENSIONS: dict[str, tuple[str, tuple[str, ...]]] = {  # table -> (key, attributes)
    "date_dim": ("d_date_id", ("d_year", "d_quarter", "d_month", "d_dow", "d_holiday")),
    "item": ("i_item_id", ("i_brand", "i_color", "i_size", "i_class_id")),
    "item_class": ("ic_id", ("ic_class", "ic_category", "ic_department")),
    "store": ("st_id", ("st_state", "st_city", "st_size")),
    "customer": ("c_id", ("c_state", "c_gender", "c_birth_year", "c_segment")),
    "promotion": ("p_id", ("p_channel", "p_kind")),
    "warehouse": ("w_id", ("w_state", "w_region")),
    "carrier": ("ca_id", ("ca_name", "ca_mode")),
}
ALIASES = {
    "date_dim": "d",
    "item": "i",
    "item_class": "ic",
    "store": "st",
    "customer": "c",
    "promotion": "p",
    "warehouse": "w",
    "carrier": "ca",
}


@dataclass(frozen=True)
class Fact:
    table: str
    alias: str
    dims: tuple[str, ...]  # dimension tables it references (item brings item_class)
    measures: tuple[str, ...]
    other: tuple[str, ...]  # fact columns that are neither keys nor measures

    def fk(self, dim: str) -> str:
        return f"{self.alias}_{ALIASES[dim]}_id"

    @property
    def memo(self) -> str:
        """A column no view reads: queries on it are never answered."""
        return f"{self.alias}_memo"


FACTS = (
    Fact(
        "store_sales",
        "ss",
        ("date_dim", "item", "store", "customer", "promotion"),
        ("ss_quantity", "ss_amount", "ss_cost"),
        ("ss_ticket", "ss_discount"),
    ),
    Fact(
        "store_returns",
        "sr",
        ("date_dim", "item", "store", "customer"),
        ("sr_quantity", "sr_amount", "sr_fee"),
        ("sr_reason",),
    ),
    Fact(
        "inventory",
        "inv",
        ("date_dim", "item", "warehouse"),
        ("inv_on_hand", "inv_on_order"),
        ("inv_batch",),
    ),
    Fact(
        "shipments",
        "sh",
        ("date_dim", "item", "warehouse", "customer", "carrier"),
        ("sh_weight", "sh_cost", "sh_quantity"),
        ("sh_tracking",),
    ),
    Fact(
        "web_sales",
        "ws",
        ("date_dim", "item", "customer", "promotion"),
        ("ws_quantity", "ws_amount", "ws_shipping"),
        ("ws_order", "ws_discount"),
    ),
)


def star_tables(fact: Fact) -> tuple[str, ...]:
    return fact.dims + (("item_class",) if "item" in fact.dims else ())


def attributes(fact: Fact) -> tuple[str, ...]:
    """Dimension columns of the fact's lattice (the labels tiles group by)."""
    return tuple(a for d in star_tables(fact) for a in DIMENSIONS[d][1] if not a.endswith("_id"))


def join_sql(fact: Fact, dim: str) -> str:
    if dim == "item_class":
        return "JOIN shop.item_class ic ON i.i_class_id = ic.ic_id"
    key, alias = DIMENSIONS[dim][0], ALIASES[dim]
    return f"JOIN shop.{dim} {alias} ON {fact.alias}.{fact.fk(dim)} = {alias}.{key}"


def from_sql(fact: Fact, dims: tuple[str, ...]) -> str:
    if "item_class" in dims and "item" not in dims:
        dims = ("item", *dims)
    ordered = [d for d in star_tables(fact) if d in dims]
    return " ".join([f"FROM shop.{fact.table} {fact.alias}"] + [join_sql(fact, d) for d in ordered])


def model_document() -> dict[str, Any]:
    tables = []
    for dim, (key, attrs) in DIMENSIONS.items():
        table: dict[str, Any] = {"name": dim, "columns": [key, *attrs], "primaryKey": [key]}
        if dim == "item":
            table["notNull"] = ["i_class_id"]
            table["foreignKeys"] = [
                {
                    "columns": ["i_class_id"],
                    "references": "item_class",
                    "referencedColumns": ["ic_id"],
                }
            ]
        tables.append(table)
    for fact in FACTS:
        keys = [fact.fk(d) for d in fact.dims]
        tables.append(
            {
                "name": fact.table,
                "columns": keys + list(fact.measures) + list(fact.other) + [fact.memo],
                "notNull": keys,
                "foreignKeys": [
                    {"columns": [fact.fk(d)], "references": d, "referencedColumns": [k]}
                    for d in fact.dims
                    for k in [DIMENSIONS[d][0]]
                ],
            }
        )
    lattices = [{"name": f.table, "sql": "SELECT 1 " + from_sql(f, star_tables(f))} for f in FACTS]
    schema = {"name": SCHEMA, "type": "delta", "location": SCHEMA, "tables": tables}
    return {"version": "1.0", "defaultSchema": SCHEMA, "schemas": [schema], "lattices": lattices}


def column_types() -> dict[tuple[str, str], str]:
    """Measure columns are DECIMAL(12,2): an AVG rebuilt from SUM / COUNT needs the type."""
    return {(f"{SCHEMA}.{f.table}", m): "decimal(12,2)" for f in FACTS for m in f.measures}


def build_model(folder: Path) -> Model:
    path = folder / "shop.yaml"
    path.write_text(yaml.safe_dump(model_document(), sort_keys=False))
    return load_model(path, warehouse=str(folder / "warehouse"))


# -- views ----------------------------------------------------------------------------------
def lattice_measures(fact: Fact) -> tuple[Measure, ...]:
    out = [Measure("count")]
    for m in fact.measures:
        out += [Measure("sum", (m,)), Measure("max", (m,))]
    out.append(Measure("avg", (fact.measures[0],)))
    return tuple(out)


def random_tile(rng: random.Random, fact: Fact) -> TileSpec:
    dims = tuple(sorted(rng.sample(attributes(fact), rng.randint(1, 5))))
    measures = rng.sample(lattice_measures(fact)[1:], rng.randint(1, 3))
    return TileSpec(fact.table, dims, (Measure("count"), *measures))


def owner_table(column: str) -> str:
    return next(d for d, (_, attrs) in DIMENSIONS.items() if column in attrs)


def qualified(column: str, fact: Fact) -> str:
    if column.startswith(f"{fact.alias}_"):
        return f"{fact.alias}.{column}"
    return f"{ALIASES[owner_table(column)]}.{column}"


FILTERS = {
    "d_year": ("d.d_year = {year}", "d.d_year >= {year}", "d.d_year BETWEEN 2019 AND {year}"),
    "d_quarter": ("d.d_quarter = {quarter}",),
    "ic_category": ("ic.ic_category = 'cat{n}'", "ic.ic_category IN ('cat{n}', 'cat{m}')"),
    "st_state": ("st.st_state = 'S{n}'",),
    "c_segment": ("c.c_segment = 'seg{n}'",),
    "i_brand": ("i.i_brand LIKE 'b{n}%'",),
    "p_channel": ("p.p_channel <> 'tv'",),
}


def random_filter(rng: random.Random, fact: Fact, allowed: tuple[str, ...]) -> tuple[str, str]:
    """(column, predicate) on one of `allowed` columns (or a fact measure)."""
    choices = [c for c in allowed if c in FILTERS]
    if not choices or rng.random() < 0.15:
        measure = rng.choice(fact.measures)
        return measure, f"{fact.alias}.{measure} > {rng.randint(1, 500)}"
    column = rng.choice(choices)
    template = rng.choice(FILTERS[column])
    values = {
        "year": rng.randint(2019, 2024),
        "quarter": rng.randint(1, 4),
        "n": rng.randint(1, 9),
        "m": rng.randint(10, 19),
    }
    return column, template.format(**values)


@dataclass(frozen=True)
class Spjg:
    """A random select-project-join-group-by block over one star, as SQL."""

    fact: Fact
    dims: tuple[str, ...]
    filters: tuple[str, ...]
    keys: tuple[str, ...]  # grouping columns (plain names); empty and not grouped: rows
    aggregates: tuple[str, ...]
    grouped: bool

    def sql(self) -> str:
        f = self.fact
        items = [qualified(k, f) for k in self.keys] + list(self.aggregates)
        out = [f"{item} AS c{i}" for i, item in enumerate(items)]
        text = f"SELECT {', '.join(out)} {from_sql(f, self.dims)}"
        if self.filters:
            text += " WHERE " + " AND ".join(self.filters)
        if self.grouped and self.keys:
            text += " GROUP BY " + ", ".join(qualified(k, f) for k in self.keys)
        return text


def aggregate_sql(rng: random.Random, fact: Fact) -> str:
    measure = f"{fact.alias}.{rng.choice(fact.measures)}"
    return rng.choice(
        ("COUNT(*)", f"SUM({measure})", f"SUM({measure})", f"MIN({measure})", f"MAX({measure})")
    )


def random_spjg(rng: random.Random, fact: Fact) -> Spjg:
    dims = tuple(rng.sample(star_tables(fact), rng.randint(0, 3)))
    if "item_class" in dims and "item" not in dims:
        dims = (*dims, "item")
    columns = tuple(a for d in dims for a in DIMENSIONS[d][1]) + fact.measures + fact.other
    filters = tuple(random_filter(rng, fact, columns)[1] for _ in range(rng.randint(0, 2)))
    grouped = rng.random() < 0.7
    keys = tuple(rng.sample(columns, min(len(columns), rng.randint(1, 4))))
    aggs = tuple(aggregate_sql(rng, fact) for _ in range(rng.randint(1, 3))) if grouped else ()
    return Spjg(
        fact, dims, tuple(dict.fromkeys(filters)), keys, tuple(dict.fromkeys(aggs)), grouped
    )


def generate_views(rng: random.Random, count: int) -> list[TileSpec | tuple[str, Spjg]]:
    out: dict[Any, None] = {}
    while len(out) < count:
        fact = rng.choice(FACTS)
        if rng.random() < MV_SHARE:
            out.setdefault((f"mv_{len(out):05d}", random_spjg(rng, fact)), None)
        else:
            out.setdefault(random_tile(rng, fact), None)
    return list(out)


def context_of(model: Model, views: list[TileSpec | tuple[str, Spjg]]) -> RewriteContext:
    tiles = [v for v in views if isinstance(v, TileSpec)]
    items = [
        Materialization(name=name, schema="shop_mv", table=name, sql=spjg.sql())
        for v in views
        if not isinstance(v, TileSpec)
        for name, spjg in [v]
    ]
    return context_for(model, tiles=tiles, materializations=items, types=column_types())


def sized(full: RewriteContext, size: int) -> RewriteContext:
    """The first `size` views of `full` (views are compiled once, for the largest size)."""
    return RewriteContext(full.schema, full.default_db, full.views[:size], full.keys)


# -- queries --------------------------------------------------------------------------------
def tile_query(rng: random.Random, fact: Fact, lattice: Lattice) -> str:
    dims = rng.sample(attributes(fact), rng.randint(1, 3))
    tables = tuple(dict.fromkeys(owner_table(d) for d in dims))
    measures = rng.sample(lattice_measures(fact), rng.randint(1, 2))
    aggs = [measure_sql(m, fact) for m in measures]
    where = ""
    if rng.random() < 0.4:
        column, predicate = random_filter(rng, fact, tuple(dims))
        where = f" WHERE {predicate}"
        if column not in dims and column not in fact.measures:
            tables += (owner_table(column),)
    select = ", ".join([qualified(d, fact) for d in dims] + aggs)
    group = ", ".join(qualified(d, fact) for d in dims)
    return f"SELECT {select} {from_sql(fact, tables)}{where} GROUP BY {group}"


def measure_sql(measure: Measure, fact: Fact) -> str:
    if not measure.args:
        return "COUNT(*)"
    return f"{measure.agg.upper()}({fact.alias}.{measure.args[0]})"


def mv_query(rng: random.Random, spjg: Spjg) -> str:
    """A coarser question than a materialization asks: fewer keys, perhaps one more filter."""
    keys = tuple(rng.sample(spjg.keys, rng.randint(1, len(spjg.keys))))
    filters = spjg.filters
    if rng.random() < 0.5:
        key = rng.choice(keys)
        if key in FILTERS:
            filters += (random_filter(rng, spjg.fact, (key,))[1],)
    grouped = spjg.grouped or rng.random() < 0.3
    aggs = spjg.aggregates or (("COUNT(*)",) if grouped else ())
    return Spjg(spjg.fact, spjg.dims, filters, keys, aggs, grouped).sql()


def unanswerable_query(rng: random.Random, fact: Fact) -> str:
    """A query no view answers, mostly through the fact's memo column, which no view reads
    (group by it, count it, filter on it); or a measure no tile stores; or a dimension
    table alone (every view reads a fact table)."""
    kind = rng.randrange(6)
    a = fact.alias
    dim = rng.choice(attributes(fact))
    col = qualified(dim, fact)
    base = from_sql(fact, (owner_table(dim),))
    memo = f"{a}.{fact.memo}"
    if kind == 0:
        return f"SELECT {memo}, {col}, COUNT(*) {base} GROUP BY {memo}, {col}"
    if kind == 1:  # views of rows may answer this one
        return f"SELECT {col}, SUM({a}.{fact.measures[-1]} * 2) {base} GROUP BY {col}"
    if kind == 2:
        return f"SELECT {col}, COUNT(DISTINCT {memo}) {base} GROUP BY {col}"
    if kind == 3:
        table = owner_table(dim)
        alias = ALIASES[table]
        return f"SELECT {alias}.{dim}, COUNT(*) FROM shop.{table} {alias} GROUP BY {alias}.{dim}"
    if kind == 4:
        measure = f"{a}.{rng.choice(fact.measures)}"
        return f"SELECT {col}, {measure} {base} WHERE {memo} > {rng.randint(1, 900)}"
    return f"SELECT {col}, SUM({a}.{fact.measures[0]}) {base} WHERE {memo} * 3 > 7 GROUP BY {col}"


def generate_queries(rng: random.Random, model: Model, views: list[Any]) -> list[str]:
    lattices = {lat.name: lat for lat in model.lattices}
    mvs = [v[1] for v in views[:1000] if not isinstance(v, TileSpec)]
    out = []
    for i in range(QUERIES):
        fact = rng.choice(FACTS)
        slot = i % 20
        if slot < 6:
            out.append(tile_query(rng, fact, lattices[fact.table]))
        elif slot < 8:
            out.append(mv_query(rng, rng.choice(mvs)))
        else:
            out.append(unanswerable_query(rng, fact))
    return out


# -- measuring ------------------------------------------------------------------------------
class Meter:
    """Time spent inside sqlglot parsing/qualification, and `match` calls, during rewrite().
    Wall-clock and CPU time (this process) are both kept: on a loaded machine the first
    includes waiting for a core."""

    def __init__(self) -> None:
        self.parse_wall = self.parse_cpu = 0.0
        self.matches = 0

    def install(self) -> None:
        for name in ("parse_query", "qualify_query"):
            setattr(rewriter, name, self._timed(getattr(rewriter, name)))
        original_match = rewriter.match

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.matches += 1
            return original_match(*args, **kwargs)

        rewriter.match = counted  # type: ignore[assignment]

    def _timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.parse_wall += time.perf_counter() - wall
                self.parse_cpu += time.process_time() - cpu

        return timed

    def run(self, sql: str, context: RewriteContext, use_index: bool) -> dict[str, Any]:
        self.parse_wall = self.parse_cpu = 0.0
        self.matches = 0
        wall, cpu = time.perf_counter(), time.process_time()
        result = rewrite(sql, context, explain=False, use_index=use_index)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return {
            "total_ms": wall * 1000,
            "rewrite_ms": (wall - self.parse_wall) * 1000,
            "cpu_total_ms": cpu * 1000,
            "cpu_rewrite_ms": (cpu - self.parse_cpu) * 1000,
            "matched": self.matches,
            "decision": (result.rewritten, result.sql, result.materializations),
        }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def measure_size(
    meter: Meter, context: RewriteContext, queries: list[str], scan_step: int
) -> dict[str, Any]:
    start = time.perf_counter()
    index_for(context)
    build_ms = (time.perf_counter() - start) * 1000
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    same, sampled = True, []
    for i, sql in enumerate(queries):
        modes = [True] + ([False] if i % scan_step == 0 else [])
        if i % 2:
            modes.reverse()
        found = {mode: meter.run(sql, context, mode) for mode in modes}
        for mode, run in found.items():
            runs[mode].append(run)
        if False in found:
            sampled.append(i)
            same = same and found[True]["decision"] == found[False]["decision"]
    return summarise(runs, sampled, len(context.views), build_ms, same)


def summarise(
    runs: dict[bool, list[dict[str, Any]]],
    sampled: list[int],
    views: int,
    build_ms: float,
    same: bool,
) -> dict[str, Any]:
    index, scan = runs[True], runs[False]
    index_on_sample = [index[i] for i in sampled]

    def stat(rows: list[dict[str, Any]], key: str, q: float) -> float:
        return percentile([r[key] for r in rows], q)

    p50_sample = stat(index_on_sample, "rewrite_ms", 0.5)
    return {
        "views": views,
        "p50_ms_index": stat(index, "rewrite_ms", 0.5),
        "p99_ms_index": stat(index, "rewrite_ms", 0.99),
        "p50_ms_scan": stat(scan, "rewrite_ms", 0.5),
        "p99_ms_scan": stat(scan, "rewrite_ms", 0.99),
        "p50_ms_index_with_parse": stat(index, "total_ms", 0.5),
        "p99_ms_index_with_parse": stat(index, "total_ms", 0.99),
        "p50_ms_scan_with_parse": stat(scan, "total_ms", 0.5),
        "p99_ms_scan_with_parse": stat(scan, "total_ms", 0.99),
        "views_matched_per_query": statistics.fmean(r["matched"] for r in index),
        "views_matched_per_query_scan": statistics.fmean(r["matched"] for r in scan),
        "rewritten": sum(r["decision"][0] for r in index),
        "queries_index": len(index),
        "queries_scan": len(scan),
        "cpu_p50_ms_index": stat(index, "cpu_rewrite_ms", 0.5),
        "cpu_p99_ms_index": stat(index, "cpu_rewrite_ms", 0.99),
        "cpu_p50_ms_scan": stat(scan, "cpu_rewrite_ms", 0.5),
        "cpu_p99_ms_scan": stat(scan, "cpu_rewrite_ms", 0.99),
        "cpu_p50_ms_index_with_parse": stat(index, "cpu_total_ms", 0.5),
        "cpu_p50_ms_scan_with_parse": stat(scan, "cpu_total_ms", 0.5),
        "speedup_p50_same_queries": stat(scan, "rewrite_ms", 0.5) / p50_sample,
        "cpu_speedup_p50_same_queries": stat(scan, "cpu_rewrite_ms", 0.5)
        / stat(index_on_sample, "cpu_rewrite_ms", 0.5),
        "index_build_ms": build_ms,
        "same_decisions": same,
    }


# -- report ---------------------------------------------------------------------------------
def print_table(sizes: list[dict[str, Any]], prepare_s: float) -> None:
    print(
        f"{sizes[-1]['views']:,} views compiled once in {prepare_s:.1f} s (smaller sizes: "
        "prefixes); "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )
    for title, prefix in (("wall-clock", ""), ("CPU time of this process", "cpu_")):
        print(
            f"\n{title}, ms, excluding sqlglot parsing (including it in brackets); "
            "matched = full matching attempts per query"
        )
        head = (
            f"{'views':>6} | {'index p50':>17} {'index p99':>8} {'matched':>7} | "
            f"{'scan p50':>17} {'scan p99':>8} {'matched':>8} {'queries':>7} | "
            f"{'p50 speedup':>11} {'build ms':>8} {'rewritten':>9}"
        )
        print(head)
        print("-" * len(head))
        for s in sizes:
            speedup = s[f"{prefix}speedup_p50_same_queries"]
            print(
                f"{s['views']:>6} | {_pair(s, prefix, 'index')} {s[prefix + 'p99_ms_index']:8.2f} "
                f"{s['views_matched_per_query']:>7.1f} | {_pair(s, prefix, 'scan')} "
                f"{s[prefix + 'p99_ms_scan']:8.2f} {s['views_matched_per_query_scan']:>8.1f} "
                f"{s['queries_scan']:>7} | {speedup:>10.1f}x "
                f"{s['index_build_ms']:>8.0f} {s['rewritten']:>9}"
            )


def _pair(s: dict[str, Any], prefix: str, mode: str) -> str:
    key = f"{prefix}p50_ms_{mode}"
    return f"{s[key]:7.2f} ({s[key + '_with_parse']:7.2f})"


def print_verdict(sizes: list[dict[str, Any]]) -> None:
    by = {s["views"]: s for s in sizes}
    same = all(s["same_decisions"] for s in sizes)
    print(f"\nsame rewrite decisions with and without the index: {same}")
    if 10_000 in by:
        top = by[10_000]
        print(
            f"10,000 views: p50 {top['p50_ms_index']:.2f} ms wall, {top['cpu_p50_ms_index']:.2f} "
            f"ms CPU (goal < 5 ms); {top['speedup_p50_same_queries']:.1f}x wall, "
            f"{top['cpu_speedup_p50_same_queries']:.1f}x CPU the scan's p50 on the same "
            f"{top['queries_scan']} queries (goal >= 20x)"
        )
        if top["queries_scan"] < top["queries_index"]:
            print(
                f"  (without the index, 10,000 views ran {top['queries_scan']} of "
                f"{top['queries_index']} queries: every --scan-step'th)"
            )
    if 100 in by and 10_000 in by:
        wall = by[10_000]["p50_ms_index"] / by[100]["p50_ms_index"]
        cpu = by[10_000]["cpu_p50_ms_index"] / by[100]["cpu_p50_ms_index"]
        print(
            f"index p50 growth from 100 to 10,000 views: {wall:.1f}x wall, {cpu:.1f}x CPU, "
            "for 100x the views"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--scan-step", type=int, default=5)
    parser.add_argument("--full", action="store_true", help="scan every query at every size")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        model = build_model(Path(folder))
        views = generate_views(rng, max(sizes[-1], 1_000))  # the same views whatever --sizes
        start = time.perf_counter()
        full = context_of(model, views[: sizes[-1]])
        prepare_s = time.perf_counter() - start
        queries = generate_queries(random.Random(args.seed + 1), model, views)
    meter = Meter()
    meter.install()
    results = []
    for size in sizes:
        step = 1 if args.full or size < 10_000 else args.scan_step
        results.append(measure_size(meter, sized(full, size), queries, step))
    print_table(results, prepare_s)
    print_verdict(results)
    if args.json:
        keys = ("views", "p50_ms_index", "p99_ms_index", "p50_ms_scan", "p99_ms_scan")
        rows = [
            {**{k: s[k] for k in keys}, "views_matched_per_query": s["views_matched_per_query"]}
            for s in results
        ]
        same = all(s["same_decisions"] for s in results)
        print(json.dumps({"sizes": rows, "same_decisions": same, "detail": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

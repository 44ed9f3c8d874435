"""One function per CLI command: parse nothing, call the API, print the result."""

from __future__ import annotations

import argparse
import sys

from mvlattice.cli import params
from mvlattice.cli.steps import Steps, build_lines, start_spark
from mvlattice.output import dumps, json_document, table
from mvlattice.workspace import Workspace

MONTH_QUERY = (
    "select the_month, count(*) as c from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) where the_year = 1997 "
    "group by the_month, month_of_year order by month_of_year"
)
# The documentation's queries the demo plans tiles for, then runs base vs rewritten.
DEMO_QUERIES = (
    ("sales per month", MONTH_QUERY),
    (
        "sales per quarter",
        "select t.quarter, count(*) as c from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id "
        "where t.the_year = 1997 group by t.quarter order by t.quarter",
    ),
    (
        "families per month",
        "select pc.product_family, t.the_month, count(*) as c "
        "from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id "
        "join foodmart.product p on s.product_id = p.product_id "
        "join foodmart.product_class pc on p.product_class_id = pc.product_class_id "
        "group by pc.product_family, t.the_month",
    ),
)


def setup(args: argparse.Namespace) -> int:
    # Progress on stderr: the quick start runs `mvlattice setup >/dev/null` and still shows it.
    steps = Steps()
    import pyspark

    from mvlattice.datasets.foodmart import ensure_artifact
    from mvlattice.jars import ensure_jars, jar_dir

    with steps.step("Delta's jars") as say:
        jars = ensure_jars(pyspark.__version__, say=say)
    print(f"Delta jars: {len(jars)} in {jar_dir()}")
    if not args.no_data:
        from mvlattice.datasets.foodmart_queries import ensure_queries

        with steps.step("FoodMart data") as say:
            print(f"FoodMart data: {ensure_artifact(say)}")
        with steps.step("FoodMart query set") as say:
            print(f"FoodMart query set: {ensure_queries(say)}")
    steps.done("setup")
    return 0


def datasets(args: argparse.Namespace) -> int:
    from mvlattice.datasets import foodmart

    steps = Steps()
    if args.dataset == "foodmart-queries":
        from mvlattice.datasets.foodmart_queries import ensure_queries

        with steps.step("FoodMart query set") as say:
            print(ensure_queries(say))
        return 0
    with steps.step("starting Spark"):
        spark, warehouse = _session(args)
    where = f"{warehouse}/{foodmart.SCHEMA_NAME}"
    with steps.step(f"loading FoodMart into {where}") as say:
        loaded = foodmart.load(spark, warehouse, force=args.force, progress=say)
    fresh = sum(not t.skipped for t in loaded)
    print(
        f"FoodMart in {where}: {len(loaded)} tables, {sum(t.rows for t in loaded):,} rows "
        f"({fresh} loaded, {len(loaded) - fresh} already there)"
    )
    steps.done("datasets foodmart")
    return 0


def _session(args: argparse.Namespace):  # (SparkSession, warehouse)
    from mvlattice.settings import resolve_warehouse
    from mvlattice.spark import build_session, resolve_master, spark_conf

    warehouse = resolve_warehouse(args.warehouse)
    master = resolve_master(args.master)
    conf = spark_conf(master, warehouse, (dict(args.conf),))
    return build_session(master, warehouse, conf), warehouse


def validate(args: argparse.Namespace) -> int:
    ws = params.workspace(args)
    model = ws.model
    checked, violations, feeds = _check_data(ws) if args.data else ((), (), {})
    renamed = ws.renamed_outputs()
    if args.json:
        print(
            dumps(
                {
                    "model": model.file,
                    "valid": not violations,
                    "tables": [t.qualified_name for t in model.tables],
                    "lattices": [
                        {
                            "name": lat.name,
                            "tables": [n.qualified_table for n in lat.nodes],
                            "columns": len(lat.columns),
                            "tiles": len(lat.tiles),
                        }
                        for lat in model.lattices
                    ],
                    "materializations": [m.name for m in model.materializations],
                    "renamed": [
                        {"materialization": v, "stored": s, "output": n} for v, s, n in renamed
                    ],
                    "constraints_checked": len(checked),
                    "violations": [{"message": v.describe(), "count": v.count} for v in violations],
                    "change_data_feed": feeds,
                }
            )
        )
    else:
        print(
            f"{model.file}: {len(model.tables)} tables, {len(model.lattices)} lattice(s), "
            f"{len(model.materializations)} materialization(s)"
        )
        for lat in model.lattices:
            arms = ", ".join(f"{n.alias}={n.table}" for n in lat.nodes)
            print(
                f"  lattice {lat.name}: {arms}; {len(lat.columns)} columns, "
                f"{len(lat.tiles)} declared tile(s)"
            )
        if args.data:
            print(f"  data: {len(checked)} constraint(s) checked, {len(violations)} violated")
            for v in violations:
                print(f"  VIOLATED: {v.describe()}")
            for line in feed_lines(feeds):
                print(f"  {line}")
    for view, stored, name in renamed:
        print(
            f"mvlattice: warning: materialization {view}: output {name} is stored as "
            f"column {stored} ({_rename_reason(name)})",
            file=sys.stderr,
        )
    if violations:
        print(
            f"mvlattice: error: the data violates {len(violations)} constraint(s)", file=sys.stderr
        )
        return 1
    return 0


def _check_data(ws: Workspace):  # (constraints checked, violations, change data feeds)
    """`validate --data`'s checks, one Spark job each, with a progress line per check."""
    from mvlattice.model.checks import check_data

    steps = Steps()
    start_spark(steps, ws)
    with steps.step("checking the model's constraints on the data") as say:
        checked, violations = check_data(ws.spark, ws.model, progress=say)
    with steps.step("reading the fact tables' change data feed settings"):
        feeds = ws.change_feeds()
    steps.done("validate --data")
    return checked, violations, feeds


def _rename_reason(name: str) -> str:
    from mvlattice.sql.stored_names import valid_name

    if valid_name(name):
        return "an earlier output has that name"
    return "an unnamed expression: Delta rejects its characters"


def sql(args: argparse.Namespace) -> int:
    ws = params.workspace(args)
    columns, rows = ws.collect(ws.sql(args.query), args.limit)
    if args.json:
        print(json_document({"columns": columns, "rows": rows}))
    else:
        print(table(columns, rows))
    return 0


def demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mvlattice.datasets import foodmart
    from mvlattice.model.checks import check_data

    model = Path(__file__).resolve().parents[2] / "models" / "foodmart.yaml"
    steps = Steps()  # each step's progress and wall time on stderr; the story on stdout
    print("1. Loading FoodMart into the warehouse as Delta tables")
    with steps.step("starting Spark"):
        spark, warehouse = _session(args)
    with steps.step("loading FoodMart") as say:
        foodmart.load(spark, warehouse, progress=say)
    print(f"2. Validating {model} and checking its constraints on the data")
    ws = params.workspace(args, model, warehouse=warehouse)
    start_spark(steps, ws)
    with steps.step("checking the model's constraints on the data") as say:
        checked, violations = check_data(ws.spark, ws.model, progress=say)
    for lat in ws.model.lattices:
        print(f"   lattice {lat.name}: {len(lat.nodes)} tables, {len(lat.columns)} columns")
    print(f"   {len(checked)} constraints checked, {len(violations)} violated")
    for v in violations:
        print(f"   VIOLATED: {v.describe()}")
    print("3. The documentation's query: sales per month of 1997")
    print("   " + MONTH_QUERY)
    with steps.step("running the month query"):
        columns, rows = ws.collect(ws.sql(MONTH_QUERY))
    print(table(columns, rows))
    built = _demo_tiles(ws, steps)
    _demo_report(ws, steps)
    steps.done("demo")
    return 1 if violations or not built.ok else 0


def _demo_tiles(ws: Workspace, steps: Steps):  # a jobs BatchResult
    """Plan tiles for the demo's queries (a workload, so HRU96 picks the tiles they need, not
    uniform weights' odd ones) and build them; fresh tiles from an earlier run are skipped."""
    from mvlattice.plan.workload import workload_from_sql

    lattice = ws.model.lattices[0]
    work = workload_from_sql(((sql, 1.0) for _, sql in DEMO_QUERIES), lattice)
    print(f"4. Planning tiles (HRU96) for lattice {lattice.name}, weighted by these queries,")
    print("   and building them as Delta tables (fresh ones are skipped)")
    with steps.step("planning and building tiles") as say:
        built = ws.materialize(lattice.name, workload=work, say=say, progress=build_lines(say))
    for r in built.results:
        rows = f", {r.rows:,} rows" if r.rows is not None else ""
        print(f"   {r.status:<9} {r.target}{rows}" + (f": {r.error}" if r.error else ""))
    return built


def _demo_report(ws: Workspace, steps: Steps) -> None:
    from mvlattice.proof.comparison import compare

    print("5. The queries on the base tables (Spark) and rewritten onto the tiles, run on Spark")
    print("   and by default (the tile engine in the driver when it can answer): asked anew (a")
    print("   new text each run: parsed, rewritten, checked, run) and asked again (the answer")
    print("   kept for the text, served while its tiles are fresh); median of 3 runs after a")
    print("   first one, each end to end: rewrite, freshness, execution")
    rows, notes = [], []
    for name, sql in DEMO_QUERIES:
        with steps.step(f"timing '{name}': base, on Spark, by default"):
            c = compare(ws, name, sql)
        tile = ", ".join(c.tiles) if c.rewritten else "not rewritten"
        same = "yes" if c.same_result else "NO"
        rows.append((name, round(c.base_s, 3), round(c.rewritten_spark_s, 3),
                     round(1000 * c.rewritten_new_text_s, 1), round(1000 * c.rewritten_s, 2),
                     f"{c.speedup_new_text:.1f}x", c.engine, same, tile))  # fmt: skip
        notes.append(f"   {name}: first runs {c.base_cold_s:.3f} s base, "
                     f"{c.rewritten_spark_cold_s:.3f} s on Spark, {c.rewritten_cold_s:.3f} s "
                     f"by default" + (f"; Spark answered: {c.engine_reason}"
                                      if c.engine_reason else ""))  # fmt: skip
    columns = ["query", "base s", "on Spark s", "anew ms", "again ms", "speedup", "engine",
               "same rows", "tile used"]  # fmt: skip
    print(table(columns, rows))
    print("\n".join(notes))


def feed_lines(feeds: dict[str, bool | None]) -> list[str]:
    """What each fact table's change data feed means for refresh, one line each."""
    said = {
        True: "change data feed on: deletes and updates refresh incrementally",
        False: "no change data feed: deletes and updates refresh in full "
        "(ALTER TABLE … SET TBLPROPERTIES (delta.enableChangeDataFeed = true))",
        None: "not a Delta table by location: every change refreshes in full",
    }
    return [f"fact table {name}: {said[on]}" for name, on in feeds.items()]

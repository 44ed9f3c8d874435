"""The partitions path, pure: which partitions commits touched, whether a tile can be refreshed
by them (it groups by every partition column, itself or through the dimension key joined to
it), the SQL that keeps the other rows and recomputes the touched ones, and when the cost model
takes it."""

from __future__ import annotations

import json

from mvlattice.delta.commits import parse_commit
from mvlattice.document import Problems
from mvlattice.jobs.changes import FULL, INCREMENTAL, decide_refresh
from mvlattice.jobs.cost import choose
from mvlattice.jobs.partitions import (
    PartitionScope,
    Touched,
    complete,
    refresh_sql,
    scope,
    touched,
)
from mvlattice.jobs.record import Snapshot
from mvlattice.jobs.status import RefreshPath
from mvlattice.lattice.lattice import Lattice, Measure, TileSpec
from mvlattice.lattice.star import build_star

TABLES = {
    ("b", "sales"): ("day_id", "product_id", "region", "qty"),
    ("b", "day"): ("day_id", "month"),
    ("b", "product"): ("product_id", "brand"),
}
SQL = (
    "select 1 from b.sales as s join b.day as d on s.day_id = d.day_id "
    "join b.product as p on s.product_id = p.product_id"
)
MIN_QTY = Measure("min", ("qty",))


def lattice() -> Lattice:
    problems = Problems("model.yaml")
    star = build_star(SQL, "b", lambda schema, table: TABLES.get((schema, table)), problems, "x")
    assert star is not None, problems.items
    return Lattice("sales", "b", SQL, star.nodes, star.edges, star.columns)


def commit(version: int, *actions: dict) -> object:
    return parse_commit(version, [{"commitInfo": {"operation": "X"}}, *actions])


def add(**values: str | None) -> dict:
    return {"add": {"path": "f.parquet", "partitionValues": values, "dataChange": True}}


def remove(path: str, **values: str | None) -> dict:
    return {"remove": {"path": path, "partitionValues": values, "dataChange": True}}


def test_touched_partitions_are_those_of_every_file_added_or_removed() -> None:
    commits = [
        commit(4, add(day_id="2"), remove("a", day_id="1")),
        commit(5, remove("b", day_id=None), remove("c")),  # Delta leaves NULLs out of removes
        commit(6, add(day_id="2")),
    ]
    change = touched(commits, 3, 6)
    assert change is not None and change.partitions == ((("day_id", "2"),),)
    assert change.removed == (("a", (("day_id", "1"),)), ("b", (("day_id", None),)), ("c", ()))
    before = {"c": (("day_id", None),), "a": (("day_id", "1"),)}
    assert complete(change, ["day_id"], before) == (
        (("day_id", "1"),), (("day_id", "2"),), (("day_id", None),)
    )  # fmt: skip
    assert complete(change, ["day_id"], None) is None  # c's partition cannot be told
    assert complete(change, ["day_id"], {}) == ((("day_id", "1"),), (("day_id", "2"),),
                                                 (("day_id", None),))  # fmt: skip
    assert touched(commits, 2, 6) is None  # version 3 is missing
    schema_change = commit(7, {"metaData": {"id": "x"}}, add(day_id="3"))
    assert touched([*commits, schema_change], 3, 7) is None
    compaction = parse_commit(
        7, [{"add": {"path": "h", "partitionValues": {"day_id": "9"}, "dataChange": False}},
            {"remove": {"path": "i", "partitionValues": {"day_id": "9"}, "dataChange": False}}]
    )  # fmt: skip
    assert touched([*commits, compaction], 3, 7) == change  # no data change


def test_decisions_carry_the_touched_partitions() -> None:
    recorded = Snapshot({"b.sales": 3, "b.day": 0}, {"b.sales": "a", "b.day": "b"})
    current = Snapshot({"b.sales": 5, "b.day": 0}, {"b.sales": "a", "b.day": "b"})
    commits = (commit(4, add(day_id="2")), commit(5, remove("a", day_id="1")))
    decided = decide_refresh(
        recorded=recorded, current=current, fact="b.sales", tile_change=None,
        fact_commits=commits,
    )  # fmt: skip
    assert decided.path == FULL and "does more than append" in decided.reason
    assert decided.partitions == Touched(((("day_id", "2"),),), (("a", (("day_id", "1"),)),))
    assert (decided.from_version, decided.fact_version) == (3, 5)
    blocked = decide_refresh(
        recorded=recorded, current=current, fact="b.sales", tile_change=None,
        fact_commits=commits[:1] + (commit(5, add(day_id="7")),), blocker="COUNT(DISTINCT)",
    )  # fmt: skip
    assert blocked.path == FULL and blocked.partitions is not None
    assert blocked.partitions.partitions == ((("day_id", "2"),), (("day_id", "7"),))
    appended = decide_refresh(
        recorded=recorded, current=current, fact="b.sales", tile_change=None,
        fact_commits=(commit(4, add(day_id="2")), commit(5, add(day_id="3"))),
    )  # fmt: skip
    assert appended.path == INCREMENTAL and appended.partitions is not None
    moved = Snapshot({"b.sales": 3, "b.day": 1}, {"b.sales": "a", "b.day": "b"})
    dims = decide_refresh(
        recorded=recorded, current=moved, fact="b.sales", tile_change=None, fact_commits=()
    )
    assert dims.path == FULL and dims.partitions is None  # a dimension table changed


def test_a_tile_is_scoped_by_the_partition_column_or_the_key_joined_to_it() -> None:
    lat = lattice()
    partitions = [(("day_id", "2"),), (("day_id", None),)]
    by_fact = scope(lat, TileSpec("sales", ("s.day_id", "brand"), (MIN_QTY,)), [("day_id", "INT")],
                    partitions)  # fmt: skip
    assert by_fact == PartitionScope(("day_id",), ("INT",), ("s__day_id",), (("2",), (None,)))
    by_key = scope(lat, TileSpec("sales", ("d.day_id",), (MIN_QTY,)), [("day_id", "INT")],
                   partitions)  # fmt: skip
    assert isinstance(by_key, PartitionScope) and by_key.stored == ("d__day_id",)
    coarse = scope(lat, TileSpec("sales", ("month",), (MIN_QTY,)), [("day_id", "INT")], partitions)
    assert coarse == "the tile does not group by the fact table's partition column day_id"
    spec = TileSpec("sales", ("region",), (MIN_QTY,))
    assert scope(lat, spec, [], partitions) == "the fact table is not partitioned"
    assert scope(lat, spec, [("region", "TIMESTAMP")], [(("region", "x"),)]) == (
        "its partition column region is TIMESTAMP"
    )
    two = scope(lat, TileSpec("sales", ("region", "s.day_id"), (MIN_QTY,)),
                [("region", "STRING"), ("day_id", "INT")],
                [(("day_id", "1"), ("region", "eu"))])  # fmt: skip
    assert isinstance(two, PartitionScope) and two.values == (("eu", "1"),)


def test_the_sql_keeps_other_partitions_and_recomputes_the_touched_ones() -> None:
    lat = lattice()
    spec = TileSpec("sales", ("s.day_id", "brand"), (Measure("count"), MIN_QTY))
    found = scope(lat, spec, [("day_id", "INT")], [(("day_id", "2"),), (("day_id", None),)])
    assert isinstance(found, PartitionScope)
    relations = {"s": "b.sales VERSION AS OF 5", "d": "b.day", "p": "b.product"}
    sql = refresh_sql(lat, spec, relations, "t VERSION AS OF 2", found, {"count": "BIGINT"})
    kept, recomputed = sql.split("\nUNION ALL\n")
    assert kept.startswith("SELECT `s__day_id`, `brand`, CAST(`count` AS BIGINT) AS `count`")
    assert kept.endswith(
        "FROM t VERSION AS OF 2 WHERE NOT ((`s__day_id` <=> CAST('2' AS INT)) OR "
        "(`s__day_id` <=> NULL))"
    )
    assert (
        "FROM (SELECT * FROM b.sales VERSION AS OF 5 WHERE (`day_id` = CAST('2' AS INT)) OR "
        "(`day_id` IS NULL)) AS `s`" in recomputed
    )
    assert "JOIN b.day AS `d`" in recomputed and "GROUP BY" in recomputed


def test_the_cost_model_takes_partitions_where_incremental_cannot_go() -> None:
    blocked = choose(
        tile_rows=1_000, change_rows=10, full_rows=10**7, full_from="star",
        blocker="MIN cannot take deleted rows back", partitions=True, partition_rows=20_000,
    )  # fmt: skip
    assert blocked.choice == RefreshPath.PARTITIONS and blocked.partition_rows == 21_000
    assert blocked.describe() == (
        "incremental ~1,010 rows read, partitions ~21,000, full ~10,000,000 from star: partitions"
    )
    rollup = choose(
        tile_rows=1_000, change_rows=None, full_rows=5_000, full_from="t_fine",
        blocker="the change cannot be merged", partitions=True, partition_rows=900_000,
    )  # fmt: skip
    assert rollup.choice == RefreshPath.FULL  # a finer tile reads fewer rows
    unknown = choose(
        tile_rows=1_000, change_rows=None, full_rows=None, full_from="star",
        blocker="the change cannot be merged", partitions=True,
    )  # fmt: skip
    assert unknown.choice == RefreshPath.PARTITIONS  # never more than the whole star
    merged = choose(
        tile_rows=1_000, change_rows=100, full_rows=10**7, full_from="star",
        partitions=True, partition_rows=20_000,
    )  # fmt: skip
    assert merged.choice == RefreshPath.INCREMENTAL  # an append merges cheaper still
    assert json.dumps(merged.partition_rows) == "21000"

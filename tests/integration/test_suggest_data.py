"""The suggester on real Delta data: join direction from uniqueness in the data, and tiles
sized by the lattice's statistic provider (FoodMart, the session's Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.suggest.data import data_statistics, data_uniqueness
from mvlattice.suggest.logs import ANSI, LogEntry
from mvlattice.suggest.suggester import suggest
from mvlattice.workspace import Workspace

# No keys declared: the data has to say which side of each join is unique.
MODEL = """
version: "1.0"
defaultSchema: foodmart
schemas:
  - name: foodmart
    type: delta
    location: foodmart
    tables:
      - name: sales_fact_1997
      - name: time_by_day
"""

BY_MONTH = (
    'select "t"."the_month", sum("s"."unit_sales") from "sales_fact_1997" as "s", '
    '"time_by_day" as "t" where "s"."time_id" = "t"."time_id" group by "t"."the_month"'
)
NONSENSE = (
    'select count(*) from "sales_fact_1997" as "s" join "time_by_day" as "t" '
    'on "s"."product_id" = "t"."day_of_month"'
)


@pytest.mark.spark
def test_directions_and_tile_sizes_come_from_the_data(foodmart: Path, tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(MODEL, encoding="utf-8")
    ws = Workspace(path, warehouse=str(foodmart))
    entries = [
        LogEntry(BY_MONTH, "by_month", 10, dialect=ANSI),
        LogEntry(NONSENSE, "nonsense", dialect=ANSI),
    ]
    result = suggest(
        entries,
        model=ws.model,
        uniqueness=data_uniqueness(ws.spark, ws.model),
        stats_for=data_statistics(ws.spark, ws.model),
        statistics="data",
    )
    (skip,) = result.summary.skipped
    assert (skip.reason, skip.examples) == (
        "many-to-many join",
        (
            "nonsense: sales_fact_1997(product_id) = time_by_day(day_of_month): "
            "neither side is unique in the data",
        ),
    )
    (item,) = result.lattices
    assert item.suggested.describe() == "sales_fact_1997 (time_by_day:time_id)"
    assert dict(item.suggested.decided).popitem()[1] == "data"
    assert item.lattice is not None and item.lattice.row_count_estimate == 86_837
    assert item.tiles is not None
    (tile,) = item.tiles.tiles
    # with the columns the month determines in the 1997 calendar (free: still 12 rows)
    determined = {"the_year", "month_of_year", "quarter", "fiscal_period"}
    assert "the_month" in tile.planned.dimensions
    assert set(tile.planned.dimensions) <= {"the_month"} | determined
    assert round(tile.planned.rows) == 12
    assert (tile.queries, tile.weight) == (("by_month",), 10.0)


@pytest.mark.spark
def test_the_services_query_log_table_is_a_log(spark: object, tmp_path: Path) -> None:
    from mvlattice.querylog.log import Request, log_location, log_now, table_records
    from mvlattice.suggest.logs import read_log

    sql = (
        "select t.the_year, count(*) from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id group by t.the_year"
    )
    requests = [
        Request(
            at=1_700_000_000 + day * 86_400,
            sql=sql,
            kind="query",
            rewritten=False,
            views=(),
            latency_ms=1.0,
            outcome="ok",
        )
        for day in range(3)
    ]
    log_now(spark, str(tmp_path), requests)
    entries = read_log(log_location(str(tmp_path)), table_records)
    result = suggest(entries, default_schema="foodmart")
    assert (result.summary.read, result.summary.used) == (3, 3)
    assert result.summary.window == ("2023-11-14T22:13:20+00:00", "2023-11-16T22:13:20+00:00")
    (item,) = result.lattices
    assert item.suggested.describe() == "sales_fact_1997 (time_by_day:time_id)"

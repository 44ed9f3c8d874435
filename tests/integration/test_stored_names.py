"""Materializations whose outputs Delta would reject — unnamed expressions, SUM(1), BETWEEN,
date_trunc, repeated names from `SELECT *` over a join — build under stored names, are matched
(each output read from its stored column), show their names in the catalog, and `validate`
warns about them (issue 20)."""

from __future__ import annotations

import datetime as dt
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import make_shop, write

pytestmark = pytest.mark.spark

SCHEMA = "stored_names"
S = SCHEMA
MATERIALIZATIONS = f"""\
- view: exprs
  table: exprs
  sql: >
    select s.product_id + 2, sum(1), sum(s.amount) as amt
    from {S}.sales s group by s.product_id + 2
- view: bands
  table: bands
  sql: >
    select s.amount between 1 and 3, count(*)
    from {S}.sales s group by s.amount between 1 and 3
- view: months
  table: months
  sql: >
    select date_trunc('month', e.ts), e.kind, count(*)
    from {S}.events e group by date_trunc('month', e.ts), e.kind
- view: casts
  table: casts
  sql: >
    select (cast(s.product_id as bigint)), (s.amount), sum(1)
    from {S}.sales s group by (cast(s.product_id as bigint)), (s.amount)
- view: joined
  table: joined
  sql: select * from {S}.sales s join {S}.product p on s.product_id = p.product_id
"""


@pytest.fixture(scope="module")
def ws(spark, warehouse: Path) -> Workspace:
    model = make_shop(spark, warehouse, SCHEMA, "- dimensions: [the_year]\n")
    start = dt.datetime(2024, 1, 1)
    events = [(i, start + dt.timedelta(days=3 * i), f"k{i % 3}") for i in range(100)]
    write(
        spark,
        warehouse / "jobs" / SCHEMA / "events",
        events,
        "event_id INT, ts TIMESTAMP, kind STRING",
    )
    text = model.read_text().replace(
        "      - name: sales\n", "      - name: sales\n      - name: events\n"
    )
    model.write_text(text + textwrap.indent(MATERIALIZATIONS, " " * 6))
    workspace = Workspace(model, warehouse=str(warehouse))
    result = workspace.materialize()
    assert not result.failed, [r.error for r in result.failed]
    return workspace


def answered_by(ws: Workspace, sql: str, view: str) -> None:
    """`sql` is rewritten onto `view` and gives the rows it gives on the base tables."""
    rewritten = ws.query(sql, engine="spark")
    assert rewritten.rewrite.rewritten and rewritten.rewrite.materializations == (view,), (
        rewritten.rewrite.explain
    )
    base = ws.query(sql, rewrite=False)
    assert Counter(rewritten.rows) == Counter(base.rows) and base.rows


def test_unnamed_expressions_and_sum_of_one(ws) -> None:
    answered_by(
        ws, f"select s.product_id + 2, sum(1) from {S}.sales s group by s.product_id + 2", "exprs"
    )
    answered_by(
        ws,
        f"select s.product_id + 2 as k, sum(s.amount) as a, sum(1) as n from {S}.sales s "
        f"where s.product_id + 2 > 5 group by s.product_id + 2",
        "exprs",
    )
    assert (
        "_c0"
        in ws.rewrite(f"select s.product_id + 2 from {S}.sales s group by s.product_id + 2").sql
    )


def test_parenthesized_outputs_are_named_as_spark_names_them(ws) -> None:
    """`(CAST(x AS BIGINT))` is stored as `x` (Spark's name), `(s.amount)` as `amount`: a
    difftest query read `_c0` from such a table (foodmart seed 112, issue 20)."""
    answered_by(
        ws,
        f"select cast(s.product_id as bigint) as p, sum(1) as n from {S}.sales s "
        f"group by cast(s.product_id as bigint)",
        "casts",
    )
    answered_by(ws, f"select s.amount, sum(1) as n from {S}.sales s group by s.amount", "casts")


def test_between(ws) -> None:
    answered_by(
        ws,
        f"select s.amount between 1 and 3 as small, count(*) from {S}.sales s "
        f"group by s.amount between 1 and 3",
        "bands",
    )


def test_date_trunc(ws) -> None:
    answered_by(
        ws,
        f"select date_trunc('month', e.ts) as m, e.kind, count(*) from {S}.events e "
        f"group by date_trunc('month', e.ts), e.kind",
        "months",
    )


def test_repeated_names_from_a_join(ws) -> None:
    answered_by(
        ws,
        f"select s.sale_id, p.product_id, s.product_id as sp, p.brand from {S}.sales s "
        f"join {S}.product p on s.product_id = p.product_id where p.brand = 'b1'",
        "joined",
    )


def test_no_rewrite_when_the_view_lacks_the_expression(ws) -> None:
    result = ws.rewrite(f"select e.ts, count(*) from {S}.events e group by e.ts")
    assert not result.rewritten
    (months,) = [e for e in result.explain if e.view == "months"]
    assert months.reason == "MISSING_COLUMN"


def test_catalog_shows_the_stored_names(ws) -> None:
    entries = {e.name: e for e in ws.tiles()}
    assert entries[f"{S}.exprs"].renamed == {"_c0": "(product_id + 2)", "_c1": "sum(1)"}
    assert entries[f"{S}.joined"].renamed == {"product_id_5": "product_id"}
    assert entries[f"{S}.exprs"].to_json()["renamed"] == {
        "_c0": "(product_id + 2)",
        "_c1": "sum(1)",
    }
    assert entries[f"{S}.by_year"].renamed == {}


def test_validate_warns_about_renamed_outputs(ws, capsys) -> None:
    code = main(["validate", str(ws.model.file), "--warehouse", ws.warehouse])
    out, err = capsys.readouterr()
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("mvlattice: warning:")]
    assert "materialization exprs: output (product_id + 2) is stored as column _c0" in err
    assert "materialization joined: output product_id is stored as column product_id_5" in err
    assert any("months" in w and "_c0" in w for w in warnings)
    # exprs 2, bands 2, months 2 (date_trunc, count(1)), casts 1 (sum(1)), joined 1
    assert len(warnings) == 8

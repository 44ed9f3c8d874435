"""Fuzzing the rewriter (no Spark): random text, token soup and mutations of valid queries
give a result or mvlattice's own error with a one-line message — never another exception,
never a hang. MVLATTICE_FUZZ_EXAMPLES raises the count (bench/fuzz.py runs it long)."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mvlattice.errors import SqlError
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.model.loader import Materialization
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext, RewriteResult
from tests.fuzz import sql as fuzz
from tests.golden.rewrite import runner

FUZZ = settings(
    max_examples=int(os.environ.get("MVLATTICE_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
GOLDEN = runner.golden_files()
HR_SEEDS = fuzz.Seeds(dict.fromkeys(c.query for g in GOLDEN for c in g.cases))
FOODMART_SEEDS = fuzz.Seeds(
    (
        "select t.the_year, t.the_month, count(*) as c, sum(s.unit_sales) from "
        "foodmart.sales_fact_1997 s join foodmart.time_by_day t using (time_id) "
        "where t.quarter in ('Q1', 'Q2') group by t.the_year, t.the_month having count(*) > 3 "
        "order by 1 limit 5",
        "with q as (select pc.product_family, avg(s.store_cost) a from foodmart.sales_fact_1997 s "
        "join foodmart.product p on s.product_id = p.product_id join foodmart.product_class pc "
        "on p.product_class_id = pc.product_class_id group by pc.product_family) "
        "select * from q where a > 1 union all select 'x', 0",
    )
)
MONTHS = (Measure("count"), Measure("sum", ("unit_sales",)))
TILES = (
    TileSpec("star", ("the_year", "the_month"), MONTHS),
    TileSpec("star", ("product_family",), (Measure("avg", ("store_cost",)),)),
)


# Contexts are module-level values, not fixtures: Hypothesis prints every argument of a
# failing example, and a context's repr runs to tens of kilobytes.
@functools.cache
def hr() -> RewriteContext:
    """Every golden view as a materialization: many views for mutated queries to meet."""
    model = runner.hr_model(Path(tempfile.mkdtemp(prefix="fuzz_hr")))
    views = {name: sql for g in GOLDEN for name, sql in g.views.items()}
    items = [
        Materialization(name=n, schema=runner.SCHEMA, table=n, sql=sql) for n, sql in views.items()
    ]
    return context_for(model, tiles=(), materializations=items, types=runner.HR_TYPES)


@functools.cache
def foodmart() -> RewriteContext:
    model = runner.foodmart_model(Path(tempfile.mkdtemp(prefix="fuzz_foodmart")))
    return context_for(model, tiles=TILES, materializations=(), types={})


@FUZZ
@given(sql=fuzz.mutated(HR_SEEDS))
def test_mutated_queries(sql: str) -> None:
    fuzz.check(sql, hr())


@FUZZ
@given(sql=fuzz.mutated(FOODMART_SEEDS))
def test_mutated_queries_on_tiles(sql: str) -> None:
    fuzz.check(sql, foodmart())


@FUZZ
@given(sql=st.one_of(fuzz.soup(), fuzz.garbage()))
def test_random_text(sql: str) -> None:
    fuzz.check(sql, hr())


def test_the_property_holds_for_valid_and_invalid_input() -> None:
    """`check` tells a rewrite, a no-rewrite and an error apart (so the fuzz tests can fail)."""
    context = hr()
    rewritten = fuzz.check("SELECT empid, deptno FROM emps", context)
    assert isinstance(rewritten, RewriteResult) and rewritten.rewritten
    kept = fuzz.check("SELECT empid FROM emps WHERE rand() < 0.5", context)
    assert isinstance(kept, RewriteResult) and not kept.rewritten
    assert isinstance(fuzz.check("SELECT FROM WHERE (", context), SqlError)
    unknown = fuzz.check("SELECT x FROM nowhere", context)
    assert isinstance(unknown, RewriteResult) and not unknown.rewritten


def test_other_exceptions_fail_the_property(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*_args: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(fuzz, "rewrite", crash)
    with pytest.raises(KeyError):
        fuzz.check("SELECT 1", hr())
    monkeypatch.setattr(fuzz, "rewrite", lambda *_a: (_ for _ in ()).throw(SqlError("a\nb")))
    with pytest.raises(AssertionError):
        fuzz.check("SELECT 1", hr())


def test_a_hang_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(fuzz, "SECONDS", 1)
    # The sleep is the hang under test: a rewrite that outlasts the 1 s limit (SIGALRM ends it).
    monkeypatch.setattr(fuzz, "rewrite", lambda *_a: time.sleep(5))
    with pytest.raises(fuzz.Hang):
        fuzz.check("SELECT 1", hr())


def test_mutations_change_the_query() -> None:
    """Mutations edit tokens of the seeds, they do not replace the query wholesale."""
    assert all("".join(fuzz.tokens(q)) == q for q in HR_SEEDS)  # lossless tokens


def test_the_seed_queries_exist() -> None:
    assert len(HR_SEEDS) >= 80
    assert Path(runner.HERE).is_dir()

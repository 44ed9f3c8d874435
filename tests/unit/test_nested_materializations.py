"""Materializations that read materializations (issue 20, class 5), without Spark: the model
check (what they may read, cycles), the build order, refresh's inner-first targets, transitive
freshness, and the inlining that lets the outer answer queries over base tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.errors import ModelError
from mvlattice.jobs.availability import ViewCode, ViewState
from mvlattice.jobs.changes import FULL, NONE, RefreshDecision
from mvlattice.jobs.freshness import Assessment
from mvlattice.jobs.nested import full_reason, through_inners, with_inners
from mvlattice.jobs.order import build_order
from mvlattice.jobs.status import TileStatus
from mvlattice.jobs.targets import materialization_target
from mvlattice.model.loader import load_model
from mvlattice.model.nesting import closure, dependency_order, find_cycle
from mvlattice.sql.inline import Definition, inline_tables, qualify_tables

MODEL = """
version: "1.0"
defaultSchema: s
schemas:
  - name: s
    type: delta
    location: data
    tables:
      - name: sales
        columns: [sale_id, product_id, amount]
    materializations:
{views}
"""

NESTED = """\
      - view: outer_mv
        table: outer_t
        sql: select product_id, sum(amount) as amount from inner_t group by product_id
      - view: inner_mv
        table: inner_t
        sql: select product_id, amount from s.sales where amount > 1
      - view: top
        table: top_t
        sql: select max(amount) as m from s.outer_t
"""


def model_file(tmp_path: Path, views: str) -> Path:
    path = tmp_path / "model.yaml"
    path.write_text(MODEL.format(views=views))
    return path


def problems(tmp_path: Path, views: str) -> list[str]:
    with pytest.raises(ModelError) as raised:
        load_model(model_file(tmp_path, views), warehouse=str(tmp_path / "wh"))
    return [p.message for p in raised.value.problems]


def test_a_materialization_may_read_another_and_the_model_says_which(tmp_path: Path) -> None:
    model = load_model(model_file(tmp_path, NESTED), warehouse=str(tmp_path / "wh"))
    reads = {m.name: m.reads for m in model.materializations}
    assert reads == {"outer_mv": ("s.inner_t",), "inner_mv": (), "top": ("s.outer_t",)}


def test_cycles_tiles_and_view_names_are_model_errors(tmp_path: Path) -> None:
    views = """\
      - {view: a, table: a_t, sql: select * from s.b_t}
      - {view: b, table: b_t, sql: select * from a_t join s.sales using (sale_id)}
      - {view: c, table: c_t, sql: select * from s.c_t}
      - {view: d, table: d_t, sql: select * from mvlattice.star__all__abc123}
      - {view: e, table: e_t, sql: select * from s.a}
"""
    found = problems(tmp_path, views)
    assert "materializations read each other in a cycle: a (s.a_t) -> b (s.b_t) -> a (s.a_t)" in (
        found
    )
    assert any(p.startswith("reads the tile 'mvlattice.star__all__abc123'") for p in found)
    assert "unknown table 's.a' (materialization 'a' is read by its table name, 's.a_t')" in found
    assert len(found) == 3  # c reading itself is a cycle too, but one cycle is named at a time


def test_validate_names_the_cycle_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    views = """\
      - {view: a, table: a_t, sql: select * from s.b_t}
      - {view: b, table: b_t, sql: select * from s.a_t}
"""
    code = main(["validate", str(model_file(tmp_path, views))])
    err = capsys.readouterr().err
    assert code != 0
    assert "cycle: a (s.a_t) -> b (s.b_t) -> a (s.a_t)" in err
    assert "Traceback" not in err


def test_dependency_order_and_cycles() -> None:
    reads = {"o": ("i", "base"), "i": (), "top": ("o",), "alone": ()}
    assert dependency_order(reads) == ("i", "o", "top", "alone")
    assert closure(reads, ("top",)) == ("i", "o", "top")
    assert find_cycle(reads) == ()
    assert find_cycle({"a": ("b",), "b": ("a",)}) == ("a", "b", "a")
    assert find_cycle({"a": ("a",)}) == ("a", "a")
    with pytest.raises(ValueError, match="a -> b -> a"):
        dependency_order({"a": ("b",), "b": ("a",)})


def test_build_order_and_refresh_targets_put_inner_first(tmp_path: Path) -> None:
    model = load_model(model_file(tmp_path, NESTED), warehouse=str(tmp_path / "wh"))
    targets = [materialization_target(m, model.warehouse) for m in model.materializations]
    assert [t.name for t in build_order(targets)] == ["s.inner_t", "s.outer_t", "s.top_t"]
    top = targets[2]
    assert [t.name for t in with_inners(top, targets)] == ["s.inner_t", "s.outer_t", "s.top_t"]
    assert [t.name for t in with_inners(targets[0], targets)] == ["s.inner_t", "s.outer_t"]
    assert [t.name for t in with_inners(targets[1], targets)] == ["s.inner_t"]
    changed = RefreshDecision(FULL, "materializations are rebuilt in full")
    assert "reads s.inner_t, whose refresh rewrites its table" in (
        full_reason(targets[0], changed).reason
    )
    assert full_reason(targets[1], RefreshDecision(NONE, "fresh")).reason == "fresh"


FRESH = Assessment(TileStatus.FRESH, ViewState(True, ViewCode.FRESH))
STALE = Assessment(
    TileStatus.STALE, ViewState(False, ViewCode.STALE, "s.sales changed since it was built")
)
ACCEPTED = Assessment(
    TileStatus.STALE, ViewState(True, ViewCode.STALE_ACCEPTED, "s.sales changed"), (), 30.0
)


def test_freshness_is_transitive() -> None:
    assert through_inners(FRESH, [("s.inner_t", FRESH)], None) == FRESH
    behind = through_inners(FRESH, [("s.inner_t", STALE)], None)
    assert (behind.status, behind.view.usable, behind.view.code) == (
        TileStatus.STALE,
        False,
        ViewCode.STALE,
    )
    assert behind.view.message.startswith("reads s.inner_t, which is not fresh (s.sales changed")
    assert not through_inners(FRESH, [("s.inner_t", ACCEPTED)], None).view.usable
    assert not through_inners(FRESH, [("s.inner_t", ACCEPTED)], 10.0).view.usable
    within = through_inners(FRESH, [("s.inner_t", ACCEPTED)], 60.0)
    assert (within.view.usable, within.view.code) == (True, ViewCode.STALE_ACCEPTED)
    assert through_inners(STALE, [("s.inner_t", FRESH)], None) == STALE  # its own state first


def test_inlining_reads_the_inner_definition_under_its_stored_names() -> None:
    inner = Definition(qualify_tables("select a, b + 1, count(*) from t group by a, b + 1", "s"))
    renamed = Definition(inner.sql, ("a", "_c2", "_c3"))
    sql = "select i.a, sum(_c3) from inner_t i join s.x using (a) group by i.a"
    assert inline_tables(sql, "s", {"s.inner_t": renamed}) == (
        "SELECT i.a, SUM(_c3) FROM (SELECT a AS `a`, b + 1 AS `_c2`, COUNT(*) AS `_c3` "
        "FROM s.t GROUP BY a, b + 1) AS i JOIN s.x USING (a) GROUP BY i.a"
    )
    assert inline_tables("select * from other.inner_t", "s", {"s.inner_t": inner}) == (
        "SELECT * FROM other.inner_t"
    )

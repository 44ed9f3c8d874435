"""The Workspace backend's routing over several served models, with stand-in workspaces (no
Spark): which model answers a rewrite or a query, and how names are looked up."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from mvlattice.errors import ConflictError, NotFoundError, SqlError, UsageError
from mvlattice.http.jobs import Scope
from mvlattice.http.workspaces import WorkspaceBackend
from mvlattice.lattice.lattice import Lattice, LatticeColumn, Measure, Node, TileSpec
from mvlattice.mvrewrite.rewriter import Engine, Explanation, QueryResult, RewriteResult
from mvlattice.serving.request import Request


def lattice(name: str) -> Lattice:
    return Lattice(
        name, "s", "select 1 from s.f as f", (Node("f", "s", "f"),), (),
        (LatticeColumn("a", "f", "a", "`f`.`a`"),), (Measure("count"),),
        (TileSpec(name, ("a",), (Measure("count"),)),),
    )  # fmt: skip


@dataclass
class StubWorkspace:
    """Rewrites queries mentioning `table`; raises SqlError for `broken`."""

    table: str
    lattices: tuple[Lattice, ...]
    entries: tuple[Any, ...] = ()
    queries: list = field(default_factory=list)
    engines: list[str] = field(default_factory=list)  # the engine= of each query

    @property
    def model(self) -> Any:
        return SimpleNamespace(lattices=self.lattices)

    def rewrite(self, sql: str, explain: bool = True, accept: Any = None) -> RewriteResult:
        assert callable(accept)  # Spark's word on the text, in the sandbox's session
        if "broken" in sql:
            raise SqlError(f"broken in {self.table}")
        if self.table in sql:
            note = (Explanation(f"mv_{self.table}", "used", "", "reads ~1 rows"),)
            return RewriteResult(True, f"select * from mv_{self.table}", (f"mv_{self.table}",),
                                 note if explain else ())  # fmt: skip
        return RewriteResult(False, sql, ())

    def serve(self, request: Request) -> QueryResult:
        sql, rewrite, limit, engine = request.sql, request.rewrite, request.limit, request.engine
        describe, accept = request.describe, request.accept
        self.queries.append((sql, rewrite, limit))
        self.engines.append(engine)
        assert callable(describe)  # the sandbox's check, for the tile engine
        how = self.rewrite(sql, accept=accept) if rewrite else RewriteResult(False, sql, ())
        rows = tuple((i,) for i in range(10))[:limit]
        # a stand-in: "auto" lets the tile engine answer what reads a view
        local = engine == "auto" and how.rewritten
        if local:
            return QueryResult(("n",), rows, how, 1.0, Engine.LOCAL)
        why = "" if not how.rewritten else "the service runs with --engine spark"
        return QueryResult(("n",), rows, how, 1.0, Engine.SPARK, why)

    def tiles(self, lattice: str | None = None) -> tuple[Any, ...]:
        return tuple(e for e in self.entries if lattice is None or e.lattice == lattice)


def entry(name: str, lattice_name: str | None, status: str = "fresh") -> Any:
    return SimpleNamespace(
        name=name, lattice=lattice_name, status=status,
        to_json=lambda: {"name": name, "lattice": lattice_name, "status": status},
    )  # fmt: skip


@pytest.fixture
def backend() -> WorkspaceBackend:
    star_tiles = (entry("mvlattice.star_a", "star"), entry("shared", None))
    sales = StubWorkspace("sales", (lattice("star"), lattice("both")), star_tiles)
    people_tiles = (entry("mvlattice.people_a", "people", "building"), entry("shared", None))
    hr = StubWorkspace("emps", (lattice("people"), lattice("both")), people_tiles)
    return WorkspaceBackend({"sales": sales, "hr": hr})  # type: ignore[dict-item]


def test_the_model_that_rewrites_answers(backend: WorkspaceBackend) -> None:
    out = backend.rewrite("select count(*) from emps", True, None)
    assert (out.model, out.rewritten, out.materializations) == ("hr", True, ("mv_emps",))
    assert out.document["explain"] == [
        {"view": "mv_emps", "outcome": "used", "reason": "", "message": "reads ~1 rows"}
    ]
    assert backend.rewrite("select count(*) from emps", False, None).document["explain"] is None


def test_without_a_rewrite_the_first_model_answers(backend: WorkspaceBackend) -> None:
    out = backend.rewrite("select 1", False, None)
    assert (out.model, out.rewritten, out.document["sql"]) == ("sales", False, "select 1")


def test_a_named_model_is_used_alone(backend: WorkspaceBackend) -> None:
    assert backend.rewrite("select * from emps", False, "sales").rewritten is False
    with pytest.raises(NotFoundError, match="no model 'x' is served; models: hr, sales"):
        backend.rewrite("select 1", False, "x")


def test_errors_only_when_every_model_fails(backend: WorkspaceBackend) -> None:
    with pytest.raises(SqlError, match="broken in sales"):
        backend.rewrite("select broken", False, None)


def test_a_query_runs_where_it_rewrites_with_one_row_more(backend: WorkspaceBackend) -> None:
    answer = backend.query("select n from emps", True, 3, None)
    assert (answer.model, answer.rewritten, answer.sql) == ("hr", True, "select * from mv_emps")
    assert answer.rows == ((0,), (1,), (2,)) and answer.truncated
    assert backend.workspaces["hr"].queries == [("select n from emps", True, 4)]
    plain = backend.query("select n from emps", False, 20, None)
    assert (plain.model, plain.rewritten, plain.truncated) == ("sales", False, False)


def test_a_query_runs_on_the_served_engine_and_says_who_answered(
    backend: WorkspaceBackend,
) -> None:
    answer = backend.query("select n from emps", True, 3, None)
    assert (answer.engine, answer.engine_reason) == ("local", "")
    assert backend.workspaces["hr"].engines == ["auto"]  # type: ignore[attr-defined]
    plain = backend.query("select n from emps", False, 3, "hr")
    assert (plain.engine, plain.engine_reason) == ("spark", "")
    forced = WorkspaceBackend(backend.workspaces, engine="spark")
    answer = forced.query("select n from emps", True, 3, "hr")
    assert (answer.engine, answer.engine_reason) == (
        "spark",
        "the service runs with --engine spark",
    )
    assert backend.workspaces["hr"].engines[-1] == "spark"  # type: ignore[attr-defined]


def test_a_result_without_an_engine_is_spark() -> None:
    from mvlattice.http.render import answer_of

    answer = answer_of("m", {"columns": ["n"], "rows": [(1,)], "rewritten": False, "sql": "x"}, 5)
    assert (answer.engine, answer.engine_reason) == ("spark", "")


def test_lattice_names_are_looked_up_in_every_model(backend: WorkspaceBackend) -> None:
    assert [d["name"] for d in backend.lattices(None)] == ["star", "both", "people", "both"]
    assert backend.lattice("people", None, plan=False)["model"] == "hr"
    with pytest.raises(UsageError, match="lattice 'both' is in models hr, sales; add"):
        backend.lattice("both", None, plan=False)
    assert backend.lattice("both", "hr", plan=False)["model"] == "hr"
    with pytest.raises(NotFoundError, match="no lattice 'nope'; lattices: both, people, star"):
        backend.materialize_scope("nope", None)
    assert backend.materialize_scope("star", None) == Scope("sales", "star")


def test_tiles_and_refresh_scopes(backend: WorkspaceBackend) -> None:
    assert [t["name"] for t in backend.tiles(None, "star")] == ["mvlattice.star_a"]
    assert {t["model"] for t in backend.tiles(None, None)} == {"sales", "hr"}
    assert backend.refresh_scope("MVLATTICE.STAR_A", None) == Scope(
        "sales", "star", "mvlattice.star_a"
    )
    with pytest.raises(ConflictError, match="being built right now"):
        backend.refresh_scope("mvlattice.people_a", None)
    with pytest.raises(UsageError, match="'shared' is in models hr, sales"):
        backend.refresh_scope("shared", None)
    assert backend.refresh_scope("shared", "hr") == Scope("hr", None, "shared")
    with pytest.raises(NotFoundError, match="no tile or materialization 'nope'"):
        backend.refresh_scope("nope", None)


def test_nothing_to_serve_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no model to serve"):
        WorkspaceBackend({})

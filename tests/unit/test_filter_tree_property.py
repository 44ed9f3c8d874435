"""Property: the filter tree never leaves out a view the full matcher accepts.

Random views and queries over the emps/depts/locations/projects schema of the golden files:
each query is drawn as a variation of one of the views (more or fewer tables, filters added,
dropped or changed, a coarser or finer grouping, other outputs and aggregates), so that many
pairs match — by rollup, union, joins back (view-partial), lossless extra joins
(query-partial) and expressions over view columns — and many do not. For every block of every
query, each view `match` accepts is among the tree's candidates; and `rewrite` decides the
same with the index as without it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from mvlattice.errors import MvlatticeError, UnsupportedSqlError
from mvlattice.model.loader import Model
from mvlattice.mvrewrite.index.filter_tree import candidate_positions
from mvlattice.mvrewrite.match.attempt import Attempt
from mvlattice.mvrewrite.match.gl01 import match
from mvlattice.mvrewrite.rewriter import RewriteContext, rewrite
from mvlattice.sql.from_sql import translate
from mvlattice.sql.parse import parse_query, qualify_query
from mvlattice.sql.spjg import Spjg, normalize
from mvlattice.sql.statement_blocks import visible_ctes
from tests.golden.rewrite import runner

TABLES = {"e": "emps", "d": "depts", "l": "locations", "p": "projects", "e2": "emps"}
JOINS = {
    "d": ("e.deptno = d.deptno", "e.empid = d.deptno"),  # a foreign key; an arbitrary join
    "l": ("e.locationid = l.locationid", "e.deptno = l.locationid"),
    "p": ("p.empid = e.empid", "p.projid = e.empid"),
    "e2": ("e2.deptno = e.deptno", "e2.empid = e.empid"),
}
COLUMNS = (
    "e.deptno",
    "e.empid",
    "e.empname",
    "e.locationid",
    "e.salary",
    "d.deptno",
    "d.deptname",
    "l.state",
    "l.locationid",
    "p.budget",
    "p.projid",
    "e2.empname",
    "upper(e.empname)",
    "e.salary + 1",
    "coalesce(d.deptname, 'none')",
)
AGGREGATES = (
    "count(*)",
    "sum(e.salary)",
    "avg(e.salary)",
    "min(e.salary)",
    "max(e.empid)",
    "count(e.salary)",
    "count(distinct e.deptno)",
    "sum(p.budget)",
    "sum(e.salary * 2)",
    "sum(d.deptno)",
)
FILTERS = (
    "e.salary > 10000",
    "e.salary >= 12000",
    "e.salary < 9000",
    "e.deptno = 10",
    "e.deptno in (10, 20)",
    "e.deptno > 15",
    "e.empid between 2 and 8",
    "d.deptname = 'Sales'",
    "d.deptname is not null",
    "l.state in ('CA', 'NY')",
    "l.state = 'CA'",
    "e.salary is null",
    "e.empname like 'B%'",
    "e.salary + e.empid > 10005",
    "p.budget > 100",
    "e.deptno = e.locationid",
    "upper(e.empname) = 'BILL'",
    "e.empid <> 3",
    "e2.salary > 5000",
    "d.deptno < 25",
    "l.locationid = 1",
    "(e.salary > 11000 OR e.salary IS NULL)",
    "e.deptno NOT IN (10, 30)",
    "NOT e.empname = 'Eve'",
    # disjunctions and richer predicates (issue 20, class 3)
    "((e.deptno = 10 AND e.salary > 9000) OR (e.deptno = 20 AND e.salary > 9000))",
    "((e.deptno = 10 AND e.salary > 9000) OR (e.deptno = 20 AND e.salary > 12000))",
    "(e.deptno = 10 OR e.salary > 12000)",
    "(e.salary IS NULL OR e.deptno = 10)",
    "(l.state IS NOT NULL OR e.locationid = 3)",
    "(d.deptname > 'M' OR e.deptno = 30)",
    "(upper(e.empname) = 'BILL' OR e.deptno = 20)",
    "NOT (e.salary > 12000 OR e.deptno = 30)",
    "(e.empname LIKE 'B%' OR e.empname LIKE 'E%')",
    "e.empname LIKE 'Bi%'",
    "e.empname >= 'C'",
    "l.state <> 'NY'",
    "e.salary NOT IN (10000, 12000)",
    "e.deptno IN (10, NULL)",
    "e.salary NOT BETWEEN 9000 AND 12000",
)
HAVING = ("count(*) > 1", "sum(e.salary) > 20000")


def rels_of(text: str) -> set[str]:
    return {r for r in TABLES if f"{r}." in text}


@dataclass(frozen=True)
class Block:
    rels: tuple[str, ...]  # "e" first
    joins: tuple[str, ...]  # one condition per rel after the first
    filters: tuple[str, ...]
    grouped: bool
    keys: tuple[str, ...]
    aggregates: tuple[str, ...]
    having: tuple[str, ...] = ()
    order: bool = False
    distinct: bool = False
    nested: bool = False  # read through a FROM subquery

    def usable(self, items: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(i for i in items if rels_of(i) <= set(self.rels))

    def tidy(self) -> Block:
        keys = self.usable(self.keys) or ("e.deptno",)
        return replace(
            self,
            filters=self.usable(self.filters),
            keys=keys,
            aggregates=self.usable(self.aggregates) or ("count(*)",),
        )

    def sql(self) -> str:
        outputs = [f"{k} AS k{i}" for i, k in enumerate(self.keys)]
        if self.grouped:
            outputs += [f"{a} AS a{i}" for i, a in enumerate(self.aggregates)]
        distinct = "DISTINCT " if self.distinct and not self.grouped else ""
        text = f"SELECT {distinct}{', '.join(outputs)} FROM emps e"
        for rel, join in zip(self.rels[1:], self.joins, strict=True):
            text += f" JOIN {TABLES[rel]} {rel} ON {join}"
        if self.filters:
            text += " WHERE " + " AND ".join(self.filters)
        if self.grouped and self.keys:
            text += " GROUP BY " + ", ".join(self.keys)
        if self.grouped and self.having:
            text += " HAVING " + " AND ".join(self.having)
        text += " ORDER BY k0" if self.order and self.keys else ""
        return f"SELECT k0 FROM ({text}) AS q" if self.nested and self.keys else text


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    rels = ("e", *draw(st.lists(st.sampled_from(("d", "l", "p", "e2")), unique=True, max_size=3)))
    joins = tuple(JOINS[r][draw(st.sampled_from((0, 0, 0, 1)))] for r in rels[1:])
    grouped = draw(st.booleans())
    block = Block(
        rels,
        joins,
        tuple(draw(st.lists(st.sampled_from(FILTERS), unique=True, max_size=3))),
        grouped,
        tuple(draw(st.lists(st.sampled_from(COLUMNS), unique=True, min_size=1, max_size=4))),
        tuple(draw(st.lists(st.sampled_from(AGGREGATES), unique=True, min_size=1, max_size=3))),
        distinct=draw(st.integers(0, 5)) == 0,
    )
    return block.tidy()


@st.composite
def variations(draw: st.DrawFn, view: Block) -> Block:
    """A query near `view`: each part kept, narrowed, widened or replaced."""
    rels, joins = list(view.rels), list(view.joins)
    if len(rels) > 1 and draw(st.booleans()):
        drop = draw(st.integers(1, len(rels) - 1))
        del rels[drop], joins[drop - 1]
    extra = [r for r in ("d", "l", "p", "e2") if r not in rels]
    if extra and draw(st.integers(0, 3)) == 0:
        rel = draw(st.sampled_from(extra))
        rels.append(rel)
        joins.append(JOINS[rel][0])
    filters = draw(st.lists(st.sampled_from(view.filters), unique=True)) if view.filters else []
    filters += draw(st.lists(st.sampled_from(FILTERS), unique=True, max_size=2))
    grouped = view.grouped if draw(st.integers(0, 3)) else not view.grouped
    keys = draw(st.lists(st.sampled_from(view.keys), unique=True))
    keys += draw(st.lists(st.sampled_from(COLUMNS), unique=True, max_size=1))
    aggs = draw(st.lists(st.sampled_from(view.aggregates), unique=True))
    aggs += draw(st.lists(st.sampled_from(AGGREGATES), unique=True, max_size=1))
    having = tuple(draw(st.lists(st.sampled_from(HAVING), unique=True, max_size=1)))
    query = Block(
        tuple(rels),
        tuple(joins),
        tuple(dict.fromkeys(filters)),
        grouped,
        tuple(dict.fromkeys(keys)) if grouped or keys else view.keys,
        tuple(dict.fromkeys(aggs)),
        having if grouped and draw(st.integers(0, 4)) == 0 else (),
        draw(st.booleans()),
        draw(st.integers(0, 5)) == 0,
        draw(st.integers(0, 7)) == 0,
    )
    query = query.tidy()
    if grouped and not keys and draw(st.booleans()):
        query = replace(query, keys=())  # a global aggregate
    return query


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    views = draw(st.lists(blocks(), min_size=1, max_size=6))
    queries = [draw(variations(draw(st.sampled_from(views)))) for _ in range(3)]
    queries += draw(st.lists(blocks(), max_size=1))
    return [v.sql() for v in views], [q.sql() for q in queries]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Model:
    return runner.hr_model(tmp_path_factory.mktemp("filter_tree"))


def query_blocks(sql: str, context: RewriteContext) -> list[Spjg]:
    """Every SELECT of the statement that has an SPJG form (the blocks the rewriter tries)."""
    try:
        tree = qualify_query(parse_query(sql), context.schema, context.default_db)
    except MvlatticeError:
        return []
    out = []
    for select in tree.find_all(exp.Select):
        try:
            out.append(normalize(translate(select, visible_ctes(select))))
        except UnsupportedSqlError:
            continue
    return out


def dropped(query: Spjg, context: RewriteContext) -> tuple[list[str], int]:
    """Views the matcher accepts that the tree leaves out; and how many it accepts."""
    candidates = set(candidate_positions(query, context))
    accepted = [
        i
        for i, view in enumerate(context.views)
        if isinstance(match(query, view, context.keys), Attempt)
    ]
    return [context.views[i].name for i in accepted if i not in candidates], len(accepted)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(workloads())
def test_the_tree_keeps_every_view_the_matcher_accepts(model: Model, workload) -> None:
    views, queries = workload
    context = runner.context(model, {f"v{i}": sql for i, sql in enumerate(views)})
    for sql in queries:
        for query in query_blocks(sql, context):
            missing, accepted = dropped(query, context)
            event("some view matches" if accepted else "no view matches")
            assert not missing, f"{sql}\nleft out: {missing}\nviews: {views}"
        assert decision(sql, context, True) == decision(sql, context, False)


def decision(sql: str, context: RewriteContext, use_index: bool) -> tuple:
    try:
        result = rewrite(sql, context, explain=False, use_index=use_index)
    except MvlatticeError as exc:
        return ("error", str(exc))
    return result.rewritten, result.sql, result.materializations

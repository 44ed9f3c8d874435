"""Templates (issue 31): a text read as its template and literals (`sql.slots`), and a decision
bound to new literals (`serving.templates`) equal to a fresh rewrite of the same text, for the
ad-hoc traffic's bindings — IN lists, month-aligned and unaligned date ranges (month tile or
day tile), values — over FoodMart's ad-hoc model (no Spark: its columns are written in)."""

from __future__ import annotations

import random

import pytest
import yaml

from mvlattice.datasets.foodmart import declared_types, with_columns
from mvlattice.model.loader import load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.proof import adhoc
from mvlattice.serving.templates import Templates, fragments, guard
from mvlattice.sql.slots import agrees_with_sqlglot, bind

SHAPE = "select a, sum(b) from t where c in ({}) and d >= {} and e = {} group by a limit 5"


def test_texts_of_one_shape_share_a_key_and_differ_in_slots() -> None:
    one = bind(SHAPE.format("'x', 'y'", "1997", "'p'"))
    two = bind(SHAPE.format("'z', 'w'", "2001", "'q'") + "  -- a comment")
    assert one is not None and two is not None
    assert one.key == two.key
    assert [s.text for s in one.slots] == ["x", "y", "1997", "p", "5"]
    assert [s.text for s in two.slots] == ["w", "z", "2001", "q", "5"]  # IN lists in order


def test_types_of_literals_are_part_of_the_key() -> None:
    keys = {bind(SHAPE.format("'x'", v, "'p'")).key for v in ("1", "1.5", "1.25", "'1'")}
    big = bind(SHAPE.format("'x'", str(2**40), "'p'"))
    assert len(keys) == 4 and big is not None and big.key not in keys


def test_in_lists_are_ordered_and_deduplicated_in_the_canonical_text() -> None:
    found = bind("select a from t where c in (3, 1, 3, 20) and e in ('b', 'a')")
    assert found is not None
    assert found.canonical == "select a from t where c in (1, 3, 20) and e in ('a', 'b')"
    assert found.key == bind("select a from t where c in (20, 3, 1) and e in ('a', 'b')").key


@pytest.mark.parametrize(
    "sql",
    [
        "select a from t where c = 'it''s'",  # a quote inside
        "select a from t where c = 'a\\'b'",  # a backslash
        "select a from t where c = '${x}'",  # substitution
        "select /*+ broadcast(t) */ a from t where c = 1",  # a hint
        "select a from t where c = 1 /* a /* nested */ comment */",
        "select a from t where c = 1 # no comment in Spark",
    ],
)
def test_text_that_is_not_plain_gives_no_template(sql: str) -> None:
    found = bind(sql)
    assert found is None or not found.slots


def test_literals_that_are_not_compared_stay_in_the_key() -> None:
    one = bind("select substr(a, 1, 2) from t where b = 1 limit 5")
    two = bind("select substr(a, 1, 3) from t where b = 1 limit 5")
    three = bind("select substr(a, 1, 2) from t where b = 1 limit 6")
    inner = bind("select * from (select a from t limit 5) where b = 1")
    huge = bind(f"select a from t where b = 1 limit {2**31}")
    assert one is not None and two is not None and three is not None
    assert len({one.key, two.key}) == 2 and one.key == three.key  # the final LIMIT is a slot
    assert [s.text for s in one.slots] == ["1", "5"]
    assert inner is not None and [s.text for s in inner.slots] == ["1"]
    assert huge is not None and [s.text for s in huge.slots] == ["1"]  # Spark refuses it


def test_both_tokenizers_find_the_same_slots_in_the_traffic() -> None:
    traffic = adhoc.AdhocTraffic(adhoc.EXAMPLE_DOMAIN, seed=11)
    bound = [bind(traffic.next().sql) for _ in range(400)]
    read = [b for b in bound if b is not None]
    assert len(read) > 380  # only texts with a quote inside a string are not read
    assert all(agrees_with_sqlglot(b) for b in read)


def test_guards_tell_month_starts_and_other_days_apart() -> None:
    text = "select a from t where d >= {} and d < {}"
    month = bind(text.format("'1997-03-01'", "'1997-05-01'"))
    other_month = bind(text.format("'1997-06-01'", "'1997-08-01'"))
    day = bind(text.format("'1997-03-02'", "'1997-05-01'"))
    swapped = bind(text.format("'1997-05-01'", "'1997-03-01'"))
    assert month and other_month and day and swapped
    assert guard(month, ()) != guard(day, ())
    assert guard(month, ()) != guard(swapped, ())  # an empty range is another decision
    # 1997-03-01 is a Saturday, 1997-06-01 a Sunday: both start months, neither a week
    assert guard(month, ()) == guard(other_month, ())


def adhoc_document(month_tile: bool) -> dict:
    """The ad-hoc model; with `month_tile`, also a tile by `date_trunc('MONTH', the_date)`:
    it answers month-aligned ranges only, so the guard must tell month starts apart."""
    doc = adhoc.foodmart_document()
    if month_tile:
        for schema in doc["schemas"]:
            for lattice in schema.get("lattices", []):
                if lattice["name"] == "star":
                    sql = list(lattice["sql"])
                    sql[0] += ", date_trunc('MONTH', t.the_date) as sale_month"
                    lattice["sql"] = sql
                    dims = ["sale_month", *adhoc.CALENDAR, *adhoc.PRODUCT]
                    lattice["tiles"].insert(0, {"dimensions": dims})
    return doc


@pytest.fixture(scope="module", params=[False, True], ids=["day tiles", "and a month tile"])
def context(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("templates")
    path = tmp / "foodmart_adhoc.yaml"
    path.write_text(yaml.safe_dump(with_columns(adhoc_document(request.param))))
    return context_for(load_model(path, warehouse=str(tmp)), types=declared_types())


BINDINGS = 2400
TEMPLATES = 6


def test_a_bound_template_equals_a_fresh_rewrite(context: object) -> None:
    """Per template, thousands of bindings: each one whose guard was seen before is bound
    into that guard's decision and compared with its own fresh rewrite (same views, same SQL)."""
    traffic = adhoc.AdhocTraffic(adhoc.EXAMPLE_DOMAIN, seed=23, count=TEMPLATES)
    rng = random.Random(5)
    entries: dict[tuple, tuple] = {}
    templates = Templates()
    compared = 0
    crossed: set[tuple[bool, ...]] = set()
    for _ in range(BINDINGS):
        query = traffic.next()
        bound = bind(query.sql)
        if bound is None:
            continue
        fresh = rewrite(bound.canonical, context, explain=False)
        key = templates.key((), context, bound)  # as the service files it
        if key in entries:
            spark, views = entries[key]
            assert spark.bind(bound) == fresh.sql, query.sql
            assert views == fresh.materializations
            compared += 1
        elif fresh.rewritten:
            constants = {(c.kind, c.text) for c in templates.constants(context)}
            cut = fragments(fresh.sql, bound, bound.fixed | constants, duckdb=False)
            if cut is not None:
                entries[key] = (cut, fresh.materializations)
        crossed.add(tuple(sorted(query.kinds)))
        rng.random()
    assert compared > BINDINGS // 3, compared
    kinds = set().union(*(set(k) for k in crossed))
    assert {adhoc.ALIGNED, adhoc.UNALIGNED, adhoc.IN_LIST, adhoc.VALUE} <= kinds
    views = {v for _, found in entries.values() for v in found}
    assert len(views) >= 2, views  # bindings of one template were decided onto other tiles

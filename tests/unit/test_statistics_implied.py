"""The FDs a lattice's many-to-one joins guarantee, and the representative the profiler sketches
instead of a set: pure logic over stars built by the real star builder."""

from __future__ import annotations

import itertools

from mvlattice.document import Problems
from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.star import build_star
from mvlattice.statistics.implied import closure, dependencies, representative

TABLES = {
    ("b", "sales"): ("product_id", "day_id", "customer_id", "qty"),
    ("b", "product"): ("product_id", "brand", "class_id"),
    ("b", "class"): ("class_id", "family"),
    ("b", "day"): ("day_id", "month"),
}
SQL = (
    "select 1 from b.sales as s join b.product as p using (product_id) "
    "join b.class as c on p.class_id = c.class_id join b.day as d using (day_id)"
)


def star_lattice() -> Lattice:
    problems = Problems("model.yaml")
    star = build_star(SQL, "b", lambda schema, table: TABLES.get((schema, table)), problems, "x")
    assert star is not None, problems.items
    return Lattice("sales", "b", SQL, star.nodes, star.edges, star.columns)


def test_keys_and_join_columns_determine_their_tables_below() -> None:
    lattice = star_lattice()
    fds = dependencies(lattice)
    labels = lattice.labels
    assert closure({"s.product_id"}, fds) == {
        "s.product_id", "p.product_id", "brand", "p.class_id", "c.class_id", "family"
    }  # fmt: skip
    assert closure({"p.class_id"}, fds) == {"p.class_id", "c.class_id", "family"}
    assert closure({"brand"}, fds) == {"brand"}  # a column of a table is no key of it
    assert closure({"customer_id", "qty"}, fds) == {"customer_id", "qty"}
    assert "month" in closure({"d.day_id"}, fds) and "s.day_id" in closure({"d.day_id"}, fds)
    assert set(labels) >= closure(set(labels), fds)


def test_representatives_drop_exactly_the_determined_columns() -> None:
    lattice = star_lattice()
    fds, order = dependencies(lattice), {c: i for i, c in enumerate(lattice.labels)}

    def rep(*cols: str) -> frozenset[str]:
        return representative(frozenset(cols), fds, order)

    assert rep("s.product_id", "p.product_id") == {"s.product_id"}  # first in lattice order
    assert rep("p.product_id", "brand", "family") == {"p.product_id"}
    assert rep("brand", "family") == {"brand", "family"}  # brand -> family is data, not a key
    assert rep("s.product_id", "month", "customer_id") == {"s.product_id", "month", "customer_id"}
    assert rep("d.day_id", "month") == {"d.day_id"}
    # Every set's representative is a subset whose closure holds the whole set.
    for k in (1, 2, 3):
        for cols in itertools.combinations(lattice.labels, k):
            found = rep(*cols)
            assert found <= set(cols) and set(cols) <= closure(found, fds)

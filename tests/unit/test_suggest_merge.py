"""Shapes and merging: paths name nodes, union evolves, measures are counted by weight."""

from __future__ import annotations

import pytest

from mvlattice.suggest.graph import BlockStar, MeasureCall
from mvlattice.suggest.merge import Contribution, Seed, merge_stars
from mvlattice.suggest.star_shape import Shape, Step

FACT = ("s", "sales")
PRODUCT = Step.of(("s", "product"), ("product_id",), ("product_id",))
CLASS = Step.of(("s", "product_class"), ("class_id",), ("class_id",))
TIME = Step.of(("s", "time"), ("time_id",), ("time_id",))
SHIP = Step.of(("s", "time"), ("ship_time_id",), ("time_id",))


def shape(*paths: tuple[Step, ...]) -> Shape:
    return Shape(FACT, frozenset(paths))


def star(s: Shape, *measures: MeasureCall) -> BlockStar:
    aliases = {"f": (), **{f"n{i}": p for i, p in enumerate(sorted(s.paths, key=len))}}
    return BlockStar(s, aliases, measures, ())


def test_shapes_need_closed_paths_and_describe_in_calcite_notation() -> None:
    with pytest.raises(ValueError, match="closed under prefixes"):
        shape((PRODUCT, CLASS))
    snowflake = shape((PRODUCT,), (PRODUCT, CLASS), (TIME,), (SHIP,))
    assert snowflake.describe() == (
        "sales (product:product_id (product_class:class_id) time:ship_time_id time:time_id)"
    )
    assert snowflake.ordered() == ((), (PRODUCT,), (PRODUCT, CLASS), (SHIP,), (TIME,))


def test_union_keeps_two_roles_of_one_table_apart_and_ignores_case() -> None:
    upper = Step.of(("S", "PRODUCT"), ("PRODUCT_ID",), ("PRODUCT_ID",))
    merged = shape((PRODUCT,)).union(Shape(("S", "SALES"), frozenset({(upper,), (TIME,)})))
    assert merged.paths == frozenset({(PRODUCT,), (TIME,)})
    assert merged.union(shape((SHIP,))).describe() == (
        "sales (product:product_id time:ship_time_id time:time_id)"
    )
    with pytest.raises(ValueError, match="same root"):
        merged.union(Shape(("s", "other")))


def test_evolve_merges_per_root_and_counts_measure_weights() -> None:
    count, total = MeasureCall("count"), MeasureCall("sum", (((), "amount"),))
    log = [
        Contribution("q1", 1.0, star(shape((PRODUCT,)), count)),
        Contribution("q2", 3.0, star(shape((TIME,)), count, total)),
        Contribution("q3", 1.0, star(Shape(("s", "product")), count)),
    ]
    merged = merge_stars(log)
    assert [m.describe() for m in merged] == [
        "sales (product:product_id time:time_id)",
        "product",
    ]
    sales = merged[0]
    assert sales.measures == ((count, 4.0), (total, 3.0))
    assert (sales.queries, sales.weight, sales.graphs) == (("q1", "q2"), 4.0, 2)
    assert sales.describe_measures() == "[count(), sum(sales.amount)]"


def test_without_evolve_one_lattice_per_shape() -> None:
    log = [
        Contribution("q1", 1.0, star(shape((PRODUCT,)))),
        Contribution("q2", 1.0, star(shape((TIME,)))),
        Contribution("q3", 1.0, star(shape((PRODUCT,)))),
    ]
    merged = merge_stars(log, evolve=False)
    assert [(m.describe(), m.queries) for m in merged] == [
        ("sales (product:product_id)", ("q1", "q3")),
        ("sales (time:time_id)", ("q2",)),
    ]


def test_seeds_come_first_and_absorb_stars_on_their_root() -> None:
    seed = Seed("star", shape((PRODUCT,)), (MeasureCall("count"),))
    merged = merge_stars([Contribution("q1", 2.0, star(shape((TIME,))))], seeds=(seed,))
    (lattice,) = merged
    assert (lattice.seed, lattice.describe()) == ("star", "sales (product:product_id time:time_id)")
    assert lattice.measures == ((MeasureCall("count"), 0.0),)
    untouched = merge_stars([], seeds=(seed,))
    assert untouched[0].queries == ()


def test_a_query_counts_once_per_lattice_even_with_several_blocks() -> None:
    count = MeasureCall("count")
    log = [
        Contribution("q1", 2.0, star(shape((PRODUCT,)), count)),
        Contribution("q1", 2.0, star(shape((TIME,)), count)),
    ]
    (lattice,) = merge_stars(log)
    assert (lattice.weight, lattice.measures) == (2.0, ((count, 2.0),))

"""Incremental or full by estimated rows read, and which tiles can take retracted rows — pure."""

from __future__ import annotations

from mvlattice.jobs.changerows import finest_spec
from mvlattice.jobs.cost import LOCAL_MIN_SAVING, choose
from mvlattice.jobs.retraction import retraction_blocker
from mvlattice.jobs.status import RefreshPath
from mvlattice.lattice.lattice import Measure, TileSpec

COUNT, SUM_Q = Measure("count"), Measure("sum", ("quantity",))


def spec(*measures: Measure, dims: tuple[str, ...] = ("year",)) -> TileSpec:
    return TileSpec("sales", dims, measures)


def test_the_path_reading_fewer_rows_is_chosen() -> None:
    small = choose(tile_rows=1_000, change_rows=100, full_rows=50_000, full_from="t_fine")
    assert small.choice == RefreshPath.INCREMENTAL and small.incremental_rows == 1_100
    assert small.describe() == (
        "incremental ~1,100 rows read, full ~50,000 from t_fine: incremental"
    )
    big = choose(tile_rows=400_000, change_rows=200_000, full_rows=500_000, full_from="star")
    assert (big.choice, big.why) == (RefreshPath.FULL, "a full refresh reads fewer rows")
    # Saving fewer rows than MIN_SAVING is not worth leaving the incremental path.
    close = choose(tile_rows=40_000, change_rows=20_000, full_rows=50_000, full_from="star")
    assert close.choice == RefreshPath.INCREMENTAL
    # A merge run in-process costs no Spark job: full must save far more to be worth it.
    in_process = choose(
        tile_rows=400_000, change_rows=200_000, full_rows=500_000, full_from="star",
        min_saving=LOCAL_MIN_SAVING,
    )  # fmt: skip
    assert in_process.choice == RefreshPath.INCREMENTAL
    far = choose(
        tile_rows=400_000, change_rows=3_000_000, full_rows=500_000, full_from="star",
        min_saving=LOCAL_MIN_SAVING,
    )  # fmt: skip
    assert far.choice == RefreshPath.FULL
    unknown = choose(tile_rows=10, change_rows=None, full_rows=5, full_from="star")
    assert unknown.choice == RefreshPath.INCREMENTAL and unknown.incremental_rows is None
    blocked = choose(
        tile_rows=10, change_rows=1, full_rows=10**9, full_from="star", blocker="MIN cannot"
    )
    assert (blocked.choice, blocked.why) == (RefreshPath.FULL, "MIN cannot")


def test_which_measures_take_deletes() -> None:
    assert retraction_blocker(spec(COUNT, SUM_Q), {"quantity"}) is None
    assert retraction_blocker(spec(COUNT, Measure("avg", ("quantity",))), ()) is None
    assert retraction_blocker(spec(COUNT, SUM_Q, Measure("count", ("quantity",))), ()) is None
    assert retraction_blocker(spec(SUM_Q), {"quantity"}) == (
        "deletes/updates need a COUNT(*) measure to know when a group empties"
    )
    assert retraction_blocker(spec(COUNT, SUM_Q), ()) == (
        "sum_quantity: SUM over nullable quantity without COUNT(quantity) cannot tell an "
        "emptied sum from 0"
    )
    assert retraction_blocker(spec(COUNT, Measure("min", ("price",))), ()) == (
        "min_price: MIN cannot take deleted rows back"
    )
    distinct = Measure("count", ("customer",), distinct=True, approximate=True)
    assert retraction_blocker(spec(COUNT, distinct), ()) == (
        "hll_sketch_customer: a distinct count cannot take deleted rows back"
    )


def test_the_change_is_aggregated_at_every_dimension_and_mergeable_measure() -> None:
    exact = Measure("count", ("customer",), distinct=True)
    finest = finest_spec(
        "sales", (spec(COUNT, dims=("year", "month")), spec(SUM_Q, exact, dims=("city",)))
    )
    assert finest == TileSpec("sales", ("year", "month", "city"), (COUNT, SUM_Q))

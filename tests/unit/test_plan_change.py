"""A plan that moved since the last one says so in one line (issue 36: plans weighted by the
query log drift as it grows, and `gc` then removes the tiles the new plan dropped)."""

from __future__ import annotations

from mvlattice.jobs.planning import plan_change


def tile(*dimensions: str, measures: tuple[str, ...] = ("count",)) -> dict:
    return {
        "lattice": "star",
        "dimensions": list(dimensions),
        "measures": [{"agg": m} for m in measures],
    }


def test_the_first_plan_and_the_same_plan_say_nothing() -> None:
    plan = [tile("the_year"), tile("the_year", "quarter")]
    assert plan_change("star", None, plan) is None
    assert plan_change("star", plan, list(reversed(plan))) is None


def test_added_and_dropped_tiles_are_counted() -> None:
    before = [tile("the_year"), tile("the_year", "quarter"), tile("brand")]
    after = [tile("the_year"), tile("the_month")]
    assert plan_change("star", before, after) == (
        "lattice 'star': the plan changed since the last one: 1 tile added, 2 tiles dropped "
        "(`gc` removes dropped tiles)"
    )


def test_other_measures_make_another_tile_and_nothing_dropped_says_no_gc() -> None:
    before = [tile("the_year")]
    after = [tile("the_year"), tile("the_year", measures=("count", "sum"))]
    assert plan_change("star", before, after) == (
        "lattice 'star': the plan changed since the last one: 1 tile added, 0 tiles dropped"
    )

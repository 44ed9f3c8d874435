"""HRU96 greedy view selection: Harinarayan, Rajaraman, Ullman, *Implementing Data Cubes
Efficiently*, SIGMOD 1996.

Views form a partial order "w ⪯ v: w can be answered from v", given as (parent, child) edges;
the order is their transitive closure, computed here, so covering edges or the full relation both
do. Linear cost model (§3.1): answering w costs the size of the cheapest selected view u_w with
w ⪯ u_w. Benefit of v given the selection S (§4):

    B(v, S) = Σ_{w ⪯ v} weight(w) · max(0, C(u_w) − C(v))

The paper prints the difference as C(v) − C(u); its worked numbers (Fig. 8) use C(u) − C(v).
The benefit only shrinks as S grows (it is submodular), which makes lazy greedy exact and gives
the paper's guarantee: k greedy picks reach at least 1 − (1 − 1/k)^k ≥ 1 − 1/e of the best
possible benefit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mvlattice.errors import UsageError
from mvlattice.plan.hru_order import (
    Edge,
    bit_indices,
    check_single_top,
    closure,
    indexed,
    required_views,
    subset_bits,
)
from mvlattice.plan.hru_search import GreedyResult, options, select

__all__ = ["Edge", "GreedyResult", "cube_edges", "greedy", "greedy_over_sets", "set_name"]


def greedy(
    sizes: Mapping[str, float],
    edges: Iterable[Edge],
    k: int | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    space: float | None = None,
    max_millis: float | None = None,
    min_benefit: float = 0.0,
    required: Iterable[str] = (),
    lazy: bool = True,
    record_rounds: bool = True,
    round_top: int | None = None,
) -> GreedyResult:
    """HRU96 greedy selection of views to materialize.

    `sizes` maps each view to its rows; `edges` are (parent, child) pairs, child computable from
    parent. The top view, the only one without a parent, is always selected and never a pick.
    `weights` are query frequencies; when given, views missing from it have weight 0 (nobody
    asks for them), otherwise every view has weight 1.

    Stopping: `k` greedy picks; `space` caps the summed size of greedy picks (candidates that do
    not fit are skipped, and candidates are ranked by benefit per row); with neither, greedy goes
    on while any candidate has benefit > `min_benefit`. A view whose benefit is <= `min_benefit`
    is never picked. `max_millis` stops the search and returns the picks so far with
    `timed_out=True` (the only nondeterministic input).

    `required` views (tiles a model declares) are selected first, in the given order, whatever
    their benefit; they count against neither `k` nor `space`, like the top view.

    Ties: among equal benefit (benefit per row with `space`), the smaller view wins, then the
    lexicographically smaller name. `lazy=True` gives the same picks as `lazy=False`, faster.

    `record_rounds` keeps each round's benefit table (`GreedyResult.rounds`); by default it
    holds every unselected view, which costs a plain-greedy round; `round_top=n` keeps only
    the n best views of each round (by the tie-break key), which lazy greedy finds cheaply.
    """
    names = tuple(sorted(sizes))
    index = {name: i for i, name in enumerate(names)}
    below = closure(names, index, edges)
    opts = options(k, space, max_millis, min_benefit, lazy, record_rounds, round_top)
    return select(indexed(names, sizes, weights, below), opts, required_views(index, required))


def greedy_over_sets(
    sizes_by_set: Mapping[frozenset[str], float],
    k: int | None = None,
    *,
    weights: Mapping[frozenset[str], float] | None = None,
    space: float | None = None,
    max_millis: float | None = None,
    min_benefit: float = 0.0,
    required: Iterable[frozenset[str]] = (),
    lazy: bool = True,
    record_rounds: bool = True,
    round_top: int | None = None,
) -> GreedyResult:
    """`greedy` over group-by column sets, w ⪯ v iff w ⊆ v; views are named by `set_name`.

    The set of all columns must be among the views: it is the top.
    """
    named = {set_name(columns): columns for columns in sizes_by_set}
    if len(named) != len(sizes_by_set):
        raise UsageError("two column sets have the same name; column names must not hold ','")
    names = tuple(sorted(named))
    index = {name: i for i, name in enumerate(names)}
    below = subset_bits(tuple(named[name] for name in names))
    check_single_top(names, below)
    plain_sizes = {set_name(columns): size for columns, size in sizes_by_set.items()}
    plain_weights = None if weights is None else {set_name(c): w for c, w in weights.items()}
    lat = indexed(names, plain_sizes, plain_weights, below)
    wanted = required_views(index, (set_name(columns) for columns in required))
    opts = options(k, space, max_millis, min_benefit, lazy, record_rounds, round_top)
    return select(lat, opts, wanted)


def set_name(columns: frozenset[str]) -> str:
    """The view name of a column set: sorted columns joined by ','; the grand total is '()'."""
    return ",".join(sorted(columns)) if columns else "()"


def cube_edges(views: Mapping[str, frozenset[str]]) -> tuple[Edge, ...]:
    """Covering (parent, child) edges of the subset order on column sets: child ⊂ parent with no
    view strictly between them. `greedy` takes its transitive closure itself."""
    names = tuple(sorted(views))
    sets = tuple(views[name] for name in names)
    if len(set(sets)) != len(sets):
        raise UsageError("two views have the same column set; a view's columns must be unique")
    below = subset_bits(sets)
    strictly = [bits & ~(1 << v) for v, bits in enumerate(below)]
    edges: list[Edge] = []
    for v, under in enumerate(strictly):
        covered = 0
        for u in bit_indices(under):
            covered |= strictly[u]
        edges.extend((names[v], names[u]) for u in bit_indices(under & ~covered))
    return tuple(edges)

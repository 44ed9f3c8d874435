"""Step 4, range subsumption (GL01 §3.1.2).

For every equivalence class, the range the view keeps must contain the range the query asks
for; where the query's range is tighter, its range predicate is applied to the view.

If exactly one class fails only because the view's range is tighter (and still overlaps the
query's), the view can answer part of the query: Calcite's union rewriting reads the rest from
the base tables. The split is recorded here and completed by `union_compensation`.
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match.atoms import all_text, typed
from mvlattice.mvrewrite.match.attempt import PREDICATE_NOT_IMPLIED, Attempt, Rejection, UnionSplit
from mvlattice.mvrewrite.match.predicates import NULLNESS, TEXT, RangeKey
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.sql import ir
from mvlattice.sql.to_sql import sql_of

SPLITTABLE_KINDS = ("number", "date", "timestamp", TEXT, NULLNESS)


def check(attempt: Attempt) -> Attempt | Rejection:
    query, view = attempt.query_preds, attempt.view_preds
    assert query is not None and view is not None
    view = view.rekeyed(query.classes)
    split = None
    for (rep, kind), kept in sorted(view.ranges.items(), key=_order):
        wanted = query.effective(rep, kind)
        if kept.contains(wanted):
            continue
        base_column = _in_from(attempt, rep)
        if (
            split is None
            and base_column is not None
            and _splittable(attempt, rep, kind, kept, wanted)
        ):
            split = UnionSplit(rep, kind, kept, wanted, base_column)
            continue
        return _not_implied(rep, kept, wanted)
    compensation = tuple(
        wanted.predicate(rep)
        for (rep, kind), wanted in sorted(query.ranges.items(), key=_order)
        if not wanted.contains(view.effective(rep, kind))
    )
    return replace(
        attempt,
        compensation=attempt.compensation + tuple(c for c in compensation if c is not None),
        split=split,
    )


def _in_from(attempt: Attempt, rep: ir.Column) -> ir.Column | None:
    """A column of `rep`'s class from the query's own FROM: the union's base branch reads
    only those tables, so a range on a table only the view joins cannot be split there."""
    assert attempt.query_preds is not None
    members = attempt.query_preds.classes.members(rep)
    return next((c for c in members if c.rel in attempt.query.rels), None)


def _splittable(attempt: Attempt, rep: ir.Column, kind: str, kept: Range, wanted: Range) -> bool:
    """Only a range whose complement the base branch can state: not strings of unknown type,
    and strings only over a class of the query whose columns are all STRING (`atoms`)."""
    if kind == TEXT and not _strings(attempt, rep):
        return False
    return kind in SPLITTABLE_KINDS and not kept.intersect(wanted).is_empty


def _strings(attempt: Attempt, rep: ir.Column) -> bool:
    assert attempt.query_preds is not None
    type_of = typed((*attempt.query.tables, *attempt.extra), attempt.keys.type_of)
    return all_text(attempt.query_preds.classes.members(rep), type_of)


def _not_implied(rep: ir.Column, kept: Range, wanted: Range) -> Rejection:
    view_side = kept.predicate(rep)
    query_side = wanted.predicate(rep)
    asked = (
        f"the query asks for {sql_of(query_side)}"
        if query_side is not None
        else f"the query does not restrict {rep}"
    )
    return Rejection(
        PREDICATE_NOT_IMPLIED,
        f"the view keeps only rows where {sql_of(view_side) if view_side else 'TRUE'}; "
        f"{asked} (a view with a wider range, or none, would match)",
    )


def _order(item: tuple[RangeKey, Range]) -> tuple[str, str, str]:
    (rep, kind), _ = item
    return (rep.rel, rep.name, kind)

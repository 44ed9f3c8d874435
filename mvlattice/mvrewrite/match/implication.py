"""Implication between a block's predicates and one disjunctive predicate (GL01 §3.1.2's
subsumption tests, over normal forms; issue 20, class 3).

P implies a disjunction D when every conjunction of P's normal form is covered by D's
conjunctions. A conjunction is covered when one of D's implies it range by range — or, split
along one class into the part inside a conjunction's range and the part outside, each part is
covered (`x IN (1, 2) AND y > 0` by `(x = 1 AND y > 0) OR (x = 2 AND y > 0)`). The pieces
are bounded by WORK, the comparisons of a piece with a conjunction one test may make; beyond
it, as beyond the normal form's cap, the answer is "too large".

P's normal form is built from its ranges and plain predicates, and only those of its
disjunctions that constrain a class of D or hold one of D's predicates (no other can help):
dropping conjuncts weakens P, so what the rest implies, P implies. The disjunctions are tried
one at a time before all together, so the product of all of them — the only form that may
grow beyond the cap — is built only when no single one suffices.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from mvlattice.mvrewrite.match.normal_form import (
    CAP,
    Conjunction,
    Form,
    TooLarge,
    compound,
    conjoin,
    conjunction,
    normal_form,
    of,
)
from mvlattice.mvrewrite.match.predicates import Predicates
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.sql import ir

WORK = 1024  # conjunctions one implication test may compare a piece with


@dataclass(slots=True)
class _Budget:
    left: int = field(default=WORK)

    def spend(self, amount: int) -> None:
        self.left -= amount
        if self.left < 0:
            raise TooLarge


def implies(preds: Predicates, target: ir.Expr, narrowed: Iterable = ()) -> bool:
    """Whether `preds` (with the extra ranges `narrowed`: (key, range) pairs) imply
    `target`, a canonical predicate under `preds.classes`. Raises TooLarge.

    Tried with the block's ranges and plain predicates alone, then with each related
    disjunction, then with all of them: each is a weakening of the block, and the last one's
    normal form is the only one that may grow large."""
    wanted = normal_form(target, preds.classes, preds.text)
    base = of(
        conjunction(
            (*preds.ranges.items(), *narrowed),
            (r for r in preds.residuals if not compound(r)),
        )
    )
    related = _related(preds, target, wanted)
    tries = [(base,), *((base, form) for form in related)]
    if len(related) > 1:
        tries.append((base, *related))
    budget = _Budget()
    return any(_all_covered(conjoin(forms, CAP), wanted, budget) for forms in tries)


def _all_covered(held: Form, wanted: Form, budget: _Budget) -> bool:
    # a block no row satisfies implies anything; it is not worth a rewrite, so say no
    return bool(held) and all(covered(c, wanted, budget) for c in held)


def _related(preds: Predicates, target: ir.Expr, wanted: Form) -> list[Form]:
    """Normal forms of the block's disjunctions that constrain a class or hold a predicate of
    `target`'s: no other can help imply it. One too large to build that shares a column
    with `target` makes the whole question too large."""
    reps = {rep for c in wanted for rep in _reps(c)}
    atoms = {a for c in wanted for a in c.atoms}
    columns = ir.columns(target)
    out = []
    for residual in preds.residuals:
        if not compound(residual):
            continue
        try:
            form = normal_form(residual, preds.classes, preds.text)
        except TooLarge:
            if columns.isdisjoint(ir.columns(residual)):
                continue
            raise
        if any(not atoms.isdisjoint(c.atoms) or not reps.isdisjoint(_reps(c)) for c in form):
            out.append(form)
    return out


def _reps(item: Conjunction) -> set[ir.Column]:
    return {rep for rep, _ in item.keys}


def covered(item: Conjunction, form: Form, budget: _Budget | None = None) -> bool:
    """Every row `item` keeps, some conjunction of `form` keeps."""
    usable = [c for c in form if c.atoms <= item.atoms]
    return _cover(item, usable, budget or _Budget())


def _cover(item: Conjunction, form: list[Conjunction], budget: _Budget) -> bool:
    if item.is_empty:
        return True
    budget.spend(len(form))
    have = _Effective(item)
    overlapping = [c for c in form if all(not v.intersect(have[k]).is_empty for k, v in c.ranges)]
    if any(all(v.contains(have[k]) for k, v in c.ranges) for c in overlapping):
        return True  # atoms were checked by `covered`
    for c in overlapping:
        for key, value in c.ranges:
            if value.contains(have[key]):
                continue
            inside, outside = have[key].intersect(value), have[key].intersect(value.complement())
            return _cover(item.with_range(key, inside), overlapping, budget) and _cover(
                item.with_range(key, outside), overlapping, budget
            )
    return False


class _Effective(dict):
    """A conjunction's effective range per key, each computed once."""

    def __init__(self, item: Conjunction) -> None:
        super().__init__()
        self.item = item

    def __missing__(self, key: tuple) -> Range:
        found = self[key] = self.item.effective(*key)
        return found

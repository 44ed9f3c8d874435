"""The smallest change to a tile that makes the rewriter answer a query, found by asking it.

The rewriter's explanation says why one view failed, one thing at a time: MISSING_COLUMN ends
with "(add dimension 'c' to a tile of lattice 'L')", CANNOT_ROLL_UP with "(add measure
sum(x) to a tile of lattice 'L')". `complete` applies that fix to the tile, rewrites again
against a catalog holding only the changed tile (every view usable), and repeats until the
query is rewritten — so every change `advise` proposes is one the rewriter was seen to accept —
or until a reason no tile change fixes (other tables, a predicate, unsupported SQL).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mvlattice.advise.advice import Fix
from mvlattice.jobs.availability import AllUsable
from mvlattice.jobs.naming import tile_qualified_name
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.mvrewrite.context import context_for, delta_log_types
from mvlattice.mvrewrite.rewriter import rewrite

if TYPE_CHECKING:
    from mvlattice.model.loader import Model
    from mvlattice.mvrewrite.rewriter import Explanation

# The hints of mvrewrite.match.output_mapping / prefilter (dimension) and rollup (measure).
DIMENSION = re.compile(r"\(add dimension '(?P<label>[^']+)' to a tile of lattice '[^']+'\)")
MEASURE = re.compile(
    r"\(add measure (?P<func>\w+)\((?P<args>[^)]*)\) to a tile of lattice '[^']+'\)"
)
MAX_STEPS = 12  # fixes tried per tile before giving up (a tile grows one column per step)


def fix_of(message: str) -> Fix | None:
    """The fix a rejection's hint names, if any."""
    found = DIMENSION.search(message)
    if found:
        return Fix(kind="dimension", label=found["label"])
    found = MEASURE.search(message)
    if found:
        args = tuple(a.strip() for a in found["args"].split(",") if a.strip() not in ("", "*"))
        measure = Measure(found["func"], args)
        return Fix(kind="measure", label=str(measure), measure=measure)
    return None


class Search:
    """Rewrites against one hypothetical tile at a time (contexts cached per tile)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.types = {k: v for t in model.tables for k, v in delta_log_types(t).items()}
        self._answers: dict[tuple[str, TileSpec], Explanation | None] = {}

    def complete(self, sql: str, spec: TileSpec) -> tuple[Fix, ...] | None:
        """The fixes that make a tile like `spec` answer `sql` (empty: it does as it is), or
        None when no series of hinted fixes does."""
        fixes: list[Fix] = []
        for _ in range(MAX_STEPS):
            rejection = self._reject(sql, spec)
            if rejection is None:
                return tuple(fixes)
            fix = fix_of(rejection.message)
            if fix is None or fix in fixes:
                return None
            fixes.append(fix)
            spec = fix.apply(spec)
        return None

    def answers(self, sql: str, spec: TileSpec) -> bool:
        """Whether a tile like `spec` answers `sql` as it is."""
        return self._reject(sql, spec) is None

    def _reject(self, sql: str, spec: TileSpec) -> Explanation | None:
        """None when `spec` answers `sql`, else the rejection of that tile (or of the query)."""
        key = (sql, spec)
        if key not in self._answers:
            context = context_for(self.model, tiles=[spec], materializations=(), types=self.types)
            result = rewrite(sql, context, AllUsable(), explain=True)
            name = tile_qualified_name(spec)
            if result.rewritten:
                self._answers[key] = None
            else:
                mine = [e for e in result.explain if e.view == name]
                self._answers[key] = (mine or list(result.explain) or [_nothing()])[0]
        return self._answers[key]


# Reasons a change to the tile can fix (the last two: it matched, but is not built or fresh).
FIXABLE = ("MISSING_COLUMN", "CANNOT_ROLL_UP", "STALE", "NOT_AVAILABLE")


def _nothing() -> Explanation:
    from mvlattice.mvrewrite.rewriter import Explanation

    return Explanation(None, "rejected", "", "no explanation")  # type: ignore[arg-type]

"""The summary of a suggestion: queries read, parsed, used, skipped by reason, and more."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mvlattice.suggest.catalog_blocks import Skip
from mvlattice.suggest.direction import SOURCES
from mvlattice.suggest.logs import LogEntry
from mvlattice.suggest.merge import SuggestedLattice
from mvlattice.suggest.reading import Outcome
from mvlattice.suggest.tiles import ParsedQuery


@dataclass(frozen=True, slots=True)
class SkipCount:
    reason: str
    count: int
    examples: tuple[str, ...]  # "id: detail" of the first few


@dataclass(frozen=True, slots=True)
class Summary:
    read: int
    parsed: int
    used: int
    skipped: tuple[SkipCount, ...]
    blocks: int
    blocks_used: int
    directions: tuple[tuple[str, int], ...]  # source -> joins it decided (merged lattices)
    lattices: int
    lattices_without_merging: int
    lattices_with_merging: int
    window: tuple[str, str] | None  # first and last timestamp in the log, when it has them
    statistics: str


class LatticeSuggestionLike(Protocol):
    @property
    def suggested(self) -> SuggestedLattice: ...


def summarize(
    entries: Sequence[LogEntry],
    parsed: Sequence[tuple[LogEntry, ParsedQuery | Skip]],
    outcomes: Sequence[Outcome],
    built: Sequence[LatticeSuggestionLike],
    other_mode: tuple[int, bool],
    statistics: str,
) -> Summary:
    """`other_mode`: (lattices the other merge mode would give, whether this one merged)."""
    skips: dict[str, list[str]] = {}
    for entry, result in parsed:
        if not isinstance(result, ParsedQuery):
            skips.setdefault(result.reason, []).append(f"{entry.id}: {result.detail}")
    for outcome in outcomes:
        if outcome.skip is not None and outcome.query is not None:
            detail = f"{outcome.query.id}: {outcome.skip.detail}".rstrip(": ")
            skips.setdefault(outcome.skip.reason, []).append(detail)
    directions = Counter(s for b in built for s in b.suggested.decided.values())
    stamps = sorted(e.timestamp for e in entries if e.timestamp)
    counts = (other_mode[0], len(built))
    without, with_ = counts if other_mode[1] else counts[::-1]
    return Summary(
        read=len(entries),
        parsed=len(outcomes),
        used=sum(1 for o in outcomes if o.contributions),
        skipped=tuple(
            SkipCount(reason, len(ids), tuple(ids[:5]))
            for reason, ids in sorted(skips.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        ),
        blocks=sum(o.blocks for o in outcomes),
        blocks_used=sum(o.blocks_used for o in outcomes),
        directions=tuple((s, directions[s]) for s in SOURCES if directions[s]),
        lattices=len(built),
        lattices_without_merging=without,
        lattices_with_merging=with_,
        window=(stamps[0], stamps[-1]) if stamps else None,
        statistics=statistics,
    )

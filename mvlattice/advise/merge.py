"""One advice element per proposed tile: the misses whose changes one tile answers, merged.

Each missed query gets the change to its nearest tile, and queries needing different changes
form different groups. Two groups that extend the same tile (one lacks a column, the other a
measure), or whose proposed tiles cover one another (same lattice; one has every dimension and
measure of the other), would each print an element — two tiles where one answers both. They are
merged into one change: the union of their dimensions and measures (for the same tile: its
fixes together; else the covering tile). A merge is kept only when the rewriter answers every
query of both groups with the merged tile (`answers`): a finer tile does not always answer what
a coarser one does (a COUNT(DISTINCT) measure rolls up only at its own grain).

Groups that only need a tile built or refreshed are never merged: they propose no new element.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from mvlattice.advise.advice import Change, Group
from mvlattice.lattice.lattice import TileSpec

Answers = Callable[[str, TileSpec], bool]  # does a tile like this answer the SQL as it is?
Found = tuple[tuple[str, int], ...]  # (distinct SQL, times asked), most asked first


@dataclass(frozen=True, slots=True)
class Bucket:
    """One element to advise: its change, and the changes (with their queries) it answers."""

    change: Change
    parts: tuple[tuple[Change, Found], ...]

    @property
    def queries(self) -> int:
        return sum(n for _, found in self.parts for _, n in found)


def merge(grouped: Mapping[Change, Sequence[tuple[str, int]]], answers: Answers) -> list[Bucket]:
    """The changes with their queries, merged until no two propose tiles one tile answers;
    most queries first."""
    out: list[Bucket] = []
    for change, found in sorted(grouped.items(), key=lambda item: _weight(item[1])):
        out = _absorb(out, Bucket(change, ((change, tuple(found)),)), answers)
    return sorted(out, key=lambda b: (-b.queries, _key(b.change)))


def groups(buckets: Iterable[Bucket], examples: int) -> tuple[Group, ...]:
    """Each bucket as a report group; a merged one lists the groups it answers as parts."""
    out = []
    for bucket in buckets:
        parts = tuple(_group(change, found, examples) for change, found in bucket.parts)
        out.append(
            Group(
                change=bucket.change,
                queries=bucket.queries,
                distinct=sum(p.distinct for p in parts),
                examples=tuple(sql for p in parts for sql in p.examples),
                parts=parts if len(parts) > 1 else (),
            )
        )
    return tuple(out)


def joined(a: Change, b: Change) -> Change | None:
    """One change proposing a tile that holds both `a`'s and `b`'s, or None when they do not
    meet (another lattice, unrelated tiles, or only a build or a refresh)."""
    if a.spec.lattice != b.spec.lattice or not _proposes(a) or not _proposes(b):
        return None
    if a.base is not None and a.base == b.base:
        fixes = a.fixes + tuple(f for f in b.fixes if f not in a.fixes)
        return Change(spec=_union(a.spec, b.spec), base=a.base, fixes=fixes, defaults=a.defaults)
    if covers(a.spec, b.spec):
        return a
    if covers(b.spec, a.spec):
        return b
    return None


def covers(big: TileSpec, small: TileSpec) -> bool:
    """Whether `big` holds every dimension and measure of `small` (same lattice)."""
    return (
        big.lattice == small.lattice
        and set(small.dimensions) <= set(big.dimensions)
        and set(small.measures) <= set(big.measures)
    )


def _absorb(out: list[Bucket], bucket: Bucket, answers: Answers) -> list[Bucket]:
    """`out` with `bucket` merged into the first element it meets — the merged tile, being
    bigger, may then meet another, so it is absorbed again — else appended."""
    for i, other in enumerate(out):
        both = _merged(other, bucket, answers)
        if both is not None:
            return _absorb(out[:i] + out[i + 1 :], both, answers)
    return [*out, bucket]


def _merged(a: Bucket, b: Bucket, answers: Answers) -> Bucket | None:
    change = joined(a.change, b.change)
    if change is None:
        return None
    for bucket in (a, b):  # each was seen answered by its own tile; check the merged one
        if bucket.change.spec != change.spec:
            sqls = (sql for _, found in bucket.parts for sql, _ in found)
            if not all(answers(sql, change.spec) for sql in sqls):
                return None
    return Bucket(change, a.parts + b.parts)


def _proposes(change: Change) -> bool:
    """A new element to declare: a new tile, or an existing one extended."""
    return change.base is None or bool(change.fixes)


def _union(a: TileSpec, b: TileSpec) -> TileSpec:
    dimensions = a.dimensions + tuple(d for d in b.dimensions if d not in a.dimensions)
    measures = a.measures + tuple(m for m in b.measures if m not in a.measures)
    return TileSpec(a.lattice, dimensions, measures)


def _group(change: Change, found: Found, examples: int) -> Group:
    return Group(
        change=change,
        queries=sum(n for _, n in found),
        distinct=len(found),
        examples=tuple(sql for sql, _ in found[:examples]),
    )


def _weight(found: Sequence[tuple[str, int]]) -> tuple[int, str]:
    """Most asked first, so a merge starts from the biggest group (then by SQL: deterministic)."""
    return -sum(n for _, n in found), found[0][0] if found else ""


def _key(change: Change) -> tuple[str, str, str]:
    return change.spec.lattice, change.base or "", ",".join(str(f) for f in change.fixes)

"""What `advise` reports: the plan changes that would answer the logged misses (values only).

A `Change` is a tile to declare in the model — an existing tile with the columns and measures it
lacked, or a new one — written as the YAML element a user pastes under the lattice's `tiles:`.
A `Group` is the queries one change answers — when merged (`merge`), with the groups of the
changes it stands for as its parts; `Advice` is the whole report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.output import plural
from mvlattice.plan.render import measure_document


@dataclass(kw_only=True, frozen=True, slots=True)
class Fix:
    """One thing a tile lacks: a dimension (a lattice label) or a measure."""

    kind: str  # dimension | measure
    label: str  # the dimension's label, or the measure as written (sum(units))
    measure: Measure | None = None

    def apply(self, spec: TileSpec) -> TileSpec:
        if self.kind == "dimension":
            return TileSpec(spec.lattice, (*spec.dimensions, self.label), spec.measures)
        assert self.measure is not None
        return TileSpec(spec.lattice, spec.dimensions, (*spec.measures, self.measure))

    def __str__(self) -> str:
        return f"column {self.label}" if self.kind == "dimension" else f"measure {self.label}"


@dataclass(kw_only=True, frozen=True, slots=True)
class Change:
    """Declare `spec` in lattice `spec.lattice`: `base` (a tile's name) extended by `fixes`, or
    a new tile (`base` None). `defaults`: the lattice's default measures (left implicit)."""

    spec: TileSpec
    base: str | None
    fixes: tuple[Fix, ...]
    defaults: tuple[Measure, ...] = ()
    # Why the rewriter passed over `base` when it needs no fix: STALE (built, its sources
    # changed since) or NOT_AVAILABLE (not built).
    matched_reason: str = ""

    @property
    def stale(self) -> bool:
        return not self.fixes and self.matched_reason == "STALE"

    @property
    def action(self) -> str:
        if self.base is None:
            return "add a tile"
        if self.fixes:
            return f"extend tile {self.base}"
        return f"refresh tile {self.base}" if self.stale else f"materialize tile {self.base}"

    def element(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dimensions": list(self.spec.dimensions)}
        if self.spec.measures != self.defaults:  # a tile listing measures drops the defaults
            out["measures"] = [measure_document(m) for m in self.spec.measures]
        return out

    def yaml(self) -> str:
        """The tile element to add under `lattices[<lattice>].tiles` (a YAML list item)."""
        text = yaml.safe_dump([self.element()], default_flow_style=None, sort_keys=False)
        return text.rstrip("\n")

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "lattice": self.spec.lattice,
            "tile": self.base,
            "missing": [{"kind": f.kind, "name": f.label} for f in self.fixes],
            "element": self.element(),
            "yaml": self.yaml(),
        }


@dataclass(kw_only=True, frozen=True, slots=True)
class Group:
    change: Change
    queries: int  # logged misses it answers (each time a query was asked)
    distinct: int  # distinct SQL texts among them
    examples: tuple[str, ...]
    # Merged: the groups whose changes this one tile answers (each as it was on its own).
    parts: tuple[Group, ...] = ()

    def headline(self) -> str:
        lacks = ", ".join(str(f) for f in self.change.fixes)
        asked = plural(self.queries, "query", "queries")
        if self.change.base is None:
            return (
                f"{asked} missed every tile of lattice "
                f"'{self.change.spec.lattice}': a tile with {lacks} would answer them"
            )
        if self.change.stale:
            return (
                f"{asked} matched tile {self.change.base}, which is stale (its sources changed "
                "since it was built; `mvlattice refresh` brings it up to date)"
            )
        if not self.change.fixes:
            return f"{asked} matched tile {self.change.base}, which is not built"
        return f"{asked} missed tile {self.change.base} because it lacks {lacks}"

    def to_json(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "queries": self.queries,
            "distinct": self.distinct,
            "examples": list(self.examples),
            "change": self.change.to_json(),
            "parts": [p.part_json() for p in self.parts],
        }

    def part_json(self) -> dict[str, Any]:
        """As a part of a merged group: what its queries lacked, not an element of its own."""
        missing = [{"kind": f.kind, "name": f.label} for f in self.change.fixes]
        return {
            "headline": self.headline(),
            "queries": self.queries,
            "distinct": self.distinct,
            "examples": list(self.examples),
            "tile": self.change.base,
            "missing": missing,
        }


@dataclass(kw_only=True, frozen=True, slots=True)
class Advice:
    since: str | None  # ISO time, None: the whole log
    requests: int  # logged rewrite/query requests read
    misses: int  # of them, not rewritten
    answered_now: int  # misses the current tiles answer (built or declared since)
    reasons: tuple[tuple[str, int], ...]  # the nearest tile's reason code -> misses, most first
    groups: tuple[Group, ...]  # most queries first
    unadvised: int  # misses no tile change answers (other tables, unsupported SQL, …)

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "requests": self.requests,
            "misses": self.misses,
            "answered_now": self.answered_now,
            "reasons": [{"reason": r, "queries": n} for r, n in self.reasons],
            "groups": [g.to_json() for g in self.groups],
            "unadvised": self.unadvised,
        }

    def lines(self) -> list[str]:
        out = [
            f"{self.misses} of {self.requests} logged requests were not rewritten"
            + (f" since {self.since}" if self.since else "")
            + (
                f"; {self.answered_now} of them are answered by the tiles now"
                if self.answered_now
                else ""
            )  # fmt: skip
        ]
        if self.reasons:
            out.append("by reason: " + ", ".join(f"{r} {n}" for r, n in self.reasons))
        for group in self.groups:
            out += ["", group.headline()]
            out += [f"  {part.headline()}" for part in group.parts]
            out.append(f"  {group.change.action}; add under lattice "
                       f"'{group.change.spec.lattice}' tiles:")  # fmt: skip
            out += ["    " + line for line in group.change.yaml().splitlines()]
            out.append(f"  e.g. {group.examples[0]}")
        if self.unadvised:
            out += ["", f"{self.unadvised} misses no tile would answer (see rewrite --explain)"]
        if not self.groups and not self.unadvised:
            out += ["", "nothing to advise"]
        return out

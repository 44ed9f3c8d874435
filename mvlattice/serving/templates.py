"""Templates: a query shape decided once, its literals bound anew on every later text (issue 31).

A text the tile engine answered leaves a template entry: its rewrite (Spark SQL) and the tile
engine's DuckDB SQL, each cut into fixed text and slots (`Fragments`), the views read, the
Spark schema of the answer, the snapshots it was decided on. A later text of the same template
(`sql.slots.bind`) is answered by binding its literals into both: no parse, no rewrite, no
Spark analysis.

Literals decide rewrites: `year >= 1998` is within a view filtered `year >= 1997`, `1997-03-01`
starts a month a month-grain tile can answer from, an IN list may or may not sit inside a
view's. So an entry is filed under the binding's guard (`guard`), and a binding with another
guard is rewritten afresh. The guard states everything about the literals that matching can
look at: per slot, its kind and the shape of its text (letters, digits and punctuation, and for
a date or time, which grains it starts); and per group of slots compared with one column, the
order of the slots among themselves and among every constant of the views, by each order
matching uses (SQL text, value, point in time). Bindings with one guard take the same path
through matching and land each literal in the same place.

An entry is made only when that is visible in the result: every literal in both SQL texts is
either one slot's (and no other slot or fixed constant has that value) or a constant of the
query or the views; a literal computed from a slot (a rounded bound, say) gives no entry.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mvlattice.mvrewrite.match.time_grain import GRAINS, aligned, moment_of
from mvlattice.sql import ir
from mvlattice.sql.slots import LIMIT, Bound, Token, agrees_with_sqlglot, tokens

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from mvlattice.jobs.catalog import ApprovedSnapshot
    from mvlattice.mvrewrite.model_context import RewriteContext
    from mvlattice.sql.transpile import Transpiled

KEPT = 4096  # template entries kept (a few kilobytes each)
_LETTERS = re.compile(r"[^\W\d_]+")
_DIGIT = re.compile(r"\d")
_CONSTANT = re.compile(r"'((?:[^'\\]|\\.|'')*)'|(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
# Words Spark casts from a string to a boolean or a floating-point number.
SPECIAL_WORDS = frozenset(
    {"true", "false", "t", "f", "yes", "no", "y", "n", "nan", "inf", "infinity", "null"}
    | {"-inf", "+inf", "-infinity", "+infinity"}
)


@dataclass(frozen=True, slots=True)
class Fragments:
    """A SQL text cut at its slots: fixed text, and slot numbers where a literal goes."""

    parts: tuple[str | int, ...]

    def bind(self, bound: Bound) -> str:
        return "".join(p if isinstance(p, str) else bound.literal(p) for p in self.parts)


@dataclass(frozen=True, slots=True)
class Entry:
    rewritten: Fragments  # the rewrite, as Spark runs it
    duckdb: Fragments  # the tile engine's SQL
    tables: tuple[str, ...]  # what the DuckDB SQL reads, in registration order
    schema: StructType  # Spark's output schema (the same for every binding: types by text)
    materializations: tuple[str, ...]
    versions: tuple[tuple[str, int], ...]  # the snapshots it was decided over
    context: RewriteContext  # the views it was decided among (the key holds only its id)


@dataclass
class Templates:
    """Entries per (analyzer, describer, context, template, guard); bounded, thread-safe."""

    size: int = KEPT
    hits: int = 0
    misses: int = 0
    refused: int = 0  # texts decided in full that gave no entry
    _entries: OrderedDict[tuple, Entry | None] = field(default_factory=OrderedDict)
    _untrusted: set[str] = field(default_factory=set)  # keys the two tokenizers disagree on
    _constants: dict[int, tuple[RewriteContext, tuple[ir.Literal, ...], bool]] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key(self, owner: tuple, context: RewriteContext, bound: Bound) -> tuple:
        constants, coarse = self._of_views(context)
        grains = GRAINS if coarse else grains_that_matter((), bound.key)
        return (*owner, id(context), bound.key, guard(bound, constants, grains))

    def find(self, key: tuple, context: RewriteContext) -> Entry | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None or found.context is not context:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found

    def learn(
        self,
        key: tuple,
        bound: Bound,
        context: RewriteContext,
        rewritten: str,
        materializations: tuple[str, ...],
        planned: tuple[Transpiled, StructType],
        approved: dict[str, ApprovedSnapshot],
    ) -> None:
        """File what the full path decided for `bound` under `key`, when its literals are
        traceable (else nothing: the next text of this guard is decided in full too)."""
        if bound.key in self._untrusted:
            return
        if not agrees_with_sqlglot(bound):
            with self._lock:
                self._untrusted.add(bound.key)
            return
        fixed = bound.fixed | {(c.kind, c.text) for c in self.constants(context)}
        spark = fragments(rewritten, bound, fixed, duckdb=False)
        transpiled, schema = planned
        fixed_duckdb = fixed | _literals(rewritten) - _slot_values(bound)
        duck = None if spark is None else fragments(transpiled.sql, bound, fixed_duckdb, True)
        if spark is None or duck is None:
            with self._lock:
                self.refused += 1
            return
        versions = tuple(sorted((name, snap.version) for name, snap in approved.items()))
        entry = Entry(spark, duck, transpiled.tables, schema, materializations, versions, context)
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def forget(self, key: tuple) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def constants(self, context: RewriteContext) -> tuple[ir.Literal, ...]:
        """Every literal in the views' definitions (kept per context)."""
        return self._of_views(context)[0]

    def _of_views(self, context: RewriteContext) -> tuple[tuple[ir.Literal, ...], bool]:
        """The views' literals, and whether any view truncates a time coarser than a day."""
        found = self._constants.get(id(context))
        if found is not None and found[0] is context:
            return found[1], found[2]
        literals = tuple(dict.fromkeys(lit for view in context.views for lit in
                                       _view_literals(view.sql)))  # fmt: skip
        coarse = grains_that_matter([v.sql for v in context.views], "") == GRAINS
        with self._lock:
            if len(self._constants) > 64:
                self._constants.clear()
            self._constants[id(context)] = (context, literals, coarse)
        return literals, coarse


def fragments(
    sql: str, bound: Bound, fixed: frozenset[tuple[str, str]] | set[tuple[str, str]], duckdb: bool
) -> Fragments | None:
    """`sql` cut at the literals that are `bound`'s slots, or None when a literal cannot be
    traced: two slots of one value, a slot's value among the fixed ones, or a literal that is
    neither (computed from a slot)."""
    found = tokens(sql, duckdb)
    if found is None:
        return None
    where: dict[tuple[str, str], int] = {}
    for i, slot in enumerate(bound.slots):
        value = (slot.kind, slot.text)
        if value in where or value in fixed:
            return None  # two slots of one value, or a slot equal to a constant
        where[value] = i
    parts: list[str | int] = []
    pos = 0
    for i, token in enumerate(found):
        if token.kind not in ("string", "number") or _type_parameter(found, i):
            continue
        value = ("string" if token.kind == "string" else "number", token.text)
        index = where.get(value)
        if index is None:
            if value not in fixed:
                return None
            continue
        parts += [sql[pos : token.start], index]
        pos = token.end
    parts.append(sql[pos:])
    return Fragments(tuple(parts))


TYPE_WORDS = frozenset({"decimal", "numeric", "dec", "varchar", "char", "character"})


def _type_parameter(found: list[Token], i: int) -> bool:
    """Whether found[i] is a number in a type's parameters: `DECIMAL(20, 4)`."""
    if found[i].kind != "number" or i < 2:
        return False
    before = found[i - 1].text
    if before == "(":
        return found[i - 2].text in TYPE_WORDS
    return (
        before == ","
        and i >= 4
        and found[i - 2].kind == "number"
        and found[i - 3].text == "("
        and found[i - 4].text in TYPE_WORDS
    )


# Functions that truncate a time to a grain coarser than a day: only then does it matter
# whether a bound starts a week, a month, a quarter or a year.
_COARSE_GRAIN = re.compile(
    r"\b(date_trunc|trunc|year|quarter|month|weekofyear|week|dayofweek|last_day|make_date"
    r"|next_day|date_format|extract|date_part|datepart)\s*\(",
    re.I,
)
FINE_GRAINS = ("second", "minute", "hour", "day")


def guard(
    bound: Bound, constants: tuple[ir.Literal, ...], grains: tuple[str, ...] = GRAINS
) -> tuple:
    """What matching can see of the literals (see the module's text): bindings of one guard
    are decided alike. `grains`: those whose boundaries may matter (`grains_that_matter`)."""
    shapes = tuple(_shape(slot.kind, slot.text, slot.placeholder, grains) for slot in bound.slots)
    groups: dict[int, list[ir.Literal]] = {}
    for slot in bound.slots:
        groups.setdefault(slot.group, []).append(ir.Literal(slot.kind, slot.text))
    orders = tuple(_order(members + list(constants)) for _, members in sorted(groups.items()))
    return shapes, orders


def grains_that_matter(view_sql: Iterable[str], key: str) -> tuple[str, ...]:
    """Every grain when a view or the query truncates a time coarser than a day; else the
    day and finer (a DATE column is a day grain; a TIMESTAMP has its time of day)."""
    if any(_COARSE_GRAIN.search(text or "") for text in (*view_sql, key)):
        return GRAINS
    return FINE_GRAINS


def _shape(kind: str, text: str, placeholder: str, grains: tuple[str, ...]) -> tuple[Any, ...]:
    if placeholder == LIMIT:
        return ("limit", text == "0")
    if kind == "number":
        return ("number",)
    word = text.strip().lower()
    special = word if word in SPECIAL_WORDS else ""
    if not _DIGIT.search(text):  # no number, date or time can be read from it
        return ("text", special, text != text.strip(), text == "")
    shape = _DIGIT.sub("9", _LETTERS.sub("a", text))
    moment = moment_of(ir.Literal("string", text))
    starts = None if moment is None else tuple(aligned(moment, g) for g in grains)
    return ("string", shape, starts, special)


def _order(literals: list[ir.Literal]) -> tuple[tuple[int, ...], ...]:
    """The literals' ranks (ties equal) by SQL text, by value within a kind, and by point in
    time."""
    by_text = _ranks([repr(lit) for lit in literals])
    by_value = _ranks([(lit.kind, _value(lit)) for lit in literals])
    moments = [moment_of(lit) for lit in literals]
    by_time = _ranks([(m is None, m or 0) for m in moments])
    return by_text, by_value, by_time


def _value(lit: ir.Literal) -> Any:  # noqa: ANN401 - ordered within a kind only
    try:
        value = lit.value
    except ValueError:
        return lit.text
    return lit.text if value is None else value


def _ranks(keys: list[Any]) -> tuple[int, ...]:
    try:
        distinct = sorted(set(keys))
    except TypeError:
        distinct = sorted(set(keys), key=repr)
    index = {k: i for i, k in enumerate(distinct)}
    return tuple(index[k] for k in keys)


def _view_literals(sql: str) -> list[ir.Literal]:
    out = []
    for match in _CONSTANT.finditer(sql or ""):
        string, number = match.groups()
        if string is not None:
            out.append(ir.Literal("string", string.replace("''", "'").replace("\\'", "'")))
        else:
            out.append(ir.Literal("number", number))
    return out


def _literals(sql: str) -> set[tuple[str, str]]:
    found = tokens(sql) or []
    return {("string" if t.kind == "string" else "number", t.text) for t in found
            if t.kind in ("string", "number")}  # fmt: skip


def _slot_values(bound: Bound) -> set[tuple[str, str]]:
    return {(s.kind, s.text) for s in bound.slots}

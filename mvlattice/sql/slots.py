"""A query text cut into its template and its compared literals, fast (issue 31).

A dashboard sends one shape with other literals: `WHERE region = 'EU'`, then `'US'`. Such a
literal — compared with `=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`, a BETWEEN bound, an IN-list
member — is a slot; the text with each slot replaced by a placeholder naming its type (INT or
BIGINT by magnitude, DECIMAL by its digits, a string) is the template's key. The serving
pipeline decides a template once and binds new literals into its decision
(`serving.templates`).

One regular expression reads the text (sqlglot's tokenizer costs ~1 ms a query; this, tens of
microseconds). It reads only the plainest SQL and gives up (None) on anything else: strings
with quotes, backslashes or `$` inside, hints, nested comments, characters it does not know.
Whitespace and plain comments do not count. `sql.template.literal_free_key`, built on sqlglot's
tokenizer, must find the very same slots in a template's first text before the template is
trusted (`agrees_with_sqlglot`).

IN lists are put in one order and their repeated members dropped (`Bound.canonical`): the same
rows, and one template for every order a client lists them in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from mvlattice.sql.template import MAX_STRING, literal_free_slots

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
    |(?P<comment>--[^\n]*|/\*(?!\+)(?:(?!/\*|\*/).)*\*/)
    |(?P<unread>/\*)
    |(?P<string>'[^'"\\$\n\r]*'|"[^'"\\$\n\r]*")
    |(?P<number>\d+(?:\.\d+)?(?![\w.]))
    |(?P<word>[A-Za-z_][A-Za-z_0-9]*)
    |(?P<ident>`[^`\n\r]*`)
    |(?P<op><=>|<=|>=|<>|!=|==|\|\||::|[=<>(),.;*+\-/%:\[\]])
    """,
    re.X | re.S,
)
# DuckDB's SQL (the tile engine's): double quotes name, single quotes quote.
_DUCKDB_TOKEN = re.compile(
    _TOKEN.pattern.replace("""|"[^\'"\\\\$\\n\\r]*")""", ")").replace(
        "(?P<ident>`[^`\\n\\r]*`)", '(?P<ident>`[^`\\n\\r]*`|"[^"\\n\\r]*")'
    ),
    re.X | re.S,
)
COMPARISONS = frozenset({"=", "==", "<>", "!=", "<", "<=", ">", ">=", "<=>"})
# What may follow a slot (else the literal is part of a larger expression).
ENDS = frozenset({"and", "or", ")", "group", "order", "having", "limit", "union", "except",
                  "intersect", "window", "cluster", "distribute", "sort"})  # fmt: skip
# What may stand before a compared column for the comparison to be on the column itself.
STARTS = frozenset({"where", "and", "or", "on", "having", "(", "not", "when"})
INT_MAX, LONG_MAX = 2**31 - 1, 2**63 - 1
ANY = "*"  # the group of a literal compared with anything but a plain column
LIMIT_AT = -1  # the "operator" of a LIMIT's row count
LIMIT = "?LIMIT"  # its placeholder
NESTED = frozenset({"select", "with", "union", "except", "intersect", "minus"})


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # string | number | word | ident | op
    start: int
    end: int
    text: str  # lower case for words and operators; a string's contents; a number as written


@dataclass(frozen=True, slots=True)
class Slot:
    kind: str  # "string" | "number" (as `ir.Literal` names them)
    text: str  # a string's contents, a number as written
    placeholder: str  # ?INT ?BIGINT ?DECIMALp.s ?STRING
    group: int  # slots of one group are compared with the same column (or its equals)


@dataclass(frozen=True, slots=True)
class Bound:
    """A text read as a template and the literals bound into it."""

    key: str  # the template: tokens joined by spaces, slots as placeholders
    slots: tuple[Slot, ...]
    canonical: str  # the text with IN lists ordered and deduplicated (same rows)
    fixed: frozenset[tuple[str, str]]  # the literals that are not slots: (kind, text)

    def literal(self, i: int) -> str:
        """Slot i's literal as SQL."""
        slot = self.slots[i]
        return f"'{slot.text}'" if slot.kind == "string" else slot.text


def tokens(sql: str, duckdb: bool = False) -> list[Token] | None:
    """The text's tokens (Spark's SQL, else DuckDB's), or None for anything this reader does
    not read."""
    out: list[Token] = []
    pos, size = 0, len(sql)
    match = (_DUCKDB_TOKEN if duckdb else _TOKEN).match
    while pos < size:
        found = match(sql, pos)
        if found is None:
            return None
        kind = found.lastgroup
        if kind is None or kind == "unread":  # a hint or a nested comment
            return None
        end = found.end()
        if kind == "string":
            out.append(Token(kind, pos, end, sql[pos + 1 : end - 1]))
        elif kind in ("word", "op"):
            out.append(Token(kind, pos, end, found.group().lower()))
        elif kind != "ws" and kind != "comment":
            out.append(Token(kind, pos, end, found.group()))
        pos = end
    return out


def bind(sql: str) -> Bound | None:
    """The text's template and literals, or None when it cannot be read safely."""
    found = tokens(sql)
    if not found:
        return None
    positions = _slot_positions(found)
    if positions is None:
        return None
    groups = {found[i].start: g for i, g in _groups(found, positions).items()}
    limits = {found[i].start for i, op in positions.items() if op == LIMIT_AT}
    found, kept, edits = _ordered_in_lists(found, set(positions))
    slots = []
    parts = []
    fixed = set()
    for i, token in enumerate(found):
        if token.kind in ("string", "number") and i not in kept:
            fixed.add(("string" if token.kind == "string" else "number", token.text))
        if i in kept:
            placeholder = LIMIT if token.start in limits else _placeholder(token)
            if placeholder is None:
                return None
            kind = "string" if token.kind == "string" else "number"
            slots.append(Slot(kind, token.text, placeholder, groups[token.start]))
            parts.append(placeholder)
        else:
            parts.append(_sql_of(token))
    canonical = sql
    for start, end, text in reversed(edits):
        canonical = canonical[:start] + text + canonical[end:]
    return Bound(" ".join(parts), tuple(slots), canonical, frozenset(fixed))


def agrees_with_sqlglot(bound: Bound) -> bool:
    """Whether sqlglot's tokenizer finds the same slots, in the same order, in the canonical
    text (a template is trusted only then)."""
    theirs = literal_free_slots(bound.canonical)
    if theirs is None:
        return False
    mine = [(s.kind, s.text) for s in bound.slots if s.placeholder != LIMIT]
    return mine == theirs


def _sql_of(token: Token) -> str:
    if token.kind == "string":
        return f"'{token.text}'"
    return token.text


def _slot_positions(found: list[Token]) -> dict[int, int] | None:
    """Each slot's position, and the position of the operator it is compared by (`=`, `IN`,
    `BETWEEN`)."""
    positions: dict[int, int] = {}
    opened: list[int] = []  # per open bracket: the position of its IN (-1: no IN list)
    for i, token in enumerate(found):
        before = found[i - 1] if i else None
        if token.kind == "op" and token.text == "(":
            is_in = before is not None and before.kind == "word" and before.text == "in"
            opened.append(i - 1 if is_in else -1)
            continue
        if token.kind == "op" and token.text == ")":
            if opened:
                opened.pop()
            continue
        if token.kind not in ("string", "number"):
            continue
        after = found[i + 1] if i + 1 < len(found) else None
        if _is_limit(found, i, after):
            positions[i] = LIMIT_AT
            continue
        in_at = opened[-1] if opened else -1
        operator = _compared(found, i, in_at)
        if operator is not None and _ends(after, in_at >= 0):
            positions[i] = operator
    return positions


def _is_limit(found: list[Token], i: int, after: Token | None) -> bool:
    """The outermost LIMIT's row count, ending the text (Spark takes any INT there)."""
    token = found[i]
    return (
        i > 0
        and found[i - 1].kind == "word"
        and found[i - 1].text == "limit"
        and token.kind == "number"
        and token.text.isdigit()
        and int(token.text) <= INT_MAX
        and (after is None or after.text == ";")
    )


def _compared(found: list[Token], i: int, in_at: int) -> int | None:
    """The position of the operator found[i] is compared by, or None."""
    before = found[i - 1] if i else None
    if before is None or before.kind not in ("op", "word"):
        return None
    if before.kind == "op" and before.text in COMPARISONS:
        return i - 1
    if before.kind == "word" and before.text == "between":
        return i - 1
    if in_at >= 0 and before.kind == "op" and before.text in ("(", ","):
        return in_at
    # the upper bound of BETWEEN: `BETWEEN <literal> AND <here>`
    if (
        before.text == "and"
        and i >= 3
        and found[i - 3].text == "between"
        and found[i - 2].kind in ("string", "number")
    ):
        return i - 3
    return None


def _ends(after: Token | None, in_list: bool) -> bool:
    if after is None:
        return True
    if after.kind in ("word", "op") and after.text in ENDS:
        return True
    return in_list and after.kind == "op" and after.text == ","


def _placeholder(token: Token) -> str | None:
    text = token.text
    if token.kind == "string":
        return "?STRING" if len(text) <= MAX_STRING else None
    if text.isdigit():
        value = int(text)
        return "?INT" if value <= INT_MAX else "?BIGINT" if value <= LONG_MAX else None
    whole, _, fraction = text.partition(".")
    return f"?DECIMAL{len(whole)}.{len(fraction)}"


def _ordered_in_lists(
    found: list[Token], positions: set[int]
) -> tuple[list[Token], set[int], list[tuple[int, int, str]]]:
    """IN lists whose members are all slots of one kind, ordered by value (numbers by the
    number, strings by their text) and without repeats; the rest as it was. Also each list's
    span in the text and what it becomes."""
    out: list[Token] = []
    kept: set[int] = set()
    edits: list[tuple[int, int, str]] = []
    i = 0
    while i < len(found):
        token = found[i]
        if token.text == "(" and i and found[i - 1].text == "in" and found[i - 1].kind == "word":
            members, close = _members(found, i, positions)
            if members is not None:
                text = ", ".join(_sql_of(m) for m in members)
                edits.append((token.start, found[close].end, f"({text})"))
                out.append(token)
                for j, member in enumerate(members):
                    if j:
                        out.append(Token("op", -1, -1, ","))
                    kept.add(len(out))
                    out.append(member)
                i = close
                continue
        if i in positions:
            kept.add(len(out))
        out.append(token)
        i += 1
    return out, kept, edits


def _members(
    found: list[Token], open_at: int, positions: set[int]
) -> tuple[list[Token] | None, int]:
    """The IN list's slots ordered and unique, and where it closes; None when any member is
    not a slot or the kinds (or placeholders) differ."""
    members: list[Token] = []
    i = open_at + 1
    while i < len(found):
        if i not in positions:
            return None, i
        members.append(found[i])
        nxt = found[i + 1] if i + 1 < len(found) else None
        if nxt is not None and nxt.text == ")":
            break
        if nxt is None or nxt.text != ",":
            return None, i
        i += 2
    else:
        return None, i
    kinds = {(m.kind, _placeholder(m)) for m in members}
    if len(kinds) != 1:
        return None, i
    unique = {m.text: m for m in members}
    if members[0].kind == "number":
        ordered = sorted(unique.values(), key=lambda m: (Decimal(m.text), m.text))
    else:
        ordered = sorted(unique.values(), key=lambda m: m.text)
    return ordered, i + 1


def _groups(found: list[Token], positions: dict[int, int]) -> dict[int, int]:
    """Per slot position, its group: the slots compared with one column, joined through every
    `column = column` in the text; every slot in one group when any is compared with
    something else, or when the text nests (subqueries, set operations)."""
    names = {i: LIMIT if op == LIMIT_AT else _compared_column(found, op)
             for i, op in positions.items()}  # fmt: skip
    nested = sum(1 for t in found if t.kind == "word" and t.text in NESTED) > 1
    if nested or ANY in names.values():
        return dict.fromkeys(positions, 0)
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.get(name, name) != name:
            name = parent[name]
        return name

    for left, right in _column_equalities(found):
        parent[root(left)] = root(right)
    aliases = {found[i + 1].text for i, t in enumerate(found[:-1]) if t.text == "as"}
    if aliases & set(names.values()):  # a slot compared with an output's alias
        return dict.fromkeys(positions, 0)
    roots = sorted({root(n) for n in names.values()})
    return {i: roots.index(root(n)) for i, n in names.items()}


def _compared_column(found: list[Token], operator: int) -> str:
    """The name of the column compared by the operator at `operator`, or ANY."""
    j = operator
    if j > 0 and found[j].text in ("in", "between") and found[j - 1].text == "not":
        j -= 1
    return _column_before(found, j)


def _column_before(found: list[Token], j: int) -> str:
    """The plain column reference ending at found[j - 1] (`c`, `t.c`, `` `t`.`c` ``), or ANY."""
    k = j - 1
    if k < 0 or found[k].kind not in ("word", "ident"):
        return ANY
    name = found[k].text.strip("`").lower()
    k -= 1
    while k >= 1 and found[k].text == "." and found[k - 1].kind in ("word", "ident"):
        k -= 2
    if k >= 0 and found[k].text not in STARTS:
        return ANY
    return name


def _column_equalities(found: list[Token]) -> list[tuple[str, str]]:
    """Each `column = column` (a join condition): the two names."""
    pairs = []
    for j, token in enumerate(found):
        if token.text not in ("=", "==", "<=>") or token.kind != "op":
            continue
        left = _column_before(found, j)
        right = _column_after(found, j)
        if left != ANY and right != ANY:
            pairs.append((left, right))
        elif right != ANY or (left != ANY and j + 1 < len(found) and found[j + 1].kind
                              in ("word", "ident")):  # fmt: skip
            pairs.append((ANY, ANY))  # a column equal to an expression: one group for all
    return pairs


def _column_after(found: list[Token], j: int) -> str:
    k = j + 1
    if k >= len(found) or found[k].kind not in ("word", "ident"):
        return ANY
    while (
        k + 2 < len(found) and found[k + 1].text == "." and found[k + 2].kind in ("word", "ident")
    ):
        k += 2
    nxt = found[k + 1] if k + 1 < len(found) else None
    if nxt is not None and nxt.text == "(":
        return ANY
    return found[k].text.strip("`").lower()

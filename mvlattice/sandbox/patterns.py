"""Per-row work a query's literals set, bounded before anything runs.

Spark matches regular expressions with `java.util.regex`, a backtracking matcher: a pattern
with nested or overlapping quantifiers takes exponential time on a row it does not match, and
no cancel stops it inside one row (the executor thread never checks its interrupt flag there).
So the service accepts only literal patterns whose matching time is polynomial of low degree:
no quantified group that itself holds a quantifier or an alternation, no back-references or
look-arounds, at most `MAX_UNBOUNDED` unbounded quantifiers. LIKE patterns become `.*` per
`%`. Type strings (`from_json`'s schema) and JSON literals are parsed recursively by Spark:
their nesting is bounded too.

Each check returns None when the text is acceptable, else the reason (a value, not an error).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_UNBOUNDED = 2  # `*`, `+`, `{n,}` in one pattern: at worst quadratic per row
MAX_PATTERN = 1_000  # characters of a regular expression or LIKE pattern
MAX_TYPE_TEXT = 10_000  # characters of a type string or a JSON literal Spark parses
MAX_TYPE_NESTING = 32  # brackets deep in one


@dataclass(slots=True)
class _Group:
    quantified_inside: bool = False  # holds a quantifier (at any depth)
    alternation: bool = False  # holds a `|` at its own level
    items: list[str] = field(default_factory=list)


def regex_problem(pattern: str) -> str | None:
    """Why `pattern` could take more than low-polynomial time per row, or None."""
    if len(pattern) > MAX_PATTERN:
        return f"a pattern longer than {MAX_PATTERN:,} characters"
    try:
        return _scan(pattern)
    except IndexError:
        return "an incomplete pattern"


def like_problem(pattern: str, escape: str = "\\") -> str | None:
    """LIKE's `%` is `.*`: a pattern with more than MAX_UNBOUNDED of them could be slow."""
    if len(pattern) > MAX_PATTERN:
        return f"a pattern longer than {MAX_PATTERN:,} characters"
    wildcards, i = 0, 0
    while i < len(pattern):
        if pattern[i] == escape:
            i += 2
            continue
        if pattern[i] == "%" and (i == 0 or pattern[i - 1] != "%"):
            wildcards += 1
        i += 1
    # Spark matches 'a%', '%a', '%a%' and 'a%b' without a regex (LikeSimplification); the
    # rest are regexes with one `.*` per run of `%`.
    if wildcards > MAX_UNBOUNDED + 1:
        return f"more than {MAX_UNBOUNDED + 1} '%' wildcards"
    return None


def nesting_problem(text: str) -> str | None:
    """A type string or JSON text Spark parses recursively: bounded in size and depth."""
    if len(text) > MAX_TYPE_TEXT:
        return f"a type or JSON text longer than {MAX_TYPE_TEXT:,} characters"
    depth = deepest = 0
    quoted: str | None = None
    for char in text:
        if quoted:
            quoted = None if char == quoted else quoted
        elif char in "\"'`":
            quoted = char
        elif char in "<([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ">)]}":
            depth = max(0, depth - 1)
    if deepest > MAX_TYPE_NESTING:
        return f"a type or JSON text nested {deepest} levels deep (the limit is {MAX_TYPE_NESTING})"
    return None


def _scan(pattern: str) -> str | None:
    stack = [_Group()]
    unbounded = 0
    i = 0
    while i < len(pattern):
        char = pattern[i]
        top = stack[-1]
        if char == "\\":
            escaped = pattern[i + 1]
            if escaped.isdigit() and escaped != "0" or escaped == "k":
                return "a back-reference"
            i = _after_escape(pattern, i)
            top.items.append("atom")
        elif char == "[":
            i = _after_class(pattern, i)
            top.items.append("atom")
        elif char == "(":
            if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
                return "a look-around"
            stack.append(_Group())
            i = _after_group_opening(pattern, i)
        elif char == ")":
            if len(stack) == 1:
                return "an unbalanced ')'"
            closed = stack.pop()
            stack[-1].quantified_inside |= closed.quantified_inside
            stack[-1].items.append("group-quantified" if closed.quantified_inside
                                   or closed.alternation else "group")  # fmt: skip
            i += 1
        elif char == "|":
            top.alternation = True
            i += 1
        elif char in "*+?{":
            end, is_unbounded, repeats = _quantifier(pattern, i)
            if end == i:  # a literal '{'
                top.items.append("atom")
                i += 1
                continue
            previous = top.items[-1] if top.items else "atom"
            if previous == "group-quantified" and repeats:
                return "a quantified group that holds a quantifier or an alternation"
            top.quantified_inside = True
            unbounded += is_unbounded
            if unbounded > MAX_UNBOUNDED:
                return f"more than {MAX_UNBOUNDED} unbounded quantifiers (*, +, {{n,}})"
            top.items.append("quantifier")
            i = end
            if i < len(pattern) and pattern[i] in "?+":  # lazy or possessive
                i += 1
        else:
            top.items.append("atom")
            i += 1
    return None if len(stack) == 1 else "an unbalanced '('"


def _after_escape(pattern: str, i: int) -> int:
    escaped = pattern[i + 1]
    if escaped == "Q":  # \Q…\E quotes everything between
        end = pattern.find("\\E", i + 2)
        return len(pattern) if end < 0 else end + 2
    if escaped in "pPxu" and i + 2 < len(pattern) and pattern[i + 2] == "{":
        end = pattern.index("}", i + 2)
        return end + 1
    return i + 2


def _after_class(pattern: str, i: int) -> int:
    """The index after a character class starting at `i` (nested classes included)."""
    depth, j = 0, i
    while True:
        char = pattern[j]
        if char == "\\":
            j += 2
            continue
        if char == "[":
            depth += 1
            if pattern[j + 1] == "^":
                j += 1
            if pattern[j + 1] == "]":  # a leading ']' is literal
                j += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1


def _after_group_opening(pattern: str, i: int) -> int:
    if pattern.startswith("(?", i):
        j = i + 2
        while pattern[j] not in ":)":  # flags or a named group's name
            if pattern[j] == "<":
                j = pattern.index(">", j)
            j += 1
        if pattern[j] == ")":  # an inline flag group such as (?i) holds nothing
            return j
        return j + 1
    return i + 1


def _quantifier(pattern: str, i: int) -> tuple[int, bool, bool]:
    """(end, unbounded, repeats more than once) of the quantifier at `i`; end == i when a
    '{' is not a quantifier."""
    char = pattern[i]
    if char == "*" or char == "+":
        return i + 1, True, True
    if char == "?":
        return i + 1, False, False
    end = pattern.find("}", i)
    body = pattern[i + 1 : end] if end > 0 else ""
    low, comma, high = body.partition(",")
    if not low.isdigit() or (high and not high.isdigit()):
        return i, False, False
    unbounded = bool(comma) and not high
    most = int(high) if high else int(low)
    return end + 1, unbounded, unbounded or most > 1

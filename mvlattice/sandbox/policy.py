"""The sandbox's decision over an analyzed plan: an allow-list, never a list of bad strings.

A client query may read only the relations the model declares (its tables, built tiles,
materializations), through the operators in `classes.OPERATORS`, with built-in functions and
the analyzer's own expressions; generators and sized values are bounded. The first thing outside
that is refused with one line saying what and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from mvlattice.errors import RefusedSqlError
from mvlattice.sandbox import classes, patterns
from mvlattice.sandbox.plan_tree import PlanNode, trees_in


@dataclass(frozen=True, slots=True)
class Policy:
    """What client queries may touch. Names are lower-case `database.table`."""

    tables: frozenset[str]
    databases: frozenset[str] = frozenset()  # every table of these (the tiles' database)
    functions: Mapping[str, str] = field(default_factory=dict)  # allowed class -> function
    denied: Mapping[str, str] = field(default_factory=dict)  # denied class -> function
    max_generated_rows: int = 10_000_000
    max_value_size: int = 100_000  # elements or characters a sized function may build
    time_travel: frozenset[str] = frozenset()  # tables whose old versions may be read

    def allows_relation(self, database: str, table: str) -> bool:
        database, table = database.lower(), table.lower()
        return database in self.databases or f"{database}.{table}" in self.tables

    def allows_expression(self, cls: str) -> bool:
        if cls in classes.DENIED_CLASSES or cls in self.denied:
            return False
        return (
            cls in self.functions or cls in classes.INTERNAL or cls in (classes.INTERNAL_AGGREGATES)
        )


def make_policy(
    tables: Iterable[str],
    databases: Iterable[str],
    builtins: Mapping[str, str],
    time_travel: Iterable[str] = (),
    **limits: int,
) -> Policy:
    """A policy from the allowed relations and Spark's built-in functions (name -> class)."""
    allowed: dict[str, str] = {}
    denied: dict[str, str] = {}
    for name, cls in sorted(builtins.items()):
        target = denied if name.lower() in classes.DENIED_FUNCTIONS else allowed
        for produced in _produced(cls):
            target[produced] = f"{target[produced]}() / {name}" if produced in target else name
    for cls in denied:
        allowed.pop(cls, None)
    return Policy(
        frozenset(t.lower() for t in tables),
        frozenset(d.lower() for d in databases),
        allowed,
        denied,
        time_travel=frozenset(t.lower() for t in time_travel),
        **limits,
    )


def _produced(cls: str) -> tuple[str, ...]:
    """The classes a registry entry stands for: a builder's name without its suffix, too."""
    for suffix in ("ExpressionBuilder", "Builder"):
        if cls.endswith(suffix):
            return (cls, cls[: -len(suffix)])
    return (cls,)


def check_plan(roots: Iterable[PlanNode], policy: Policy) -> None:
    """Raise RefusedSqlError for the first node outside the policy."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        if _is_plan(node):
            _check_operator(node, policy)
            if node.cls == classes.VIEW:
                continue  # a model view's body is the model's, not the client's
        else:
            _check_expression(node, policy)
        stack.extend(node.children)
        stack.extend(node.nested())


def _is_plan(node: PlanNode) -> bool:
    return (
        node.cls.startswith(classes.LOGICAL)
        or node.cls == classes.RELATION
        or (".plans.logical." in node.cls or ".execution." in node.cls)
    )


def _check_operator(node: PlanNode, policy: Policy) -> None:
    if node.cls == classes.RELATION:
        _check_relation(_identifier(node.fields.get("catalogTable")), policy)
        _check_hidden_columns(node)
    elif node.cls == classes.VIEW:
        _check_relation(_identifier(node.fields.get("desc")), policy)
    elif node.cls not in classes.OPERATORS:
        raise RefusedSqlError(
            f"refused: {_operator_name(node)} is not allowed in queries "
            "sent to the service (only plain SELECT queries over the model)"
        )
    elif node.cls == classes.RANGE:
        _check_range(node, policy)
    elif node.cls == classes.JOIN:
        _check_cross_join(node)


def _check_cross_join(node: PlanNode) -> None:
    """An explicit CROSS JOIN of two relations multiplies them, and Spark cannot stop a task
    inside one row's expansion; only a side of one row (a global aggregate, VALUES, a
    constant) is allowed. Implicit ones fail in the sandbox session (crossJoin.enabled off)."""
    kind = node.fields.get("joinType")
    name = kind.get("object", "") if isinstance(kind, Mapping) else ""
    if not name.endswith(".Cross$") or any(_one_row(side) for side in node.children):
        return
    raise RefusedSqlError(
        "refused: a CROSS JOIN of two relations (a cartesian product) is "
        "not allowed in queries sent to the service; join on a condition"
    )


def _one_row(node: PlanNode) -> bool:
    while node.name in classes.TRANSPARENT and node.children:
        node = node.children[0]
    if node.name == "Aggregate":
        return not node.fields.get("groupingExpressions")
    return node.name in ("OneRowRelation", "LocalRelation")


def _operator_name(node: PlanNode) -> str:
    known = {
        "ScriptTransformation": "TRANSFORM … USING (a script)",
        "ResolvedHint": "a query hint",
        "Repartition": "a REPARTITION hint",
        "RepartitionByExpression": "a REPARTITION hint",
        "RebalancePartitions": "a REBALANCE hint",
    }
    return known.get(node.name, f"the operator {node.name}")


def _identifier(table: object) -> tuple[str, str] | None:
    if not isinstance(table, Mapping):
        return None
    ident = table.get("identifier")
    if not isinstance(ident, Mapping) or ident.get("catalog", "spark_catalog") != "spark_catalog":
        return None
    database, name = ident.get("database"), ident.get("table")
    if not isinstance(database, str) or not isinstance(name, str):
        return None
    return database, name


def _check_relation(ident: tuple[str, str] | None, policy: Policy) -> None:
    if ident is None:
        raise RefusedSqlError(
            "refused: the query reads a file or path directly; only the "
            "model's tables, tiles and materializations may be read"
        )
    if not policy.allows_relation(*ident):
        raise RefusedSqlError(
            f"refused: {ident[0]}.{ident[1]} is not a table, tile or "
            "materialization of the served models"
        )


def _check_range(node: PlanNode, policy: Policy) -> None:
    try:
        start, end = int(node.fields["start"]), int(node.fields["end"])
        step = int(node.fields.get("step", 1))
        count = max(0, math.ceil((end - start) / step)) if step else math.inf
    except (KeyError, TypeError, ValueError):
        count = math.inf
    if count > policy.max_generated_rows:
        raise RefusedSqlError(
            f"refused: range() would generate {_amount(count)} rows; the "
            f"limit is {policy.max_generated_rows:,}"
        )


def _check_expression(node: PlanNode, policy: Policy) -> None:
    if not policy.allows_expression(node.cls):
        function = policy.denied.get(node.cls)
        what = f"the function {function}()" if function else f"the expression {node.name}"
        raise RefusedSqlError(f"refused: {what} is not allowed in queries sent to the service")
    positions = classes.SIZED.get(node.cls)
    if positions is not None:
        for position in positions:
            _check_size(node, position, policy)
    if node.cls == classes.SEQUENCE:
        _check_sequence(node, policy)
    _check_per_row_work(node, policy)


def _check_per_row_work(node: PlanNode, policy: Policy) -> None:
    """Patterns and texts whose per-row cost a literal sets: refused unless bounded."""
    name = policy.functions.get(node.cls, node.name)
    for position in classes.REGEX_ARGUMENTS.get(node.cls, ()):
        _check_pattern(node, position, name, patterns.regex_problem)
    like = classes.LIKE_ARGUMENTS.get(node.cls)
    if like is not None:
        _check_pattern(node, like, "LIKE", patterns.like_problem)
    if node.cls in classes.MULTI_LIKE:
        raise RefusedSqlError(
            "refused: LIKE ALL / LIKE ANY are not allowed in queries sent to the service; "
            "write one LIKE per pattern joined by AND / OR"
        )
    if node.cls == classes.EDIT_DISTANCE:
        for child in node.children[:2]:
            _check_edit_argument(child)


def _check_pattern(
    node: PlanNode, position: int, name: str, problem: Callable[[str], str | None]
) -> None:
    child = node.children[position] if position < len(node.children) else None
    text = _text(child) if child is not None else None
    if text is _NOT_LITERAL:
        raise RefusedSqlError(
            f"refused: {name} needs a literal pattern in queries sent to the service"
        )
    why = problem(text) if isinstance(text, str) else None
    if why is not None:
        raise RefusedSqlError(
            f"refused: the pattern of {name} has {why}, which could take unbounded time per "
            "row; simplify it"
        )


def _check_edit_argument(node: PlanNode) -> None:
    while node.name == "Cast" and node.children:
        node = node.children[0]
    if node.cls == classes.ATTRIBUTE:
        return
    text = _text(node)
    if not isinstance(text, str) or len(text) > classes.MAX_EDIT_LITERAL:
        raise RefusedSqlError(
            "refused: levenshtein() takes columns or literals of at most "
            f"{classes.MAX_EDIT_LITERAL:,} characters in queries sent to the service"
        )


_NOT_LITERAL = object()


def _text(node: PlanNode) -> object:
    """A literal's text (None for NULL) under casts and case changes, else _NOT_LITERAL."""
    while node.name in ("Cast", "Collate", "Lower", "Upper") and node.children:
        node = node.children[0]
    if node.name != "Literal":
        return _NOT_LITERAL
    value = node.fields.get("value")
    return None if value is None else str(value)


def _check_hidden_columns(node: PlanNode) -> None:
    """A file source shows `_metadata` (file paths, sizes, times) only when a query asks."""
    for tree in trees_in(node.fields.get("output")):
        if tree.cls == classes.ATTRIBUTE and str(tree.fields.get("name", "")).startswith(
            classes.HIDDEN_COLUMNS
        ):
            raise RefusedSqlError(
                f"refused: the hidden column {tree.fields['name']} (where a table's files are) "
                "is not readable by queries sent to the service"
            )


def check_parsed(roots: Iterable[PlanNode], policy: Policy) -> None:
    """What the analyzer would resolve before the analyzed plan can be checked: old versions
    and change feeds of a table (unless the model allows them for that table: `timeTravel`),
    and texts Spark parses recursively while analyzing."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.cls == classes.TIME_TRAVEL:
            _check_time_travel(node, policy.time_travel)
        elif node.cls == classes.TABLE_FUNCTION:
            _check_table_function(node, policy.time_travel)
        elif node.cls == classes.UNRESOLVED_FUNCTION:
            _check_parsed_texts(node)
        stack.extend(node.children)
        stack.extend(node.nested())


def _check_time_travel(node: PlanNode, allowed: frozenset[str]) -> None:
    names = [
        _names(tree.fields.get("multipartIdentifier"))
        for tree in trees_in(node.fields.get("relation"))
        if tree.cls == classes.UNRESOLVED_RELATION
    ]
    if names and all(".".join(n[-2:]).lower() in allowed for n in names):
        return
    shown = ".".join(names[0]) if names else "a table"
    raise RefusedSqlError(
        f"refused: old versions of {shown} (VERSION / TIMESTAMP AS OF) are not readable by "
        "queries sent to the service (the model's `timeTravel: true` on a table allows it)"
    )


def _check_table_function(node: PlanNode, allowed: frozenset[str]) -> None:
    name = ".".join(_names(node.fields.get("name"))).lower()
    if name.rsplit(".", 1)[-1] not in classes.CHANGE_FEED_FUNCTIONS:
        return
    first = next(trees_in(node.fields.get("functionArgs")), None)
    table = _text(first) if first is not None else None
    if not isinstance(table, str) or table.lower().replace("`", "") not in allowed:
        raise RefusedSqlError(
            f"refused: {name}() (a table's change feed, deleted rows included) is not "
            "readable by queries sent to the service"
        )


def _check_parsed_texts(node: PlanNode) -> None:
    name = ".".join(_names(node.fields.get("nameParts"))).lower()
    if name.rsplit(".", 1)[-1] not in classes.PARSED_TEXT_FUNCTIONS:
        return
    for child in node.children:
        text = _text(child)
        why = patterns.nesting_problem(text) if isinstance(text, str) else None
        if why is not None:
            raise RefusedSqlError(f"refused: {name}() is given {why}")


def _names(value: object) -> list[str]:
    """A name list as the plan's JSON writes it: `[a, b]` (a Scala Seq's text) or a list."""
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value or "").strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [part.strip() for part in text.split(",") if part.strip()]


def _check_size(node: PlanNode, position: int, policy: Policy) -> None:
    value = _literal(node.children[position]) if position < len(node.children) else None
    if value is None or abs(value) > policy.max_value_size:
        name = policy.functions.get(node.cls, node.name)
        raise RefusedSqlError(
            f"refused: {name}() needs a literal size of at most "
            f"{policy.max_value_size:,} in queries sent to the service"
        )


def _check_sequence(node: PlanNode, policy: Policy) -> None:
    bounds = [_literal(child) for child in node.children[:3]]
    start, stop = (bounds + [None, None])[:2]
    step = bounds[2] if len(bounds) > 2 else 1
    if start is None or stop is None or not step:
        raise RefusedSqlError(
            "refused: sequence() needs literal numeric bounds in queries sent to the service"
        )
    if abs(stop - start) / abs(step) + 1 > policy.max_value_size:
        raise RefusedSqlError(
            f"refused: sequence() would build more than {policy.max_value_size:,} elements"
        )


def _literal(node: PlanNode) -> float | None:
    """The numeric value of a literal (under casts), else None."""
    while node.name == "Cast" and node.children:
        node = node.children[0]
    if node.name != "Literal":
        return None
    try:
        return float(node.fields.get("value"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _amount(count: float) -> str:
    return "unboundedly many" if math.isinf(count) else f"{int(count):,}"

"""Time-grain rollup: a query's time expression over column c, from a view output g(c) that
truncates c to a finer grain (GL01 §3.1.3, expressions computable from view outputs).

A view grouped by `date_trunc('day', ts)` answers `date_trunc('month', ts)`, `year(ts)` or
`to_date(ts)`: each depends on ts only through its day, so f(ts) = f(date_trunc('day', ts)),
and the query's own function is applied to the view column. The grains form a partial order
(second < minute < hour < day < month < quarter < year, and day < week): a week straddles
months, quarters and years, so a week never rolls into them. A WHERE bound on c itself is
read from g(c) only for `c >= X` and `c < X` with X on a grain boundary (a month-grain view
answers `ts >= '2021-03-01' AND ts < '2021-04-01'`, not `ts < '2021-03-15'`). Truncation
happens in the session time zone, which mvlattice's Spark sessions fix at UTC. When in doubt
(an unknown column type, a format argument, a grain outside the table) nothing is derived.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mvlattice.mvrewrite.match.view_outputs import Available
from mvlattice.sql import ir
from mvlattice.sql.canon import MIRROR, Classes

GRAINS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
# grain -> the grains computable from a value truncated to it (the partial order, closed)
ANSWERS: dict[str, frozenset[str]] = {
    "second": frozenset(GRAINS),
    "minute": frozenset(GRAINS) - {"second"},
    "hour": frozenset(GRAINS) - {"second", "minute"},
    "day": frozenset({"day", "week", "month", "quarter", "year"}),
    "week": frozenset({"week"}),  # weeks straddle months, quarters and years
    "month": frozenset({"month", "quarter", "year"}),
    "quarter": frozenset({"quarter", "year"}),
    "year": frozenset({"year"}),
}
# Spark's date_trunc units and trunc formats (case-insensitive) -> grain
UNITS = {
    **dict.fromkeys(("year", "yyyy", "yy"), "year"),
    "quarter": "quarter",
    **dict.fromkeys(("month", "mm", "mon"), "month"),
    "week": "week",
    **dict.fromkeys(("day", "dd"), "day"),
    "hour": "hour",
    "minute": "minute",
    "second": "second",
}
TRUNC_UNITS = ("year", "quarter", "month", "week")  # trunc(d, fmt) knows no finer format
# Extractors: the value depends on c only through the truncation to this grain. Week-based
# numbering (weekofyear) is left at day: it is read from days only.
EXTRACTORS = {
    "Year": "year",
    "Quarter": "quarter",
    "Month": "month",
    "Day": "day",
    "DayOfMonth": "day",
    "DayOfWeek": "day",
    "DayOfYear": "day",
    "WeekOfYear": "day",
    "Hour": "hour",
    "Minute": "minute",
    "Second": "second",
}
TIME_TYPES = ("timestamp", "timestamp_ntz", "date")
BOUND_OPS = (">=", "<")  # c >= X, c < X on a grain boundary: the same rows as g(c) >= X, < X
MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?")


@dataclass(frozen=True, slots=True)
class Grain:
    """A view output `expr` (query space) that is `column` truncated to `grain`."""

    expr: ir.Expr
    column: ir.Column
    grain: str
    is_date: bool  # the column is a DATE: bounds must also fall on days


def rolls_up(fine: str, coarse: str) -> bool:
    """Whether a value truncated to `fine` determines its truncation to `coarse`."""
    return coarse in ANSWERS[fine]


def comparable(a: str, b: str) -> bool:
    return rolls_up(a, b) or rolls_up(b, a)


def grains_of(
    outputs: Iterable[ir.Expr], type_of: Callable[[ir.Column], str | None]
) -> tuple[Grain, ...]:
    """The view outputs that truncate a DATE or TIMESTAMP column to a grain."""
    out = []
    for expr in outputs:
        step = _step(expr)
        if step is None or not step[2] or not isinstance(step[1], ir.Column):
            continue
        column_type = (type_of(step[1]) or "").lower()
        if column_type in TIME_TYPES:
            out.append(Grain(expr, step[1], step[0], column_type == "date"))
    return tuple(out)


def derive(expr: ir.Expr, grains: tuple[Grain, ...], classes: Classes) -> ir.Expr:
    """`expr` with each time expression over a column replaced by the same expression over a
    view output that truncates that column finely enough (unchanged where none does)."""
    if any(expr == g.expr for g in grains):
        return expr
    replaced = _chain(expr, grains, classes)
    if replaced is None:
        replaced = _bound(expr, grains, classes)
    if replaced is not None:
        return replaced
    return ir.map_children(expr, lambda child: derive(child, grains, classes))


@dataclass(frozen=True, slots=True)
class GrainAvailable(Available):
    """`Available`, where an expression it cannot read is tried again after `derive`."""

    grains: tuple[Grain, ...] = ()

    def express(self, expr: ir.Expr) -> ir.Expr | None:
        found = Available.express(self, expr)
        if found is not None or not self.grains:
            return found
        derived = derive(expr, self.grains, self.classes)
        return None if derived == expr else Available.express(self, derived)


def available(plain: Available, grains: tuple[Grain, ...]) -> Available:
    if not grains:
        return plain
    return GrainAvailable(plain.classes, plain.exact, plain.canonical, plain.open_rels, grains)


# -- the grain of one function ------------------------------------------------------------
def _step(node: ir.Expr) -> tuple[str, ir.Expr, bool] | None:
    """(grain, operand, truncates) for a time function of one operand: `truncates` when its
    value is again a point in time (date_trunc, trunc, to_date, CAST AS DATE)."""
    if not isinstance(node, ir.Func):
        return None
    args = dict(node.args)
    operand = args.get("this")
    if not isinstance(operand, ir.EXPRESSION_TYPES):
        return None
    grain = _truncation(node.op, args)
    if grain is not None:
        return grain, operand, True
    extracted = EXTRACTORS.get(node.op)
    if extracted is not None and _only(args, "this"):
        return extracted, operand, False
    return None


def _truncation(op: str, args: dict[str, ir.Arg]) -> str | None:
    if op == "TimestampTrunc" and _only(args, "this", "unit"):
        return UNITS.get(_unit(args.get("unit")))
    if op == "DateTrunc" and _only(args, "this", "unit"):
        unit = UNITS.get(_unit(args.get("unit")))
        return unit if unit in TRUNC_UNITS else None
    if op == "TsOrDsToDate" and _only(args, "this", "safe"):
        return "day"
    if op in ("Cast", "TryCast") and _only(args, "this", "to"):
        to = args.get("to")
        return "day" if isinstance(to, ir.TypeName) and to.sql.upper() == "DATE" else None
    return None


def _only(args: dict[str, ir.Arg], *names: str) -> bool:
    """No operand other than `names` is set (no format, no time zone)."""
    return all(v is None or v is False for k, v in args.items() if k not in names)


def _unit(value: ir.Arg) -> str:
    if isinstance(value, ir.Literal) and value.kind == "string":
        return value.text.lower()
    if isinstance(value, ir.Func) and value.op == "Var":
        text = dict(value.args).get("this")
        return text.lower() if isinstance(text, str) else ""
    return ""


# -- derivations --------------------------------------------------------------------------
def _chain(expr: ir.Expr, grains: tuple[Grain, ...], classes: Classes) -> ir.Expr | None:
    """f1(f2(…fk(c))), each fi a time function and f2…fk truncations: the same over g(c) when
    the composite depends on c only through g's truncation — some fi's grain rolls up from
    g's, and every truncation below it is comparable with g's grain."""
    steps: list[str] = []
    node = expr
    while not isinstance(node, ir.Column):
        step = _step(node)
        if step is None or (steps and not step[2]):
            return None  # not a time function, or an extracted number fed to another
        steps.append(step[0])
        node = step[1]
    if not steps:
        return None
    column = node
    found = next((g for g in _grains_on(column, grains, classes) if _factors(steps, g.grain)), None)
    if found is None:
        return None
    return ir.transform(expr, lambda n: found.expr if n == column else None)


def _factors(steps: list[str], grain: str) -> bool:
    return any(
        rolls_up(grain, step) and all(comparable(grain, inner) for inner in steps[i + 1 :])
        for i, step in enumerate(steps)
    )


def _bound(expr: ir.Expr, grains: tuple[Grain, ...], classes: Classes) -> ir.Expr | None:
    """`c >= X` / `c < X` with X on a boundary of g's grain: `g(c) >= X` / `g(c) < X`."""
    if not isinstance(expr, ir.Compare):
        return None
    op, term, value = expr.op, expr.left, expr.right
    if isinstance(term, ir.Literal):
        op, term, value = MIRROR[op], value, term
    if op not in BOUND_OPS or not isinstance(term, ir.Column):
        return None
    moment = moment_of(value)
    if moment is None:
        return None
    for grain in _grains_on(term, grains, classes):
        day_too = grain.is_date and not aligned(moment, "day")
        if aligned(moment, grain.grain) and not day_too:
            return ir.Compare(op, grain.expr, value)
    return None


def _grains_on(column: ir.Column, grains: tuple[Grain, ...], classes: Classes) -> list[Grain]:
    rep = classes.rep(column)
    return [g for g in grains if classes.rep(g.column) == rep]


def moment_of(value: ir.Expr) -> dt.datetime | None:
    """A DATE, TIMESTAMP or ISO date/time string literal as a point in time."""
    if not isinstance(value, ir.Literal) or value.kind not in ("date", "timestamp", "string"):
        return None
    text = value.text.strip()
    if not MOMENT.fullmatch(text):
        return None
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def aligned(moment: dt.datetime, grain: str) -> bool:
    """Whether `moment` starts a unit of `grain` (weeks start on Monday, as in Spark)."""
    time = (moment.hour, moment.minute, moment.second, moment.microsecond)
    fine = {"second": 3, "minute": 2, "hour": 1}
    if grain in fine:
        return not any(time[fine[grain] :])
    if any(time):
        return False
    if grain == "week":
        return moment.weekday() == 0
    month_starts = {"month": range(1, 13), "quarter": (1, 4, 7, 10), "year": (1,)}
    return grain == "day" or (moment.day == 1 and moment.month in month_starts[grain])

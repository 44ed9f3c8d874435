"""Step 7, grouping and aggregates (GL01 §3.2, with Calcite's rollup).

No re-aggregation when every grouping column of the view is a grouping column of the query
or one its WHERE pins to a single value (each view row is then exactly one query group: a
tile by month and year answers `WHERE year = 1997 GROUP BY month` row for row) and every
aggregate is a view column. Otherwise
the query groups the view's rows again, each aggregate rebuilt through the shared rollup table
(`mvlattice.lattice.measures`): SUM->SUM, COUNT->SUM, MIN->MIN, MAX->MAX, AVG->SUM/COUNT, and
COUNT(DISTINCT x) only when x is a grouping column of the view. A count rolled up into a global
aggregate (no GROUP BY) is COALESCEd to 0: SUM over no rows is NULL, COUNT over no rows is 0.

APPROX_COUNT_DISTINCT(x) is recomputed over the view's rows when x is a grouping column of the
view, else answered from the view's HLL sketch of x (a tile's approximate distinct-count
measure): HLL_SKETCH_ESTIMATE(HLL_UNION_AGG(sketch)), a BIGINT as APPROX_COUNT_DISTINCT is.
Both are estimates (DataSketches HLL, Spark's HyperLogLog++); the numbers may differ slightly.
An exact COUNT(DISTINCT x) is never answered from a sketch.
"""

from __future__ import annotations

import re
from dataclasses import replace

from mvlattice.lattice.lattice import Measure
from mvlattice.lattice.measures import SKETCH_ESTIMATE, stored_columns
from mvlattice.mvrewrite.match.atoms import TEXT
from mvlattice.mvrewrite.match.attempt import CANNOT_ROLL_UP, Attempt, Rejection
from mvlattice.mvrewrite.match.output_mapping import is_output_ref, missing
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.sql import ir
from mvlattice.sql.canon import canonical
from mvlattice.sql.to_sql import sql_of

ZERO = ir.Literal("number", "0")
NUMERIC_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double")
# Literal kind -> column types (parameters dropped) where `column = literal` lets exactly one
# group value through (a string column compared with a number passes '7' and '7.0'; doubles
# pass 0.0 and -0.0).
EXACT_EQUALITY = {
    "number": ("tinyint", "smallint", "int", "bigint", "decimal"),
    "string": ("string",),
    TEXT: ("string",),
    "date": ("date",),
    "timestamp": ("timestamp",),
    "boolean": ("boolean",),
}
DUPLICATE_INSENSITIVE = ("min", "max", "approx_count_distinct")
APPROXIMATE = "approx_count_distinct"


def check(attempt: Attempt) -> Attempt | Rejection:
    if not attempt.query.grouped or attempt.split is not None:
        return attempt  # a union rewrite rolls up per branch (union_compensation)
    if not attempt.view_block.grouped:
        return _over_rows(attempt)
    if attempt.query.keys and not attempt.view_block.keys:
        return Rejection(
            CANNOT_ROLL_UP,
            "the view is one global aggregate row (it exists even over no rows); the query "
            "needs groups",
        )
    if same_grouping(attempt, pinned=bool(attempt.query.keys)):
        direct = _direct(attempt)
        if direct is not None:
            return finish(attempt, direct, aggregate=False)
    rolled: dict[ir.Agg, ir.Expr] = {}
    for agg in attempt.query.aggregates:
        found = roll_up(attempt, agg)
        if isinstance(found, Rejection):
            return found
        rolled[agg] = found
    return finish(attempt, rolled, aggregate=True)


def _over_rows(attempt: Attempt) -> Attempt | Rejection:
    """A view of rows: the query's aggregates run over the view as they would over the base."""
    assert attempt.available is not None
    mapped: dict[ir.Agg, ir.Expr] = {}
    for agg in attempt.query.aggregates:
        args = [attempt.available.express(a) for a in agg.args]
        if any(a is None for a in args):
            return missing(attempt, attempt.available, agg, "aggregates")
        mapped[agg] = ir.Agg(agg.func, tuple(args), agg.distinct)  # type: ignore[arg-type]
    return finish(attempt, mapped, aggregate=True)


def same_grouping(attempt: Attempt, pinned: bool = False) -> bool:
    """Each view row is exactly one query group: no joined-back rows, and every grouping
    column of the view is one of the query's or, with `pinned`, one the query's WHERE pins
    to a single value. Only a query with GROUP BY may count pinned columns: a global
    aggregate returns a row even when no view row passes."""
    if attempt.join_back:
        return False  # joined-back rows must be grouped again
    assert attempt.query_preds is not None
    classes = attempt.query_preds.classes
    query = {canonical(k, classes) for k in attempt.query.keys}
    if pinned:
        query |= pinned_columns(attempt)
    view = {canonical(attempt.to_query_space(k), classes) for k in attempt.view_block.keys}
    return view <= query


def pinned_columns(attempt: Attempt) -> set[ir.Expr]:
    """Class representatives the query's WHERE restricts to one value: `c IS NULL`, or
    `c = literal` (or an IN list, range, … of one point) where the column's type makes
    equal mean identical."""
    assert attempt.query_preds is not None
    out: set[ir.Expr] = set()
    for (rep, kind), value in attempt.query_preds.ranges.items():
        column_type = (_type_of(attempt, rep) or "").split("(")[0]
        if value == Range.null_only() or (
            value.is_one_value and column_type in EXACT_EQUALITY.get(kind, ())
        ):
            out.add(rep)
    return out


def _direct(attempt: Attempt) -> dict[ir.Agg, ir.Expr] | None:
    columns = view_aggregates(attempt)
    out: dict[ir.Agg, ir.Expr] = {}
    for agg in attempt.query.aggregates:
        found = columns.get(canonical_in(attempt, agg))
        if found is None and agg.func == APPROXIMATE:
            ((part, _),) = parts(agg)
            sketch = columns.get(canonical_in(attempt, part))
            found = None if sketch is None else estimate(sketch, bool(attempt.query.keys))
        if found is None and agg.func == "avg" and not agg.distinct:
            found_parts = [columns.get(canonical_in(attempt, p)) for p, _ in parts(agg)]
            if None not in found_parts:
                averaged = average(attempt, agg, *found_parts)  # type: ignore[arg-type]
                found = None if isinstance(averaged, Rejection) else averaged
        if found is None:
            return None
        out[agg] = found
    return out


def roll_up(attempt: Attempt, agg: ir.Agg) -> ir.Expr | Rejection:
    """`agg` recomputed from the view's rows grouped again."""
    assert attempt.available is not None
    if agg.distinct or agg.func in DUPLICATE_INSENSITIVE:
        args = [attempt.available.express(a) for a in agg.args]
        if args and None not in args:
            return ir.Agg(agg.func, tuple(args), agg.distinct)  # type: ignore[arg-type]
    if agg.distinct:
        return _cannot(attempt, agg, "its argument is not a grouping column of the view")
    rolled_parts = []
    for part, rollup in parts(agg):
        column = view_aggregates(attempt).get(canonical_in(attempt, part))
        if column is None or rollup is None:
            return _cannot(attempt, agg, f"the view has no {sql_of(part)}")
        rolled: ir.Expr = resummed(attempt, part, ir.Agg(rollup, (column,)))
        if agg.func == APPROXIMATE:
            rolled = estimate(rolled, bool(attempt.query.keys))
        elif part.func == "count" and not attempt.query.keys:
            rolled = coalesce_zero(rolled)
        rolled_parts.append(rolled)
    return average(attempt, agg, *rolled_parts) if agg.func == "avg" else rolled_parts[0]


def resummed(attempt: Attempt, part: ir.Agg, rolled: ir.Expr) -> ir.Expr:
    """A SUM of partial SUMs typed as Spark types the SUM it replaces: SUM of DECIMAL(p, s) is
    DECIMAL(p + 10, s), so summing those sums again would widen it to DECIMAL(p + 20, s).
    The cast changes no value: a total that overflows DECIMAL(p + 10, s) overflows the
    original SUM as well. Where the argument's type is unknown the rewrite keeps the wider
    type (the values are equal)."""
    if part.func != "sum" or part.distinct or len(part.args) != 1:
        return rolled
    decimal = _decimal_of(attempt, part.args[0])
    if decimal is None:
        return rolled
    precision, scale = decimal
    return _cast(rolled, _decimal(precision + 10, scale))


def _type_of_expr(attempt: Attempt, expr: ir.Expr) -> str | None:
    """A column's Spark type, or the type an explicit CAST gives (lower case, no spaces).
    sqlglot reads Spark's CAST as TryCast (without ANSI mode a failed cast is NULL)."""
    if isinstance(expr, ir.Func) and expr.op in ("Cast", "TryCast"):
        to = dict(expr.args).get("to")
        return to.sql.lower().replace(" ", "") if isinstance(to, ir.TypeName) else None
    return _type_of(attempt, expr)


def _decimal_of(attempt: Attempt, expr: ir.Expr) -> tuple[int, int] | None:
    """(precision, scale) when `expr` is known to be a DECIMAL."""
    found = re.fullmatch(r"decimal\((\d+),(\d+)\)", _type_of_expr(attempt, expr) or "")
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def parts(agg: ir.Agg) -> tuple[tuple[ir.Agg, str | None], ...]:
    """The stored aggregates `agg` is built from and how each rolls up, per the shared rollup
    table (AVG(x) -> SUM(x) and COUNT(x), both rolled up by SUM)."""
    labels = tuple(f"_{i}" for i in range(len(agg.args)))
    by_label = dict(zip(labels, agg.args, strict=True))
    stored = stored_columns(Measure(agg.func, labels, agg.distinct))
    return tuple(
        (ir.Agg(s.agg, tuple(by_label[a] for a in s.args), s.distinct), s.rollup) for s in stored
    )


def view_aggregates(attempt: Attempt) -> dict[ir.Expr, ir.Expr]:
    """Canonical aggregate output of the view (query space) -> the view column holding it."""
    out: dict[ir.Expr, ir.Expr] = {}
    for output in attempt.view_block.outputs:
        if isinstance(output.expr, ir.Agg):
            key = canonical_in(attempt, attempt.to_query_space(output.expr))
            out.setdefault(key, ir.Column(attempt.view_alias, output.name))
    return out


def canonical_in(attempt: Attempt, expr: ir.Expr) -> ir.Expr:
    assert attempt.query_preds is not None
    return canonical(expr, attempt.query_preds.classes)


def finish(attempt: Attempt, aggs: dict[ir.Agg, ir.Expr], aggregate: bool) -> Attempt | Rejection:
    """Outputs, HAVING and ORDER BY over the rewritten FROM, aggregates replaced by `aggs`."""
    assert attempt.available is not None
    express = _Express(attempt, aggs)
    outputs = tuple(ir.Output(o.name, express(o.expr)) for o in attempt.query.outputs)
    having = tuple(express(h) for h in attempt.query.having)
    order = tuple(
        ir.SortKey(
            k.expr if is_output_ref(k.expr) else express(k.expr), k.descending, k.nulls_first
        )
        for k in attempt.query.order
    )
    if express.failed is not None:
        return missing(attempt, attempt.available, express.failed, "returns")
    if not aggregate:  # one view row per group: HAVING is a filter on view rows
        return replace(
            attempt, outputs=outputs, order=order, filters=attempt.filters + having, aggs=aggs
        )
    return replace(attempt, outputs=outputs, having=having, order=order, aggregate=True, aggs=aggs)


class _Express:
    """Expressions over keys and aggregates -> over the rewritten FROM; records a failure."""

    def __init__(self, attempt: Attempt, aggs: dict[ir.Agg, ir.Expr]) -> None:
        assert attempt.available is not None
        self.available = attempt.available
        self.aggs = aggs
        self.failed: ir.Expr | None = None

    def __call__(self, expr: ir.Expr) -> ir.Expr:
        if isinstance(expr, ir.Agg):
            return self.aggs[expr]
        if not ir.has_agg(expr):
            found = self.available.express(expr)
            if found is None:
                self.failed = self.failed or expr
                return expr
            return found
        return ir.map_children(expr, self)


def estimate(sketch: ir.Expr, grouped: bool) -> ir.Expr:
    """APPROX_COUNT_DISTINCT from an HLL sketch; 0 when a global aggregate has no sketch."""
    value = ir.Func("Anonymous", (("this", SKETCH_ESTIMATE), ("expressions", (sketch,))))
    return value if grouped else coalesce_zero(value)


def coalesce_zero(expr: ir.Expr) -> ir.Expr:
    return ir.Func("Coalesce", (("this", expr), ("expressions", (ZERO,))))


def average(attempt: Attempt, agg: ir.Agg, total: ir.Expr, count: ir.Expr) -> ir.Expr | Rejection:
    """AVG(x) from its SUM and COUNT, exactly as Spark's AVG computes it: for DECIMAL(p, s)
    the sum as DECIMAL(p+10, s) divided by the count as
    DECIMAL(20, 0), cast to DECIMAL(p+4, s+4); for other numbers a division in DOUBLE. When
    x's type is unknown the result's precision is too, and the query is not rewritten."""
    if len(agg.args) != 1:
        return _cannot(attempt, agg, "AVG takes one argument")
    decimal = _decimal_of(attempt, agg.args[0])
    if decimal is not None:
        p, s = decimal
        ratio = divide(_cast(total, _decimal(p + 10, s)), _cast(count, _decimal(20, 0)))
        return _cast(ratio, _decimal(p + 4, s + 4))
    if _type_of_expr(attempt, agg.args[0]) in NUMERIC_TYPES:
        return divide(total, count)
    return _cannot(
        attempt,
        agg,
        "its argument's type is unknown, and with it the precision of AVG rebuilt from SUM "
        "and COUNT",
    )


def _type_of(attempt: Attempt, expr: ir.Expr) -> str | None:
    if not isinstance(expr, ir.Column) or expr.rel not in attempt.query.rels:
        return None
    return attempt.keys.type_of(attempt.query.table_of(expr.rel), expr.name)


def _decimal(precision: int, scale: int) -> ir.TypeName:
    return ir.TypeName(f"DECIMAL({min(precision, 38)}, {min(scale, 38)})")


def _cast(expr: ir.Expr, to: ir.TypeName) -> ir.Expr:
    if isinstance(expr, ir.Func) and expr.op == "Cast" and dict(expr.args).get("to") == to:
        return expr  # already of that type: a rolled-up SUM `resummed` typed
    return ir.Func("Cast", (("this", expr), ("to", to)))


def divide(numerator: ir.Expr, denominator: ir.Expr) -> ir.Expr:
    return ir.Func("Div", (("this", numerator), ("expression", denominator)))


def _cannot(attempt: Attempt, agg: ir.Agg, why: str) -> Rejection:
    hint = ""
    if attempt.view.kind == "tile" and not agg.distinct:
        args = ", ".join(_label(attempt, a) for a in agg.args) or "*"
        hint = f" (add measure {agg.func}({args}) to a tile of lattice '{attempt.view.lattice}')"
    return Rejection(CANNOT_ROLL_UP, f"{sql_of(agg)} cannot be computed: {why}{hint}")


def _label(attempt: Attempt, expr: ir.Expr) -> str:
    """The lattice label of a column (what a tile's measure names), else the SQL."""
    if isinstance(expr, ir.Column) and expr.rel in attempt.query.rels:
        label = attempt.view.label(attempt.query.table_of(expr.rel), expr.name)
        if label is not None:
            return label
    return sql_of(expr)

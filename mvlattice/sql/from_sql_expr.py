"""Qualified sqlglot expressions -> IR expressions (the boundary; see from_sql for blocks)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from sqlglot import exp

from mvlattice.errors import UnsupportedSqlError
from mvlattice.sql import ir
from mvlattice.sql.aggregates import AGGREGATE_OF_NODE, sketch_function, sketched_value

COMPARISON_OPS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.NullSafeEQ: "<=>",
}

# Functions whose value may differ between two evaluations: a view computed yesterday does
# not hold today's value, so a block using one is never rewritten.
NONDETERMINISTIC = frozenset(
    {"Rand", "Randn", "Uuid", "CurrentTimestamp", "CurrentDate", "CurrentTime", "CurrentDatetime"}
)
NOT_REWRITTEN = (exp.Query, exp.Star, exp.Placeholder, exp.Parameter, exp.Grouping)
# Spark built-ins sqlglot does not model (they parse as anonymous functions) that are known to
# be deterministic. Any other unknown function (a UDF, now(), shuffle(), …) is not trusted.
DETERMINISTIC_ANONYMOUS = frozenset(
    {
        "hash", "xxhash64", "make_date", "make_timestamp", "bround", "pmod", "crc32", "sha1",
        "soundex", "levenshtein", "format_number", "format_string", "translate", "bin", "hex",
        "unhex", "conv", "factorial", "cot", "sec", "csc", "e", "pi", "nanvl", "isnan",
        "date_from_unix_date", "unix_date", "timestamp_seconds", "timestamp_millis",
        "try_add", "try_subtract", "try_multiply", "try_divide", "hll_sketch_estimate",
    }
)  # fmt: skip

ColumnResolver = Callable[[exp.Column], ir.Column]
SubqueryText = Callable[[exp.Expr], str]


def unsupported(message: str, reason: str = "UNSUPPORTED") -> UnsupportedSqlError:
    """The error a translation step raises; the rewriter turns it into a reason, not a failure."""
    error = UnsupportedSqlError(message)
    error.reason = reason  # type: ignore[attr-defined]
    return error


class ExprTranslator:
    """Translates the expressions of one block; columns are resolved by the block's scope."""

    def __init__(self, resolve: ColumnResolver, subquery_sql: SubqueryText) -> None:
        self.resolve = resolve
        self.subquery_sql = subquery_sql

    def __call__(self, node: exp.Expr) -> ir.Expr:
        return self.expr(node)

    def expr(self, node: exp.Expr) -> ir.Expr:
        if isinstance(node, exp.Paren):
            return self.expr(node.this)
        for handler in (self._atom, self._logic, self._predicate, self._aggregate):
            result = handler(node)
            if result is not None:
                return result
        return self._generic(node)

    # -- columns and literals -------------------------------------------------------------
    def _atom(self, node: exp.Expr) -> ir.Expr | None:
        if isinstance(node, exp.Column):
            if isinstance(node.this, exp.Star):
                raise unsupported(f"'{node.sql('spark')}' is not expanded")
            return self.resolve(node)
        if isinstance(node, exp.Literal):
            return ir.Literal("string" if node.is_string else "number", node.name)
        if isinstance(node, exp.Boolean):
            return ir.Literal("boolean", "true" if node.this else "false")
        if isinstance(node, exp.Null):
            return ir.Literal("null", "")
        if isinstance(node, exp.Neg) and _number(node.this):
            return ir.Literal("number", "-" + node.this.name)
        if isinstance(node, exp.Cast | exp.TryCast):
            return _typed_literal(node)
        return None

    # -- AND / OR / NOT / comparisons -----------------------------------------------------
    def _logic(self, node: exp.Expr) -> ir.Expr | None:
        if isinstance(node, exp.And):
            return ir.And(tuple(self.expr(t) for t in node.flatten()))
        if isinstance(node, exp.Or):
            return ir.Or(tuple(self.expr(t) for t in node.flatten()))
        if isinstance(node, exp.Not):
            return ir.Not(self.expr(node.this))
        op = COMPARISON_OPS.get(type(node))
        if op is not None:
            return ir.Compare(op, self.expr(node.this), self.expr(node.expression))
        return None

    def _predicate(self, node: exp.Expr) -> ir.Expr | None:
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return ir.IsNull(self.expr(node.this))
        if isinstance(node, exp.Between):
            if node.args.get("symmetric"):
                raise unsupported("BETWEEN SYMMETRIC is not rewritten")
            term = self.expr(node.this)  # x BETWEEN a AND b  ==  x >= a AND x <= b
            low, high = self.expr(node.args["low"]), self.expr(node.args["high"])
            return ir.And((ir.Compare(">=", term, low), ir.Compare("<=", term, high)))
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Exists):
            return ir.Subquery("exists", self.subquery_sql(node.this))
        if isinstance(node, exp.Subquery):
            return ir.Subquery("scalar", self.subquery_sql(node.this))
        return None

    def _in(self, node: exp.In) -> ir.Expr:
        term = self.expr(node.this)
        query = node.args.get("query")
        if query is not None:
            return ir.Subquery("in", self.subquery_sql(query.this), term)
        if node.args.get("unnest") or node.args.get("field"):
            raise unsupported(f"'{node.sql('spark')}' is not rewritten")
        return ir.InList(term, tuple(self.expr(v) for v in node.expressions))

    # -- aggregates -----------------------------------------------------------------------
    def _aggregate(self, node: exp.Expr) -> ir.Expr | None:
        if isinstance(node, exp.Window):
            raise unsupported(f"window function '{node.sql('spark')}' is not rewritten")
        sketch = sketch_function(node)
        if sketch is not None:  # HLL_SKETCH_AGG(x) / HLL_UNION_AGG(s): default options only
            if len(node.expressions) != 1:
                raise unsupported(f"'{node.sql('spark')}' is not rewritten")
            arg = node.expressions[0]  # a tile's sketch of x hashes x (sketch_input_sql)
            value = sketched_value(arg) if sketch == "hll_sketch_agg" else arg
            return ir.Agg(sketch, (self.expr(value),))
        func = AGGREGATE_OF_NODE.get(type(node))
        if func == "approx_count_distinct" and node.args.get("accuracy") is not None:
            raise unsupported(f"'{node.sql('spark')}' is not rewritten (relative accuracy)")
        if func is None:
            if isinstance(node, exp.AggFunc):
                name = node.sql_name().lower()
                raise unsupported(
                    f"aggregate function {name}() is not rewritten "
                    "(only sum, count, min, max and avg roll up)"
                )
            return None
        inner = node.this
        distinct = isinstance(inner, exp.Distinct)
        operands = list(inner.expressions) if distinct else ([inner] if inner is not None else [])
        operands += list(node.args.get("expressions") or ())
        if operands and isinstance(operands[0], exp.Star):
            operands = []
        return ir.Agg(func, tuple(self.expr(o) for o in operands), distinct)

    # -- everything else round-trips untouched -------------------------------------------
    def _generic(self, node: exp.Expr) -> ir.Expr:
        op = type(node).__name__
        if op in NONDETERMINISTIC:
            raise unsupported(f"{node.sql('spark')} is not deterministic", "UNSAFE")
        if isinstance(node, exp.Anonymous) and node.name.lower() not in DETERMINISTIC_ANONYMOUS:
            raise unsupported(
                f"function {node.name}() is unknown: mvlattice cannot tell whether it is "
                "deterministic",
                "UNSAFE",
            )
        if isinstance(node, NOT_REWRITTEN):
            raise unsupported(f"'{node.sql('spark')}' is not rewritten")
        args = tuple((key, self._arg(value)) for key, value in node.args.items())
        return ir.Func(op, args)

    def _arg(self, value: object) -> ir.Arg:
        if isinstance(value, list):
            return tuple(self._arg(v) for v in value)
        if isinstance(value, exp.DataType):
            return ir.TypeName(value.sql("spark"))
        if isinstance(value, exp.Expr):
            return self.expr(value)
        if value is None or isinstance(value, str | int | float | bool):
            return value  # type: ignore[return-value]
        raise unsupported(f"operand {value!r} is not rewritten")


def _typed_literal(node: exp.Cast | exp.TryCast) -> ir.Literal | None:
    """DATE '…' / TIMESTAMP '…' (and CAST of a string to those): a date or timestamp value."""
    inner, to = node.this, node.args.get("to")
    if not (isinstance(inner, exp.Literal) and inner.is_string and isinstance(to, exp.DataType)):
        return None
    kind = {
        exp.DataType.Type.DATE: "date",
        exp.DataType.Type.TIMESTAMP: "timestamp",
        exp.DataType.Type.TIMESTAMPTZ: "timestamp",
        exp.DataType.Type.TIMESTAMPLTZ: "timestamp",
    }.get(to.this)
    text = inner.name.strip()
    try:
        if kind == "date":
            return ir.Literal("date", dt.date.fromisoformat(text).isoformat())
        if kind == "timestamp":
            return ir.Literal("timestamp", dt.datetime.fromisoformat(text).isoformat(sep=" "))
    except ValueError:
        return None
    return None


def _number(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and not node.is_string

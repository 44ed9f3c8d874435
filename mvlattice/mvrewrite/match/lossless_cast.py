"""Lossless casts: a view output `CAST(c AS T)` that widens c's type holds c itself (GL01
§3.1.3, expressions computable from view outputs; issue 20, class 4).

A widening cast is injective and a narrowing cast back undoes it exactly, so c is read from
the view column v as `CAST(v AS type of c)`: filters, grouping and outputs on c are answered
through it, and the result keeps c's type. Lossless in Spark: an integer into a wider integer,
into a DECIMAL with enough integer digits, or into a FLOAT/DOUBLE whose mantissa holds it
(TINYINT and SMALLINT into FLOAT, INT into DOUBLE — not BIGINT); a DECIMAL(p,s) into one with
no smaller scale and no fewer integer digits, or with scale 0 into an integer wide enough;
FLOAT into DOUBLE. Never: narrowing, a smaller scale, fractional into integral, anything to or
from STRING, DATE into TIMESTAMP (the session time zone decides the instant). The other way
round (the query asks `CAST(c AS T)`, the view holds c) needs nothing here: the cast is
computed over the view column. When in doubt (an unknown type, a cast with a format) the cast
is not read as its column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mvlattice.sql import ir

INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}  # to hold any value
FULL_DIGITS = {"tinyint": 2, "smallint": 4, "int": 9, "bigint": 18}  # every such decimal fits
MANTISSA_BITS = {"float": 24, "double": 53}
ALIASES = {
    "integer": "int",
    "long": "bigint",
    "short": "smallint",
    "byte": "tinyint",
    "real": "float",
    "dec": "decimal",
    "numeric": "decimal",
}
DECIMAL = re.compile(r"decimal(?:\((\d+)(?:,(\d+))?\))?")
CAST_OPS = ("Cast", "TryCast")  # Spark's CAST is sqlglot's TryCast (NULL on failure)


@dataclass(frozen=True, slots=True)
class Numeric:
    """A Spark numeric type: `kind` is an integer, float or "decimal" name."""

    kind: str
    precision: int = 0  # decimals only
    scale: int = 0

    @property
    def sql(self) -> str:
        if self.kind == "decimal":
            return f"DECIMAL({self.precision}, {self.scale})"
        return self.kind.upper()


def numeric(text: str) -> Numeric | None:
    """A type's Spark SQL text as a numeric type, or None (not numeric, or not understood)."""
    name = text.strip().lower().replace(" ", "")
    name = ALIASES.get(name, name)
    if name in INTEGER_BITS or name in MANTISSA_BITS:
        return Numeric(name)
    for alias in ("dec", "numeric"):
        if name.startswith(alias + "(") or name == alias:
            name = "decimal" + name[len(alias) :]
    match = DECIMAL.fullmatch(name)
    if match is None:
        return None
    precision = int(match.group(1) or 10)  # Spark's DECIMAL is DECIMAL(10, 0)
    scale = int(match.group(2) or 0)
    if not 0 < precision <= 38 or scale > precision:
        return None
    return Numeric("decimal", precision, scale)


def lossless(source: str, target: str) -> bool:
    """Whether CAST from type `source` to type `target` keeps every value (and so is undone
    exactly by a cast back)."""
    a, b = numeric(source), numeric(target)
    if a is None or b is None:
        return False
    if a == b:
        return True
    if a.kind in INTEGER_BITS:
        return _from_integer(a.kind, b)
    if a.kind == "decimal":
        return _from_decimal(a, b)
    return b.kind in MANTISSA_BITS and MANTISSA_BITS[b.kind] >= MANTISSA_BITS[a.kind]


def _from_integer(kind: str, to: Numeric) -> bool:
    if to.kind in INTEGER_BITS:
        return INTEGER_BITS[to.kind] >= INTEGER_BITS[kind]
    if to.kind in MANTISSA_BITS:
        return MANTISSA_BITS[to.kind] >= INTEGER_BITS[kind]
    return to.precision - to.scale >= INTEGER_DIGITS[kind]


def _from_decimal(a: Numeric, to: Numeric) -> bool:
    if to.kind == "decimal":
        return to.scale >= a.scale and to.precision - to.scale >= a.precision - a.scale
    if to.kind in INTEGER_BITS:
        return a.scale == 0 and a.precision <= FULL_DIGITS[to.kind]
    return False  # a decimal fraction is not a binary one


def widened(
    outputs: Mapping[ir.Expr, ir.Expr], type_of: Callable[[ir.Column], str | None]
) -> dict[ir.Expr, ir.Expr]:
    """Column c -> `CAST(view column AS type of c)`, for each view output (query space ->
    view column) that casts c losslessly; the first such output wins."""
    out: dict[ir.Expr, ir.Expr] = {}
    for expr, target in outputs.items():
        operand = cast_operand(expr)
        if operand is None or operand[0] in out:
            continue
        column, to = operand
        source = type_of(column)
        original = numeric(source) if source is not None else None
        if original is not None and lossless(original.sql, to.sql):
            out[column] = cast(target, ir.TypeName(original.sql))
    return out


def cast_operand(expr: ir.Expr) -> tuple[ir.Column, ir.TypeName] | None:
    """(c, T) for `CAST(c AS T)` with no format or other option."""
    if not isinstance(expr, ir.Func) or expr.op not in CAST_OPS:
        return None
    args = dict(expr.args)
    column, to = args.get("this"), args.get("to")
    if not isinstance(column, ir.Column) or not isinstance(to, ir.TypeName):
        return None
    if any(v is not None and v is not False for k, v in args.items() if k not in ("this", "to")):
        return None
    return column, to


def cast(expr: ir.Expr, to: ir.TypeName) -> ir.Expr:
    return ir.Func("Cast", (("this", expr), ("to", to)))

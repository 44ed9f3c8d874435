"""Spark SQL (a rewritten query over tiles) into DuckDB SQL that returns what Spark returns — or
a `Refusal` naming the construct whose identity with Spark is not proven.

An allow-list, not a deny-list: every node of the query must be of a kind listed here, and the
kinds whose meaning differs between the two engines are translated to Spark's meaning:

- CAST is strict (Spark runs with ANSI semantics: a bad value fails; DuckDB's CAST fails too,
  and a failure sends the query to Spark), and only between numbers in ways both round alike
  (decimal to decimal rounds half away from zero in both; to DOUBLE is exact in both).
- `a / b` of integers or doubles is a DOUBLE division in both; division by zero is an error in
  DuckDB as it is in Spark (ANSI), so Spark answers it. Division involving a DECIMAL is refused:
  Spark divides decimals exactly at a computed scale, DuckDB in DOUBLE.
- AVG of a non-decimal is SUM of DOUBLEs over COUNT, as Spark's Average computes it.
- ORDER BY keys get Spark's NULL ordering (ASC NULLS FIRST, DESC NULLS LAST).
- LIMIT only under an ORDER BY of every output column: otherwise Spark and DuckDB may keep
  different rows among ties.
- Comparisons only between values of one kind (numbers, strings, dates, booleans): Spark and
  DuckDB coerce mixed kinds differently. A string literal compared with a date must be an ISO
  date (`'1997-01-01'`), which both read alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from mvlattice.sql.refusal import Refusal

if TYPE_CHECKING:
    import pyarrow as pa

DType = exp.DType

_INTEGER = {DType.TINYINT, DType.SMALLINT, DType.INT, DType.BIGINT}
_REAL = {DType.FLOAT, DType.DOUBLE}
_DECIMAL = {DType.DECIMAL}
_STRING = {DType.TEXT, DType.VARCHAR, DType.CHAR}
_FAMILIES = {
    "number": _INTEGER | _REAL | _DECIMAL,
    "string": _STRING,
    "date": {DType.DATE},
    "boolean": {DType.BOOLEAN},
    "timestamp": {DType.TIMESTAMP, DType.TIMESTAMPTZ, DType.TIMESTAMPLTZ, DType.TIMESTAMPNTZ},
}

# Node kinds that mean the same in both engines once their operands' kinds are checked.
_ALLOWED = (
    exp.Select, exp.From, exp.Where, exp.Group, exp.Having, exp.Order, exp.Ordered, exp.Limit,
    exp.Alias, exp.TableAlias, exp.Identifier, exp.Column, exp.Table, exp.Star, exp.Distinct,
    exp.With, exp.CTE, exp.Union, exp.Except, exp.Intersect, exp.Subquery, exp.Join,
    exp.Literal, exp.Boolean, exp.Null, exp.Paren, exp.And, exp.Or, exp.Not, exp.Neg,
    exp.Is, exp.In, exp.Between, exp.EQ, exp.NullSafeEQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE,
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Cast, exp.TryCast, exp.DataType,
    exp.DataTypeParam, exp.Sum, exp.Count, exp.Min, exp.Max, exp.Avg, exp.Coalesce,
    exp.Case, exp.If, exp.Abs,
)  # fmt: skip
_COMPARISONS = (exp.EQ, exp.NullSafeEQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class Transpiled:
    sql: str  # DuckDB SQL reading the registered names
    tables: tuple[str, ...]  # the tiles read (qualified, lower case), in registration order


@dataclass(frozen=True, slots=True)
class Source:
    """A table the query may read: the name it is registered under in DuckDB, and its columns
    (lower case) with their Spark SQL types."""

    registered: str
    columns: Mapping[str, str]


def to_duckdb(sql: str, sources: Mapping[str, Source]) -> Transpiled | Refusal:
    """`sources`: qualified table name (lower case) -> Source."""
    try:
        tree: exp.Expr = exp.maybe_parse(sql, dialect="spark")
    except SqlglotError as exc:
        return Refusal(f"the tile engine cannot read the rewritten SQL ({exc})")
    if not isinstance(tree, exp.Query):
        return Refusal("the rewritten SQL is not a query")
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    read: list[str] = []
    for table in tree.find_all(exp.Table):
        name = _qualified(table)
        if name in ctes:
            continue
        if name not in sources:
            return Refusal(f"it reads {name}, which is not a fresh tile the tile engine may read")
        read.append(name)
    schema = _schema(sources, read)
    try:
        annotate_types(tree, schema=schema, dialect="spark")
    except (SqlglotError, KeyError, ValueError) as exc:
        return Refusal(f"the types of the rewritten SQL are not known ({exc})")
    refused = _check(tree)
    if refused is not None:
        return refused
    tree = tree.transform(_to_spark_meaning, copy=False)
    for table in list(tree.find_all(exp.Table)):
        name = _qualified(table)
        if name in sources and name not in ctes:
            alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
            table.replace(exp.Table(this=exp.to_identifier(sources[name].registered), alias=alias))
    try:
        text = tree.sql(dialect="duckdb", identify=True)
    except SqlglotError as exc:
        return Refusal(f"the tile engine cannot write the query for DuckDB ({exc})")
    return Transpiled(text, tuple(dict.fromkeys(read)))


def _qualified(table: exp.Table) -> str:
    parts = [p for p in (table.catalog, table.db, table.name) if p]
    return ".".join(parts).lower()


def _schema(sources: Mapping[str, Source], read: list[str]) -> dict:
    schema: dict = {}
    for name in dict.fromkeys(read):
        *path, last = name.split(".")
        node = schema
        for part in path:
            node = node.setdefault(part, {})
        node[last] = dict(sources[name].columns)
    return schema


def _check(tree: exp.Expr) -> Refusal | None:
    for node in tree.walk():
        if not isinstance(node, _ALLOWED):
            return Refusal(f"{_label(node)} is not proven identical on the tile engine")
        problem = _problem(node)
        if problem is not None:
            return Refusal(problem)
    return None


def _problem(node: exp.Expr) -> str | None:  # noqa: PLR0911 - one rule per kind
    if isinstance(node, exp.Column) and _family(node) is None:
        return f"column {node.sql('spark')} has a type the tile engine does not serve"
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _cast_problem(node)
    if isinstance(node, exp.Div) and not all(
        _kind(side) in (_INTEGER | _REAL) for side in (node.this, node.expression)
    ):
        return "a division of DECIMALs (Spark divides them exactly, DuckDB in DOUBLE)"
    if isinstance(node, exp.Avg) and _kind(node.this) not in (_INTEGER | _REAL):
        return "AVG of a DECIMAL (Spark averages it exactly at a computed scale)"
    if isinstance(node, _COMPARISONS + (exp.Between, exp.In)):
        return _comparison_problem(node)
    if isinstance(node, exp.Limit) and not _limit_has_total_order(node):
        return "LIMIT without ORDER BY of every output column (ties may keep other rows)"
    if isinstance(node, exp.Subquery) and not isinstance(node.parent, (exp.From, exp.Join)):
        return "a subquery used as a value"
    if isinstance(node, exp.Join) and not _equi_join(node):
        return "a join other than ON equalities of columns"
    return None


def _equi_join(join: exp.Join) -> bool:
    """ON a.x = b.y [AND …] only (or <=>, NULL-safe; IS NOT DISTINCT FROM in DuckDB): other
    joins may grow as the product of their inputs."""
    on = join.args.get("on")
    if join.args.get("using") or on is None:
        return False
    for conjunct in on.flatten() if isinstance(on, exp.And) else (on,):
        if not (
            isinstance(conjunct, (exp.EQ, exp.NullSafeEQ))
            and isinstance(conjunct.this, exp.Column)
            and isinstance(conjunct.expression, exp.Column)
        ):
            return False
    return True


def _cast_problem(node: exp.Cast) -> str | None:
    source, target = _kind(node.this), node.to.this
    if isinstance(node.this, exp.Null):
        # A typed NULL (a rolled-up column of a grouping set) is NULL in both engines; not a
        # timestamp, whose zone DuckDB's union with a real column could shift.
        typed = _kind(node)
        kinds = _FAMILIES["number"] | _FAMILIES["string"] | {DType.DATE, DType.BOOLEAN}
        return None if typed in kinds else f"a NULL cast to {node.to.sql('spark')}"
    if source is None:
        return f"CAST of {node.this.sql('spark')}, whose type is not known"
    if target in _DECIMAL and source in (_INTEGER | _DECIMAL):
        return None
    if target in _REAL and source in (_INTEGER | _REAL | _DECIMAL):
        return None
    if target in _INTEGER and source in _INTEGER:
        return None
    if source == target and target not in _DECIMAL:
        return None
    return f"CAST from {source.value} to {node.to.sql('spark')}"


def _comparison_problem(node: exp.Expression) -> str | None:
    if isinstance(node, exp.In):
        if node.args.get("query") is not None:
            return None  # the subquery's own nodes are checked; its column's kind is Spark's too
        sides = [node.this, *node.expressions]
    elif isinstance(node, exp.Between):
        sides = [node.this, node.args["low"], node.args["high"]]
    else:
        sides = [node.this, node.expression]
    families = {_family(side) for side in sides if not isinstance(side, exp.Null)}
    if families == {"date", "string"} and all(
        _family(side) == "date" or _is_iso_date(side) for side in sides
    ):
        return None
    if len(families) != 1 or None in families:
        return f"a comparison of values of different kinds: {node.sql('spark')}"
    return None


def _is_iso_date(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string and bool(_ISO_DATE.fullmatch(node.this))


def _limit_has_total_order(limit: exp.Limit) -> bool:
    select = limit.parent
    if not isinstance(select, exp.Select):
        return False
    order = select.args.get("order")
    if order is None:
        return False
    keys = {o.this.sql("spark").lower() for o in order.expressions}
    for projection in select.expressions:
        names = {projection.alias_or_name.lower(), projection.sql("spark").lower()}
        if isinstance(projection, exp.Alias):
            names.add(projection.this.sql("spark").lower())
        if isinstance(projection, exp.Star) or not names & keys:
            return False
    return True


def _to_spark_meaning(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.TryCast):
        return exp.Cast(this=node.this, to=node.to)
    if isinstance(node, exp.Div):
        divisor = node.expression
        zero = exp.EQ(this=divisor.copy(), expression=exp.Literal.number(0))
        failing = exp.Anonymous(this="error", expressions=[exp.Literal.string("DIVIDE_BY_ZERO")])
        plain = exp.Div(this=node.this, expression=divisor)
        return exp.Case(ifs=[exp.If(this=zero, true=failing)], default=plain)
    if isinstance(node, exp.Avg):
        arg = node.this
        total = exp.Sum(this=exp.Cast(this=arg.copy(), to=exp.DataType.build("DOUBLE")))
        count = exp.Count(this=arg.copy())
        return exp.Paren(
            this=exp.Div(
                this=total, expression=exp.Nullif(this=count, expression=exp.Literal.number(0))
            )
        )
    if isinstance(node, exp.Ordered) and node.args.get("nulls_first") is None:
        node.set("nulls_first", not node.args.get("desc"))
    if isinstance(node, exp.Literal) and node.is_string and _is_iso_date(node):
        parent = node.parent
        if isinstance(parent, _COMPARISONS + (exp.Between, exp.In)) and _compares_dates(parent):
            return exp.Cast(this=node.copy(), to=exp.DataType.build("DATE"))
    return node


def _compares_dates(node: exp.Expression) -> bool:
    return any(_family(child) == "date" for child in node.iter_expressions())


def _kind(node: exp.Expression) -> DType | None:
    kind = node.type.this if node.type is not None else None
    return None if kind in (None, DType.UNKNOWN, DType.NULL) else kind


def _family(node: exp.Expression) -> str | None:
    kind = _kind(node)
    if kind is None and isinstance(node, exp.Null):
        return "null"
    return next((name for name, kinds in _FAMILIES.items() if kind in kinds), None)


def _label(node: exp.Expr) -> str:
    name = node.key.upper() if not isinstance(node, exp.Func) else node.sql_name()
    if isinstance(node, exp.Anonymous):
        name = str(node.this).upper()
    return f"{name} ({node.sql('spark')[:60]})"


def arrow_types(table: pa.Table) -> dict[str, str]:
    """Arrow column types as the Spark SQL types sqlglot understands (unknown ones left out:
    a query that reads them is refused)."""
    import pyarrow as pa

    found = {}
    for field in table.schema:
        t = field.type
        if pa.types.is_int8(t):
            kind = "TINYINT"
        elif pa.types.is_int16(t):
            kind = "SMALLINT"
        elif pa.types.is_int32(t):
            kind = "INT"
        elif pa.types.is_int64(t):
            kind = "BIGINT"
        elif pa.types.is_float32(t):
            kind = "FLOAT"
        elif pa.types.is_float64(t):
            kind = "DOUBLE"
        elif pa.types.is_decimal(t):
            kind = f"DECIMAL({t.precision}, {t.scale})"
        elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            kind = "STRING"
        elif pa.types.is_boolean(t):
            kind = "BOOLEAN"
        elif pa.types.is_date32(t):
            kind = "DATE"
        elif pa.types.is_timestamp(t):
            kind = "TIMESTAMP" if t.tz else "TIMESTAMP_NTZ"
        else:
            continue
        found[field.name.lower()] = kind
    return found

"""Near misses Spark rejects: a query the tiles answer, changed by one quirk of another SQL
dialect or by one mistake, so that Spark's parser or analyzer refuses it (issue 36).

sqlglot reads more than Spark does — double-quoted names, `LIMIT 0, 5`, `FETCH FIRST`,
`DISTINCT ON`, `CAST(x AS TEXT)`, `x::float8`, functions Spark lacks — and writes what it read
back as valid Spark SQL, so without Spark's own word on the text such a query would be answered
from a tile. None of these may be answered: `Workspace` rewrites only what Spark accepts as
written (`engine.acceptance`). Each quirk applies to some queries and not others; `near_misses`
applies every one that applies, once, to a query, and the same query always gives the same
near misses. Whoever uses them checks that Spark really rejects each (`spark.sql` raises).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from mvlattice.proof import quirks_analysis as analysis
from mvlattice.proof import quirks_syntax as syntax
from mvlattice.proof.quirk_tree import Quirk, Template
from mvlattice.sql.parse import parse_query


@dataclass(frozen=True, slots=True)
class NearMiss:
    quirk: str  # the quirk's name, QUIRKS' key
    template: str  # the answerable query it was made from
    sql: str


def near_misses(sql: str, columns: Collection[str] = ()) -> tuple[NearMiss, ...]:
    """Every quirk of QUIRKS that applies to `sql` (Spark SQL), applied once. `columns`: the
    column names of the model's tables (a misspelled name must not be another real one)."""
    query = Template(parse_query(sql), frozenset(c.lower() for c in columns))
    out: dict[str, NearMiss] = {}
    for name, quirk in QUIRKS:
        text = quirk(query)
        if text is not None and text != sql and text not in {m.sql for m in out.values()}:
            out[name] = NearMiss(name, sql, text)
    return tuple(out.values())


QUIRKS: tuple[tuple[str, Quirk], ...] = (
    ("double_quoted_names", syntax.double_quoted_names),
    ("double_quoted_tables", syntax.double_quoted_tables),
    ("double_quoted_columns", syntax.double_quoted_columns),
    ("square_bracket_tables", syntax.square_bracket_tables),
    ("mysql_limit", syntax.mysql_limit),
    ("fetch_first", syntax.fetch_first),
    ("top_n", syntax.top_n),
    ("distinct_on", syntax.distinct_on),
    ("table_hint", syntax.table_hint),
    ("postgres_text_cast", syntax.postgres_text_cast),
    ("postgres_double_colon", syntax.postgres_double_colon),
    ("postgres_regex_match", syntax.postgres_regex_match),
    ("foreign_aggregate", analysis.foreign_aggregate),
    ("group_concat", analysis.group_concat),
    ("foreign_scalar", analysis.foreign_scalar),
    ("sql_server_isnull", analysis.sql_server_isnull),
    ("sqlite_strftime", analysis.sqlite_strftime),
    ("too_many_arguments", analysis.too_many_arguments),
    ("no_arguments", analysis.no_arguments),
    ("unknown_column", analysis.unknown_column),
    ("unknown_table", analysis.unknown_table),
    ("ambiguous_column", analysis.ambiguous_column),
    ("ungrouped_output", analysis.ungrouped_output),
    ("aggregate_in_where", analysis.aggregate_in_where),
    ("nested_aggregate", analysis.nested_aggregate),
    ("order_by_position_out_of_range", analysis.order_by_position_out_of_range),
    ("group_by_position_out_of_range", analysis.group_by_position_out_of_range),
    ("alias_in_where", analysis.alias_in_where),
    ("compared_with_array", analysis.compared_with_array),
    ("compared_with_struct", analysis.compared_with_struct),
    ("number_as_condition", analysis.number_as_condition),
    ("window_in_where", analysis.window_in_where),
    ("unknown_using_column", analysis.unknown_using_column),
)

"""Quoting names and text into Spark SQL — the ONE place it is done.

Model names (schemas, tables, columns, labels, aliases) are user input: a column may be called
``c`d``, ``unit price`` or ``o'brien``. Every name that reaches generated SQL goes through
`identifier` (backticks, a backtick inside doubled), every text through `string` (Spark's
string literal, where backslash escapes). sqlglot's Spark dialect quotes the same way, so SQL
built here and SQL built by `mvrewrite.to_sql` agree.

`${` in generated SQL is rewritten by Spark's variable substitution
(`spark.sql.variable.substitute`) before parsing. Inside a string literal the `$` is written as
the escape `\\u0024`, which the substitution does not see; an identifier has no escapes, so the
model refuses names holding `${` (see `lattice.names`).
"""

from __future__ import annotations


def identifier(name: str) -> str:
    """A name as a Spark SQL identifier: `name`, with each backtick doubled."""
    return "`" + name.replace("`", "``") + "`"


def qualified(*parts: str) -> str:
    """`schema`.`table` (or any dotted path) from its unquoted parts."""
    return ".".join(identifier(p) for p in parts)


def string(text: str) -> str:
    """A text as a Spark SQL string literal (default `escapedStringLiterals=false`)."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\u0024")
    return "'" + escaped.replace("\n", "\\n").replace("\r", "\\r") + "'"


def path_identifier(location: str) -> str:
    """A file location as the identifier of `delta.`<location>`` (a path, quoted as a name)."""
    return identifier(location)


def format_safe(sql: str) -> str:
    """SQL text safe to pass through `spark.sql(text, **frames)`, which runs str.format on it:
    braces in names (a column `c{d}`) are doubled so they stay text."""
    return sql.replace("{", "{{").replace("}", "}}")

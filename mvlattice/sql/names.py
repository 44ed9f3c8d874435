"""Which model names are acceptable: names become SQL identifiers and, some, file locations.

Any text is a valid Spark identifier once quoted (`mvlattice.sql.quote`), so names are refused
only where quoting cannot help:

- a name that becomes a path under the warehouse (a schema without `location`, a table
  without `path`, a materialization's `table`, a lattice) must stay ONE path segment: no
  separator, no `..`, not absolute — or data would be read or written outside the warehouse;
- no control characters (NUL ends a path in the JVM; a newline breaks every message);
- no `${`: Spark's variable substitution rewrites it in SQL text before parsing, even inside a
  quoted identifier (``c${env:HOME}`` would read another column), and identifiers have no
  escape for it;
- names mvlattice writes as `schema.table` and splits again (schemas, materialization tables)
  hold no `.`;
- names registered in Spark's session catalog (the model's schemas and their tables, the
  materializations' tables) hold only letters, digits and `_`: that catalog refuses any other
  table or database name (INVALID_SCHEMA_OR_RELATION_NAME), however it is quoted.
"""

from __future__ import annotations

import re
import unicodedata

SEPARATORS = ("/", "\\")
CATALOG_NAME = re.compile(r"[A-Za-z0-9_]+")  # Spark's SessionCatalog.validateName


def sql_name_problem(name: str) -> str | None:
    """Why `name` cannot be an identifier in generated SQL, or None when it can."""
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "contains a control character"
    if "${" in name:
        return "contains '${', which Spark's variable substitution would rewrite"
    return None


def path_name_problem(name: str, dotted: bool = True) -> str | None:
    """Why `name` cannot be one path segment under the warehouse (and an identifier), or None.
    `dotted=False` also refuses any '.', for names written as `schema.table`."""
    if name.startswith(SEPARATORS):
        return "is an absolute path; it must be a plain name"
    if ".." in name or name.strip() == ".":
        return "contains '..'; it must be a plain name"
    if any(s in name for s in SEPARATORS):
        return "contains a path separator ('/' or '\\'); it must be a plain name"
    if not dotted and "." in name:
        return "contains '.'; it must be a plain name (mvlattice writes it as schema.table)"
    return sql_name_problem(name)


def catalog_name_problem(name: str) -> str | None:
    """Why `name` cannot be a table or database of Spark's session catalog (nor a path
    segment under the warehouse), or None."""
    reason = path_name_problem(name, dotted=False)
    if reason is None and CATALOG_NAME.fullmatch(name) is None:
        reason = "is not a name Spark's catalog accepts (only letters, digits and _)"
    return reason

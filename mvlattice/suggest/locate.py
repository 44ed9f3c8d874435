"""Where a log's unqualified tables live, when no model says: the folder of a local warehouse
that holds the most of them as Delta tables (`<warehouse>/<folder>/<table>/_delta_log`), so
that the suggested schema, named after it, finds its data at its default location.

Files only, no Spark: a remote warehouse (s3a://, …) is not searched.
"""

from __future__ import annotations

from collections.abc import Collection

from mvlattice.delta.storage import child_names, files_exist, local_name
from mvlattice.settings import join_location
from mvlattice.sql.names import catalog_name_problem


def schema_holding(warehouse: str, names: Collection[str]) -> tuple[str, int] | None:
    """(folder, how many of `names` it holds), the folder holding most (ties: first by name);
    None when no folder of a local `warehouse` holds any, or the best one's name cannot be a
    schema name."""
    if local_name(warehouse) is None or not names:
        return None
    counts = [
        (sum(_is_delta(warehouse, folder, name) for name in names), folder)
        for folder in child_names(None, warehouse)
        if not folder.startswith(("_", "."))  # mvlattice's own state, hidden folders
    ]
    held, folder = min(counts, key=lambda c: (-c[0], c[1]), default=(0, ""))
    if held == 0 or catalog_name_problem(folder) is not None:
        return None
    return folder, held


def _is_delta(warehouse: str, folder: str, table: str) -> bool:
    return files_exist(None, join_location(warehouse, folder, table), ("_delta_log",))

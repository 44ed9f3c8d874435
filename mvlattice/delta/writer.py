"""Writing small local Delta tables in one commit without Spark (delta-rs): replacing a tile's
rows with what a merge computed in-process (`jobs.local_merge`), and appending the query log's
batches (`querylog.log.append`) — a Spark append converts each row in Python and runs a job,
which a busy service's requests would wait behind.

The commit is made against the exact version the rows were computed from, with no retry: if
anyone committed since, it is refused (`OverwriteRefused`) and nothing is written — a merge of
version N written over version N+1 would silently drop N+1's change. The table's metadata
(schema, properties) is left as it is; the rows must have the table's schema exactly.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from mvlattice.delta import storage
from mvlattice.errors import MvlatticeError, first_line

if TYPE_CHECKING:
    import pyarrow as pa


class OverwriteRefused(MvlatticeError):
    """The table moved on from the version the rows were computed from, or delta-rs refused
    to write it; nothing was written."""


def overwrite(location: str, version: int, rows: pa.Table, user_metadata: str) -> int:
    """Replace every row of the local Delta table at `location`, read at `version`, by `rows`,
    in one commit carrying `user_metadata`; the version written (`version` + 1)."""
    import pyarrow as pa
    from deltalake import CommitProperties, DeltaTable, write_deltalake

    path = storage.local_path(location)
    if path is None:
        raise OverwriteRefused(f"{location} is not on a local file system")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        table = DeltaTable(str(path), version=version)
        if rows.schema != pa.schema(table.schema().to_arrow()):
            raise OverwriteRefused(f"the rows do not have the schema of the table at {location}")
        try:
            write_deltalake(
                table,
                rows,
                mode="overwrite",
                commit_properties=CommitProperties(
                    custom_metadata={"userMetadata": user_metadata}, max_commit_retries=0
                ),
            )
        except Exception as exc:  # noqa: BLE001 - delta-rs's own errors, in one line
            raise OverwriteRefused(
                f"delta-rs did not write {location} over version {version}: {first_line(exc)}"
            ) from exc
    return version + 1


class AppendRefused(MvlatticeError):
    """delta-rs did not append the rows (nothing was written): the caller appends with Spark."""


def append(location: str, rows: pa.Table) -> None:
    """Append `rows` to the local Delta table at `location` in one commit, creating the table
    when there is none and adding columns the table lacks (as Spark's `mergeSchema`)."""
    from deltalake import write_deltalake

    path = storage.local_path(location)
    if path is None:
        raise AppendRefused(f"{location} is not on a local file system")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            write_deltalake(str(path), rows, mode="append", schema_mode="merge")
        except Exception as exc:  # noqa: BLE001 - delta-rs's own errors, in one line
            why = first_line(exc)
            raise AppendRefused(f"delta-rs did not append to {location}: {why}") from exc

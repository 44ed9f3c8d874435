"""Stable, readable names and locations for tiles and materializations.

A tile of lattice `star` grouped by (the_year, t.quarter) is the Delta table
`mvlattice.star__the_year__t_quarter__1a2b3c` stored at
`<warehouse>/_mvlattice/tiles/star__the_year__t_quarter__1a2b3c`. The short hash covers the
lattice, the dimensions and the measures, so two tiles never share a name.

Every location is built here from names and checked to stay in its folder under the warehouse
(`inside_warehouse`): the model refuses names that are paths, and this is the second line of
defence, so that nothing is ever written outside the warehouse whatever a caller passes.
"""

from __future__ import annotations

import hashlib
import os
import re

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import TileSpec
from mvlattice.lattice.measures import column_name
from mvlattice.settings import is_uri, join_location
from mvlattice.sql.names import path_name_problem

TILE_DATABASE = "mvlattice"
SKETCH_SPELLING = "hll-xxhash64"  # how approximate distinct measures are sketched
MAX_READABLE = 80
TILE_TABLE = re.compile(r"[0-9a-z_]+")  # what tile_table_name makes
TILES = ("_mvlattice", "tiles")
MATERIALIZATIONS = ("_mvlattice", "materializations")


def tile_table_name(spec: TileSpec) -> str:
    readable = "__".join([_slug(spec.lattice)] + [column_name(d) for d in spec.dimensions])
    if not spec.dimensions:
        readable += "__all"
    digest = hashlib.sha1(_identity(spec).encode()).hexdigest()[:6]
    return f"{readable[:MAX_READABLE]}__{digest}"


def lattice_prefix(lattice: str) -> str:
    """The start of the table name of every tile of `lattice`."""
    return f"{_slug(lattice)}__"[:MAX_READABLE]


def tile_qualified_name(spec: TileSpec) -> str:
    return f"{TILE_DATABASE}.{tile_table_name(spec)}"


def tile_location(warehouse: str, spec: TileSpec) -> str:
    return inside_warehouse(warehouse, TILES, (tile_table_name(spec),))


def materialization_location(warehouse: str, schema: str, table: str) -> str:
    return inside_warehouse(warehouse, MATERIALIZATIONS, (schema, table))


def is_tile_table_name(name: str) -> bool:
    """Whether `name` could be a tile's table name (anything else is not a tile)."""
    return TILE_TABLE.fullmatch(name) is not None


def inside_warehouse(warehouse: str, folder: tuple[str, ...], names: tuple[str, ...]) -> str:
    """warehouse/folder/names…, each name one plain path segment; else UsageError, so that no
    name can make a job read or write outside `folder` (`../x`, `/abs`, `a/b`, NUL)."""
    for name in names:
        reason = path_name_problem(name) if name.strip() else "is empty"
        if reason is not None:
            raise UsageError(
                f"refusing to place data under {join_location(warehouse, *folder)}: "
                f"the name {name!r} {reason}"
            )
    location = join_location(warehouse, *folder, *names)
    if not _contains(join_location(warehouse, *folder), location):  # belt and braces
        raise UsageError(f"refusing to place data at {location}: outside {warehouse}")
    return location


def _contains(base: str, location: str) -> bool:
    """Whether `location` is strictly below `base`, compared lexically (a symlinked warehouse
    folder is the user's choice, not an escape)."""
    if is_uri(base):
        root = base.rstrip("/") + "/"
        rest = location[len(root) :].split("/") if location.startswith(root) else [".."]
        return all(part not in ("", ".", "..") for part in rest)
    root = os.path.normpath(os.path.abspath(base))
    target = os.path.normpath(os.path.abspath(location))
    return target.startswith(root.rstrip(os.sep) + os.sep)


def _identity(spec: TileSpec) -> str:
    dims = ",".join(sorted(spec.dimensions))
    measures = ",".join(sorted(str(m) for m in spec.measures))
    identity = f"{spec.lattice}|{dims}|{measures}"
    if any(m.approximate for m in spec.measures):
        # Sketches now hash xxhash64(x); a tile holding sketches of the raw values must not be
        # appended to with the new spelling, so such tiles get a new name and are rebuilt.
        identity += f"|{SKETCH_SPELLING}"
    return identity


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z_]", "_", text.lower())

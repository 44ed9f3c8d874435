"""Stable, readable names and locations for tiles and materializations.

A tile of lattice `star` grouped by (the_year, t.quarter) is the Delta table
`mvlattice.star__t_quarter__the_year__1a2b3c` stored at
`<warehouse>/_mvlattice/tiles/star__t_quarter__the_year__1a2b3c`. Dimensions go by their label
(the bare column name unless two of the lattice's tables share it, then `alias_column`), sorted
so the order they are listed in does not matter; past MAX_READABLE characters the rest are
counted (`star__brand_name__product_family__quarter__plus2__1a2b3c`). The short hash covers the
lattice, the dimensions, the measures and the sketch spelling, so two tiles never share a name.
A declared tile with a `name:` is `mvlattice.<lattice>__<name>`: the lattice's prefix stays, so
the catalog, `gc` and session registration find it by prefix like any other tile (also once
its declaration is gone), and two lattices' names can never meet.

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
from mvlattice.settings import is_uri, join_location
from mvlattice.sql.names import path_name_problem

TILE_DATABASE = "mvlattice"
SKETCH_SPELLING = "hll-xxhash64"  # how approximate distinct measures are sketched
MAX_READABLE = 48  # the readable part of a generated name, `__plusN` included
MAX_LATTICE = 40  # of the lattice's part, so a dimension or `__plusN` fits after it
TILE_TABLE = re.compile(r"[0-9a-z_]+")  # what tile_table_name makes
TILES = ("_mvlattice", "tiles")
MATERIALIZATIONS = ("_mvlattice", "materializations")


def tile_table_name(spec: TileSpec) -> str:
    """The tile's table name (unqualified): `<lattice>__<name>` for a named tile, else
    readable dimensions and a short hash of the tile's identity.

    >>> from mvlattice.lattice.lattice import Measure
    >>> tile_table_name(TileSpec("star", ("the_year", "t.quarter"), (Measure("count"),)))
    'star__t_quarter__the_year__bc7938'
    >>> tile_table_name(TileSpec("star", ("the_year",), (), name="by_year"))
    'star__by_year'
    """
    if spec.name is not None:
        return f"{lattice_prefix(spec.lattice)}{spec.name}"
    digest = hashlib.sha1(_identity(spec).encode()).hexdigest()[:6]
    return f"{_readable(spec)}__{digest}"


def lattice_prefix(lattice: str) -> str:
    """The start of the table name of every tile of `lattice`."""
    return f"{_slug(lattice)[:MAX_LATTICE]}__"


def _readable(spec: TileSpec) -> str:
    """The lattice and as many sorted dimensions as fit in MAX_READABLE, cut between two
    dimensions and ending `__plusN` when N were left out."""
    head = _slug(spec.lattice)[:MAX_LATTICE]
    if not spec.dimensions:
        return f"{head}__all"
    # A label is the bare column name unless two of the lattice's tables share it
    # (`star.label_columns`); `s.product_id` reads `s_product_id`, so `__` only separates.
    parts = sorted(_slug(d) for d in spec.dimensions)
    kept = len(parts)
    while True:
        left = [f"plus{len(parts) - kept}"] if kept < len(parts) else []
        text = "__".join([head, *parts[:kept], *left])
        if len(text) <= MAX_READABLE or kept == 0:
            return text
        kept -= 1


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

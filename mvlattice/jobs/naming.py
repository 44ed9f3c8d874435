"""Stable, readable names and locations for tiles and materializations.

A tile of lattice `star` grouped by (the_year, t.quarter) is the Delta table
`mvlattice.star__the_year__t_quarter__1a2b3c` stored at
`<warehouse>/_mvlattice/tiles/star__the_year__t_quarter__1a2b3c`. The short hash covers the
lattice, the dimensions and the measures, so two tiles never share a name.
"""

from __future__ import annotations

import hashlib
import re

from mvlattice.lattice.lattice import TileSpec
from mvlattice.lattice.measures import column_name
from mvlattice.settings import join_location

TILE_DATABASE = "mvlattice"
MAX_READABLE = 80


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
    return join_location(warehouse, "_mvlattice", "tiles", tile_table_name(spec))


def materialization_location(warehouse: str, schema: str, table: str) -> str:
    return join_location(warehouse, "_mvlattice", "materializations", schema, table)


def _identity(spec: TileSpec) -> str:
    dims = ",".join(sorted(spec.dimensions))
    measures = ",".join(sorted(str(m) for m in spec.measures))
    return f"{spec.lattice}|{dims}|{measures}"


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z_]", "_", text.lower())

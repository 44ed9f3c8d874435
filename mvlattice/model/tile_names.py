"""A declared tile's `name:`: a plain identifier, unique in the model.

The name becomes the tile's table, `mvlattice.<lattice>__<name>` (`jobs.naming`), so it is
checked here like every other name that reaches storage: lowercase letters, digits and single
underscores (`__` separates the lattice from the name, and a generated name's parts), short
enough to read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mvlattice.document import Problems, child
from mvlattice.lattice.lattice import TileSpec

MAX_NAME = 48
NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


def tile_name(element: Mapping[str, Any], path: str, problems: Problems) -> str | None:
    """The tile element's `name:` (None when it has none or it is not a valid name)."""
    if "name" not in element:
        return None
    value, p = element["name"], child(path, "name")
    if not isinstance(value, str) or NAME.fullmatch(value) is None or len(value) > MAX_NAME:
        problems.add(
            p,
            f"tile name {value!r} is not a plain name: lowercase letters, digits and single "
            f"underscores, starting with a letter, at most {MAX_NAME} characters",
        )
        return None
    return value


def check_tile_names(
    tiles: tuple[TileSpec, ...], paths: tuple[str, ...], seen: dict[str, str], problems: Problems
) -> None:
    """One lattice's tiles (`paths`: where each was declared): a name is used once in the model
    (`seen`: name -> path of its first use, across lattices), and a named tile does not repeat
    another tile's dimensions and measures (which would build the same tile twice)."""
    for i, (tile, path) in enumerate(zip(tiles, paths, strict=True)):
        for other, where in zip(tiles[:i], paths[:i], strict=True):
            if (tile.name or other.name) and _same(tile, other):
                problems.add(path, f"tile declares the same dimensions and measures as {where}")
                break
        if tile.name is None:
            continue
        if tile.name in seen:
            problems.add(
                child(path, "name"), f"tile name '{tile.name}' is already used at {seen[tile.name]}"
            )
        else:
            seen[tile.name] = child(path, "name")


def _same(a: TileSpec, b: TileSpec) -> bool:
    """The same tile whatever the order its dimensions and measures are listed in."""
    return set(a.dimensions) == set(b.dimensions) and set(a.measures) == set(b.measures)

"""Stored column names: what a materialization's outputs are called in its Delta table.

Delta rejects a column name holding any of ` ,;{}()\\n\\t=` and two columns of one name (Spark
compares names without case). Spark names an unnamed output after its expression (`(x + 2)`,
`sum(1)`) and `SELECT *` over a join repeats a shared column, so such outputs get a stored name:

* a name Delta rejects (an unnamed expression) -> `_c<position>` (0-based, Spark's own style);
* the second and later use of a name -> `<name>_<position>`;

each followed by `_` until it differs from every other output's name. Outputs are renamed only
by position, so the same select list always gets the same stored names (stable across rebuilds);
a changed definition is a new table anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

INVALID_CHARACTERS = frozenset(" ,;{}()\n\t=")


def valid_name(name: str) -> bool:
    """Whether Delta (without column mapping) accepts `name` as a column name."""
    return bool(name) and not INVALID_CHARACTERS.intersection(name)


def stored_names(names: Sequence[str]) -> tuple[str, ...]:
    """The stored name of each output of a select list whose names are `names`."""
    kept: list[bool] = []
    seen: set[str] = set()
    for name in names:
        keep = valid_name(name) and name.lower() not in seen
        kept.append(keep)
        if keep:
            seen.add(name.lower())
    out: list[str] = []
    for position, (name, keep) in enumerate(zip(names, kept, strict=True)):
        if keep:
            out.append(name)
            continue
        candidate = f"{name}_{position}" if valid_name(name) else f"_c{position}"
        while candidate.lower() in seen:
            candidate += "_"
        seen.add(candidate.lower())
        out.append(candidate)
    return tuple(out)


def renamed(names: Sequence[str]) -> Mapping[str, str]:
    """Stored name -> name as written (Spark's), for the outputs `stored_names` renames."""
    stored = stored_names(names)
    return {s: n for s, n in zip(stored, names, strict=True) if s != n}

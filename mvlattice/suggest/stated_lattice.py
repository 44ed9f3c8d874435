"""A suggested lattice as the model states it: aliases, lattice SQL, and the `Lattice` the
model loader would build from that SQL (so labels are exactly the loader's).

Aliases are table names (`product`), numbered when a table is used twice (`emp`, `emp_2`);
an evolved lattice keeps its aliases, and keeps every column label its tiles and measures may
use by renaming, in the SELECT list, columns whose label the new arms would change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mvlattice.document import Problems
from mvlattice.lattice.lattice import Lattice, LatticeColumn, Measure
from mvlattice.lattice.star import build_star
from mvlattice.sql.quote import identifier, qualified
from mvlattice.suggest.star_shape import Path, Shape

ColumnsOf = Callable[[str, str], tuple[str, ...] | None]
PathKey = tuple


def path_key(path: Path) -> PathKey:
    return tuple(step.key() for step in path)


@dataclass(frozen=True, slots=True)
class Derived:
    """A derived column an existing lattice declares: `expression AS label` (Spark SQL)."""

    label: str
    expression: str


def assign_aliases(
    shape: Shape,
    fixed: Mapping[PathKey, str] | None = None,
    usage: Mapping[PathKey, float] | None = None,
) -> dict[Path, str]:
    """An alias per node: `fixed` ones (an evolved lattice's) first, then table names, the
    plain name going to the most used node of its table (`usage`: queries reading it)."""
    fixed, usage = fixed or {}, usage or {}
    out: dict[Path, str] = {}
    taken = {a.lower() for a in fixed.values()}
    for path in shape.ordered():
        if path_key(path) in fixed:
            out[path] = fixed[path_key(path)]
    order = shape.ordered()
    ranked = sorted(order, key=lambda p: (-usage.get(path_key(p), 0.0), order.index(p)))
    for path in ranked:
        if path in out:
            continue
        base = re.sub(r"\W", "_", shape.table(path)[1].lower()) or "t"
        alias, n = base, 2
        while alias in taken:
            alias, n = f"{base}_{n}", n + 1
        taken.add(alias)
        out[path] = alias
    return out


def lattice_sql(
    shape: Shape,
    aliases: Mapping[Path, str],
    renames: Mapping[tuple[str, str], str] | None = None,
    derived: tuple[Derived, ...] = (),
) -> str:
    """`select … from root join … on …`, parents before children (Calcite's FROM order)."""
    items = [
        f"{qualified(a, c)} AS {identifier(label)}" for (a, c), label in (renames or {}).items()
    ]
    items += [f"{d.expression} AS {identifier(d.label)}" for d in derived]
    items = items or ["1"]
    lines = [("SELECT " if i == 0 else "  ") + item + ("," if i < len(items) - 1 else "")
             for i, item in enumerate(items)]  # fmt: skip
    for path in shape.ordered():
        schema, table = shape.table(path)
        source = f"{qualified(schema, table)} AS {identifier(aliases[path])}"
        if not path:
            lines.append(f"FROM {source}")
            continue
        step, parent = path[-1], aliases[path[:-1]]
        on = " AND ".join(
            f"{qualified(parent, p)} = {qualified(aliases[path], c)}"
            for p, c in zip(step.parent_columns, step.columns, strict=True)
        )
        lines.append(f"JOIN {source} ON {on}")
    return "\n".join(lines)


def build_lattice(
    name: str,
    schema: str,
    sql: str,
    columns_of: ColumnsOf,
    measures: tuple[tuple[str, tuple[tuple[str, str], ...], bool], ...] = (),
    row_count_estimate: float = 1000.0,
) -> Lattice | Problems:
    """The Lattice the loader would make; measures as (agg, ((alias, column), …), distinct)."""
    problems = Problems(name)
    star = build_star(sql, schema, columns_of, problems, "sql")
    if star is None:
        return problems
    labels = {(c.alias, (c.column or "").lower()): c.label for c in star.columns if c.alias}
    chosen = []
    for agg, args, distinct in measures:
        found = [labels.get((a, c.lower())) for a, c in args]
        if all(found):
            chosen.append(Measure(agg, tuple(f for f in found if f), distinct))
    return Lattice(
        name,
        schema,
        sql,
        star.nodes,
        star.edges,
        star.columns,
        tuple(dict.fromkeys(chosen)),
        algorithm=True,
        row_count_estimate=row_count_estimate,
    )


def label_of(lattice: Lattice, alias: str, column: str) -> str | None:
    for c in lattice.columns:
        if c.alias == alias and (c.column or "").lower() == column.lower():
            return c.label
    return None


def changed_labels(old: tuple[LatticeColumn, ...], new: Lattice) -> dict[tuple[str, str], str]:
    """(alias, column) -> old label, for table columns whose label `new` would change."""
    out = {}
    for column in old:
        if column.alias is None or column.column is None:
            continue
        if label_of(new, column.alias, column.column) not in (None, column.label):
            out[(column.alias, column.column)] = column.label
    return out

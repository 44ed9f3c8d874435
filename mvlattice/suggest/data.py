"""The suggester's questions to data, answered through the statistics layer (the adapter: the
only suggester module that reaches a SparkSession, and only through `mvlattice.statistics`).

- `data_uniqueness`: is a column set unique in its table? One exact count over the table
  (distinct combinations against rows, NULL counting as a value), asked once per column set.
- `data_statistics`: the statistic provider for a suggested lattice, as `provider_for` builds
  it for a model lattice (profiled, cached by source versions): the lattice is added to the
  model, replacing an existing lattice of the same name, before asking. Merged lattices are
  wide (FoodMart's sales lattice: ~100 columns, ~5,000 pairs), so the profile counts single
  columns only; the tile step then counts exactly the column sets the log asks for, in one
  more pass (`tiles.count_asked`), and everything else is estimated from those.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from mvlattice.lattice.lattice import Lattice, LatticeColumn, Node
from mvlattice.lattice.statistic_provider import StatisticProvider
from mvlattice.model.loader import Model, known_columns
from mvlattice.sql.quote import qualified
from mvlattice.suggest.direction import Uniqueness
from mvlattice.suggest.table_catalog import TableKey

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import SparkSession


def table_lattice(model: Model, key: TableKey) -> Lattice | None:
    """A one-table lattice over a model table (for counting in it), None if not in the model."""
    table = model.table(*key)
    if table is None:
        return None
    columns = known_columns(table) or ()
    alias = "t"
    return Lattice(
        f"_table_{table.schema}_{table.name}",
        table.schema,
        "",
        (Node(alias, table.schema, table.name),),
        (),
        tuple(LatticeColumn(c, alias, c, qualified(alias, c)) for c in columns),
    )


def data_uniqueness(spark: SparkSession, model: Model) -> Uniqueness:
    from mvlattice.statistics.exact import ExactCounter

    answers: dict[tuple, bool | None] = {}

    def unique(key: TableKey, columns: tuple[str, ...]) -> bool | None:
        asked = (key[0].lower(), key[1].lower(), frozenset(c.lower() for c in columns))
        if asked not in answers:
            lattice = table_lattice(model, key)
            labels = {c.label.lower(): c.label for c in lattice.columns} if lattice else {}
            wanted = frozenset(labels.get(c.lower(), "") for c in columns)
            if lattice is None or "" in wanted:
                answers[asked] = None
            else:
                counts = ExactCounter(spark, lattice).count([wanted])
                answers[asked] = counts.distinct[wanted] >= counts.rows
        return answers[asked]

    return unique


def data_statistics(
    spark: SparkSession, model: Model, progress: Callable[[str], None] | None = None
) -> Callable[[Lattice], StatisticProvider]:
    from mvlattice.statistics.factory import provider_for

    def stats_for(lattice: Lattice) -> StatisticProvider:
        others = tuple(x for x in model.lattices if x.name != lattice.name)
        with_lattice = replace(model, lattices=(*others, lattice))
        return provider_for(spark, with_lattice, lattice, max_size=1, progress=progress)

    return stats_for

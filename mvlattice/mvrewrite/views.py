"""View descriptors: every tile of a lattice and every declared materialization, in SPJG form.

A tile of lattice L with dimensions D and measures M is the view

    SELECT <D as column_name(label)>, <stored columns of M> FROM <L's whole star>
    GROUP BY <D>

stored at `mvlattice.jobs.naming.tile_qualified_name(spec)`; measures are stored as
`mvlattice.lattice.measures.stored_columns` says (AVG as sum_x and count_x, COUNT DISTINCT as a
column that cannot be re-aggregated). A materialization is its own SQL, stored at
`schema.table`; its outputs carry their stored names (`mvlattice.sql.stored_names`: unnamed
expressions and repeated names are stored as `_c<position>` and `<name>_<position>`), so
matching reads each output expression from the column that holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from mvlattice.errors import MvlatticeError
from mvlattice.jobs.naming import tile_qualified_name
from mvlattice.lattice.lattice import Lattice, TileSpec
from mvlattice.lattice.measures import base_aggregate_sql, column_name, stored_columns
from mvlattice.model.loader import Materialization
from mvlattice.sql import ir
from mvlattice.sql.quote import identifier
from mvlattice.sql.spjg import Spjg
from mvlattice.sql.stored_names import renamed, stored_names

# (sql, default schema) -> the block of a view definition; raises MvlatticeError if it has none
Compile = Callable[[str, str | None], Spjg]


@dataclass(kw_only=True, frozen=True, slots=True)
class View:
    name: str  # what explanations and `materializations` show
    table: str  # where its rows are stored, schema.table
    kind: str  # tile or materialization
    sql: str
    block: Spjg | None  # None: the definition is outside what matching understands
    problem: str = ""  # why, when block is None
    lattice: str | None = None
    labels: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (table, column) -> label
    row_count: float | None = None
    max_staleness_seconds: float | None = None
    renamed: Mapping[str, str] = field(default_factory=dict)  # stored name -> name as written

    def label(self, table: str, column: str) -> str | None:
        return self.labels.get((table, column))


def tile_view(lattice: Lattice, spec: TileSpec, compile_block: Compile) -> View:
    try:
        sql = tile_sql(lattice, spec)
    except MvlatticeError as exc:  # a spec naming columns the lattice no longer has
        sql, block, problem = "", None, str(exc)
    else:
        block, problem = _compile(sql, lattice.schema, compile_block)
    return View(
        name=tile_qualified_name(spec),
        table=tile_qualified_name(spec),
        kind="tile",
        sql=sql,
        block=block,
        problem=problem,
        lattice=lattice.name,
        labels=_labels(lattice),
        max_staleness_seconds=lattice.refresh.max_staleness_seconds,
    )


def materialization_view(
    item: Materialization, compile_block: Compile, sql: str | None = None
) -> View:
    """`sql`: its definition with the materializations it reads inlined (`mvrewrite.nested`),
    matched against queries over base tables; by default its SQL as written."""
    block, problem = _compile(sql or item.sql, item.schema, compile_block)
    names = renamed([o.name for o in block.outputs]) if block is not None else {}
    if block is not None and names:
        stored = stored_names([o.name for o in block.outputs])
        outputs = tuple(ir.Output(n, o.expr) for n, o in zip(stored, block.outputs, strict=True))
        block = replace(block, outputs=outputs)
    return View(
        name=item.name,
        table=f"{item.schema}.{item.table}",
        kind="materialization",
        sql=sql or item.sql,
        block=block,
        problem=problem,
        max_staleness_seconds=item.max_staleness_seconds,
        renamed=MappingProxyType(dict(names)),
    )


def tile_sql(lattice: Lattice, spec: TileSpec) -> str:
    """The defining SQL of a tile. Tiles are built over the whole star (every lattice table,
    inner joins, as Calcite defines a lattice); tables a query does not read are lossless
    joins along the lattice's edges, which matching recognises (query-partial rewriting)."""
    expressions = {c.label: c.expression for c in lattice.columns}
    dims = [lattice.column(d) for d in spec.dimensions]
    select = {column_name(c.label): c.expression for c in dims}
    for measure in spec.measures:
        for label in measure.args:
            lattice.column(label)  # NotFoundError names the unknown label
        for stored in stored_columns(measure):  # AVG and SUM of x share sum_x
            select.setdefault(stored.name, base_aggregate_sql(stored, expressions))
    items = ", ".join(f"{expr} AS {identifier(name)}" for name, expr in select.items())
    sql = f"SELECT {items}\n{lattice.from_sql()}"
    if dims:
        sql += "\nGROUP BY " + ", ".join(c.expression for c in dims)
    return sql


def _compile(sql: str, schema: str | None, compile_block: Compile) -> tuple[Spjg | None, str]:
    try:
        return compile_block(sql, schema), ""
    except MvlatticeError as exc:
        return None, str(exc)


def _labels(lattice: Lattice) -> Mapping[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for column in lattice.columns:
        if column.alias is None or column.column is None:
            continue
        node = lattice.node(column.alias)
        out.setdefault((node.qualified_table.lower(), column.column.lower()), column.label)
    return MappingProxyType(out)

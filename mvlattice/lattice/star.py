"""Build a lattice's star (nodes, many-to-one edges, labelled columns) from its SQL.

Calcite's rule: FROM order is meaningful. The first table is the root (the fact table); each
JOIN adds a many-to-one edge from one earlier table to the joined one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from mvlattice.document import Problems, suggest
from mvlattice.errors import first_line
from mvlattice.lattice.lattice import Edge, LatticeColumn, Node
from mvlattice.sql.names import sql_name_problem
from mvlattice.sql.quote import qualified

# (schema, table) -> the table's column names, or None when no such table exists.
ColumnsOf = Callable[[str, str], tuple[str, ...] | None]


@dataclass(frozen=True, slots=True)
class Star:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    columns: tuple[LatticeColumn, ...]


def parse_lattice_sql(sql: str) -> exp.Expr:
    """Calcite writes lattice SQL with "double-quoted" identifiers; Spark users with backticks."""
    try:
        return sqlglot.parse_one(sql)
    except sqlglot.errors.SqlglotError:
        return sqlglot.parse_one(sql, read="spark")


def build_star(
    sql: str, default_schema: str, columns_of: ColumnsOf, problems: Problems, path: str
) -> Star | None:
    """Translate the lattice SQL; on any problem, record it (with `path`) and return None."""
    before = len(problems.items)
    try:
        tree = parse_lattice_sql(sql)
    except sqlglot.errors.SqlglotError as exc:
        problems.add(path, f"lattice SQL does not parse: {first_line(exc)}")
        return None
    if not isinstance(tree, exp.Select) or tree.args.get("from_") is None:
        problems.add(path, "lattice SQL must be a single SELECT … FROM … JOIN … statement")
        return None
    for clause in ("where", "group", "having", "order", "limit", "qualify"):
        if tree.args.get(clause) is not None:
            problems.add(path, f"lattice SQL must not have a {clause.upper()} clause")
    builder = _Builder(default_schema, columns_of, problems, path)
    builder.add_root(tree.args["from_"].this)
    for join in tree.args.get("joins") or ():
        builder.add_join(join)
    if builder.blocked:
        return None
    columns = builder.label_columns(tree.expressions)
    if len(problems.items) > before:
        return None
    return Star(tuple(builder.nodes), tuple(builder.edges), columns)


class _Builder:
    def __init__(
        self, default_schema: str, columns_of: ColumnsOf, problems: Problems, path: str
    ) -> None:
        self.default_schema = default_schema
        self.columns_of = columns_of
        self.problems = problems
        self.path = path
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.table_columns: dict[str, tuple[str, ...]] = {}
        self.blocked = False

    # -- tables ---------------------------------------------------------------------------
    def add_root(self, source: exp.Expression) -> None:
        self._add_node(source, parent=None)

    def add_join(self, join: exp.Join) -> None:
        kind = (join.args.get("kind") or "").upper()
        side = (join.args.get("side") or "").upper()
        if side or kind in ("CROSS", "OUTER", "FULL", "SEMI", "ANTI"):
            words = " ".join(x for x in (side, kind) if x)
            self.problems.add(
                self.path,
                f"{words} JOIN is not allowed in a lattice: "
                "every join must be an inner many-to-one equi-join",
            )
            return
        on, using = join.args.get("on"), join.args.get("using")
        if on is None and not using:
            self.problems.add(
                self.path,
                f"join to {join.this.sql()} has no ON or USING "
                "condition (a cross join is not allowed in a lattice)",
            )
            return
        node = self._add_node(join.this, parent="?")
        if node is None:
            return
        if using:
            edge = self._edge_from_using(node, using)
        else:
            assert on is not None  # refused above
            edge = self._edge_from_on(node, on)
        if edge is None:
            return
        self.nodes[-1] = Node(node.alias, node.schema, node.table, parent=edge.source)
        self.edges.append(edge)

    def _add_node(self, source: exp.Expression, parent: str | None) -> Node | None:
        if not isinstance(source, exp.Table):
            self.problems.add(self.path, f"only tables may appear in a lattice, not {source.sql()}")
            return None
        schema = source.db or self.default_schema
        alias = source.alias_or_name
        if alias.lower() in (n.alias.lower() for n in self.nodes):
            self.problems.add(self.path, f"duplicate table alias '{alias}' in lattice SQL")
            return None
        columns = self.columns_of(schema, source.name)
        if columns is None:
            if not _declared(self.columns_of, schema, source.name):
                self.problems.add(self.path, f"unknown table '{schema}.{source.name}'")
            else:
                self.blocked = True  # its missing data is reported where the table is declared
            return None
        node = Node(alias, schema, source.name, parent)
        self.nodes.append(node)
        self.table_columns[alias] = columns
        return node

    # -- join conditions ------------------------------------------------------------------
    def _edge_from_using(self, node: Node, using: list[exp.Expression]) -> Edge | None:
        names = [u.name for u in using]
        target_cols = [self._column_in(node.alias, n) for n in names]
        if None in target_cols:
            return None
        earlier = [n for n in self.nodes[:-1] if all(self._has(n.alias, c) for c in names)]
        if not earlier:
            self.problems.add(
                self.path,
                f"join to '{node.alias}' USING ({', '.join(names)}) references no earlier table",
            )
            return None
        if len(earlier) > 1:
            aliases = ", ".join(n.alias for n in earlier)
            self.problems.add(
                self.path,
                f"USING ({', '.join(names)}) for '{node.alias}' is "
                f"ambiguous: several earlier tables ({aliases}) have "
                f"{'that column' if len(names) == 1 else 'those columns'}; use ON",
            )
            return None
        source = earlier[0].alias
        source_cols = tuple(self._column_in(source, c) or c for c in names)
        return Edge(source, node.alias, source_cols, tuple(c for c in target_cols if c))

    def _edge_from_on(self, node: Node, on: exp.Expr) -> Edge | None:
        pairs: list[tuple[str, str, str]] = []  # (other alias, other column, node column)
        for conjunct in _conjuncts(on):
            pair = self._equi_pair(node, conjunct)
            if pair is None:
                return None
            pairs.append(pair)
        sources = {p[0] for p in pairs}
        if len(sources) != 1:
            self.problems.add(
                self.path,
                f"join to '{node.alias}' must reference exactly one "
                f"earlier table, but references {sorted(sources)}",
            )
            return None
        return Edge(pairs[0][0], node.alias, tuple(p[1] for p in pairs), tuple(p[2] for p in pairs))

    def _equi_pair(self, node: Node, cond: exp.Expr) -> tuple[str, str, str] | None:
        if not (
            isinstance(cond, exp.EQ)
            and isinstance(cond.left, exp.Column)
            and isinstance(cond.right, exp.Column)
        ):
            self.problems.add(
                self.path,
                f"join condition '{cond.sql()}' for '{node.alias}' is "
                "not an equality of two columns (non-equi joins are not allowed)",
            )
            return None
        sides = [self._resolve(c) for c in (cond.left, cond.right)]
        if None in sides:
            return None
        (a_alias, a_col), (b_alias, b_col) = sides  # type: ignore[misc]
        if b_alias == node.alias and a_alias != node.alias:
            a_alias, a_col, b_alias, b_col = b_alias, b_col, a_alias, a_col
        if a_alias != node.alias or b_alias == node.alias:
            self.problems.add(
                self.path,
                f"join condition '{cond.sql()}' must compare a column "
                f"of '{node.alias}' with a column of an earlier table",
            )
            return None
        return b_alias, b_col, a_col

    # -- columns --------------------------------------------------------------------------
    def _has(self, alias: str, column: str) -> bool:
        return column.lower() in (c.lower() for c in self.table_columns.get(alias, ()))

    def _column_in(self, alias: str, column: str) -> str | None:
        for c in self.table_columns.get(alias, ()):
            if c.lower() == column.lower():
                return c
        node = next(n for n in self.nodes if n.alias == alias)
        self.problems.add(
            self.path,
            f"unknown column '{column}' in table "
            f"'{node.schema}.{node.table}' (alias '{alias}')"
            + suggest(column, self.table_columns.get(alias, ())),
        )
        return None

    def _resolve(self, col: exp.Column) -> tuple[str, str] | None:
        """(alias, canonical column name) of a column reference, qualified or not."""
        if col.table:
            alias = next(
                (n.alias for n in self.nodes if n.alias.lower() == col.table.lower()), None
            )
            if alias is None:
                self.problems.add(
                    self.path,
                    f"unknown table alias '{col.table}' in "
                    f"'{col.sql()}'" + suggest(col.table, (n.alias for n in self.nodes)),
                )
                return None
            name = self._column_in(alias, col.name)
            return (alias, name) if name else None
        owners = [n.alias for n in self.nodes if self._has(n.alias, col.name)]
        if len(owners) != 1:
            all_cols = [c for cols in self.table_columns.values() for c in cols]
            reason = (
                "is ambiguous: qualify it with one of " + ", ".join(owners)
                if owners
                else "is unknown" + suggest(col.name, all_cols)
            )
            self.problems.add(self.path, f"column '{col.name}' {reason}")
            return None
        return owners[0], self._column_in(owners[0], col.name) or col.name

    def label_columns(self, select: list[exp.Expression]) -> tuple[LatticeColumn, ...]:
        """Every table column, labelled by name when unique else 'alias.column'; then derived."""
        renames, derived = self._select_items(select)
        counts = Counter(c.lower() for cols in self.table_columns.values() for c in cols)
        out: list[LatticeColumn] = []
        for node in self.nodes:
            for col in self.table_columns[node.alias]:
                label = renames.get((node.alias, col))
                if label is None:
                    label = col if counts[col.lower()] == 1 else f"{node.alias}.{col}"
                out.append(LatticeColumn(label, node.alias, col, qualified(node.alias, col)))
        out.extend(derived)
        self._check_names(out)
        seen: Counter[str] = Counter(c.label.lower() for c in out)
        for label, n in seen.items():
            if n > 1:
                self.problems.add(
                    self.path,
                    f"column label '{label}' is used {n} times; "
                    "give each column a unique label with AS",
                )
        return tuple(out)

    def _check_names(self, columns: list[LatticeColumn]) -> None:
        """Every alias, column and label reaches generated SQL (see `names`)."""
        named = [("table alias", n.alias) for n in self.nodes]
        named += [("column", c.column) for c in columns if c.column and c.column != c.label]
        named += [("column", c.label) for c in columns]
        for what, name in dict.fromkeys(named):
            reason = sql_name_problem(name)
            if reason is not None:
                self.problems.add(self.path, f"{what} '{name}' {reason}")

    def _select_items(
        self, select: list[exp.Expression]
    ) -> tuple[dict[tuple[str, str], str], list[LatticeColumn]]:
        renames: dict[tuple[str, str], str] = {}
        derived: list[LatticeColumn] = []
        for item in select:
            inner = item.this if isinstance(item, exp.Alias) else item
            label = item.alias if isinstance(item, exp.Alias) else None
            if isinstance(inner, exp.Star | exp.Literal) and label is None:
                continue  # Calcite's "select 1 from …" / "select * from …": no derived column
            if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
                resolved = self._resolve(inner)
                if resolved and label:
                    renames[resolved] = label
                continue
            if label is None:
                self.problems.add(
                    self.path,
                    f"derived column '{inner.sql()}' needs a label "
                    "(write it as <expression> AS <label>)",
                )
                continue
            expression = self._qualify(inner)
            if expression is not None:
                derived.append(LatticeColumn(label, None, None, expression))
        return renames, derived

    def _qualify(self, expression: exp.Expression) -> str | None:
        tree = expression.copy()
        for col in list(tree.find_all(exp.Column)):
            resolved = self._resolve(col)
            if resolved is None:
                return None
            col.replace(exp.column(resolved[1], table=resolved[0], quoted=True))
        return tree.sql(dialect="spark")


def _declared(columns_of: ColumnsOf, schema: str, table: str) -> bool:
    """Whether the model declares the table (even if its data cannot be found)."""
    lookup = getattr(columns_of, "table", None)
    return lookup is not None and lookup(schema, table) is not None


def _conjuncts(cond: exp.Expr) -> list[exp.Expr]:
    if isinstance(cond, exp.And):
        return _conjuncts(cond.left) + _conjuncts(cond.right)
    if isinstance(cond, exp.Paren):
        return _conjuncts(cond.this)
    return [cond]

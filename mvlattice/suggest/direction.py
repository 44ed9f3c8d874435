"""Which way a join points: the many side (toward the fact) and the one side (a dimension).

Sources, strongest first; the first that decides wins and is recorded on the edge:

1. `declared`: the model's keys. A declared foreign key from one side's columns to the other
   side's columns decides; else a declared primary or unique key contained in exactly one
   side's join columns makes that side the one side.
2. `data`: uniqueness in the data, asked through `Uniqueness` (a statistics provider counting
   distinct values against rows). Exactly one unique side decides; neither side unique is a
   many-to-many join and the block is unusable.
3. `naming`: a join column named after its table is that table's key: strip a key suffix
   (`_id`, `id`, `_no`, `no`, `_key`, `key`, `_code`, `_sk`, `_num`) and compare the stem
   with the table name (singular too) — `product.product_id`, `dept.deptno`, `emp.empno`,
   a lone `id` —, or with its start (`time_id` of `time_by_day`), which counts less. Failing
   that, a table named like a dimension (`dim_…`, `…_dim`, `time…`, `date…`, `calendar`) is
   the one side of a join with one that is not, and a table named like a fact (`…_fact…`)
   the many side.
4. `from order` (a guess, reported as such): the table named earlier in FROM is the many side,
   as in a lattice's own SQL.

A one-to-one join (both sides unique by declared keys or data) is decided by the next sources.
A lattice arm implies a foreign key from the many side: when the model declares the many-side
table's foreign keys and the join is not one of them, the block is not used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mvlattice.suggest.catalog_blocks import BlockTable, JoinPair
from mvlattice.suggest.table_catalog import Catalog, TableKey

DECLARED, DATA, NAMING, FROM_ORDER = "declared", "data", "naming", "from order"
SOURCES = (DECLARED, DATA, NAMING, FROM_ORDER)
MANY_TO_MANY = "many-to-many join"
NOT_A_FOREIGN_KEY = "join is not a declared foreign key"

# (table, columns) -> True (unique), False (not unique), None (cannot tell)
Uniqueness = Callable[[TableKey, tuple[str, ...]], bool | None]

_SUFFIX = re.compile(r"(?:_id|id|_no|no|_key|key|_code|_sk|_num|num)$", re.I)
_FACT = re.compile(r"(?:^|_)facts?(?:_|$)")
_DIMENSION = re.compile(r"^dim_|_dim$|^dim$|^(?:time|date|calendar)(?:_|$|s$)")


@dataclass(frozen=True, slots=True)
class DirectedJoin:
    """`many`.`many_columns` = `one`.`one_columns`, many-to-one, decided by `source`."""

    many: str
    one: str
    many_columns: tuple[str, ...]
    one_columns: tuple[str, ...]
    source: str


@dataclass(frozen=True, slots=True)
class Undecided:
    reason: str
    detail: str


def direct(
    pair: JoinPair,
    tables: tuple[BlockTable, ...],
    catalog: Catalog,
    uniqueness: Uniqueness | None = None,
) -> DirectedJoin | Undecided:
    """The many-to-one direction of a join between two tables of a block."""
    left = next(t for t in tables if t.alias == pair.left)
    right = next(t for t in tables if t.alias == pair.right)
    sides = ((left, pair.left_columns), (right, pair.right_columns))
    for source, decide in ((DECLARED, _declared), (DATA, _data), (NAMING, _naming)):
        verdict = decide(sides, catalog, uniqueness)
        if isinstance(verdict, Undecided):
            return verdict
        if verdict is not None:
            return _checked(_directed(sides, verdict, source), sides, catalog)
    return _checked(_directed(sides, _earlier(sides, tables), FROM_ORDER), sides, catalog)


def _checked(join: DirectedJoin, sides: Sides, catalog: Catalog) -> DirectedJoin | Undecided:
    """A lattice arm implies a foreign key; when the model lists the many side's foreign keys
    and this join is not one of them, the model says the arm does not exist."""
    many = next(t for t, _ in sides if t.alias == join.many)
    one = next(t for t, _ in sides if t.alias == join.one)
    declared = catalog.info(many.key).foreign_keys
    pairs = _lower_pairs(join.many_columns, join.one_columns)
    if not declared or any(
        fk.references[1].lower() == one.table.lower()
        and _lower_pairs(fk.columns, fk.referenced_columns) == pairs
        for fk in declared
    ):
        return join
    return Undecided(
        NOT_A_FOREIGN_KEY,
        f"{many.table}({', '.join(join.many_columns)}) -> {one.table}"
        f"({', '.join(join.one_columns)}) is not among {many.table}'s declared foreign keys",
    )


# Each decider returns the index (0 or 1) of the ONE side, None to pass, or Undecided.
Verdict = int | None | Undecided
Sides = tuple[tuple[BlockTable, tuple[str, ...]], tuple[BlockTable, tuple[str, ...]]]


def _directed(sides: Sides, one: int, source: str) -> DirectedJoin:
    (many_t, many_c), (one_t, one_c) = sides[1 - one], sides[one]
    return DirectedJoin(many_t.alias, one_t.alias, many_c, one_c, source)


def _declared(sides: Sides, catalog: Catalog, _: Uniqueness | None) -> Verdict:
    for i, ((table, columns), (other, other_columns)) in enumerate((sides, sides[::-1])):
        pairs = _lower_pairs(columns, other_columns)
        for fk in catalog.info(table.key).foreign_keys:
            same_table = fk.references[1].lower() == other.table.lower()
            if same_table and _lower_pairs(fk.columns, fk.referenced_columns) == pairs:
                return 1 - i  # `table` holds the foreign key: the other side is the one side
    unique = [_has_key(catalog.info(t.key).keys, cols) for t, cols in sides]
    return _one_side(unique)


def _data(sides: Sides, _: Catalog, uniqueness: Uniqueness | None) -> Verdict:
    if uniqueness is None:
        return None
    unique = [uniqueness(t.key, cols) for t, cols in sides]
    if unique[0] is False and unique[1] is False:
        (a, a_cols), (b, b_cols) = sides
        return Undecided(
            MANY_TO_MANY,
            f"{a.table}({', '.join(a_cols)}) = {b.table}({', '.join(b_cols)}): "
            "neither side is unique in the data",
        )
    return _one_side([u is True for u in unique])


def _naming(sides: Sides, _: Catalog, __: Uniqueness | None) -> Verdict:
    scores = [_name_score(t.table, cols) for t, cols in sides]
    if scores[0] == scores[1]:
        return None
    return 0 if scores[0] > scores[1] else 1


def _one_side(unique: list[bool]) -> int | None:
    if unique[0] == unique[1]:
        return None  # neither (ask the next source) or both (one-to-one: ask the next source)
    return 0 if unique[0] else 1


def _has_key(keys: tuple[tuple[str, ...], ...], columns: tuple[str, ...]) -> bool:
    have = {c.lower() for c in columns}
    return any(key and {k.lower() for k in key} <= have for key in keys)


def _lower_pairs(a: tuple[str, ...], b: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    return frozenset((x.lower(), y.lower()) for x, y in zip(a, b, strict=False))


def _name_score(table: str, columns: tuple[str, ...]) -> int:
    """How much the names say `table` is the one side: its join columns are named after it
    (3 exactly, 2 as a prefix: `time_id` of `time_by_day`), it is named like a dimension
    (1: `dim_…`, `…_dim`, a time or date table), or like a fact table (-1: `…fact…`)."""
    by_column = min((_key_score(table, c) for c in columns), default=0)
    name = table.lower()
    if by_column:
        return by_column
    if _FACT.search(name):
        return -1
    return 1 if _DIMENSION.search(name) else 0


def _key_score(table: str, column: str) -> int:
    if column.lower() in ("id", "key"):
        return 3
    stem = _SUFFIX.sub("", column.lower()).rstrip("_")
    if not stem or stem == column.lower():
        return 0
    name = table.lower()
    if stem in (name, _singular(name)):
        return 3
    return 2 if name.startswith(stem + "_") else 0


def _singular(name: str) -> str:
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith(("ses", "xes")):
        return name[:-2]
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _earlier(sides: Sides, tables: tuple[BlockTable, ...]) -> int:
    """The later table in FROM is the one side."""
    order = [t.alias for t in tables]
    return 0 if order.index(sides[0][0].alias) > order.index(sides[1][0].alias) else 1

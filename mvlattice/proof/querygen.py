"""Seeded random queries over a star, and random views (tiles, materializations) for them.

Queries are SPJG blocks over the fact table and a subset of its dimension tables — grouping
keys, filters (equality, ranges, IN, BETWEEN, IS NULL, residual expressions, OR, NOT),
aggregates (SUM, COUNT, COUNT(col), MIN, MAX, AVG, COUNT DISTINCT) — with HAVING, ORDER BY and
LIMIT, sometimes nested in a derived table, a CTE or a UNION ALL. About two thirds start
from a view (a subset of its keys and measures, its filters plus more), so that many can be
rewritten; the rest are free. Every LIMIT follows an ORDER BY of every output column, so the
result is a deterministic multiset. The same seed always gives the same SQL.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mvlattice.proof.shape import DATE, DIM, INT, NUM, STRING, Col, Shape

FUNCS = ("SUM", "COUNT", "MIN", "MAX", "AVG")


@dataclass(frozen=True, slots=True)
class Agg:
    func: str  # one of FUNCS
    col: Col | None  # None: COUNT(*)
    distinct: bool = False

    def sql(self) -> str:
        if self.col is None:
            return "COUNT(*)"
        return f"{self.func}({'DISTINCT ' if self.distinct else ''}{self.col.sql})"


@dataclass(frozen=True, slots=True)
class Block:
    keys: tuple[Col, ...]
    aggs: tuple[Agg, ...]  # empty: an ungrouped select of `keys`
    where: tuple[tuple[str, tuple[Col, ...]], ...] = ()  # (conjunct, columns it reads)
    joins: tuple[str, ...] = ()  # aliases joined though nothing is read from them

    @property
    def grouped(self) -> bool:
        return bool(self.aggs)

    def columns(self) -> tuple[Col, ...]:
        read = [*self.keys, *(a.col for a in self.aggs if a.col is not None)]
        return tuple(read) + tuple(c for _, cols in self.where for c in cols)


@dataclass(frozen=True, slots=True)
class ViewSpec:
    kind: str  # tile or mv
    name: str  # materializations: the table name; tiles: ""
    block: Block


def select_sql(shape: Shape, block: Block, alias: str = "o") -> str:
    """The block as SQL: outputs named <alias>0, <alias>1, … in order."""
    items = [c.sql for c in block.keys] + [a.sql() for a in block.aggs]
    select = ", ".join(f"{item} AS {alias}{i}" for i, item in enumerate(items))
    aliases = {a for c in block.columns() for a in c.nodes()} | set(block.joins)
    nodes = shape.closure(aliases)
    sql = f"SELECT {select} FROM {nodes[0].table} AS {nodes[0].alias}"
    for node in nodes[1:]:
        on = " AND ".join(f"{node.parent}.{p} = {node.alias}.{c}" for p, c in node.on)
        sql += f" JOIN {node.table} AS {node.alias} ON {on}"
    if block.where:
        sql += " WHERE " + " AND ".join(w for w, _ in block.where)
    if block.grouped and block.keys:
        sql += " GROUP BY " + ", ".join(c.sql for c in block.keys)
    return sql


# -- views ------------------------------------------------------------------------------------
def views(shape: Shape, rng: random.Random, tiles: int, mvs: int) -> tuple[ViewSpec, ...]:
    out = [ViewSpec("tile", "", _tile_block(shape, rng)) for _ in range(tiles)]
    for i in range(mvs):
        block = _mv_block(shape, rng)
        out.append(ViewSpec("mv", f"dt_mv_{i}", block))
    return tuple(out)


def tile_element(view: ViewSpec) -> dict:
    """The view as a model's `tiles:` element."""
    measures = []
    for agg in view.block.aggs:
        element: dict = {"agg": agg.func.lower()}
        if agg.col is not None:
            element["args"] = [agg.col.label]
        if agg.distinct:
            element["distinct"] = True
        measures.append(element)
    return {"dimensions": [c.label for c in view.block.keys], "measures": measures}


def _tile_block(shape: Shape, rng: random.Random) -> Block:
    dims = [c for c in shape.dims() if c.label]
    keys = rng.sample(dims, rng.randint(1, min(4, len(dims))))
    aggs = [Agg("COUNT", None)]
    measures = _labelled_measures(shape)
    for col in rng.sample(measures, rng.randint(1, min(3, len(measures)))):
        aggs.append(Agg(rng.choice(FUNCS), col))
    if rng.random() < 0.25:
        aggs.append(Agg("COUNT", rng.choice(dims), True))
    return Block(tuple(keys), tuple(dict.fromkeys(aggs)))


def _labelled_measures(shape: Shape) -> list[Col]:
    return [c for c in shape.measures() if c.label]


def _mv_block(shape: Shape, rng: random.Random) -> Block:
    where = tuple(_predicate(rng, rng.choice(shape.dims())) for _ in range(rng.randint(0, 2)))
    if rng.random() < 0.2 and not shape.big:  # an ungrouped view: a filtered projection
        cols = rng.sample(shape.columns, rng.randint(2, min(5, len(shape.columns))))
        return Block(tuple(cols), (), where)
    keys = rng.sample(shape.dims(), rng.randint(1, 3))
    aggs = [Agg("COUNT", None)] if rng.random() < 0.7 else []
    aggs += [_agg(shape, rng) for _ in range(rng.randint(1, 3))]
    return Block(tuple(keys), tuple(dict.fromkeys(aggs)), where)


# -- queries ----------------------------------------------------------------------------------
def query(shape: Shape, specs: tuple[ViewSpec, ...], seed: int) -> str:
    """One random query; the same (shape, views, seed) always gives the same SQL."""
    rng = random.Random(seed)
    block = _near(shape, rng, rng.choice(specs)) if specs and rng.random() < 0.65 else None
    if block is None:
        block = _free(shape, rng)
    shape_kind = rng.random()
    if shape_kind < 0.12:
        return _nested(shape, rng, block)
    if shape_kind < 0.17 and (block.grouped or not shape.big):
        other = Block(block.keys, block.aggs, (_predicate(rng, rng.choice(shape.dims())),))
        return f"{_finish(shape, rng, block, False)} UNION ALL {_finish(shape, rng, other, False)}"
    return _finish(shape, rng, block, True)


def _near(shape: Shape, rng: random.Random, view: ViewSpec) -> Block:
    """A query the view may answer: some of its keys and measures, its filters and more."""
    base = view.block
    keys = _subset(rng, base.keys) if base.grouped else _subset(rng, base.keys, minimum=1)
    if rng.random() < 0.15:
        keys = keys + (rng.choice(shape.dims()),)
    where = list(base.where)
    for _ in range(rng.choices((0, 1, 2), (3, 4, 2))[0]):
        pool = base.keys if rng.random() < 0.85 else shape.columns
        where.append(_predicate(rng, rng.choice(pool)))
    if not base.grouped:
        if rng.random() < 0.5:
            return Block(tuple(dict.fromkeys(keys)), (), tuple(where))
        aggs = [_agg_over(rng, rng.choice(base.keys)) for _ in range(rng.randint(1, 2))]
        return Block(_dims_only(keys), tuple(dict.fromkeys(aggs)), tuple(where))
    aggs = [_rolled(rng, a) for a in _subset(rng, base.aggs, minimum=1)]
    if rng.random() < 0.15:
        aggs.append(_agg(shape, rng))
    return Block(tuple(dict.fromkeys(keys)), tuple(dict.fromkeys(aggs)), tuple(where))


def _free(shape: Shape, rng: random.Random) -> Block:
    where = tuple(_predicate(rng, rng.choice(shape.columns)) for _ in range(rng.randint(0, 3)))
    joins = tuple(n.alias for n in shape.nodes[1:] if rng.random() < 0.15)
    if rng.random() < 0.15:
        cols = rng.sample(shape.columns, rng.randint(1, min(4, len(shape.columns))))
        return Block(tuple(cols), (), where, joins)
    keys = rng.sample(shape.dims(), rng.randint(0, 3))
    aggs = tuple(dict.fromkeys(_agg(shape, rng) for _ in range(rng.randint(1, 3))))
    return Block(tuple(keys), aggs, where, joins)


def _finish(shape: Shape, rng: random.Random, block: Block, order: bool) -> str:
    """HAVING, ORDER BY and LIMIT around a block."""
    sql = select_sql(shape, block)
    if block.grouped and rng.random() < 0.25:
        sql += " HAVING " + _having(rng, block, shape)
    outputs = len(block.keys) + len(block.aggs)
    limit = not block.grouped and shape.big
    if limit or (order and rng.random() < 0.25):
        direction = rng.choice(("", " DESC"))
        sql += " ORDER BY " + ", ".join(f"o{i}{direction}" for i in range(outputs))
        if limit or rng.random() < 0.6:
            sql += f" LIMIT {rng.choice((1, 3, 10, 50))}"
    return sql


def _nested(shape: Shape, rng: random.Random, block: Block) -> str:
    inner = _finish(shape, rng, block, False)
    outputs = len(block.keys) + len(block.aggs)
    last = f"q.o{outputs - 1}"
    choice = rng.randrange(3)
    if choice == 0:
        return f"SELECT * FROM ({inner}) AS q WHERE {last} IS NOT NULL"
    if choice == 1 and outputs > 1:
        return f"SELECT q.o0, COUNT(*) AS n, MAX({last}) AS m FROM ({inner}) AS q GROUP BY q.o0"
    return f"WITH q AS ({inner}) SELECT * FROM q"


def _having(rng: random.Random, block: Block, shape: Shape) -> str:
    if rng.random() < 0.5:
        return f"COUNT(*) > {rng.choice((0, 1, 2, 5, 20))}"
    agg = rng.choice([a for a in block.aggs if a.col is not None] or [_agg(shape, rng)])
    if agg.col is None or agg.func == "COUNT" or agg.col.type not in (INT, NUM):
        return f"{agg.sql()} IS NOT NULL"
    return f"{agg.sql()} > {rng.choice(agg.col.values)}"


# -- pieces -----------------------------------------------------------------------------------
def _subset(rng: random.Random, items: tuple, minimum: int = 0) -> tuple:
    if not items:
        return ()
    size = rng.randint(min(minimum, len(items)), len(items))
    return tuple(items[i] for i in sorted(rng.sample(range(len(items)), size)))


def _dims_only(cols: tuple[Col, ...]) -> tuple[Col, ...]:
    return tuple(dict.fromkeys(c for c in cols if c.kind == DIM))


def _agg(shape: Shape, rng: random.Random) -> Agg:
    if rng.random() < 0.15:
        return Agg("COUNT", None)
    if rng.random() < 0.15:
        return Agg("COUNT", rng.choice(shape.dims()), True)
    return _agg_over(rng, rng.choice(shape.measures()))


def _agg_over(rng: random.Random, col: Col) -> Agg:
    funcs = FUNCS if col.type in (INT, NUM) else ("COUNT", "MIN", "MAX")
    return Agg(rng.choice(funcs), col)


def _rolled(rng: random.Random, agg: Agg) -> Agg:
    """What a query asks of a view's aggregate: itself, or AVG from SUM (it needs COUNT)."""
    if agg.col is not None and agg.func == "SUM" and rng.random() < 0.2:
        return Agg("AVG", agg.col)
    return agg


def _predicate(rng: random.Random, col: Col) -> tuple[str, tuple[Col, ...]]:
    text = _comparison(rng, col)
    roll = rng.random()
    if roll < 0.12:
        text = f"({text} OR {_comparison(rng, col)})"
    elif roll < 0.17:
        text = f"NOT ({text})"
    return text, (col,)


def _comparison(rng: random.Random, col: Col) -> str:
    x, values = col.sql, col.values
    kind = rng.choices(
        ("eq", "ne", "range", "between", "in", "not_in", "null", "not_null", "residual"),
        (4, 1, 3, 2, 3, 1, 1, 1, 2),
    )[0]
    if kind == "eq":
        return f"{x} = {rng.choice(values)}"
    if kind == "ne":
        return f"{x} <> {rng.choice(values)}"
    if kind == "range":
        return f"{x} {rng.choice(('<', '<=', '>', '>='))} {rng.choice(values)}"
    if kind == "between":
        low, high = sorted(rng.sample(range(len(values)), 2)) if len(values) > 1 else (0, 0)
        return f"{x} BETWEEN {values[low]} AND {values[high]}"
    if kind in ("in", "not_in"):
        chosen = ", ".join(rng.sample(values, min(len(values), rng.randint(1, 4))))
        return f"{x} {'NOT IN' if kind == 'not_in' else 'IN'} ({chosen})"
    if kind in ("null", "not_null"):
        return f"{x} IS {'NOT ' if kind == 'not_null' else ''}NULL"
    return _residual(rng, col)


def _residual(rng: random.Random, col: Col) -> str:
    """A predicate that is not a range on the column: matching must keep it as a residual."""
    x = col.sql
    if col.type == INT:
        return f"{x} % {rng.randint(2, 4)} = {rng.randint(0, 1)}"
    if col.type == NUM:
        return f"{x} * 2 > {rng.choice(col.values)}"
    if col.type == DATE:
        return f"month({x}) = {rng.randint(1, 12)}"
    if col.type == STRING:
        return rng.choice((f"{x} LIKE '%a%'", f"length({x}) > 5", f"upper({x}) < 'M'"))
    return f"{x} IS NOT NULL"

"""Seeded random queries over a star, and random views (tiles, materializations) for them.

Queries are SPJG blocks over the fact table and a subset of its dimension tables — grouping
keys, filters (equality, ranges, IN, NOT IN, BETWEEN, <>, LIKE 'prefix%', IS NULL, residual
expressions, OR (also of conjunctions), NOT, aligned time ranges), aggregates (SUM, COUNT,
COUNT(col), MIN, MAX, AVG, COUNT DISTINCT, approx_count_distinct), time grains (date_trunc,
year, quarter, month, to_date, CAST AS DATE, trunc) of a DATE/TIMESTAMP column, LEFT/RIGHT/FULL
joins, GROUPING SETS / ROLLUP / CUBE with GROUPING() and grouping_id() — with HAVING, ORDER BY
and LIMIT, sometimes nested in a derived table, a CTE or a UNION ALL. About two thirds start
from a view (a subset of its keys and measures, its filters plus more; a coarser time grain
or the column under a lossless cast; one disjunct of its OR), so that many can be rewritten;
the rest are free. Views: tiles (some with HLL-sketch distinct counts, some over a TIMESTAMP
dimension) and materializations (outer joins, lossless casts and time grains as keys, ORs of
conjunctions, unnamed or repeated output names, SELECT * over a join, one reading another).

Every LIMIT follows an ORDER BY of every output column, so the result is a deterministic
multiset; approximate counts never decide a LIMIT or a HAVING. Every query carries the
constructs it exercises (`Generated.constructs`). The same seed always gives the same SQL.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from mvlattice.proof.shape import DATE, DIM, INT, NUM, STRING, TS, Col, Shape

FUNCS = ("SUM", "COUNT", "MIN", "MAX", "AVG")
APPROX = "APPROX"  # approx_count_distinct(col): from a tile's HLL sketch

# The constructs a query is tagged with (the difftest reports each one's share rewritten).
DISJUNCTION, IN, NOT_IN, BETWEEN, NOT_EQUAL = "or", "in", "not_in", "between", "not_equal"
LIKE_PREFIX, TIME_GRAIN, OUTER_JOIN, GROUPING_SETS = (
    "like_prefix",
    "time_grain",
    "outer_join",
    "grouping_sets",
)
APPROX_DISTINCT, UNNAMED_OUTPUTS, LOSSLESS_CAST = (
    "approx_distinct",
    "unnamed_outputs",
    "lossless_cast",
)
NESTED_MV, JOIN, COUNT_DISTINCT, HAVING = "nested_mv", "join", "count_distinct", "having"
ORDER_LIMIT, SUBQUERY, UNION_ALL, UNGROUPED, PLAIN = (
    "order_limit",
    "subquery",
    "union_all",
    "ungrouped",
    "plain",
)

# Grains from finest to coarsest; week rolls into nothing coarser (it straddles months).
GRAINS = ("second", "minute", "hour", "day", "week", "month", "quarter", "year")
_COARSER = {
    "second": ("minute", "hour", "day", "week", "month", "quarter", "year"),
    "minute": ("hour", "day", "week", "month", "quarter", "year"),
    "hour": ("day", "week", "month", "quarter", "year"),
    "day": ("week", "month", "quarter", "year"),
    "date": ("week", "month", "quarter", "year"),  # to_date / CAST AS DATE: the day
    "week": (),
    "month": ("quarter", "year"),
    "quarter": ("year",),
    "year": (),
}


class Pred(NamedTuple):
    """A WHERE conjunct: its SQL, the columns it reads and, for an OR of conjunctions, each
    disjunct's conjuncts (a query near the view may take one of them instead)."""

    text: str
    cols: tuple[Col, ...]
    disjuncts: tuple[tuple[Pred, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Agg:
    func: str  # one of FUNCS, or APPROX
    col: Col | None  # None: COUNT(*)
    distinct: bool = False

    def sql(self) -> str:
        if self.col is None:
            return "COUNT(*)"
        if self.func == APPROX:
            return f"approx_count_distinct({self.col.sql})"
        return f"{self.func}({'DISTINCT ' if self.distinct else ''}{self.col.sql})"


@dataclass(frozen=True, slots=True)
class Block:
    keys: tuple[Col, ...]
    aggs: tuple[Agg, ...]  # empty: an ungrouped select of `keys`
    where: tuple[Pred, ...] = ()
    joins: tuple[str, ...] = ()  # aliases joined though nothing is read from them
    outer: tuple[tuple[str, str], ...] = ()  # (alias, LEFT|RIGHT|FULL): how it is joined
    grouping: str = ""  # "", rollup, cube or sets (GROUPING SETS)
    sets: tuple[tuple[int, ...], ...] = ()  # GROUPING SETS: key positions of each set
    grouping_fns: bool = False  # GROUPING(first key) and grouping_id() as the last outputs

    @property
    def grouped(self) -> bool:
        return bool(self.aggs)

    @property
    def width(self) -> int:
        return len(self.keys) + len(self.aggs) + (2 if self.grouping_fns else 0)

    def approx(self) -> tuple[int, ...]:
        """Output positions holding approximate counts."""
        return tuple(len(self.keys) + i for i, a in enumerate(self.aggs) if a.func == APPROX)

    def columns(self) -> tuple[Col, ...]:
        read = [*self.keys, *(a.col for a in self.aggs if a.col is not None)]
        return tuple(read) + tuple(c for p in self.where for c in p.cols)


@dataclass(frozen=True, slots=True)
class ViewSpec:
    kind: str  # tile or mv
    name: str  # materializations: the table name; tiles: ""
    block: Block
    # Materializations: "" (every output aliased), "unnamed" (unaliased expressions, SUM(1),
    # `x + 2`, a repeated name), "star" (SELECT * over the fact and one dimension) or
    # "nested" (reads the materialization `reads`, rolled up to `block`'s keys)
    style: str = ""
    reads: str = ""


@dataclass(frozen=True, slots=True)
class Generated:
    sql: str
    constructs: tuple[str, ...]  # what it exercises, never empty
    approx: tuple[int, ...] = ()  # output positions holding approximate counts


def select_sql(shape: Shape, block: Block, alias: str = "o") -> str:
    """The block as SQL: outputs named <alias>0, <alias>1, … in order."""
    items = [c.sql for c in block.keys] + [a.sql() for a in block.aggs]
    if block.grouping_fns:
        items += [f"GROUPING({block.keys[0].sql})", "grouping_id()"]
    select = ", ".join(f"{item} AS {alias}{i}" for i, item in enumerate(items))
    return f"SELECT {select} {from_sql(shape, block)}"


def from_sql(shape: Shape, block: Block) -> str:
    """FROM … JOIN … WHERE … GROUP BY … of a block."""
    aliases = {a for c in block.columns() for a in c.nodes()} | set(block.joins)
    nodes = shape.closure(aliases)
    outer = dict(block.outer)
    sql = f"FROM {nodes[0].table} AS {nodes[0].alias}"
    for node in nodes[1:]:
        on = " AND ".join(f"{node.parent}.{p} = {node.alias}.{c}" for p, c in node.on)
        kind = f"{outer[node.alias]} " if node.alias in outer else ""
        sql += f" {kind}JOIN {node.table} AS {node.alias} ON {on}"
    if block.where:
        sql += " WHERE " + " AND ".join(p.text for p in block.where)
    if block.grouped and block.keys:
        keys = [c.sql for c in block.keys]
        if block.grouping == "rollup":
            sql += f" GROUP BY ROLLUP({', '.join(keys)})"
        elif block.grouping == "cube":
            sql += f" GROUP BY CUBE({', '.join(keys)})"
        elif block.grouping == "sets":
            sets = ", ".join("(" + ", ".join(keys[i] for i in s) + ")" for s in block.sets)
            sql += f" GROUP BY GROUPING SETS ({sets})"
        else:
            sql += " GROUP BY " + ", ".join(keys)
    return sql


# -- views ------------------------------------------------------------------------------------
def views(shape: Shape, rng: random.Random, tiles: int, mvs: int) -> tuple[ViewSpec, ...]:
    out = [ViewSpec("tile", "", _tile_block(shape, rng)) for _ in range(tiles)]
    for i in range(mvs):
        out.append(_mv(shape, rng, f"dt_mv_{i}"))
    # Materializations reading another one (class 5), rolled up to fewer keys.
    inner = [v for v in out if v.kind == "mv" and not v.style and _nestable(v.block)]
    for i in range(min(2, len(inner)) if mvs else 0):
        out.append(_nested_mv(rng, inner[i], f"dt_nested_{i}"))
    return tuple(out)


def tile_element(view: ViewSpec) -> dict:
    """The view as a model's `tiles:` element."""
    measures = []
    for agg in view.block.aggs:
        element: dict = {"agg": "count" if agg.func == APPROX else agg.func.lower()}
        if agg.col is not None:
            element["args"] = [agg.col.label]
        if agg.distinct or agg.func == APPROX:
            element["distinct"] = True
        if agg.func == APPROX:
            element["approximate"] = True
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
    if rng.random() < 0.3:  # an HLL sketch (class 8), of a column of any type
        aggs.append(Agg(APPROX, rng.choice(dims)))
    return Block(tuple(keys), tuple(dict.fromkeys(aggs)))


def _labelled_measures(shape: Shape) -> list[Col]:
    return [c for c in shape.measures() if c.label]


def _mv(shape: Shape, rng: random.Random, name: str) -> ViewSpec:
    roll = rng.random()
    if roll < 0.12:
        star = _star_block(shape, rng)
        if star is not None:
            return ViewSpec("mv", name, star, "star")
    block = _mv_block(shape, rng)
    return ViewSpec("mv", name, block, "unnamed" if roll > 0.8 else "")


def _mv_block(shape: Shape, rng: random.Random) -> Block:
    where = tuple(_predicate(rng, rng.choice(shape.dims())) for _ in range(rng.randint(0, 2)))
    if rng.random() < 0.2:  # an OR of conjunctions (class 3)
        where += (_disjunction(shape, rng),)
    if rng.random() < 0.2 and not shape.big:  # an ungrouped view: a filtered projection
        cols = rng.sample(shape.columns, rng.randint(2, min(5, len(shape.columns))))
        return _outer(shape, rng, Block(tuple(cols), (), where), 0.15)
    keys = [_derived_key(shape, rng, c) for c in rng.sample(shape.dims(), rng.randint(1, 3))]
    aggs = [Agg("COUNT", None)] if rng.random() < 0.7 else []
    aggs += [_agg(shape, rng, approx=False) for _ in range(rng.randint(1, 3))]
    block = Block(tuple(dict.fromkeys(keys)), tuple(dict.fromkeys(aggs)), where)
    return _outer(shape, rng, block, 0.2)


def _derived_key(shape: Shape, rng: random.Random, col: Col) -> Col:
    """The column, or a time grain of it (class 2), or a lossless cast of it (class 4)."""
    if col.type in (DATE, TS) and rng.random() < 0.6:
        return grain_col(col, rng.choice(_grains_of(col)))
    if col.type == INT and rng.random() < 0.35:
        return cast_col(col)
    return col


def _outer(shape: Shape, rng: random.Random, block: Block, chance: float) -> Block:
    """Some of the block's joins made LEFT, RIGHT or FULL (class 6)."""
    if rng.random() >= chance:
        return block
    aliases = {a for c in block.columns() for a in c.nodes()} | set(block.joins)
    joined = [n.alias for n in shape.closure(aliases)[1:]]
    if not joined:
        return block
    chosen = rng.sample(joined, rng.randint(1, len(joined)))
    kinds = rng.choices(("LEFT", "RIGHT", "FULL"), (5, 2, 2), k=len(chosen))
    return replace(block, outer=tuple(zip(chosen, kinds, strict=True)))


def _star_block(shape: Shape, rng: random.Random) -> Block | None:
    """SELECT * over the fact and a dimension that repeats the join key's name (class 1)."""
    nodes = [n for n in shape.nodes[1:] if n.parent == shape.fact.alias and n.in_lattice]
    nodes = [n for n in nodes if any(p == c for p, c in n.on)]
    if not nodes:
        return None
    node = rng.choice(nodes)
    cols = tuple(c for c in shape.columns if c.alias in (shape.fact.alias, node.alias))
    if not any(c.alias == node.alias for c in cols):
        return None
    where = tuple(_predicate(rng, rng.choice(cols)) for _ in range(rng.randint(0, 1)))
    return Block(cols, (), where, (node.alias,))


def _nestable(block: Block) -> bool:
    return block.grouped and not block.outer and any(_rollable(a) for a in block.aggs)


def _rollable(agg: Agg) -> bool:
    return not agg.distinct and agg.func in ("SUM", "COUNT", "MIN", "MAX")


def _nested_mv(rng: random.Random, inner: ViewSpec, name: str) -> ViewSpec:
    """A materialization reading `inner`: some of its keys, its rollable aggregates."""
    base = inner.block
    keys = _subset(rng, base.keys, minimum=1) if len(base.keys) > 1 else base.keys
    aggs = tuple(a for a in base.aggs if _rollable(a))
    return ViewSpec("mv", name, Block(keys, aggs, base.where), "nested", inner.name)


def nested_sql(spec: ViewSpec, inner: ViewSpec, table: str) -> str:
    """The nested materialization's SQL over `inner`'s stored outputs c0, c1, …"""
    block, base = spec.block, inner.block
    keys = [f"c{base.keys.index(k)}" for k in block.keys]
    items = list(keys)
    for agg in block.aggs:
        position = len(base.keys) + base.aggs.index(agg)
        func = "SUM" if agg.func == "COUNT" else agg.func
        items.append(f"{func}(c{position})")
    select = ", ".join(f"{item} AS c{i}" for i, item in enumerate(items))
    return f"SELECT {select} FROM {table} GROUP BY {', '.join(keys)}"


def mv_sql(shape: Shape, spec: ViewSpec) -> str:
    """A materialization's SQL (not a nested one's: see `nested_sql`)."""
    block = spec.block
    if spec.style == "star":
        return "SELECT * " + from_sql(shape, block)
    if spec.style != "unnamed":
        return select_sql(shape, block, alias="c")
    # Unaliased outputs (Spark names them by their text), extra unnamed expressions and a
    # name repeated: what Delta rejects as column names (class 1).
    items = [c.sql for c in block.keys] + [a.sql() for a in block.aggs]
    first = block.keys[0] if block.keys else None
    numeric = next((c for c in block.keys if c.type in (INT, NUM) and not c.expr), None)
    if numeric is not None:
        items.append(f"{numeric.sql} + 2")
    if block.grouped:
        items.append("SUM(1)")
    if first is not None and not first.expr:
        items.append(f"{first.sql} AS {first.name}")  # the same name as the first output
    return f"SELECT {', '.join(items)} {from_sql(shape, block)}"


# -- queries ----------------------------------------------------------------------------------
def query(shape: Shape, specs: tuple[ViewSpec, ...], seed: int) -> str:
    """One random query; the same (shape, views, seed) always gives the same SQL."""
    return generate(shape, specs, seed).sql


def generate(shape: Shape, specs: tuple[ViewSpec, ...], seed: int) -> Generated:
    """One random query with its constructs; the same (shape, views, seed) gives the same."""
    rng = random.Random(seed)
    view = rng.choice(specs) if specs and rng.random() < 0.65 else None
    block = _near(shape, rng, view) if view is not None else _free(shape, rng)
    if block.grouped and block.keys and rng.random() < 0.12:
        block = _grouping_sets(rng, block)
    approx = block.approx()
    shape_kind = rng.random()
    if shape_kind < 0.12:
        sql, approx = _nested(shape, rng, block)
    elif shape_kind < 0.17 and (block.grouped or not shape.big):
        other = replace(block, where=(_predicate(rng, rng.choice(shape.dims())),))
        sql = f"{_finish(shape, rng, block, False)} UNION ALL {_finish(shape, rng, other, False)}"
    else:
        sql = _finish(shape, rng, block, True)
    return Generated(sql, constructs(sql, view), approx)


_TEXT_TAGS = (
    (re.compile(r" OR "), DISJUNCTION),
    (re.compile(r"(?<!NOT) IN \("), IN),
    (re.compile(r" NOT IN \("), NOT_IN),
    (re.compile(r" BETWEEN "), BETWEEN),
    (re.compile(r" <> "), NOT_EQUAL),
    (re.compile(r" LIKE '[^%']+%'"), LIKE_PREFIX),
    (re.compile(r"date_trunc\(|\b(year|quarter|month|to_date|trunc)\(|AS DATE\)|TIMESTAMP '"),
     TIME_GRAIN),
    (re.compile(r"\b(LEFT|RIGHT|FULL) JOIN "), OUTER_JOIN),
    (re.compile(r"GROUPING SETS|ROLLUP\(|CUBE\("), GROUPING_SETS),
    (re.compile(r"approx_count_distinct\("), APPROX_DISTINCT),
    (re.compile(r"CAST\(.* AS BIGINT\)"), LOSSLESS_CAST),
    (re.compile(r" JOIN "), JOIN),
    (re.compile(r"COUNT\(DISTINCT "), COUNT_DISTINCT),
    (re.compile(r" HAVING "), HAVING),
    (re.compile(r" ORDER BY "), ORDER_LIMIT),
    (re.compile(r"FROM \(SELECT|^WITH "), SUBQUERY),
    (re.compile(r" UNION ALL "), UNION_ALL),
)  # fmt: skip


def constructs(sql: str, view: ViewSpec | None) -> tuple[str, ...]:
    """What a query exercises: read from its text, and from the view it was made near (a
    view with unnamed outputs, a cast or a time grain as a key, one reading another)."""
    found = [tag for pattern, tag in _TEXT_TAGS if pattern.search(sql)]
    if view is not None:
        if view.style in ("unnamed", "star"):
            found.append(UNNAMED_OUTPUTS)
        if view.style == "nested":
            found.append(NESTED_MV)
        if view.block.outer:
            found.append(OUTER_JOIN)
        for key in view.block.keys:
            if key.of is not None:
                found.append(TIME_GRAIN if key.grain else LOSSLESS_CAST)
    if " GROUP BY " not in sql and not re.search(r"\b(COUNT|SUM|MIN|MAX|AVG)\(", sql):
        found.append(UNGROUPED)
    return tuple(dict.fromkeys(found)) or (PLAIN,)


def _near(shape: Shape, rng: random.Random, view: ViewSpec) -> Block:
    """A query the view may answer: some of its keys and measures, its filters and more."""
    base = view.block
    keys = _subset(rng, base.keys) if base.grouped else _subset(rng, base.keys, minimum=1)
    keys = tuple(_asked(shape, rng, k) for k in keys)
    if rng.random() < 0.15:
        keys = keys + (rng.choice(shape.dims()),)
    where: list[Pred] = []
    for pred in base.where:
        if pred.disjuncts and rng.random() < 0.6:  # one disjunct: implied by the view's OR
            where += rng.choice(pred.disjuncts)
        else:
            where.append(pred)
    for _ in range(rng.choices((0, 1, 2), (3, 4, 2))[0]):
        pool = base.keys if rng.random() < 0.85 else shape.columns
        col = rng.choice(pool)
        where.append(_predicate(rng, col.of if col.of is not None and rng.random() < 0.5 else col))
    outer = base.outer if rng.random() < 0.7 else ()  # inner-join queries onto outer views too
    if not base.outer and rng.random() < 0.05:
        outer = _outer(shape, rng, base, 1.0).outer
    if not base.grouped:
        if rng.random() < 0.5:
            return Block(tuple(dict.fromkeys(keys)), (), tuple(where), base.joins, outer)
        aggs = [_agg_over(rng, rng.choice(base.keys)) for _ in range(rng.randint(1, 2))]
        return Block(_dims_only(keys), tuple(dict.fromkeys(aggs)), tuple(where), base.joins, outer)
    aggs = [_rolled(rng, a) for a in _subset(rng, base.aggs, minimum=1)]
    if rng.random() < 0.15:
        aggs.append(_agg(shape, rng))
    return Block(tuple(dict.fromkeys(keys)), tuple(dict.fromkeys(aggs)), tuple(where), (), outer)


def _asked(shape: Shape, rng: random.Random, key: Col) -> Col:
    """What a query near a view asks of one of its keys: the key, the column under a cast,
    a coarser grain (sometimes a finer one, or week into month: never answerable)."""
    if key.of is not None and not key.grain:
        return key.of if rng.random() < 0.7 else key
    base = key.of if key.of is not None else key
    if base.type not in (DATE, TS) or rng.random() < 0.35:
        return key
    grain = key.grain or ("second" if base.type == TS else "date")
    coarser = [g for g in _COARSER.get(grain, ()) if g in _grains_of(base)] or [grain]
    if rng.random() < 0.1:  # finer than the view, or a wrong-result trap of other engines
        coarser = [g for g in _grains_of(base)]
    return grain_col(base, rng.choice(coarser))


def _free(shape: Shape, rng: random.Random) -> Block:
    where = tuple(_predicate(rng, rng.choice(shape.columns)) for _ in range(rng.randint(0, 3)))
    if rng.random() < 0.1:
        where += (_disjunction(shape, rng),)
    joins = tuple(n.alias for n in shape.nodes[1:] if rng.random() < 0.15)
    if rng.random() < 0.15:
        cols = rng.sample(shape.columns, rng.randint(1, min(4, len(shape.columns))))
        return _outer(shape, rng, Block(tuple(cols), (), where, joins), 0.1)
    keys = [_derived_key(shape, rng, c) if rng.random() < 0.3 else c
            for c in rng.sample(shape.dims(), rng.randint(0, 3))]  # fmt: skip
    aggs = tuple(dict.fromkeys(_agg(shape, rng) for _ in range(rng.randint(1, 3))))
    return _outer(shape, rng, Block(tuple(dict.fromkeys(keys)), aggs, where, joins), 0.1)


def _grouping_sets(rng: random.Random, block: Block) -> Block:
    """ROLLUP, CUBE or GROUPING SETS over the block's keys (class 7)."""
    kind = rng.choice(("rollup", "cube", "sets"))
    if kind == "cube" and len(block.keys) > 3:
        kind = "rollup"
    positions = tuple(range(len(block.keys)))
    sets: tuple[tuple[int, ...], ...] = ()
    if kind == "sets":
        # Every key in some set (Spark rejects an output no set groups by): the full set.
        pool = [*((i,) for i in positions), ()]
        sets = (positions, *dict.fromkeys(rng.sample(pool, rng.randint(1, len(pool)))))
    return replace(block, grouping=kind, sets=sets, grouping_fns=rng.random() < 0.6)


def _finish(shape: Shape, rng: random.Random, block: Block, order: bool) -> str:
    """HAVING, ORDER BY and LIMIT around a block."""
    sql = select_sql(shape, block)
    if block.grouped and rng.random() < 0.25:
        sql += " HAVING " + _having(rng, block, shape)
    limit = not block.grouped and shape.big
    if limit or (order and rng.random() < 0.25):
        direction = rng.choice(("", " DESC"))
        sql += " ORDER BY " + ", ".join(f"o{i}{direction}" for i in range(block.width))
        # An approximate count must not decide which rows a LIMIT keeps.
        if limit or (rng.random() < 0.6 and not block.approx()):
            sql += f" LIMIT {rng.choice((1, 3, 10, 50))}"
    return sql


def _nested(shape: Shape, rng: random.Random, block: Block) -> tuple[str, tuple[int, ...]]:
    """The block inside a derived table or a CTE; the approximate outputs of the result."""
    inner = _finish(shape, rng, block, False)
    outputs = block.width
    approx = block.approx()
    last = f"q.o{outputs - 1}"
    choice = rng.randrange(3)
    if choice == 0:
        return f"SELECT * FROM ({inner}) AS q WHERE {last} IS NOT NULL", approx
    if choice == 1 and outputs > 1:
        sql = f"SELECT q.o0, COUNT(*) AS n, MAX({last}) AS m FROM ({inner}) AS q GROUP BY q.o0"
        return sql, tuple(p for p, at in ((0, 0), (2, outputs - 1)) if at in approx)
    return f"WITH q AS ({inner}) SELECT * FROM q", approx


def _having(rng: random.Random, block: Block, shape: Shape) -> str:
    if rng.random() < 0.5:
        return f"COUNT(*) > {rng.choice((0, 1, 2, 5, 20))}"
    agg = rng.choice(
        [a for a in block.aggs if a.col is not None] or [_agg(shape, rng, approx=False)]
    )
    if agg.col is None or agg.func in ("COUNT", APPROX) or agg.col.type not in (INT, NUM):
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


def _agg(shape: Shape, rng: random.Random, approx: bool = True) -> Agg:
    if rng.random() < 0.15:
        return Agg("COUNT", None)
    if rng.random() < 0.15:
        return Agg("COUNT", rng.choice(shape.dims()), True)
    if approx and rng.random() < 0.05:
        labelled = [c for c in shape.dims() if c.label] or list(shape.dims())
        return Agg(APPROX, rng.choice(labelled))
    return _agg_over(rng, rng.choice(shape.measures()))


def _agg_over(rng: random.Random, col: Col) -> Agg:
    funcs = FUNCS if col.type in (INT, NUM) else ("COUNT", "MIN", "MAX")
    return Agg(rng.choice(funcs), col)


def _rolled(rng: random.Random, agg: Agg) -> Agg:
    """What a query asks of a view's aggregate: itself, AVG from SUM (it needs COUNT), or an
    exact COUNT(DISTINCT) where the view has a sketch (never answerable from it)."""
    if agg.col is not None and agg.func == "SUM" and rng.random() < 0.2:
        return Agg("AVG", agg.col)
    if agg.func == APPROX and rng.random() < 0.15:
        return Agg("COUNT", agg.col, True)
    return agg


def _predicate(rng: random.Random, col: Col) -> Pred:
    if col.type in (DATE, TS) and rng.random() < 0.25:
        return Pred(_aligned_range(rng, col), (col,))
    text = _comparison(rng, col)
    roll = rng.random()
    if roll < 0.12:
        text = f"({text} OR {_comparison(rng, col)})"
    elif roll < 0.17:
        text = f"NOT ({text})"
    return Pred(text, (col,))


def _disjunction(shape: Shape, rng: random.Random) -> Pred:
    """(a AND x) OR (b AND x) over dimensions: a query may ask `a AND x` (class 3)."""
    first, second = rng.sample(shape.dims(), 2)
    shared = _predicate(rng, second)
    parts = tuple(
        (Pred(_comparison(rng, first), (first,)), shared) for _ in range(rng.randint(2, 3))
    )
    text = " OR ".join("(" + " AND ".join(p.text for p in part) + ")" for part in parts)
    return Pred(f"({text})", (first, second), parts)


def _comparison(rng: random.Random, col: Col) -> str:
    x, values = col.sql, col.values
    kind = rng.choices(
        ("eq", "ne", "range", "between", "in", "not_in", "null", "not_null", "residual", "like"),
        (4, 1, 3, 2, 3, 1, 1, 1, 2, 2 if col.type == STRING else 0),
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
    if kind == "like":
        value = rng.choice(values)
        if value.startswith("'") and len(value) > 3:
            prefix = value[1 : rng.randint(2, min(4, len(value) - 1))].replace("%", "")
            if prefix and "'" not in prefix and "\\" not in prefix and "_" not in prefix:
                return f"{x} LIKE '{prefix}%'"
        return f"{x} = {value}"
    return _residual(rng, col)


def _aligned_range(rng: random.Random, col: Col) -> str:
    """[start of a month, start of a later month): what a day-or-coarser grain answers."""
    years = sorted({int(y) for y in re.findall(r"'(\d{4})-", " ".join(col.values))}) or [2024]
    year = rng.choice(years)
    start, months = rng.randint(1, 12), rng.choice((1, 3, 12))
    end_year, end = year + (start - 1 + months) // 12, (start - 1 + months) % 12 + 1
    kind = "TIMESTAMP" if col.type == TS else "DATE"
    low = f"{kind} '{year:04d}-{start:02d}-01{' 00:00:00' if kind == 'TIMESTAMP' else ''}'"
    high = f"{kind} '{end_year:04d}-{end:02d}-01{' 00:00:00' if kind == 'TIMESTAMP' else ''}'"
    return f"({col.sql} >= {low} AND {col.sql} < {high})"


def _residual(rng: random.Random, col: Col) -> str:
    """A predicate that is not a range on the column: matching must keep it as a residual."""
    x = col.sql
    if col.type == INT:
        return f"{x} % {rng.randint(2, 4)} = {rng.randint(0, 1)}"
    if col.type == NUM:
        return f"{x} * 2 > {rng.choice(col.values)}"
    if col.type in (DATE, TS):
        return f"month({x}) = {rng.randint(1, 12)}"
    if col.type == STRING:
        return rng.choice((f"{x} LIKE '%a%'", f"length({x}) > 5", f"upper({x}) < 'M'"))
    return f"{x} IS NOT NULL"


# -- derived columns --------------------------------------------------------------------------
def _grains_of(col: Col) -> tuple[str, ...]:
    if col.type == TS:
        return ("second", "minute", "hour", "day", "date", "week", "month", "quarter", "year")
    return ("date", "week", "month", "quarter", "year")


def grain_col(col: Col, grain: str) -> Col:
    """`col` truncated to `grain`, written in one of the ways Spark spells it."""
    x = col.sql
    years = sorted({v[v.index("'") + 1 : v.index("'") + 5] for v in col.values if "'" in v})
    if grain == "year":
        expr, kind, values = f"year({x})", INT, tuple(years) or ("2024",)
    elif grain in ("quarter", "month") and _flip(col, grain):
        top = 4 if grain == "quarter" else 12
        expr, kind, values = f"{grain}({x})", INT, tuple(str(i) for i in range(1, top + 1, 2))
    elif grain == "date":
        text = f"to_date({x})" if _flip(col, grain) else f"CAST({x} AS DATE)"
        days = [v[v.index("'") + 1 :][:10] for v in col.values if "'" in v]
        dates = tuple(dict.fromkeys(f"DATE '{day}'" for day in days))
        expr, kind, values = text, DATE, dates or col.values
    elif col.type == DATE and grain == "month" and _flip(col, "trunc"):
        expr, kind, values = f"trunc({x}, 'MM')", DATE, col.values
    else:
        expr, kind, values = f"date_trunc('{grain.upper()}', {x})", TS, _as_timestamps(col)
    name = f"{col.name}_{grain}"
    return Col(alias=col.alias, name=name, label="", kind=DIM, type=kind, values=values,
               expr=expr, of=col, grain=grain)  # fmt: skip


def _flip(col: Col, what: str) -> bool:
    """A fixed choice per (column, spelling): the same grain is spelled the same way."""
    return random.Random(f"{col.alias}.{col.name}.{what}").random() < 0.5


def _as_timestamps(col: Col) -> tuple[str, ...]:
    if col.type == TS:
        return col.values
    days = [v[v.index("'") + 1 :][:10] for v in col.values if "'" in v]
    return tuple(f"TIMESTAMP '{day} 00:00:00'" for day in days) or col.values


def cast_col(col: Col) -> Col:
    """`col` under a lossless widening cast (INT to BIGINT)."""
    return Col(alias=col.alias, name=f"{col.name}_wide", label="", kind=col.kind, type=col.type,
               values=col.values, expr=f"CAST({col.sql} AS BIGINT)", of=col)  # fmt: skip

"""The stars the differential tester runs on (FoodMart, SSB at a tiny scale factor, the
synthetic star), and reading a star's shape — columns, types, values seen — from its data."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from mvlattice.lattice.lattice import Lattice
from mvlattice.model.loader import Model
from mvlattice.proof import synthetic
from mvlattice.proof.shape import BOOL, DATE, DIM, INT, MEASURE, NUM, STRING, TS, Col, Node, Shape
from mvlattice.sql.quote import identifier, string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REPO = Path(__file__).resolve().parents[2]
SSB_SF = 0.001  # lineorder 6,000 rows: per-query overhead, not data, dominates anyway
VALUES = 10  # literals kept per column for filters


@dataclass(frozen=True, slots=True)
class StarDef:
    name: str
    lattice: str  # the lattice's name in the document
    schema: str  # the schema element that receives the generated materializations
    document: Callable[[], dict[str, Any]]  # the model document, before views are added
    load: Callable[[SparkSession, str], None]  # writes the data under a warehouse
    dims: tuple[str, ...]  # alias.column
    measures: tuple[str, ...]  # alias.column, or the label of a derived lattice column
    extra: tuple[Node, ...] = ()  # joinable tables outside the lattice
    big: bool = False


def _yaml(path: Path) -> Callable[[], dict[str, Any]]:
    return lambda: yaml.safe_load(path.read_text())


def _ssb_document() -> dict[str, Any]:
    from mvlattice.datasets import ssb

    doc = yaml.safe_load((REPO / "models" / "ssb.yaml").read_text())
    doc["schemas"][0]["location"] = ssb.folder(SSB_SF)
    return doc


def _load_foodmart(spark: SparkSession, warehouse: str) -> None:
    from mvlattice.datasets import foodmart

    foodmart.load(spark, warehouse, progress=lambda _line: None)


def _load_ssb(spark: SparkSession, warehouse: str) -> None:
    from mvlattice.datasets import ssb

    ssb.generate(spark, warehouse, SSB_SF, progress=lambda _line: None)


FOODMART = StarDef(
    "foodmart",
    "star",
    "foodmart",
    _yaml(REPO / "models" / "foodmart.yaml"),
    _load_foodmart,
    dims=(
        "t.the_year", "t.quarter", "t.the_month", "t.month_of_year", "p.brand_name",
        "p.recyclable_package", "pc.product_family", "pc.product_department",
        "pc.product_category", "s.store_id", "s.promotion_id", "st.store_type",
        "st.store_state", "pr.media_type", "cu.gender", "cu.marital_status", "t.the_date",
    ),
    measures=("s.unit_sales", "s.store_sales", "s.store_cost", "p.SRP"),
    extra=(
        Node("st", "foodmart.store", "s", (("store_id", "store_id"),), False),
        Node("pr", "foodmart.promotion", "s", (("promotion_id", "promotion_id"),), False),
        Node("cu", "foodmart.customer", "s", (("customer_id", "customer_id"),), False),
    ),
    big=True,
)  # fmt: skip

SSB = StarDef(
    "ssb",
    "lineorder",
    "ssb",
    _ssb_document,
    _load_ssb,
    dims=(
        "d.d_year", "d.d_yearmonthnum", "d.d_month", "d.d_sellingseason", "c.c_region",
        "c.c_nation", "c.c_city", "c.c_mktsegment", "s.s_region", "s.s_nation", "p.p_mfgr",
        "p.p_category", "p.p_brand1", "lo.lo_discount", "lo.lo_quantity", "lo.lo_shipmode",
    ),
    measures=(
        "lo.lo_revenue", "lo.lo_extendedprice", "lo.lo_supplycost", "lo_discount_revenue",
        "lo_profit",
    ),
    big=True,
)  # fmt: skip

SYNTHETIC = StarDef(
    "synthetic",
    "difftest",
    synthetic.SCHEMA,
    lambda: yaml.safe_load(synthetic.MODEL),
    synthetic.load,
    dims=(
        "c.city", "c.segment", "p.brand", "p.size", "k.family", "k.dept", "d.yr", "d.mon",
        "d.sold_on", "s.channel", "s.promo_id", "pm.media", "d.sold_at",
    ),
    measures=("s.qty", "s.price", "s.amount", "revenue"),
    extra=(Node("pm", f"{synthetic.SCHEMA}.promo", "s", (("promo_id", "promo_id"),), False),),
)  # fmt: skip

STARS = {s.name: s for s in (SYNTHETIC, FOODMART, SSB)}


# -- the shape, read from the data ----------------------------------------------------------
def lattice_nodes(lattice: Lattice) -> tuple[Node, ...]:
    out = []
    for node in lattice.nodes:
        edge = next((e for e in lattice.edges if e.target == node.alias), None)
        on = tuple(zip(edge.source_columns, edge.target_columns, strict=True)) if edge else ()
        out.append(Node(node.alias, node.qualified_table, node.parent, on))
    return tuple(out)


def read_shape(spark: SparkSession, star: StarDef, model: Model, lattice: Lattice) -> Shape:
    """Columns with their types and up to VALUES literals each, one Spark job per table."""
    nodes = lattice_nodes(lattice) + star.extra
    wanted: dict[str, list[tuple[str, str, str]]] = {}  # alias -> (spec, column, kind)
    derived: list[tuple[str, str]] = []
    for spec, kind in [(d, DIM) for d in star.dims] + [(m, MEASURE) for m in star.measures]:
        if "." in spec:
            alias, column = spec.split(".", 1)
            wanted.setdefault(alias, []).append((spec, column, kind))
        else:
            derived.append((spec, kind))
    found: dict[str, Col] = {}
    for node in nodes:
        if node.alias in wanted:
            found.update(_table_columns(spark, model, lattice, node, wanted[node.alias]))
    for label, kind in derived:
        found[label] = _derived(spark, model, lattice, label, kind)
    order = [*star.dims, *star.measures]
    return Shape(star.name, lattice.name, nodes, tuple(found[s] for s in order), star.big)


def _table_columns(
    spark: SparkSession, model: Model, lattice: Lattice, node: Node, wanted: list
) -> dict[str, Col]:
    schema, name = node.table.split(".", 1)
    table = model.table(schema, name)
    assert table is not None, node.table  # the lattice reads only the model's tables
    frame = spark.read.format(table.format or "delta").load(table.location).limit(20000)
    types = {f.name.lower(): f.dataType.simpleString() for f in frame.schema.fields}
    sets = frame.selectExpr(
        *[f"collect_set({identifier(c)}) AS {identifier(c)}" for _, c, _ in wanted]
    ).collect()[0]
    out = {}
    for spec, column, kind in wanted:
        kind_of = _type(types[column.lower()])
        label = _label(lattice, node.alias, column) if node.in_lattice else ""
        values = _literals(sets[column], kind_of, spec)
        out[spec] = Col(
            alias=node.alias, name=column, label=label, kind=kind, type=kind_of, values=values
        )
    return out


def _derived(spark: SparkSession, model: Model, lattice: Lattice, label: str, kind: str) -> Col:
    column = lattice.column(label)
    root = lattice.root
    table = model.table(root.schema, root.table)
    assert table is not None, root.table  # the lattice reads only the model's tables
    frame = spark.read.format(table.format or "delta").load(table.location)
    expression = column.expression.replace("`", "")
    sample = frame.alias(root.alias).selectExpr(f"{expression} AS x").limit(20000)
    found = sample.selectExpr("collect_set(x) AS x").collect()[0]["x"]
    kind_of = _type(sample.schema.fields[0].dataType.simpleString())
    return Col(
        alias=root.alias,
        name=label,
        label=label,
        kind=kind,
        type=kind_of,
        values=_literals(found, kind_of, label),
        expr=expression,
    )


def _label(lattice: Lattice, alias: str, column: str) -> str:
    for c in lattice.columns:
        if c.alias == alias and (c.column or "").lower() == column.lower():
            return c.label
    return ""


def _type(spark_type: str) -> str:
    if spark_type in ("int", "bigint", "smallint", "tinyint"):
        return INT
    if spark_type in ("double", "float") or spark_type.startswith("decimal"):
        return NUM
    if spark_type == "boolean":
        return BOOL
    if spark_type == "timestamp":
        return TS
    return DATE if spark_type == "date" else STRING


def _literals(values: list[Any], kind: str, spec: str) -> tuple[str, ...]:
    """Up to VALUES of the values seen (chosen by a seed of the column's name), as SQL."""
    present = sorted(v for v in values if v is not None)
    chosen = random.Random(spec).sample(present, min(VALUES, len(present)))
    return tuple(_literal(v, kind) for v in sorted(chosen)) or ("NULL",)


def _literal(value: Any, kind: str) -> str:
    if kind == DATE:
        return f"DATE '{value.isoformat()}'"
    if kind == TS:
        return f"TIMESTAMP '{value.strftime('%Y-%m-%d %H:%M:%S')}'"
    if kind == BOOL:
        return "TRUE" if value else "FALSE"
    if kind in (INT, NUM):
        return str(value)
    return string(str(value))

"""The suggested model file: it loads (what `mvlattice validate` checks), it evolves a given
model in place keeping labels and tiles, and its comments cite the queries."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from mvlattice.document import read_document
from mvlattice.model.loader import load_model
from mvlattice.suggest.emit import emit_model
from mvlattice.suggest.logs import ANSI, LogEntry
from mvlattice.suggest.suggester import suggest
from mvlattice.suggest.yaml_text import Commented, dump
from tests.unit.test_suggest_calcite import foodmart_yaml, model_from

STAR = """lattices:
  - name: star
    sql:
      - select 1 from "foodmart"."sales_fact_1997" as "s"
      - join "foodmart"."product" as "p" using ("product_id")
      - join "foodmart"."time_by_day" as "t" using ("time_id")
      - join "foodmart"."product_class" as "pc" on "p"."product_class_id" = "pc"."product_class_id"
    rowCountEstimate: 86837
    defaultMeasures: [{agg: count}, {agg: sum, args: unit_sales}]
    tiles:
      - dimensions: [the_year, quarter]
      - dimensions: [product_family]
"""

LOG = [
    'select "t"."the_year", sum("s"."unit_sales") from "sales_fact_1997" as "s", '
    '"time_by_day" as "t" where "s"."time_id" = "t"."time_id" group by "t"."the_year"',
    'select "c"."gender", "t"."the_year", count(*) from "sales_fact_1997" as "s" '
    'join "customer" as "c" on "s"."customer_id" = "c"."customer_id" '
    'join "time_by_day" as "t" on "s"."time_id" = "t"."time_id" '
    'where "c"."country" = \'USA\' group by "c"."gender", "t"."the_year"',
    'select "c"."gender", max("s"."store_sales"), sum("s"."unit_sales" * 2) '
    'from "sales_fact_1997" as "s" '
    'join "customer" as "c" on "s"."customer_id" = "c"."customer_id" group by "c"."gender"',
    'select "store_type", count(*) from "store" group by "store_type"',
]


def entries() -> list[LogEntry]:
    return [LogEntry(sql, f"q{i}", dialect=ANSI) for i, sql in enumerate(LOG, 1)]


def reload(tmp_path: Path, text: str):
    out = tmp_path / "suggested.yaml"
    out.write_text(text, encoding="utf-8")
    return load_model(out, warehouse=str(tmp_path / "warehouse"))


def test_new_model_from_a_log_alone_loads_and_names_its_queries(tmp_path: Path) -> None:
    result = suggest(entries(), default_schema="foodmart")
    text = emit_model(result, logs=["log.sql"])
    model = reload(tmp_path, text)
    assert [lat.name for lat in model.lattices] == ["sales_fact_1997", "store"]
    sales = model.lattice("sales_fact_1997")
    assert [n.table for n in sales.nodes] == ["sales_fact_1997", "customer", "time_by_day"]
    assert [str(m) for m in sales.default_measures] == [
        "sum(unit_sales)",
        "count(*)",
        "max(store_sales)",
    ]
    assert {t.dimensions for t in sales.tiles} >= {("gender",)}
    assert model.table("foodmart", "customer").declared_columns == (
        "gender",
        "customer_id",
        "country",
    )
    assert "# Queries: 4 read, 4 parsed, 4 used" in text
    assert "from 3 queries (weight 3): q1, q2, q3" in text
    held = 'aggregates no measure can hold (not over a plain column): SUM("s"."unit_sales" * 2) ×1'
    assert held in text
    assert "answers 1 query (weight 1): q3" in text
    # store's only known column is store_type: grouping by it is the planner's top view
    assert "answered by no tile, only the star: q4" in text


def test_evolving_a_model_keeps_labels_tiles_and_lists_drop_candidates(tmp_path: Path) -> None:
    base = model_from(tmp_path, foodmart_yaml(STAR), "base.yaml")
    old = base.lattice("star")
    result = suggest(entries(), model=base, max_tiles=2)
    text = emit_model(result, read_document(Path(base.file)), ["log.sql"])
    model = reload(tmp_path, text)
    assert [lat.name for lat in model.lattices] == ["star", "store"]
    star = model.lattice("star")
    assert [n.alias for n in star.nodes] == ["s", "customer", "p", "pc", "t"]
    assert {n.table for n in star.nodes} == {
        "sales_fact_1997",
        "product",
        "time_by_day",
        "product_class",
        "customer",
    }
    new_labels = {(c.alias, c.column): c.label for c in star.columns}
    for column in old.columns:
        assert new_labels[(column.alias, column.column)] == column.label
    assert star.tiles[:2] == old.tiles
    assert [str(m) for m in star.default_measures] == [
        "count(*)",
        "sum(unit_sales)",
        "max(store_sales)",
    ]
    assert star.row_count_estimate == 86837
    (drop,) = result.drop_candidates
    assert (drop.lattice, drop.tile.dimensions) == ("star", ("product_family",))
    assert "Drop candidate: lattice star, tile [product_family]" in text
    assert "evolves lattice star" in text


def test_lattices_the_loader_would_reject_are_reported_not_emitted(tmp_path: Path) -> None:
    bare = model_from(
        tmp_path,
        'version: "1.0"\ndefaultSchema: x\nschemas:\n  - name: x\n    type: delta\n'
        "    tables:\n      - {name: t, columns: []}\n",
    )
    result = suggest([LogEntry("select count(*) from x.t", "q1")], model=bare)
    (item,) = result.lattices
    assert (item.lattice, item.problem) == (None, "unknown table 'x.t'")
    text = emit_model(result, read_document(Path(bare.file)))
    assert "# Not emitted: lattice t: unknown table 'x.t'" in text
    assert "lattices:" not in text.split("version:")[1]


def test_yaml_writer_puts_comments_and_round_trips() -> None:
    text = dump(
        {"a": Commented([1, "two words"], ("why",)), "b": [Commented({"k": True}, ("item",))]},
        ("header",),
    )
    assert text.splitlines()[0] == "# header"
    assert "  # item\n  - k: true" in text
    assert yaml.safe_load(text) == {"a": [1, "two words"], "b": [{"k": True}]}


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(min_size=1, max_size=8), values, min_size=1, max_size=5))
def test_yaml_writer_round_trips_any_document(document: dict) -> None:
    assert yaml.safe_load(dump(document)) == document

"""`suggest --model M -o OUT` keeps the user's YAML text: comments, blank lines, key order,
quoting, flow or block style; the additions are new text in the right place, indented like the
blocks around them; unsafe shapes fall back to the re-serialized model with a reason (issue 36).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mvlattice.model.loader import Model, load_model
from mvlattice.suggest.emit import emit_json, emit_model, emit_over
from mvlattice.suggest.keep_format import keep_format
from mvlattice.suggest.logs import ANSI, LogEntry
from mvlattice.suggest.suggester import suggest
from mvlattice.suggest.yaml_text import Commented, Layout, block
from tests.unit.test_suggest_calcite import foodmart_yaml, model_from
from tests.unit.test_suggest_emit import STAR, entries

NEW_TILE = Commented({"dimensions": ["b"]}, ("suggested",))


def inserted(old: str, new: str) -> list[str]:
    """The lines `new` adds to `old`; fails if any line of `old` is changed or dropped."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    added = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        assert tag in ("equal", "insert"), (tag, b[j1:j2])
        if tag == "insert":
            added += b[j1:j2]
    return added


def grow(text: str, tile: Any = NEW_TILE, lattice: dict | None = None) -> str:
    """A tile added to the first lattice at the root; `lattice` appended after it."""
    document = yaml.safe_load(text)
    first = document["lattices"][0]
    first["tiles"] = [*(first.get("tiles") or []), tile]
    if lattice is not None:
        document["lattices"].append(Commented(lattice, ("new lattice",)))
    kept = keep_format(text, document)
    assert kept.text is not None, kept.reason
    return kept.text


COMMENTED = """\
# my model: hand-written, keep it so
version: '1.0'        # single-quoted on purpose
defaultSchema: "x"

lattices:
  # the one star
  - name: "star"
    sql: select 1 from x.t   # short
    tiles:
      - dimensions: [a]   # by a

# materializations come later
"""


def test_comments_quoting_and_blank_lines_stay_and_additions_go_in_place() -> None:
    out = grow(COMMENTED, lattice={"name": "two", "sql": ["select 1", "from x.u"]})
    assert inserted(COMMENTED, out) == [
        "      # suggested\n",
        "      - dimensions: [b]\n",
        "  # new lattice\n",
        "  - name: two\n",
        '    sql: ["select 1", "from x.u"]\n',
    ]
    assert out.index("- dimensions: [b]") < out.index("# materializations come later")


@pytest.mark.parametrize(
    ("tiles", "expected"),
    [
        ("    tiles:\n        - dimensions: [a]\n", "        - dimensions: [b]\n"),  # 4 spaces
        ("    tiles:\n    - dimensions: [a]\n", "    - dimensions: [b]\n"),  # list at the key
        ("    tiles:\n      -   dimensions: [a]\n", "      -   dimensions: [b]\n"),  # `-   `
    ],
)
def test_new_items_are_indented_like_their_list(tiles: str, expected: str) -> None:
    text = "lattices:\n  - name: star\n    sql: select 1 from x.t\n" + tiles
    comment = " " * (len(expected) - len(expected.lstrip())) + "# suggested\n"
    assert inserted(text, grow(text)) == [comment, expected]


def test_a_new_key_takes_the_files_own_indentation() -> None:
    text = "lattices:\n    -   name: star\n        sql: select 1 from x.t\n"
    added = inserted(text, grow(text))
    assert added == [
        "        tiles:\n",
        "            # suggested\n",
        "            -   dimensions: [b]\n",
    ]


def test_flow_lists_and_mappings_grow_in_flow_style() -> None:
    text = "lattices:\n  - {name: star, sql: 'select 1 from x.t', tiles: [{dimensions: [a]}]}\n"
    assert grow(text) == (
        "lattices:\n  - {name: star, sql: 'select 1 from x.t', tiles: [{dimensions: [a]}, "
        "{dimensions: [b]}]}\n"
    )
    document = yaml.safe_load(text)
    document["lattices"][0]["tiles"][0]["measures"] = [{"agg": "count"}]
    kept = keep_format(text, document)
    assert kept.text == text.replace("[a]}", "[a], measures: [{agg: count}]}")


def test_a_flow_list_that_grows_past_the_width_goes_on_below_its_key() -> None:
    text = "lattices:\n  - name: star  # s\n    defaultMeasures: [{agg: count}]  # ours\n"
    document = yaml.safe_load(text)
    more = [{"agg": "sum", "args": f"column_number_{i}"} for i in range(4)]
    document["lattices"][0]["defaultMeasures"] += more
    assert keep_format(text, document).text == (
        "lattices:\n  - name: star  # s\n"
        "    defaultMeasures: [{agg: count}, {agg: sum, args: column_number_0},\n"
        "      {agg: sum, args: column_number_1}, {agg: sum, args: column_number_2},\n"
        "      {agg: sum, args: column_number_3}]  # ours\n"
    )


def test_a_changed_value_is_replaced_alone() -> None:
    text = "lattices:\n  - name: star  # s\n    sql: |\n      select 1\n      from x.t\n\n# end\n"
    document = yaml.safe_load(text)
    document["lattices"][0]["sql"] = ["select 1", "from x.t", "join x.u using (k)"]
    out = keep_format(text, document).text
    assert out == (
        'lattices:\n  - name: star  # s\n    sql: ["select 1", "from x.t", "join x.u using (k)"]\n'
        "\n# end\n"
    )


def test_a_file_without_a_last_line_break_or_with_crlf_stays_so() -> None:
    text = "lattices:\n  - name: star\n    sql: s"
    assert grow(text, "t") == "lattices:\n  - name: star\n    sql: s\n    tiles: [t]\n"
    crlf = "lattices:\r\n  - name: star\r\n    sql: s\r\n"
    assert grow(crlf, "t") == crlf + "    tiles: [t]\r\n"


def test_a_block_scalar_keeps_its_trailing_lines_and_document_markers_stay() -> None:
    text = "---\nlattices:\n  - name: star\n    sql: |+\n      select 1\n\n# sql ends\n...\n"
    assert grow(text, "t") == text.replace("\n# sql", "\n    tiles: [t]\n# sql")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("lattices: [{name: star, sql: s}]\n", "'lattices:' is a flow-style list"),
        ("{lattices: [{name: star, sql: s}]}\n", "'lattices:' is a flow-style list"),
        ("base: &b {sql: s}\nlattices:\n  - name: star\n    sql: s\n", "anchors and aliases"),
        ("lattices:\n  - name: star\n    <<: {sql: s}\n", "merge keys"),
    ],
)
def test_unsafe_shapes_are_refused_with_a_reason(text: str, reason: str) -> None:
    document = yaml.safe_load(text)
    document["lattices"][0]["tiles"] = [{"dimensions": ["b"]}]
    kept = keep_format(text, document)
    assert kept.text is None and reason in kept.reason


# --- through the suggester: the same model as the re-serializing path -----------------------


def same_model(a: Model, b: Model) -> bool:
    return dataclasses.replace(a, file="") == dataclasses.replace(b, file="")


def load_text(tmp_path: Path, text: str, name: str) -> Model:
    return model_from(tmp_path, text, name)


STAR_COMMENTED = foodmart_yaml(
    "\n# lattices: the star, by hand\n"
    + STAR.replace("    tiles:\n", "    # tiles we chose\n    tiles:\n").replace(
        "name: star", "name: 'star'  # the star"
    )
)


LOG = """
select "t"."the_year", sum("s"."unit_sales") from "foodmart"."sales_fact_1997" as "s"
join "foodmart"."time_by_day" as "t" on "s"."time_id" = "t"."time_id" group by "t"."the_year";
"""


def test_kept_model_loads_as_the_reserialized_one(tmp_path: Path) -> None:
    base = model_from(tmp_path, STAR_COMMENTED, "base.yaml")
    result = suggest(entries(), model=base, max_tiles=2)
    emitted = emit_over(result, Path(base.file), ["log.sql"])
    assert emitted.note is None and not emitted.headed
    assert "# tiles we chose" in emitted.text and "name: 'star'  # the star" in emitted.text
    kept = load_text(tmp_path, emitted.text, "kept.yaml")
    plain = load_text(tmp_path, emit_model(result, yaml.safe_load(STAR_COMMENTED)), "re.yaml")
    assert same_model(kept, plain)
    assert [lat.name for lat in kept.lattices] == ["star", "store"]
    tables = STAR_COMMENTED[: STAR_COMMENTED.index("lattices:")]
    assert emitted.text.startswith(tables)  # the schemas, byte for byte


def test_a_log_the_model_already_answers_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    base = model_from(tmp_path, STAR_COMMENTED, "base.yaml")
    result = suggest([LogEntry(LOG.strip(" \n;"), "q1", dialect=ANSI)], model=base)
    assert [(item.name, item.restated) for item in result.lattices] == [("star", False)]
    assert emit_over(result, Path(base.file)).text == STAR_COMMENTED


def test_a_lattice_whose_star_is_the_same_keeps_its_sql(tmp_path: Path) -> None:
    base = model_from(tmp_path, STAR_COMMENTED, "base.yaml")
    sql = (
        'select "p"."brand_name", max("s"."store_sales") from "foodmart"."sales_fact_1997" as "s" '
        'join "foodmart"."product" as "p" on "s"."product_id" = "p"."product_id" '
        'group by "p"."brand_name"'
    )
    result = suggest([LogEntry(sql, "q1", dialect=ANSI)], model=base, max_tiles=0)
    out = emit_over(result, Path(base.file)).text
    measures = "[{agg: count}, {agg: sum, args: unit_sales}]"
    (((old,), (new,)),), added = changed(STAR_COMMENTED, out)
    assert (old, new) == (
        f"    defaultMeasures: {measures}\n",
        f"    defaultMeasures: {measures[:-1]}, {{agg: max, args: store_sales}}]\n",
    )
    # the tiles keep the measures they had, written as the user wrote them
    assert added == [f"        measures: {measures}\n"] * 2
    kept = load_text(tmp_path, out, "kept.yaml")
    plain = load_text(tmp_path, emit_model(result, yaml.safe_load(STAR_COMMENTED)), "re.yaml")
    assert same_model(kept, plain)


SCHEMAS = """\
version: "1.0"
defaultSchema: shop  # the web shop
schemas:
    # the stores' data
    - name: shop
      type: delta
      tables:
          - name: sales
            columns: [sale_id, store_id, amount]
            foreignKeys: [{columns: [store_id], references: store}]
          - name: store
            columns: [store_id, region]
            primaryKey: [store_id]
      lattices:
          - name: 'sales'   # quoted on purpose
            sql: select 1 from "shop"."sales" as "s" join "shop"."store" as "st" using ("store_id")
            tiles: [{dimensions: [region]}]

    - name: hr
      type: delta
      tables:
          - {name: emp, columns: [empno, deptno, sal], foreignKeys: [{columns: [deptno], references: dept}]}
          - {name: dept, columns: [deptno, dname], primaryKey: [deptno]}
      lattices:
          - name: depts
            sql: |
                select 1 from "hr"."dept" as "d"
# end of model
"""  # noqa: E501 (a long flow line is the user's to write)

SCHEMA_LOG = [
    'select "st"."region", sum("s"."amount") from "shop"."sales" as "s" join "shop"."store" '
    'as "st" on "s"."store_id" = "st"."store_id" group by "st"."region"',
    'select "d"."dname", avg("e"."sal") from "hr"."emp" as "e" join "hr"."dept" as "d" '
    'on "e"."deptno" = "d"."deptno" group by "d"."dname"',
]


def test_a_new_lattice_goes_under_its_schemas_lattices(tmp_path: Path) -> None:
    base = model_from(tmp_path, SCHEMAS, "base.yaml")
    logged = [LogEntry(sql, f"q{i}", dialect=ANSI) for i, sql in enumerate(SCHEMA_LOG, 1)]
    result = suggest(logged, model=base)
    out = emit_over(result, Path(base.file)).text
    ((old, new),), added = changed(SCHEMAS, out)  # sales keeps its SQL; its tile is pinned
    assert old == ["            tiles: [{dimensions: [region]}]\n"]
    assert new[0] == "            tiles: [{dimensions: [region], measures: [{agg: count}]}]\n"
    assert new[1:3] == ["            defaultMeasures:\n", "                - agg: count\n"]
    assert "          - name: emp\n" in added  # under hr's lattices, at their indentation
    assert out.index('select 1 from "hr"."dept"') < out.index("- name: emp")
    assert out.endswith("      - dimensions: [dname]\n# end of model\n")
    kept = load_text(tmp_path, out, "kept.yaml")
    plain = load_text(tmp_path, emit_model(result, yaml.safe_load(SCHEMAS)), "re.yaml")
    assert same_model(kept, plain)
    assert [lat.name for lat in kept.lattices] == ["sales", "depts", "emp"]


def changed(old: str, new: str) -> tuple[list[tuple[list[str], list[str]]], list[str]]:
    """The lines `new` replaces in `old` (old lines, their new lines), and the lines it adds."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    replaced, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        assert tag != "delete", a[i1:i2]
        if tag == "replace":
            replaced.append((a[i1:i2], b[j1:j2]))
        elif tag == "insert":
            added += b[j1:j2]
    return replaced, added


def test_a_json_model_is_written_as_json_in_its_key_order(tmp_path: Path) -> None:
    document = yaml.safe_load(SCHEMAS)
    path = tmp_path / "base.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    base = load_model(path, warehouse=str(tmp_path / "warehouse"))
    logged = [LogEntry(SCHEMA_LOG[1], "q1", dialect=ANSI)]
    result = suggest(logged, model=base)
    emitted = emit_over(result, path, as_json=True)
    assert emitted.text == emit_json(result, document)
    written = json.loads(emitted.text)
    assert list(written) == list(document) and emitted.text.startswith('{\n  "version": "1.0"')
    kept = load_text(tmp_path, emitted.text, "kept.json")
    assert same_model(kept, load_text(tmp_path, emit_model(result, document), "re.yaml"))


def test_an_unsafe_shape_falls_back_to_the_reserialized_model(tmp_path: Path) -> None:
    text = foodmart_yaml("lattices: [{name: star, sql: 'select 1 from foodmart.store'}]\n")
    base = model_from(tmp_path, text, "flow.yaml")
    result = suggest(entries(), model=base)
    emitted = emit_over(result, Path(base.file), ["log.sql"])
    assert emitted.headed and emitted.text == emit_model(result, yaml.safe_load(text), ["log.sql"])
    assert emitted.note == (
        "formatting of flow.yaml could not be kept ('lattices:' is a flow-style list ([...]) "
        "and would change): written re-serialized"
    )


# --- any block document we write, grown anywhere, keeps its text ---------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3),
    ),
    max_leaves=12,
)


def grown(value: Any, extra: Any) -> Any:
    if isinstance(value, dict):
        return {**{k: grown(v, extra) for k, v in value.items()}, "zz added": extra}
    if isinstance(value, list):
        return [*(grown(v, extra) for v in value), extra]
    return value


def holds_in_order(old: str, new: str) -> bool:
    """Every character of `old` is in `new`, in order: `new` only inserted text."""
    rest = iter(new)
    return all(c in rest for c in old)


documents = st.dictionaries(st.text(min_size=1, max_size=6), values, min_size=1, max_size=4)
layouts = st.builds(Layout, st.integers(1, 5), st.integers(0, 5), st.integers(2, 5))


@given(documents, values, layouts)
def test_growing_any_document_only_inserts_text(document: dict, extra: Any, layout: Layout) -> None:
    text = "\n".join(block(document, 0, layout)) + "\n"  # any indentation we can write
    assert yaml.safe_load(text) == document
    new = grown(document, Commented(extra, ("added",)))  # keys of 6 characters at most: all new
    kept = keep_format(text, new)
    assert kept.text is not None, kept.reason
    assert yaml.safe_load(kept.text) == grown(document, extra)
    assert holds_in_order(text, kept.text)

"""The suggestion as a model file: a new model, or an evolved copy of the one given.

Without a model: the tables the lattices read (with the columns the log showed, so the file
validates before any data exists), under `defaultSchema` at a location a comment explains, and
the lattices at the root. With
a model: its document as it was, each evolved lattice rewritten in place (new arms, measures
and tiles; old aliases and labels kept), new lattices appended next to the lattices of their
fact table's schema when the model keeps them there, else at the root. Comments say which
queries produced each lattice, measure and tile; the header carries the summary. Over a YAML
model file, `emit_over` keeps the file's own text and formatting (`keep_format`); JSON has no
comments, so a JSON model is written as JSON again, in its key order, indented by 2.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mvlattice.document import read_document
from mvlattice.lattice.lattice import Measure
from mvlattice.output import plural
from mvlattice.suggest.keep_format import keep_format
from mvlattice.suggest.merge import describe_measure
from mvlattice.suggest.stated_lattice import label_of
from mvlattice.suggest.suggester import LatticeSuggestion, Suggestion, describe
from mvlattice.suggest.table_catalog import TableKey
from mvlattice.suggest.tiles import SuggestedTile
from mvlattice.suggest.yaml_text import Commented, dump, plain

MAX_IDS = 10


def emit_model(
    suggestion: Suggestion, base: Mapping[str, Any] | None = None, logs: Sequence[str] = ()
) -> str:
    """YAML text of the suggested model; `base` is the given model's document, if any."""
    return dump(suggested_document(suggestion, base), header(suggestion, logs))


def emit_json(suggestion: Suggestion, base: Mapping[str, Any] | None = None) -> str:
    """The suggested model as JSON (no comments: the header is printed, not written)."""
    return _json_text(suggested_document(suggestion, base))


def _json_text(document: Mapping[str, Any]) -> str:
    return json.dumps(plain(document), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True, slots=True)
class Emitted:
    text: str
    headed: bool  # the text starts with the summary header
    note: str | None = None  # why the model file's formatting was not kept


def emit_over(
    suggestion: Suggestion, model: Path, logs: Sequence[str] = (), as_json: bool = False
) -> Emitted:
    """The suggestion over the model file `model`. A YAML file keeps its text where the
    suggestion does not change it, and gets no header (rerun on its own output, the file
    would pile up headers); where splicing is unsafe the note says why."""
    document = suggested_document(suggestion, read_document(model))
    if as_json:
        return Emitted(_json_text(document), False)
    if model.suffix.lower() == ".json":  # no YAML formatting to keep
        return Emitted(dump(document, header(suggestion, logs)), True)
    kept = keep_format(model.read_text(encoding="utf-8"), document)
    if kept.text is not None:
        return Emitted(kept.text, False)
    note = f"formatting of {model.name} could not be kept ({kept.reason}): written re-serialized"
    return Emitted(dump(document, header(suggestion, logs)), True, note)


def suggested_document(
    suggestion: Suggestion, base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The suggested model's document, its values `Commented` where a comment explains them."""
    usable = [s for s in suggestion.lattices if s.lattice is not None]
    if base is None:
        schemas = _schemas(suggestion, usable)
        names = [s["name"] for s in schemas]
        default = suggestion.schema if suggestion.schema in names or not names else names[0]
        document: dict[str, Any] = {"version": "1.0", "defaultSchema": default, "schemas": schemas}
    else:
        document = copy.deepcopy(dict(base))
    for item in usable:
        element = Commented(lattice_element(item, _existing(document, item)), _about(item))
        if item.evolves is None or not _replace(document, item.name, element):
            holder = _holder(document, item)
            holder["lattices"] = [*(holder.get("lattices") or []), element]
    return document


def _holder(document: dict[str, Any], item: LatticeSuggestion) -> dict[str, Any]:
    """Where a new lattice goes: the `lattices:` list of its fact table's schema when the model
    keeps lattices there (Calcite's place for them), else the root's."""
    assert item.lattice is not None
    schema = item.lattice.nodes[0].schema.lower()
    for element in document.get("schemas") or []:
        if not isinstance(element, dict) or not isinstance(element.get("lattices"), list):
            continue
        if str(element.get("name", "")).lower() == schema:
            return element
    return document


def header(suggestion: Suggestion, logs: Sequence[str] = ()) -> tuple[str, ...]:
    s = suggestion.summary
    lines = [
        f"Suggested by `mvlattice suggest` from {', '.join(logs) or 'a query log'}.",
        f"Queries: {s.read} read, {s.parsed} parsed, {s.used} used "
        f"({s.blocks_used} of {s.blocks} query blocks).",
    ]
    lines += [f"  skipped, {k.reason}: {k.count} (e.g. {k.examples[0]})" for k in s.skipped]
    how = "merged per fact table" if suggestion.merged else "one per join graph"
    lines.append(
        f"Lattices: {s.lattices} ({how}; "
        f"{s.lattices_without_merging} without merging, {s.lattices_with_merging} with)."
    )
    joins = ", ".join(f"{n} by {source}" for source, n in s.directions) or "none"
    lines.append(f"Join directions: {joins}.")
    lines.append(f"Tile statistics: {s.statistics}.")
    if suggestion.schema_source:
        lines.append(f"Schema of unqualified tables: {suggestion.schema} "
                     f"({suggestion.schema_source}).")  # fmt: skip
    if s.window:
        lines.append(f"Log window: {s.window[0]} .. {s.window[1]}.")
    for drop in suggestion.drop_candidates:
        dims = ", ".join(drop.tile.dimensions) or "()"
        lines.append(
            f"Drop candidate: lattice {drop.lattice}, tile [{dims}] (no logged query fits it)."
        )
    for item in suggestion.lattices:
        if item.problem:
            lines.append(f"Not emitted: lattice {item.name}: {item.problem}")
    return tuple(lines)


def lattice_element(item: LatticeSuggestion, existing: Mapping[str, Any] | None) -> dict:
    lattice = item.lattice
    assert lattice is not None
    element: dict[str, Any] = dict(existing) if existing is not None else {"name": item.name}
    if existing is None or item.restated or "sql" not in existing:
        element["sql"] = lattice.sql.splitlines()
    if existing is None:
        element["auto"] = True
        element["algorithm"] = True
        element["rowCountEstimate"] = lattice.row_count_estimate
    measures = _measures(item)
    if existing is None and measures:
        element["defaultMeasures"] = measures
    elif existing is None:
        element["defaultMeasures"] = Commented(
            [{"agg": "count"}], ("no aggregate calls seen: COUNT(*) by default",)
        )
    elif measures:
        old = existing.get("defaultMeasures") or [{"agg": "count"}]
        element["defaultMeasures"] = [*old, *measures]
        element["tiles"] = [_pinned(t, old) for t in element.get("tiles") or []]
    tiles = [_tile(t) for t in (item.tiles.tiles if item.tiles else ())]
    if tiles:
        element["tiles"] = [*(element.get("tiles") or []), *tiles]
    return element


def _pinned(tile: Any, measures: list) -> Any:
    """A declared tile keeps the measures it had: new default measures would change it."""
    if isinstance(tile, Mapping) and "measures" not in tile:
        return {**tile, "measures": copy.deepcopy(measures)}
    return tile


def _about(item: LatticeSuggestion) -> tuple[str, ...]:
    s = item.suggested
    verb = f"evolves lattice {item.evolves}" if item.evolves else "new lattice"
    lines = [
        f"{verb}: {describe(item)}",
        f"from {plural(len(s.queries), 'query', 'queries')} (weight {_n(s.weight)}): "
        f"{_ids(s.queries)}; {plural(s.graphs, 'join graph')}",
    ]
    if s.decided:
        aliases = item.aliases
        directions = ", ".join(
            f"{aliases[p[:-1]]} -> {aliases[p]} ({source})" for p, source in s.decided.items()
        )
        lines.append(f"many-to-one: {directions}")
    if item.tiles and item.tiles.plan is None:
        lines.append("tiles: none (no aggregate query of the log reads this lattice)")
    elif item.tiles:
        plan = item.tiles
        lines.append(f"tiles: HRU96 weighted by the log; statistics: {plan.statistics}")
        if plan.star_only:
            lines.append(f"answered by no tile, only the star: {_ids(plan.star_only)}")
        if plan.unmapped:
            lines.append(
                "no tile can answer (detail queries, or columns the lattice lacks): "
                + _ids(plan.unmapped)
            )
    if s.unheld:
        calls = ", ".join(f"{text} ×{n}" for text, n in s.unheld[:5])
        more = f" and {len(s.unheld) - 5} more" if len(s.unheld) > 5 else ""
        lines.append(f"aggregates no measure can hold (not over a plain column): {calls}{more}")
    if item.note:
        lines.append(item.note)
    return tuple(lines)


def _measures(item: LatticeSuggestion) -> list:
    return [
        Commented(measure_element(measure), (f"{call}: weight {_n(weight)}",))
        for measure, (call, weight) in zip(item.new_measures, _calls(item), strict=True)
    ]


def _calls(item: LatticeSuggestion) -> list[tuple[str, float]]:
    """Measure descriptions with weights, in the order of `new_measures`."""
    lattice = item.lattice
    assert lattice is not None
    by_measure = {}
    for call, weight in item.suggested.measures:
        labels = [label_of(lattice, item.aliases[path], column) for path, column in call.args]
        measure = Measure(call.agg, tuple(x for x in labels if x), call.distinct)
        by_measure[measure] = (describe_measure(item.suggested.shape, call), weight)
    return [by_measure.get(m, (str(m), 0.0)) for m in item.new_measures]


def measure_element(measure: Measure) -> dict:
    element: dict[str, Any] = {"agg": measure.agg}
    if measure.args:
        element["args"] = list(measure.args) if len(measure.args) > 1 else measure.args[0]
    if measure.distinct:
        element["distinct"] = True
    return element


def _tile(tile: SuggestedTile) -> Commented:
    planned = tile.planned
    comment = (
        f"~{_n(planned.rows)} rows, benefit {_n(planned.benefit)}; answers "
        f"{plural(len(tile.queries), 'query', 'queries')} (weight {_n(tile.weight)}): "
        f"{_ids(tile.queries)}",
    )
    return Commented({"dimensions": list(planned.dimensions)}, comment)


def _schemas(suggestion: Suggestion, usable: list[LatticeSuggestion]) -> list:
    tables: dict[str, dict[str, TableKey]] = {}
    for item in usable:
        assert item.lattice is not None
        for node in item.lattice.nodes:
            tables.setdefault(node.schema, {}).setdefault(
                node.table.lower(), (node.schema, node.table)
            )
    schemas = []
    for schema, keys in tables.items():
        elements = []
        for key in keys.values():
            info = suggestion.catalog.info(key)
            element: dict[str, Any] = {"name": info.name}
            if info.columns:  # `columns: []` would fail validation: the data tells them
                element["columns"] = list(info.columns)
            elements.append(element)
        where = Commented(schema, tuple(n.format(schema=schema) for n in LOCATION_NOTE))
        schemas.append({"name": schema, "type": "delta", "location": where, "tables": elements})
    return schemas


# The log cannot say where a table's data is: the location says where it will be read.
LOCATION_NOTE = (
    "the log does not say where the data is: tables are read as Delta at <warehouse>/{schema}/"
    "<table>",
    "(elsewhere: set location, a path absolute or under the warehouse, and type: delta, "
    "parquet or csv)",
)


def _existing(document: Mapping[str, Any], item: LatticeSuggestion) -> Mapping | None:
    if item.evolves is None:
        return None
    for element in _lattice_elements(document):
        if isinstance(element, Mapping) and element.get("name") == item.evolves:
            return element
    return None


def _replace(document: dict, name: str, element: Commented) -> bool:
    for holder in [document, *(s for s in document.get("schemas") or [] if isinstance(s, dict))]:
        items = holder.get("lattices")
        if not isinstance(items, list):
            continue
        for i, old in enumerate(items):
            if isinstance(old, Mapping) and old.get("name") == name:
                items[i] = element
                return True
    return False


def _lattice_elements(document: Mapping[str, Any]) -> list:
    out = list(document.get("lattices") or [])
    for schema in document.get("schemas") or []:
        if isinstance(schema, Mapping):
            out.extend(schema.get("lattices") or [])
    return out


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS])
    return shown + (f", … (+{len(ids) - MAX_IDS} more)" if len(ids) > MAX_IDS else "")


def _n(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value:.3g}"
    return f"{value:,.0f}" if value == int(value) or abs(value) >= 100 else f"{value:.3g}"

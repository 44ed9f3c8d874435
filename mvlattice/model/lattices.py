"""The `lattices` and `materializations` elements of a model: parsing and validation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import sqlglot
from sqlglot import exp

from mvlattice.document import Problems, child, suggest
from mvlattice.lattice.lattice import Lattice, Measure, RefreshPolicy, TileSpec
from mvlattice.lattice.star import ColumnsOf, Star, build_star
from mvlattice.lattice.stored_names import stored_name_clashes
from mvlattice.model.durations import check_cron, parse_duration
from mvlattice.model.nesting import find_cycle
from mvlattice.model.tile_names import check_tile_names, tile_name
from mvlattice.sql.aggregates import AGGREGATE_NAMES
from mvlattice.sql.names import catalog_name_problem, path_name_problem

TILE_DATABASE = "mvlattice"  # the database of tiles' tables (`jobs.naming`, a layer above)

CALCITE_LATTICE_KEYS = (
    "name",
    "sql",
    "auto",
    "algorithm",
    "algorithmMaxMillis",
    "rowCountEstimate",
    "statisticProvider",
    "defaultMeasures",
    "tiles",
)
OUR_LATTICE_KEYS = ("refresh", "maxStaleness", "vacuum", "dimensions", "measures")
TILE_KEYS = ("dimensions", "measures", "name")
MEASURE_KEYS = ("agg", "args", "distinct", "approximate")
MATERIALIZATION_KEYS = ("view", "table", "sql", "refresh", "maxStaleness", "vacuum")

# Calcite's provider names map onto ours; the short names are the documented ones.
STATISTIC_PROVIDERS = {
    "exact": "exact",
    "profiler": "profiler",
    "org.apache.calcite.materialize.Lattices#SQL_STATISTIC_PROVIDER": "exact",
    "org.apache.calcite.materialize.Lattices#CACHED_SQL_STATISTIC_PROVIDER": "exact",
    "org.apache.calcite.materialize.Lattices#CACHING_SQL_STATISTIC_PROVIDER": "exact",
    "org.apache.calcite.materialize.Lattices#PROFILER": "profiler",
}


@dataclass(kw_only=True, frozen=True, slots=True)
class Materialization:
    """Calcite's materialization element: `view` (its name), `table` (where data lives), `sql`."""

    name: str
    schema: str
    table: str
    sql: str
    cron: str | None = None
    max_staleness_seconds: float | None = None
    vacuum_retention_seconds: float | None = None
    # `schema.table` (lower case) of the other materializations its SQL reads (see `nesting`).
    reads: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """How SQL names its table, `schema.table` in lower case (as `reads` does)."""
        return f"{self.schema}.{self.table}".lower()


def parse_lattices(
    root: Mapping[str, Any], default_schema: str | None, columns: ColumnsOf, problems: Problems
) -> tuple[Lattice, ...]:
    """Lattices at the root (ours) and inside schemas (Calcite's place for them)."""
    found: list[Lattice] = []
    tile_names: dict[str, str] = {}  # a tile's name -> where it was first declared
    for path, schema, items in _elements(root, "lattices", default_schema, problems):
        for i, item in enumerate(items):
            lattice = _lattice(item, child(path, i), schema, columns, problems, tile_names)
            if lattice is not None:
                found.append(lattice)
    _check_unique((lat.name for lat in found), "lattice", problems)
    return tuple(found)


def parse_materializations(
    root: Mapping[str, Any], default_schema: str | None, columns: ColumnsOf, problems: Problems
) -> tuple[Materialization, ...]:
    found: list[Materialization] = []
    # (path, schema, sql, the materialization's index or None): checked once all are known
    sqls: list[tuple[str, str | None, str, int | None]] = []
    for path, schema, items in _elements(root, "materializations", default_schema, problems):
        for i, item in enumerate(items):
            p = child(path, i)
            element = problems.mapping(item, p, "a materialization")
            if element is None:
                continue
            problems.check_keys(element, p, MATERIALIZATION_KEYS, required=("sql",))
            if "view" not in element and "table" not in element:
                problems.add(p, "a materialization needs a 'view' or 'table' name")
                continue
            name = problems.string(element.get("view", element.get("table")), p, "name")
            table = problems.string(element.get("table", name), child(p, "table"), "table")
            if table is not None and _bad_table(table, element, p, problems):
                table = None
            sql = _sql_text(element.get("sql"), child(p, "sql"), problems)
            refresh = _refresh(element, p, problems)
            if sql is not None:
                index = len(found) if name and table else None
                sqls.append((child(p, "sql"), schema, sql, index))
            if name and table and sql:
                found.append(
                    Materialization(
                        name=name,
                        schema=schema or "default",
                        table=table,
                        sql=sql,
                        cron=refresh.cron,
                        max_staleness_seconds=refresh.max_staleness_seconds,
                        vacuum_retention_seconds=refresh.vacuum_retention_seconds,
                    )
                )
    _check_unique((m.name for m in found), "materialization", problems)
    known = {m.key: m for m in found}
    for path, schema, sql, index in sqls:
        read = _check_query_tables(sql, schema, columns, path, problems, known)
        if read and index is not None:
            found[index] = replace(found[index], reads=read)
    _check_cycles(found, problems)
    return tuple(found)


def _check_cycles(found: list[Materialization], problems: Problems) -> None:
    cycle = find_cycle({m.key: m.reads for m in found})
    if cycle:
        names = {m.key: m.name for m in found}
        shown = " -> ".join(f"{names[k]} ({k})" for k in cycle)
        problems.add("materializations", f"materializations read each other in a cycle: {shown}")


def _bad_table(table: str, element: Mapping[str, Any], path: str, problems: Problems) -> bool:
    """A materialization's table is a name, and its files go under the warehouse by that name
    (`jobs.naming.materialization_location`): no path tricks, no '.' (see `names`)."""
    reason = catalog_name_problem(table)  # registered as schema.table, stored by that name
    if reason is None:
        return False
    key = "table" if "table" in element else "view"
    problems.add(child(path, key), f"materialization table '{table}' {reason}")
    return True


def _elements(
    root: Mapping[str, Any], key: str, default_schema: str | None, problems: Problems
) -> list[tuple[str, str | None, list[Any]]]:
    out = []
    if key in root:
        out.append((key, default_schema, root[key]))
    schemas = root.get("schemas")
    if isinstance(schemas, list):
        for i, schema in enumerate(schemas):
            if isinstance(schema, Mapping) and key in schema:
                name = schema.get("name") if isinstance(schema.get("name"), str) else None
                out.append((child(child("schemas", i), key), name, schema[key]))
    good = []
    for path, schema, items in out:
        if isinstance(items, list):
            good.append((path, schema, items))
        else:
            problems.add(path, f"must be a list of {key[:-1]} elements")
    return good


def _lattice(
    item: Any,
    path: str,
    schema: str | None,
    columns: ColumnsOf,
    problems: Problems,
    tile_names: dict[str, str],
) -> Lattice | None:
    element = problems.mapping(item, path, "a lattice")
    if element is None:
        return None
    problems.check_keys(
        element, path, CALCITE_LATTICE_KEYS + OUR_LATTICE_KEYS, required=("name", "sql")
    )
    name = problems.string(element.get("name"), child(path, "name"), "name")
    sql = _sql_text(element.get("sql"), child(path, "sql"), problems)
    reason = path_name_problem(name) if name is not None else None
    if reason is not None:
        problems.add(child(path, "name"), f"lattice name '{name}' {reason}")
    if name is None or sql is None or reason is not None:
        return None
    table_schema = schema if schema and _has_tables(schema, columns) else None
    star = build_star(
        sql, table_schema or _fallback_schema(schema), columns, problems, child(path, "sql")
    )
    options = _lattice_options(element, path, problems)
    if star is None:
        return None
    default_measures = _measures(
        element.get("defaultMeasures", [{"agg": "count"}]),
        child(path, "defaultMeasures"),
        star,
        problems,
    )
    tiles = _tiles(element.get("tiles", []), child(path, "tiles"), name, star, default_measures,
                   problems, tile_names)  # fmt: skip
    measures = default_measures + tuple(m for tile in tiles for m in tile.measures)
    for message in stored_name_clashes((c.label for c in star.columns), measures):
        problems.add(path, message)
    roles = {
        key: _dimensions(element.get(key, []), child(path, key), star, problems)
        for key in ("dimensions", "measures")
    }
    for label in sorted(set(roles["dimensions"]) & set(roles["measures"])):
        problems.add(path, f"column '{label}' is listed under both dimensions and measures")
    return Lattice(
        name,
        schema or "default",
        sql,
        star.nodes,
        star.edges,
        star.columns,
        default_measures,
        tiles,
        **options,
        dimension_labels=roles["dimensions"],
        measure_labels=roles["measures"],
    )


def _has_tables(schema: str, columns: ColumnsOf) -> bool:
    index = getattr(columns, "tables", {})
    return any(s == schema.lower() for s, _ in index)


def _fallback_schema(schema: str | None) -> str:
    return schema or "default"


def _lattice_options(element: Mapping[str, Any], path: str, problems: Problems) -> dict:
    options: dict[str, Any] = {}
    for key, attr in (("auto", "auto"), ("algorithm", "algorithm")):
        if key in element and problems.boolean(element[key], child(path, key)) is not None:
            options[attr] = element[key]
    if "algorithmMaxMillis" in element:
        value = problems.number(element["algorithmMaxMillis"], child(path, "algorithmMaxMillis"))
        if value is not None:
            options["algorithm_max_millis"] = int(value)
    if "rowCountEstimate" in element:
        value = problems.number(element["rowCountEstimate"], child(path, "rowCountEstimate"), 0)
        if value is not None:
            options["row_count_estimate"] = float(value)
    if "statisticProvider" in element:
        raw = element["statisticProvider"]
        if raw in STATISTIC_PROVIDERS:
            options["statistic_provider"] = STATISTIC_PROVIDERS[raw]
        else:
            problems.add(
                child(path, "statisticProvider"),
                f"unknown statistic provider "
                f"'{raw}'; expected exact or profiler" + suggest(str(raw), ("exact", "profiler")),
            )
    options["refresh"] = _refresh(element, path, problems)
    return options


def _refresh(element: Mapping[str, Any], path: str, problems: Problems) -> RefreshPolicy:
    cron = None
    if "refresh" in element:
        p = child(path, "refresh")
        section = problems.mapping(element["refresh"], p, "refresh")
        if section is not None:
            problems.check_keys(section, p, ("cron",))
            cron = problems.string(section.get("cron"), child(p, "cron"), "cron")
            if cron:
                try:
                    check_cron(cron)
                except ValueError as exc:
                    problems.add(child(p, "cron"), str(exc))
                    cron = None
    staleness = None
    if "maxStaleness" in element:
        try:
            staleness = parse_duration(element["maxStaleness"])
        except ValueError as exc:
            problems.add(child(path, "maxStaleness"), str(exc))
    return RefreshPolicy(cron, staleness, parse_vacuum(element, path, problems))


def parse_vacuum(element: Mapping[str, Any], path: str, problems: Problems) -> float | None:
    """`vacuum: {retention: 7d}` (root, lattice or materialization): seconds, or None."""
    if "vacuum" not in element:
        return None
    p = child(path, "vacuum")
    section = problems.mapping(element["vacuum"], p, "vacuum")
    if section is None:
        return None
    problems.check_keys(section, p, ("retention",), required=("retention",))
    if "retention" not in section:
        return None
    try:
        return parse_duration(section["retention"])
    except ValueError as exc:
        problems.add(child(p, "retention"), str(exc))
        return None


def _sql_text(value: Any, path: str, problems: Problems) -> str | None:
    if value is None:
        return None  # reported once, as a missing required key
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, str) and value.strip():
        return value
    problems.add(path, "must be a SQL string or a list of strings")
    return None


def _tiles(
    value: Any,
    path: str,
    lattice: str,
    star: Star,
    defaults: tuple[Measure, ...],
    problems: Problems,
    tile_names: dict[str, str],
) -> tuple[TileSpec, ...]:
    """The declared tiles; `tile_names`: the model's tile names so far (see `tile_names`)."""
    if not isinstance(value, list):
        problems.add(path, "must be a list of tile elements")
        return ()
    tiles, paths = [], []
    for i, item in enumerate(value):
        p = child(path, i)
        element = problems.mapping(item, p, "a tile")
        if element is None:
            continue
        problems.check_keys(element, p, TILE_KEYS, required=("dimensions",))
        dims = _dimensions(element.get("dimensions", []), child(p, "dimensions"), star, problems)
        measures = (
            _measures(element["measures"], child(p, "measures"), star, problems)
            if "measures" in element
            else defaults
        )
        tiles.append(TileSpec(lattice, dims, measures, tile_name(element, p, problems)))
        paths.append(p)
    check_tile_names(tuple(tiles), tuple(paths), tile_names, problems)
    return tuple(tiles)


def _dimensions(value: Any, path: str, star: Star, problems: Problems) -> tuple[str, ...]:
    if not isinstance(value, list):
        problems.add(path, "must be a list of column labels or [alias, column] pairs")
        return ()
    out = []
    for i, item in enumerate(value):
        label = _dimension(item, child(path, i), star, problems)
        if label is not None:
            out.append(label)
    return tuple(dict.fromkeys(out))


def _dimension(item: Any, path: str, star: Star, problems: Problems) -> str | None:
    labels = [c.label for c in star.columns]
    if isinstance(item, str):
        return _label(item, path, labels, problems)
    if isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
        alias, column = item
        for col in star.columns:
            if (col.alias or "").lower() == alias.lower() and (
                col.column or ""
            ).lower() == column.lower():
                return col.label
        aliases = [n.alias for n in star.nodes]
        if alias.lower() not in (a.lower() for a in aliases):
            problems.add(path, f"unknown table alias '{alias}'" + suggest(alias, aliases))
        else:
            names = [c.column for c in star.columns if c.alias and c.alias.lower() == alias.lower()]
            problems.add(
                path,
                f"unknown column '{column}' in alias '{alias}'"
                + suggest(column, [n for n in names if n]),
            )
        return None
    problems.add(path, "a dimension is a column label or an [alias, column] pair")
    return None


def _label(name: str, path: str, labels: list[str], problems: Problems) -> str | None:
    for label in labels:
        if label.lower() == name.lower():
            return label
    qualified = [lb for lb in labels if lb.lower().endswith("." + name.lower())]
    hint = (
        f" (it is ambiguous: use one of {', '.join(qualified)})"
        if qualified
        else suggest(name, labels)
    )
    problems.add(path, f"unknown column '{name}'{hint}")
    return None


def _measures(value: Any, path: str, star: Star, problems: Problems) -> tuple[Measure, ...]:
    if not isinstance(value, list):
        problems.add(path, "must be a list of measure elements")
        return ()
    labels = [c.label for c in star.columns]
    out = []
    for i, item in enumerate(value):
        p = child(path, i)
        element = problems.mapping(item, p, "a measure")
        if element is None:
            continue
        problems.check_keys(element, p, MEASURE_KEYS, required=("agg",))
        agg = element.get("agg")
        if not isinstance(agg, str) or agg.lower() not in AGGREGATE_NAMES:
            problems.add(
                child(p, "agg"),
                f"unknown aggregate function '{agg}'; expected one "
                f"of {', '.join(AGGREGATE_NAMES)}" + suggest(str(agg), AGGREGATE_NAMES),
            )
            continue
        args = _measure_args(element.get("args"), child(p, "args"), labels, problems)
        distinct = element.get("distinct", False)
        if problems.boolean(distinct, child(p, "distinct")) is None:
            continue
        approximate = element.get("approximate", False)
        if problems.boolean(approximate, child(p, "approximate")) is None:
            continue
        if args is None:
            continue
        if agg.lower() != "count" and len(args) != 1:
            problems.add(p, f"{agg} takes exactly one argument")
            continue
        if approximate and (agg.lower() != "count" or not distinct or len(args) != 1):
            problems.add(
                child(p, "approximate"),
                "approximate: true is only for a distinct count of one column "
                "({agg: count, args: x, distinct: true, approximate: true})",
            )
            continue
        out.append(Measure(agg, args, bool(distinct), bool(approximate)))
    return tuple(dict.fromkeys(out))


def _measure_args(
    value: Any, path: str, labels: list[str], problems: Problems
) -> tuple[str, ...] | None:
    if value is None or value == []:
        return ()
    raw = [value] if isinstance(value, str) else value
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        problems.add(path, "args is a column label or a list of column labels")
        return None
    out = []
    for i, name in enumerate(raw):
        label = _label(name, path if isinstance(value, str) else child(path, i), labels, problems)
        if label is None:
            return None
        out.append(label)
    return tuple(out)


def _check_query_tables(
    sql: str,
    schema: str | None,
    columns: ColumnsOf,
    path: str,
    problems: Problems,
    materializations: Mapping[str, Materialization],
) -> tuple[str, ...] | None:
    """Every table the SQL reads is a model table or another materialization (by its
    `schema.table`); returns the materializations read, or None when the SQL does not parse."""
    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError as exc:
        problems.add(path, f"SQL does not parse: {str(exc).splitlines()[0]}")
        return None
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    reads: dict[str, None] = {}
    for table in tree.find_all(exp.Table):
        if not table.db and table.name.lower() in ctes:
            continue
        db = table.db or schema or "default"
        key = f"{db}.{table.name}".lower()
        if key in materializations:
            reads[key] = None
        elif db.lower() == TILE_DATABASE:
            problems.add(
                path,
                f"reads the tile '{db}.{table.name}': a tile's table name changes with its "
                "dimensions and measures, and planned tiles come and go, so a materialization "
                "may not read one; read the lattice's tables (queries over them are answered "
                "from the tiles) or declare the aggregate as a materialization and read that",
            )
        elif columns(db, table.name) is None:
            by_view = [
                m for m in materializations.values() if f"{m.schema}.{m.name}".lower() == key
            ]
            hint = (
                f" (materialization '{by_view[0].name}' is read by its table name, "
                f"'{by_view[0].key}')"
                if by_view
                else ""
            )
            problems.add(path, f"unknown table '{table.db or schema}.{table.name}'{hint}")
    return tuple(reads)


def _check_unique(names: Any, what: str, problems: Problems) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            problems.add("", f"{what} '{name}' is declared more than once")
        seen.add(name)

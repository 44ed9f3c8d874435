"""`suggest`: lattices and weighted tiles from a query log (Calcite's LatticeSuggester, plus
tiles designed from the log's queries — future work on Calcite's lattice page).

    entries = read_logs(["queries.sql"])
    result = suggest(entries, model=load_model("model.yaml"))
    text = emit_model(result, base_document)

Steps, each in its own module: parse (`reading`), learn columns (`table_catalog`), read query
blocks (`catalog_blocks`, over `sql.block_summary`), direct joins (`direction`) and hang stars
off their roots (`graph`), merge stars into lattices (`merge`), state each as model SQL and
build it as the loader would (`stated_lattice`), choose tiles for the lattice's queries
(`tiles`, reusing the planner's workload mapping and HRU96 greedy) with data statistics or,
without data, a documented guess (`estimates`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from mvlattice.document import Problems
from mvlattice.lattice.lattice import Lattice, Measure, TileSpec
from mvlattice.lattice.statistic_provider import StatisticProvider
from mvlattice.model.loader import Model
from mvlattice.suggest.direction import Uniqueness
from mvlattice.suggest.estimates import (
    DESCRIPTION,
    ROWS_WHEN_UNKNOWN,
    heuristic_statistics,
)
from mvlattice.suggest.logs import LogEntry
from mvlattice.suggest.merge import SuggestedLattice, describe_measure, merge_stars
from mvlattice.suggest.reading import learn, logged_tables, parse_entries, read_query
from mvlattice.suggest.seeds import SeedInfo, seed_from_lattice
from mvlattice.suggest.star_shape import Path
from mvlattice.suggest.stated_lattice import (
    Derived,
    assign_aliases,
    build_lattice,
    changed_labels,
    lattice_sql,
    path_key,
)
from mvlattice.suggest.summary import Summary, summarize
from mvlattice.suggest.table_catalog import Catalog, model_catalog, open_catalog
from mvlattice.suggest.tiles import ParsedQuery, TilePlan, plan_tiles, unused_tiles

StatsFor = Callable[[Lattice], StatisticProvider]
# Where the log's unqualified tables are, by name: (a schema holding them, how many), or None.
Locate = Callable[[frozenset[str]], tuple[str, int] | None]
DEFAULT_SCHEMA = "default"


@dataclass(frozen=True, slots=True)
class LatticeSuggestion:
    name: str
    suggested: SuggestedLattice
    lattice: Lattice | None  # None when the loader would reject it (see `problem`)
    aliases: Mapping[Path, str] = field(default_factory=dict)
    renames: Mapping[tuple[str, str], str] = field(default_factory=dict)
    derived: tuple[Derived, ...] = ()
    new_measures: tuple[Measure, ...] = ()  # measures the lattice did not have before
    tiles: TilePlan | None = None
    problem: str | None = None
    note: str | None = None
    # an evolved lattice whose star the log changed (its SQL is restated); False: the model's
    # own SQL states the same star and is kept as the user wrote it
    restated: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "aliases", MappingProxyType(dict(self.aliases)))
        object.__setattr__(self, "renames", MappingProxyType(dict(self.renames)))

    @property
    def evolves(self) -> str | None:
        return self.suggested.seed


@dataclass(frozen=True, slots=True)
class DropCandidate:
    lattice: str
    tile: TileSpec


@dataclass(frozen=True, slots=True)
class Suggestion:
    lattices: tuple[LatticeSuggestion, ...]
    summary: Summary
    drop_candidates: tuple[DropCandidate, ...]
    schema: str  # the schema unqualified tables were read in
    catalog: Catalog
    merged: bool
    schema_source: str = ""  # without a model: why unqualified tables are in `schema`


def suggest(
    entries: Sequence[LogEntry],
    *,
    model: Model | None = None,
    dialect: str | None = None,
    evolve: bool = True,
    default_schema: str | None = None,
    uniqueness: Uniqueness | None = None,
    stats_for: StatsFor | None = None,
    statistics: str = "data",
    max_tiles: int | None = None,
    max_rows: float | None = None,
    tiles: bool = True,
    locate: Locate | None = None,
) -> Suggestion:
    """Lattices (merged per fact table unless `evolve=False`) and tiles for the log's queries.

    `uniqueness` answers join directions from data; `stats_for` sizes tiles from data (its
    `statistics` names it); without it, `estimates` guesses and the summary says so. Without
    a model, unqualified tables are in `default_schema`, else in the one schema the log
    qualifies tables with, else where `locate` finds them, else in DEFAULT_SCHEMA.
    """
    parsed = parse_entries(entries, dialect)
    queries = [q for _, q in parsed if isinstance(q, ParsedQuery)]
    schema, source = _unqualified_schema(default_schema, queries, locate)
    base = model_catalog(model) if model is not None else open_catalog(schema)
    catalog = learn(base, queries)
    outcomes = [read_query(q, catalog, uniqueness) for q in queries]
    contributions = [c for o in outcomes for c in o.contributions]
    seeds = {s.seed.name: s for s in (seed_from_lattice(x) for x in _lattices(model))}
    seed_list = tuple(s.seed for s in seeds.values())
    merged = merge_stars(contributions, evolve=evolve, seeds=seed_list)
    touched = [m for m in merged if m.queries]
    by_id = {q.id: q for q in queries}
    options = _Options(catalog, stats_for, statistics, max_tiles, max_rows, tiles)
    built = _name_and_build(touched, seeds, by_id, options, _lattice_names(model))
    other = merge_stars(contributions, evolve=not evolve, seeds=seed_list)
    others = sum(1 for m in other if m.queries)
    described = statistics if stats_for is not None else DESCRIPTION
    summary = summarize(entries, parsed, outcomes, built, (others, evolve), described)
    drops = _drop_candidates(model, queries)
    source = source if model is None else ""
    return Suggestion(tuple(built), summary, drops, catalog.default_schema, catalog, evolve, source)


def _unqualified_schema(
    given: str | None, queries: Sequence[ParsedQuery], locate: Locate | None
) -> tuple[str, str]:
    """The schema of the log's unqualified tables, and why (for the model's header)."""
    if given:
        return given, "--schema"
    schemas, names = logged_tables(queries)
    if len(schemas) == 1:
        return next(iter(schemas)), "the one schema the log qualifies tables with"
    found = locate(names) if locate is not None and names else None
    if found is not None:
        return found[0], f"the warehouse folder holding {found[1]} of them as Delta tables"
    return DEFAULT_SCHEMA, "the log does not say; --schema names it"


@dataclass(frozen=True, slots=True)
class _Options:
    catalog: Catalog
    stats_for: StatsFor | None
    statistics: str
    max_tiles: int | None
    max_rows: float | None
    tiles: bool


def _lattices(model: Model | None) -> tuple[Lattice, ...]:
    return model.lattices if model is not None else ()


def _lattice_names(model: Model | None) -> set[str]:
    return {lat.name.lower() for lat in _lattices(model)}


def _name_and_build(
    lattices: list[SuggestedLattice],
    seeds: Mapping[str, SeedInfo],
    queries: Mapping[str, ParsedQuery],
    options: _Options,
    taken: set[str],
) -> list[LatticeSuggestion]:
    out = []
    for suggested in lattices:
        seed = seeds.get(suggested.seed) if suggested.seed else None
        name = seed.seed.name if seed else _new_name(suggested, taken)
        taken.add(name.lower())
        built = _build(name, suggested, seed, options)
        if built.lattice is not None and options.tiles:
            built = _with_tiles(built, [queries[q] for q in suggested.queries], options)
        out.append(built)
    return out


def _new_name(suggested: SuggestedLattice, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", suggested.shape.root[1].lower())
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _build(
    name: str, suggested: SuggestedLattice, seed: SeedInfo | None, options: _Options
) -> LatticeSuggestion:
    catalog = options.catalog
    usage = Counter(k for keys in suggested.query_nodes.values() for k in keys)
    aliases = assign_aliases(suggested.shape, seed.aliases if seed else None, usage)
    derived = seed.derived if seed else ()
    schema = seed.lattice.schema if seed else catalog.default_schema
    measures = tuple(
        (m.agg, tuple((aliases[p], c) for p, c in m.args), m.distinct)
        for m, _ in suggested.measures
    )
    estimate = seed.lattice.row_count_estimate if seed else ROWS_WHEN_UNKNOWN

    def columns_of(schema_name: str, table: str) -> tuple[str, ...] | None:
        info = catalog.table(schema_name, table)
        if info is None or (catalog.closed and not info.columns):
            return None  # a model table whose columns nobody can tell (no data, none declared)
        return info.columns

    unknown = _columnless(suggested, catalog)
    if unknown:
        problem = (
            f"the log names no column of {', '.join(unknown)} (suggest --model with a "
            "model that lists its columns or reads its data)"
        )
        return LatticeSuggestion(name, suggested, None, aliases, problem=problem)  # fmt: skip

    def attempt(renames: Mapping[tuple[str, str], str]) -> Lattice | Problems:
        sql = lattice_sql(suggested.shape, aliases, renames, derived)
        return build_lattice(name, schema, sql, columns_of, measures, estimate)

    renames: dict[tuple[str, str], str] = {}
    lattice = attempt(renames)
    if seed is not None and isinstance(lattice, Lattice):
        renames = changed_labels(seed.columns, lattice)
        lattice = attempt(renames) if renames else lattice
    if isinstance(lattice, Problems):
        problem = "; ".join(p.message for p in lattice.items)
        return LatticeSuggestion(name, suggested, None, aliases, renames, derived, problem=problem)
    if seed is not None:
        return _evolved(name, suggested, seed, lattice, aliases, renames)
    return LatticeSuggestion(
        name, suggested, lattice, aliases, renames, derived, lattice.default_measures
    )


def _columnless(suggested: SuggestedLattice, catalog: Catalog) -> tuple[str, ...]:
    """Tables of the lattice, without a model, whose columns no one knows: the log names
    none (emitted with `columns: []` they failed validation; without, they need data)."""
    if catalog.closed:
        return ()  # the model's own tables: building the lattice says what is missing
    shape = suggested.shape
    keys = [shape.root, *(path[-1].table for path in shape.paths)]
    found = (catalog.table(*key) for key in dict.fromkeys(keys))
    return tuple(f"{t.schema}.{t.name}" for t in found if t is not None and not t.columns)


def _evolved(
    name: str,
    suggested: SuggestedLattice,
    seed: SeedInfo,
    lattice: Lattice,
    aliases: Mapping[Path, str],
    renames: Mapping[tuple[str, str], str],
) -> LatticeSuggestion:
    """The built lattice with the seed's own options, tiles and measures kept."""
    old = seed.lattice
    new = tuple(m for m in lattice.default_measures if m not in old.default_measures)
    evolved = replace(
        lattice,
        default_measures=old.default_measures + new,
        tiles=old.tiles,
        auto=old.auto,
        algorithm=old.algorithm,
        algorithm_max_millis=old.algorithm_max_millis,
        statistic_provider=old.statistic_provider,
        refresh=old.refresh,
    )
    # the same star, whatever order its SQL names tables in: the user's SQL is kept
    same = (set(old.nodes), set(old.edges), set(old.columns)) == (
        set(lattice.nodes),
        set(lattice.edges),
        set(lattice.columns),
    )
    return LatticeSuggestion(
        name, suggested, evolved, aliases, renames, seed.derived, new, restated=not same
    )


def _with_tiles(
    built: LatticeSuggestion, queries: list[ParsedQuery], options: _Options
) -> LatticeSuggestion:
    lattice = built.lattice
    assert lattice is not None
    if not lattice.algorithm:
        return replace(built, note="algorithm: false — no tiles suggested")
    if options.stats_for is not None:
        stats, described = options.stats_for(lattice), options.statistics
    else:
        stats, described = heuristic_statistics(lattice), DESCRIPTION
    plan = plan_tiles(
        lattice,
        queries,
        stats,
        described,
        views=_views(built),
        max_tiles=options.max_tiles,
        max_rows=options.max_rows,
    )
    if options.stats_for is not None and built.evolves is None:
        lattice = replace(lattice, row_count_estimate=float(stats.row_count()))
    return replace(built, lattice=lattice, tiles=plan)


def _views(built: LatticeSuggestion) -> dict[str, frozenset[str]]:
    """Per query, the aliases (in this lattice) of the nodes its own star reads."""
    alias_of = {path_key(p): a for p, a in built.aliases.items()}
    return {
        query: frozenset(alias_of[k] for k in keys if k in alias_of)
        for query, keys in built.suggested.query_nodes.items()
    }


def _drop_candidates(model: Model | None, queries: list[ParsedQuery]) -> tuple[DropCandidate, ...]:
    return tuple(
        DropCandidate(lattice.name, tile)
        for lattice in _lattices(model)
        for tile in unused_tiles(lattice, queries)
    )


def describe(suggestion: LatticeSuggestion) -> str:
    """`emp (dept:deptno):[count(), sum(emp.sal)]`, Calcite's lattice key."""
    s = suggestion.suggested
    measures = ", ".join(describe_measure(s.shape, m) for m, _ in s.measures)
    return f"{s.describe()}:[{measures}]"


__all__ = ["Suggestion", "LatticeSuggestion", "Summary", "suggest", "describe", "path_key"]

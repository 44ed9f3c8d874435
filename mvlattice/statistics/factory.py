"""`provider_for`: the statistic provider of a lattice, as its `statisticProvider` asks.

    provider = provider_for(spark, model, "star")          # the lattice's choice (profiler)
    provider.row_count(); provider.distinct_count(["the_year", "brand_name"])

Nothing runs until the first question. Then the lattice is profiled (singles and pairs in one
pass, larger surprising sets in one pass per size, see `profile`) through the persistent cache
(see `store`), so a second provider over unchanged data counts nothing. Sets never counted are
estimated (see `estimate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import Counts, SetCounter
from mvlattice.statistics.cache import CachingCounter
from mvlattice.statistics.exact import ExactCounter
from mvlattice.statistics.implied import dependencies
from mvlattice.statistics.profile import SURPRISE, Profile, build_profile, run_profile
from mvlattice.statistics.profiled import ProfiledStatisticProvider
from mvlattice.statistics.sketch import TOLERANCE, SketchCounter
from mvlattice.statistics.store import FileCountStore, statistics_store

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model

KINDS = ("exact", "profiler")
DEFAULT_KIND = "profiler"
DEFAULT_MAX_SIZE = 3

Progress = Callable[[str], None]


def provider_for(
    spark: SparkSession,
    model: Model,
    lattice: Lattice | str,
    *,
    kind: str | None = None,
    warehouse: str | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
    surprise: float = SURPRISE,
    cache: bool = True,
    progress: Progress | None = None,
) -> ProfiledStatisticProvider:
    """The lattice's provider: `kind` None means its `statisticProvider` (default profiler)."""
    lat = model.lattice(lattice) if isinstance(lattice, str) else lattice
    chosen = kind or lat.statistic_provider or DEFAULT_KIND
    if chosen not in KINDS:
        raise UsageError(f"unknown statistic provider '{chosen}'; expected exact or profiler")
    if max_size < 1:
        raise UsageError("--max-size must be at least 1")
    say = progress or (lambda _line: None)
    counter = make_counter(spark, lat, chosen, progress=say)
    where = warehouse or model.warehouse
    store = (lambda: _open_store(spark, model, lat, counter, where, say)) if cache else None
    cached = CachingCounter(counter, store)
    tolerance = 0.0 if counter.exact else TOLERANCE

    def build() -> Profile:
        say(f"profiling lattice '{lat.name}' ({len(lat.labels)} columns, {counter.description})")
        profile = run_profile(
            cached, lat.name, lat.labels, max_size=max_size, surprise=surprise,
            tolerance=tolerance, guaranteed=dependencies(lat), progress=say,
        )  # fmt: skip
        if cached.hits:
            say(f"{cached.hits} of {cached.hits + cached.misses} column sets came from the cache")
        return _with_known(profile, cached.known, tolerance)

    return ProfiledStatisticProvider(build, cached, tolerance=tolerance)


def _with_known(profile: Profile, known: Counts | None, tolerance: float) -> Profile:
    """The profile plus whatever else was counted on the same data (e.g. sets tile planning
    asked for in an earlier run): counted once, never estimated again."""
    if known is None or not set(known.distinct) - set(profile.counts):
        return profile
    merged = Counts(profile.rows, {**known.distinct, **profile.counts}, profile.exact)
    rebuilt = build_profile(
        profile.lattice, profile.labels, merged, profile.method, tolerance=tolerance,
        guaranteed=profile.guaranteed,
    )  # fmt: skip
    return replace(rebuilt, passes=profile.passes)


def make_counter(
    spark: SparkSession, lattice: Lattice, kind: str, *, progress: Progress | None = None
) -> SetCounter:
    if kind == "exact":
        return ExactCounter(spark, lattice, progress=progress)
    return SketchCounter(spark, lattice)


def _open_store(
    spark: SparkSession,
    model: Model,
    lattice: Lattice,
    counter: SetCounter,
    warehouse: str,
    say: Progress,
) -> FileCountStore | None:
    from mvlattice.delta.sources import source_versions

    sources = source_versions(spark, model.lattice_tables(lattice.name))
    unreadable = {name: s.unreadable for name, s in sources.items() if s.unreadable}
    if unreadable:
        name, why = sorted(unreadable.items())[0]
        say(f"not caching: source table {name} cannot be read ({why})")
        return None
    store = statistics_store(warehouse, lattice, counter.description, sources, spark)
    if store is None:
        say("not caching: some source tables have no version to key the cache on")
    return store


def profile_lattice(
    spark: SparkSession,
    model: Model,
    lattice: str | None = None,
    *,
    kind: str | None = None,
    max_size: int = DEFAULT_MAX_SIZE,
    warehouse: str | None = None,
    progress: Progress | None = None,
) -> Profile:
    """Profile one lattice of the model (the only one when `lattice` is None), via the cache."""
    chosen = model.choose_lattice(lattice)
    provider = provider_for(
        spark, model, chosen, kind=kind, warehouse=warehouse, max_size=max_size, progress=progress
    )
    return provider.profile

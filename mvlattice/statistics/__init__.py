"""Row counts and distinct counts of lattice column sets: providers, profiler, cache, estimates.

`provider_for(spark, model, lattice)` is the entry point tile planning uses;
`DictStatisticProvider` stands in for it in tests. Nothing here imports pyspark at import time.
"""

from mvlattice.lattice.statistic_provider import ColumnSet, Counts, SetCounter, StatisticProvider
from mvlattice.statistics.dict_provider import DictStatisticProvider
from mvlattice.statistics.factory import provider_for

__all__ = [
    "ColumnSet",
    "Counts",
    "DictStatisticProvider",
    "SetCounter",
    "StatisticProvider",
    "provider_for",
]

"""What every job needs at hand: Spark, the model, the warehouse, the state store, a clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.jobs.lease import Leases
from mvlattice.jobs.state import StateStore
from mvlattice.jobs.tables import TableReader

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model


@dataclass(frozen=True, slots=True)
class JobContext:
    spark: SparkSession
    model: Model
    warehouse: str
    store: StateStore
    reader: TableReader
    clock: Callable[[], float] = time.time
    trigger: str = "api"  # who asked: api | cli | schedule | auto
    leases: Leases | None = None  # None: the warehouse's (see `lease`)

    def __post_init__(self) -> None:
        if self.leases is None:
            object.__setattr__(self, "leases", Leases.for_warehouse(self.warehouse))

    @classmethod
    def open(
        cls, spark: SparkSession, model: Model, warehouse: str | None = None, trigger: str = "api"
    ) -> JobContext:
        where = warehouse or model.warehouse
        return cls(
            spark,
            model,
            where,
            StateStore.for_warehouse(where),
            TableReader(spark),
            trigger=trigger,
        )

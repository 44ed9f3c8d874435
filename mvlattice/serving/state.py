"""What serving keeps per model between requests: the catalog reader, Spark's word on texts,
the tile engine with its kept answers, and the count of rewrites run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mvlattice.serving.catalog import ServingCatalog
from mvlattice.serving.templates import Templates

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.engine.acceptance import Acceptance
    from mvlattice.engine.tile_engine import TileEngine
    from mvlattice.model.loader import Model


@dataclass(slots=True)
class RewriteCount:
    """How many rewrites ran (the service's /metrics: one per request is the contract)."""

    value: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self) -> None:
        with self._lock:
            self.value += 1


class ServingState:
    """Made with the model; the tile engine and acceptance cache are made on first use."""

    def __init__(self, spark: Callable[[], SparkSession], model: Model, warehouse: str) -> None:
        self.model = model
        self.catalog = ServingCatalog(spark, model, warehouse)
        self.rewrite_count = RewriteCount()
        self.templates = Templates()
        self._tile_engine: TileEngine | None = None
        self._acceptance: Acceptance | None = None
        self._lock = threading.Lock()

    @property
    def tile_engine(self) -> TileEngine:
        """The in-driver engine for small tiles."""
        with self._lock:
            if self._tile_engine is None:
                from mvlattice.engine.tile_engine import TileEngine

                self._tile_engine = TileEngine(self.model.fast_path)
            return self._tile_engine

    @property
    def acceptance(self) -> Acceptance:
        """Spark's word on query texts, kept per text."""
        with self._lock:
            if self._acceptance is None:
                from mvlattice.engine.acceptance import Acceptance

                self._acceptance = Acceptance()
            return self._acceptance

    def close(self) -> None:
        """Close the tile engine (its DuckDB connections); the next use makes a new one."""
        with self._lock:
            engine, self._tile_engine = self._tile_engine, None
        if engine is not None:
            engine.close()

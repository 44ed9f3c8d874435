"""Counts persisted in the warehouse, keyed so unchanged data is never counted twice.

One JSON document per (lattice definition, counting method, identities of the lattice's source
tables: `delta.sources.source_versions`, the same ones tile freshness compares) at
`<warehouse>/_mvlattice/statistics/<lattice>/<method>-<digest>.json`; inside, counts are keyed
by column set. When a source table changes (a new Delta version or table id, a new file listing
of a Parquet/CSV table) the digest changes, so the next profile starts afresh. Sources without
a known identity (a catalog table that is not Delta, an absent or unreadable one) cannot be
keyed on data, so for them nothing is persisted (`statistics_store` → None).

Local warehouses are written with plain files (atomically, through a rename); URIs (s3a://,
abfss://, …) through Hadoop's FileSystem of the running SparkSession.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mvlattice.delta.sources import SourceVersion
from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import Counts
from mvlattice.settings import is_uri, join_location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMAT = 1


class Files(Protocol):
    def read(self, location: str) -> str | None: ...

    def write(self, location: str, text: str) -> None: ...


class LocalFiles:
    def read(self, location: str) -> str | None:
        path = Path(location)
        return path.read_text(encoding="utf-8") if path.exists() else None

    def write(self, location: str, text: str) -> None:
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)


class HadoopFiles:
    """Files through the JVM's Hadoop FileSystem (object stores, HDFS, file:)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def _jvm(self) -> Any:  # py4j's view of the JVM
        jvm = self.spark.sparkContext._jvm  # Hadoop's FS has no Python API
        if jvm is None:
            raise ValueError("reading the statistics cache needs a running SparkSession")
        return jvm

    def _fs(self, location: str) -> tuple[Any, Any]:
        path = self._jvm().org.apache.hadoop.fs.Path(location)
        conf = self.spark.sparkContext._jsc.hadoopConfiguration()
        return path.getFileSystem(conf), path

    def read(self, location: str) -> str | None:
        fs, path = self._fs(location)
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            return str(self._jvm().org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write(self, location: str, text: str) -> None:
        fs, path = self._fs(location)
        stream = fs.create(path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


class FileCountStore:
    """Counts of one lattice under one key, as a JSON document."""

    def __init__(self, location: str, key: Mapping[str, Any], files: Files) -> None:
        self.location = location
        self.key = dict(key)
        self.files = files

    def load(self) -> Counts | None:
        text = self.files.read(self.location)
        if text is None:
            return None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            return None  # a damaged cache is a cache miss, never an error
        if doc.get("format") != FORMAT or doc.get("key") != self.key:
            return None
        distinct = {frozenset(d["columns"]): float(d["count"]) for d in doc.get("distinct", ())}
        return Counts(int(doc["rows"]), distinct, bool(doc.get("exact")))

    def save(self, counts: Counts) -> None:
        doc = {
            "format": FORMAT,
            "key": self.key,
            "rows": counts.rows,
            "exact": counts.exact,
            "distinct": [
                {"columns": sorted(s), "count": v}
                for s, v in sorted(
                    counts.distinct.items(), key=lambda kv: (len(kv[0]), sorted(kv[0]))
                )
            ],
        }
        self.files.write(self.location, json.dumps(doc, indent=1))


def store_key(
    lattice: Lattice, method: str, sources: Mapping[str, SourceVersion]
) -> dict[str, Any] | None:
    """What the counts depend on; None when a source has no identity to key on."""
    if not all(s.cacheable for s in sources.values()):
        return None
    definition = [lattice.sql, [[c.label, c.expression] for c in lattice.columns]]
    ids = {name: s.table_id for name, s in sorted(sources.items()) if s.table_id is not None}
    return {
        "lattice": lattice.name,
        "definition": hashlib.sha1(json.dumps(definition).encode()).hexdigest(),
        "method": method,
        "sources": {name: s.version for name, s in sorted(sources.items())},
        "ids": ids,  # a Delta table recreated restarts its versions: only its id tells
    }


def statistics_store(
    warehouse: str,
    lattice: Lattice,
    method: str,
    sources: Mapping[str, SourceVersion],
    spark: SparkSession | None = None,
) -> FileCountStore | None:
    """The store for these counts, or None when they cannot be keyed on the sources' data."""
    key = store_key(lattice, method, sources)
    if key is None:
        return None
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    name = f"{_slug(method)}-{digest}.json"
    location = join_location(warehouse, "_mvlattice", "statistics", _slug(lattice.name), name)
    files: Files = HadoopFiles(spark) if is_uri(warehouse) and spark is not None else LocalFiles()
    return FileCountStore(location, key, files)


def _slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.-]+", "_", text)[:60]

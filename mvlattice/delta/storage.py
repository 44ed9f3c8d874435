"""File-system facts the jobs need: directory listings, small text files, moves, deletes.

Local paths (and file: URIs) are read directly with Python, which costs microseconds — the
rewriter asks for freshness on every query. Other URIs (s3a://, abfss://, …) go through
Hadoop's FileSystem in the Spark driver.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, slots=True)
class FileInfo:
    name: str  # relative to the listed directory
    size: int
    mtime: float  # epoch seconds


def local_path(location: str) -> Path | None:
    """The local path of `location`, or None when it is a remote URI."""
    if location.startswith("file:"):
        return Path(location.removeprefix("file:").replace("///", "/", 1))
    return None if "://" in location else Path(location)


def local_name(location: str) -> str | None:
    """`local_path` as a string, without making a Path (freshness asks on every query)."""
    if location.startswith("file:"):
        return location.removeprefix("file:").replace("///", "/", 1)
    return None if "://" in location else location


def child_names(spark: SparkSession | None, location: str) -> tuple[str, ...]:
    """Names of the entries directly under `location` (empty when it does not exist)."""
    path = local_path(location)
    if path is not None:
        return tuple(sorted(os.listdir(path))) if path.is_dir() else ()
    fs, jpath = _hadoop(spark, location)
    if not fs.exists(jpath):
        return ()
    return tuple(sorted(str(s.getPath().getName()) for s in fs.listStatus(jpath)))


def read_text(spark: SparkSession | None, location: str) -> str | None:
    """A small file's text, or None when it does not exist."""
    path = local_path(location)
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
    fs, jpath = _hadoop(spark, location)
    if not fs.exists(jpath):
        return None
    stream = fs.open(jpath)
    try:
        return str(_jvm(spark).org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def modified_time(spark: SparkSession | None, location: str) -> float | None:
    path = local_path(location)
    if path is not None:
        return path.stat().st_mtime if path.exists() else None
    fs, jpath = _hadoop(spark, location)
    return fs.getFileStatus(jpath).getModificationTime() / 1000.0 if fs.exists(jpath) else None


def data_files(spark: SparkSession | None, location: str) -> tuple[FileInfo, ...]:
    """Every file under `location`, recursively, except hidden ones (`.x`, `_x`)."""
    path = local_path(location)
    if path is not None:
        return _local_files(path)
    fs, jpath = _hadoop(spark, location)
    if not fs.exists(jpath):
        return ()
    found = []
    it = fs.listFiles(jpath, True)
    base = str(jpath.toUri().getPath()).rstrip("/") + "/"
    while it.hasNext():
        status = it.next()
        rel = str(status.getPath().toUri().getPath()).removeprefix(base)
        if not _hidden(rel):
            found.append(FileInfo(rel, int(status.getLen()), status.getModificationTime() / 1e3))
    return tuple(sorted(found, key=lambda f: f.name))


def files_exist(spark: SparkSession | None, location: str, names: tuple[str, ...]) -> bool:
    """Whether the files `names` (relative to `location`) all exist: locally a stat each;
    remotely only the first is asked (one request)."""
    path = local_name(location)
    if path is not None:
        return all(os.path.exists(os.path.join(path, name)) for name in names)
    fs, jpath = _hadoop(spark, location)
    return not names or bool(fs.exists(_child(spark, jpath, names[0])))


def exists(spark: SparkSession | None, location: str) -> bool:
    path = local_path(location)
    if path is not None:
        return os.path.lexists(path)
    fs, jpath = _hadoop(spark, location)
    return bool(fs.exists(jpath))


def rename(spark: SparkSession | None, source: str, target: str) -> None:
    """Move `source` to `target` (whose parent must exist): one atomic rename on a local file
    system and on HDFS or ABFS; a copy then a delete on S3 and GCS. Raises OSError when it
    did not happen."""
    path = local_path(source)
    if path is not None:
        os.rename(path, local_path(target) or target)  # never a copy across file systems
        return
    fs, jsource = _hadoop(spark, source)
    _, jtarget = _hadoop(spark, target)
    if not fs.rename(jsource, jtarget):
        raise OSError(f"could not move {source} to {target}")


def make_directory(spark: SparkSession | None, location: str) -> None:
    path = local_path(location)
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
        return
    fs, jpath = _hadoop(spark, location)
    if not fs.mkdirs(jpath):
        raise OSError(f"could not create {location}")


def remove_tree(spark: SparkSession | None, location: str) -> None:
    """Delete `location` and everything under it; raises OSError naming what could not go
    (a location already gone is no error)."""
    path = local_path(location)
    if path is not None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, onerror=_gone_is_fine)
        elif os.path.lexists(path):
            path.unlink()
        return
    fs, jpath = _hadoop(spark, location)
    if fs.exists(jpath) and not fs.delete(jpath, True):
        raise OSError(f"could not delete {location}")


def _gone_is_fine(_function: object, _path: str, info: tuple) -> None:
    """shutil.rmtree's error handler: what someone else deleted meanwhile is no failure."""
    if not issubclass(info[0], FileNotFoundError):
        raise info[1]


def _local_files(root: Path) -> tuple[FileInfo, ...]:
    if not root.exists():
        return ()
    if root.is_file():
        stat = root.stat()
        return (FileInfo(root.name, stat.st_size, stat.st_mtime),)
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        for name in files:
            full = Path(folder, name)
            rel = str(full.relative_to(root))
            if not _hidden(rel):
                stat = full.stat()
                found.append(FileInfo(rel, stat.st_size, stat.st_mtime))
    return tuple(sorted(found, key=lambda f: f.name))


def _hidden(relative: str) -> bool:
    return any(part.startswith((".", "_")) for part in relative.split("/"))


def _child(spark: SparkSession | None, parent, name: str):  # py4j
    return _jvm(spark).org.apache.hadoop.fs.Path(parent, name)


def _hadoop(spark: SparkSession | None, location: str):  # py4j objects
    if spark is None:
        raise ValueError(f"reading {location} needs a SparkSession")
    path = _jvm(spark).org.apache.hadoop.fs.Path(location)
    return path.getFileSystem(spark._jsc.hadoopConfiguration()), path


def _jvm(spark: SparkSession | None) -> Any:  # py4j's view of the JVM
    """The driver's JVM (Hadoop's FileSystem has no Python API)."""
    jvm = spark._jvm if spark is not None else None
    if jvm is None:
        raise ValueError("reading remote storage needs a running SparkSession")
    return jvm

"""A model file's Spark and warehouse settings, read before the model is loaded (loading it
may need Spark, which needs them)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mvlattice.document import read_document
from mvlattice.errors import MvlatticeError
from mvlattice.settings import resolve_warehouse


def warehouse_of(model: str | os.PathLike[str], warehouse: str | None = None) -> str:
    """The warehouse a Workspace of `model` would use, found without loading the model."""
    return resolve_warehouse(warehouse or peek_settings(Path(model)).get("warehouse"))


def peek_settings(path: Path) -> dict[str, Any]:
    """The model's spark/warehouse settings, read before validation (which may need Spark)."""
    try:
        doc = read_document(path)
    except MvlatticeError:
        return {}  # load_model reports it properly
    if not isinstance(doc, Mapping):
        return {}
    spark = doc.get("spark")
    spark = spark if isinstance(spark, Mapping) else {}
    conf = spark.get("conf")
    conf = conf if isinstance(conf, Mapping) else {}
    out: dict[str, Any] = {
        "conf": {
            str(k): str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in conf.items()
            if not isinstance(v, Mapping | list)
        }
    }
    if isinstance(spark.get("master"), str):
        out["master"] = spark["master"]
    if isinstance(doc.get("warehouse"), str):
        out["warehouse"] = doc["warehouse"]
    return out

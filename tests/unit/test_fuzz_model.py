"""Fuzzing the model loader: random documents and mutations of a valid model give only
ModelError (with located, one-line problems) — never another exception, never a hang."""

from __future__ import annotations

import contextlib
import copy
import json
import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mvlattice.errors import ModelError
from mvlattice.model.loader import load_model
from tests.unit.test_model_loader import LATTICE, SCHEMA

VALID: dict[str, Any] = yaml.safe_load(SCHEMA + LATTICE)
# MVLATTICE_FUZZ_EXAMPLES raises the count for a long run; the suite's slice is 300 per test.
FUZZ = settings(
    max_examples=int(os.environ.get("MVLATTICE_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["the_year", "s", "count", "sum", "*", "select 1", "0 3 * * *", "2h"]),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=25,
)


def _load(tmp_path: Path, doc: Any, suffix: str) -> None:
    path = tmp_path / f"model{suffix}"
    text = json.dumps(doc, default=str) if suffix == ".json" else yaml.safe_dump(doc)
    path.write_text(text)
    try:
        load_model(path, warehouse=str(tmp_path / "wh"))
    except ModelError as err:
        assert err.problems
        for problem in err.problems:
            assert "\n" not in problem.message and problem.message


@FUZZ
@given(doc=documents, suffix=st.sampled_from([".json", ".yaml"]))
def test_random_documents(tmp_path: Path, doc: Any, suffix: str) -> None:
    _load(tmp_path, doc, suffix)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


ALL_PATHS = [p for p in _paths(VALID) if p]


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(ALL_PATHS), st.sampled_from(["drop", "set"]), documents),
        min_size=1,
        max_size=3,
    )
)
def test_mutations_of_a_valid_model(tmp_path: Path, edits: list) -> None:
    doc = copy.deepcopy(VALID)
    for path, action, value in edits:
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if action == "drop":
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    _load(tmp_path, doc, ".yaml")


@FUZZ
@given(text=st.text(max_size=200))
def test_random_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(text)
    with contextlib.suppress(ModelError):
        load_model(path, warehouse=str(tmp_path))

"""Issue 36's polish: `mvlattice --version` and counts that agree with their nouns."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from mvlattice.output import plural


def test_version_prints_one_line_with_what_it_runs_on() -> None:
    done = subprocess.run([sys.executable, "-m", "mvlattice", "--version"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"mvlattice {version('mvlattice')} (")
    assert f"pyspark {version('pyspark')}" in line and f"sqlglot {version('sqlglot')}" in line


@pytest.mark.parametrize(
    "count, words, said",
    [
        (1, ("query", "queries"), "1 query"),
        (2, ("query", "queries"), "2 queries"),
        (0, ("query", "queries"), "0 queries"),
        (1, ("statement",), "1 statement"),
        (1_234, ("statement",), "1,234 statements"),
    ],
)
def test_plural_agrees_with_its_count(count: int, words: tuple[str, ...], said: str) -> None:
    assert plural(count, *words) == said

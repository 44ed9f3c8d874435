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


@pytest.mark.parametrize(
    ("host", "port", "https", "url"),
    [
        ("127.0.0.1", 8765, False, "http://127.0.0.1:8765/ui/"),
        ("0.0.0.0", 80, False, "http://127.0.0.1:80/ui/"),
        ("::", 8443, True, "https://[::1]:8443/ui/"),
        ("fe80::1", 9000, False, "http://[fe80::1]:9000/ui/"),
        ("mvl.example.org", 443, True, "https://mvl.example.org:443/ui/"),
    ],
)
def test_serve_names_the_status_pages_a_browser_can_open(host, port, https, url) -> None:
    from mvlattice.http.server import status_url

    assert status_url(host, port, https) == url


def test_a_running_schedule_stamps_its_lines_and_names_the_next_run(capsys) -> None:
    import datetime as dt
    import re

    from mvlattice.cli import cmd_jobs

    cmd_jobs._stamped("refreshed tile t")
    line = capsys.readouterr().out
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4} refreshed tile t\n", line), line
    upcoming = dt.datetime.fromisoformat(cmd_jobs._next_run("17 3 * * *"))
    now = dt.datetime.now().astimezone()
    assert (upcoming.hour, upcoming.minute) == (3, 17)
    assert now < upcoming <= now + dt.timedelta(days=1)


def test_every_command_has_examples_that_its_own_parser_accepts(capsys) -> None:
    """Each command's --help ends with examples, and each example parses as written."""
    import argparse
    import shlex

    from mvlattice.cli.examples import EXAMPLES
    from mvlattice.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(EXAMPLES)
    for name, command in sub.choices.items():
        assert command.format_help().rstrip().endswith(EXAMPLES[name][-1])
        for line in EXAMPLES[name]:
            words = shlex.split(line.split("#")[0].split(">")[0])
            assert words[0] == "mvlattice" and words[1] == name
            args = parser.parse_args(words[1:])  # SystemExit(2) if an example is wrong
            assert args.handler is not None


def test_a_dry_run_keeps_its_table_narrow_and_says_why_under_it() -> None:
    from mvlattice.cli.cmd_jobs import WHY_WIDTH, _plan_table
    from mvlattice.jobs.batch import BatchResult, BuildResult
    from mvlattice.jobs.cost import Estimate
    from mvlattice.jobs.status import BuildStatus, RefreshPath

    why = "the fact table changed by appends only; " * 8 + "incremental reads fewer rows"
    estimate = Estimate(incremental_rows=1_200, full_rows=86_837, full_from="star",
                        choice=RefreshPath.INCREMENTAL, why=why)  # fmt: skip
    result = BatchResult((
        BuildResult("mvlattice.star_the_year_quarter", "tile", BuildStatus.PLANNED,
                    RefreshPath.INCREMENTAL, why, estimate=estimate),
        BuildResult("mvlattice.star_the_month", "tile", BuildStatus.SKIPPED, RefreshPath.NONE,
                    ""),
    ))  # fmt: skip
    lines = _plan_table(result).splitlines()
    assert lines[0].split()[:3] == ["#", "name", "path"]
    assert "1,200" in lines[2] and "86,837" in lines[2] and "incremental" in lines[2]
    assert "fresh" in lines[3]
    assert lines[6] == "why:" and lines[7].startswith("1. the fact table changed")
    assert all(len(line) <= WHY_WIDTH for line in lines[7:])
    assert not any("appends" in line for line in lines[:6])  # the table holds no reason
    assert " ".join(line.strip() for line in lines[7:]) == f"1. {why.strip()}"


def test_profile_text_shows_single_columns_and_counts_the_rest() -> None:
    from mvlattice.cli.cmd_profile import profile_lines
    from mvlattice.statistics.discovery import FunctionalDependency

    doc = {
        "distinct": [
            {"columns": ["a"], "count": 3, "exact": True},
            {"columns": ["b"], "count": 40, "exact": False},
            {"columns": ["a", "b"], "count": 41, "exact": False},
            {"columns": ["a", "c"], "count": 9, "exact": False},
        ],
        "unique_keys": [["id"]],
    }
    deps = [FunctionalDependency(("a",), "c", True), FunctionalDependency(("b",), "a", False)]
    short = profile_lines(doc, deps, show_all=False)
    text = "\n".join(short)
    assert "a, b" not in text and "(and 2 sets of several columns: --all or --json)" in text
    assert "functional dependencies (1 exact, 1 approximate):" in text
    assert "(approximate)" not in text and "(1 approximate one, from sketches: --all)" in text
    every = "\n".join(profile_lines(doc, deps, show_all=True))
    assert "a, b" in every and "(approximate)" in every and "--all" not in every

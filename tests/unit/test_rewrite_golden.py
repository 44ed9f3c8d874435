"""Golden files of the rewriter (tests/golden/rewrite/*.txt): query, views, expected SQL or
NO REWRITE: <reason>. `--update-golden` regenerates them; every positive case is also run on
Spark by tests/integration/test_rewrite_golden.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.rewrite import runner

FILES = runner.golden_files()
CASES = [(golden, case) for golden in FILES for case in golden.cases]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return runner.hr_model(tmp_path_factory.mktemp("golden"))


@pytest.fixture(scope="module", autouse=True)
def update_golden(request: pytest.FixtureRequest, model) -> None:
    if request.config.getoption("--update-golden"):
        for golden in FILES:
            runner.update(golden, model)


@pytest.mark.parametrize(("golden", "case"), CASES, ids=[c.id for _, c in CASES])
def test_golden_case(golden: runner.GoldenFile, case: runner.Case, model, request) -> None:
    if request.config.getoption("--update-golden"):
        case = next(c for c in runner.load(golden.path).cases if c.title == case.title)
    assert runner.run(case, golden, model) == case.expected


def test_at_least_as_many_negative_cases_as_positive() -> None:
    positive = sum(case.positive for _, case in CASES)
    assert len(CASES) - positive >= positive >= 40


def test_case_titles_are_unique_per_file() -> None:
    for golden in FILES:
        titles = [c.title for c in golden.cases]
        assert len(titles) == len(set(titles)), golden.path


def test_every_view_a_case_names_is_declared() -> None:
    for golden, case in CASES:
        assert set(case.views) <= set(golden.views), case.id


def test_the_file_format_round_trips(tmp_path: Path) -> None:
    for golden in FILES:
        copy = tmp_path / golden.path.name
        copy.write_text(runner.render(golden, golden.cases))
        assert runner.load(copy).cases == golden.cases


def test_a_view_name_means_the_same_view_in_every_file() -> None:
    """The integration test creates each view once for all files."""
    seen: dict[str, str] = {}
    for golden in FILES:
        for name, sql in golden.views.items():
            assert seen.setdefault(name, sql) == sql, f"{name} differs in {golden.path.name}"

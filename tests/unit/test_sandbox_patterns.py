"""Per-row work a literal sets (`sandbox.patterns`): regular expressions whose backtracking
could run without end inside one row, LIKE wildcards, and texts Spark parses recursively."""

from __future__ import annotations

import pytest

from mvlattice.sandbox.patterns import like_problem, nesting_problem, regex_problem

SAFE = [
    "^abc$", "a.*b", "[0-9]+", "\\d{4}-\\d{2}-\\d{2}", "^(foo|bar)$", "colou?r", "(ab)?c",
    "[a-z]{2,5}", "x{3}", "\\Q(.*a){12}\\E", "[(]+", "(?i)brand", "(?:ab)+", "\\p{L}+",
    "a{,", "price: \\$\\d+",
]  # fmt: skip
UNSAFE = [
    ("(.*a){12}$", "quantified group"),
    ("(a+)+b", "quantified group"),
    ("(a|aa)*c", "quantified group"),
    ("(x+x+)+y", "quantified group"),
    ("((ab)*c)*", "quantified group"),
    ("(?:a*)*", "quantified group"),
    ("(a|b){2,}", "quantified group"),
    (".*a.*b.*c", "unbounded"),
    ("a*a*a*a*b", "unbounded"),
    ("(a)\\1", "back-reference"),
    ("(?<n>a)\\k<n>", "back-reference"),
    ("a(?=b)", "look-around"),
    ("(?<!a)b", "look-around"),
    ("(abc", "unbalanced"),
    ("abc)", "unbalanced"),
    ("a" * 1001, "longer than"),
]


@pytest.mark.parametrize("pattern", SAFE)
def test_patterns_that_match_in_low_polynomial_time_pass(pattern: str) -> None:
    assert regex_problem(pattern) is None


@pytest.mark.parametrize("pattern, says", UNSAFE, ids=[p[:20] for p, _ in UNSAFE])
def test_patterns_that_can_backtrack_without_end_are_named(pattern: str, says: str) -> None:
    why = regex_problem(pattern)
    assert why is not None and says in why, why


def test_like_counts_runs_of_wildcards_and_skips_escaped_ones() -> None:
    assert like_problem("%a%b%c") is None  # three runs: LikeSimplification or `.*` twice
    assert like_problem("%%a%%") is None
    assert like_problem("a\\%b\\%c\\%d%") is None
    assert "wildcards" in (like_problem("%a%b%c%d") or "")
    assert "longer" in (like_problem("x" * 1001) or "")


def test_type_strings_and_json_are_bounded_in_depth_and_size() -> None:
    assert nesting_problem("array<struct<a: int, b: map<string, array<int>>>>") is None
    assert nesting_problem('{"a": [1, 2, {"b": "<<<<<"}]}') is None  # quoted text is text
    assert "nested 600 " in (nesting_problem("array<" * 600 + "int" + ">" * 600) or "")
    assert "longer" in (nesting_problem("array<" * 6000 + "int" + ">" * 6000) or "")
    assert "nested 40" in (nesting_problem("[" * 40 + "]" * 40) or "")
    assert "longer" in (nesting_problem("a" * 10_001) or "")

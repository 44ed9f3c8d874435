#!/usr/bin/env bash
# The whole test suite (unit tests without Spark, integration tests on one local SparkSession).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh --test
# The package graph (pyproject.toml: [tool.importlinter]), the linter and the type checker run
# first: they take seconds.
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
.venv/bin/ruff check mvlattice tests bench
.venv/bin/ruff format --check mvlattice tests bench
.venv/bin/mypy mvlattice
# The 15 slowest tests are printed after the run: where the suite's time goes.
exec .venv/bin/python -m pytest -q --durations=15 "$@"

#!/usr/bin/env bash
# The whole test suite (unit tests without Spark, integration tests on one local SparkSession).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# The package graph (pyproject.toml: [tool.importlinter]), the linter and the type checker run
# first: they take seconds.
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
.venv/bin/ruff check mvlattice tests bench
.venv/bin/mypy mvlattice
exec .venv/bin/python -m pytest -q "$@"

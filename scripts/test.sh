#!/usr/bin/env bash
# The whole test suite (unit tests without Spark, integration tests on one local SparkSession).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest -q "$@"

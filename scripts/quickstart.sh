#!/usr/bin/env bash
# The main job end to end on the embedded default (local Spark, ./warehouse).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/mvlattice demo "$@"

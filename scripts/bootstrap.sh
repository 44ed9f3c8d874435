#!/usr/bin/env bash
# Idempotent set-up: a virtualenv in .venv with mvlattice and its test tools, Delta's jars and the
# FoodMart data artifact (both fetched once with Maven). Quick when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "mvlattice needs Python >= 3.11 (found $("$PYTHON" --version 2>&1)); set PYTHON=…" >&2
    exit 1
fi
command -v java >/dev/null || { echo "mvlattice needs Java 17 (java not on PATH)" >&2; exit 1; }

# Headless Chromium for the status page's browser tests: Debian's packages, never a browser that
# a test tool downloads. Installed once; apt needs root, so sudo when we are not root.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
        chromium-driver >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=".venv/.mvlattice-installed"
want="$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)"  # how, too
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    # a standard editable install: `import mvlattice` (and `mvlattice`) work from any directory
    .venv/bin/python -m pip install --quiet -e ".[test]"
    echo "$want" > "$stamp"
fi
.venv/bin/mvlattice setup >/dev/null

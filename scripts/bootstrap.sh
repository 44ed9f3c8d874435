#!/usr/bin/env bash
# Idempotent set-up: a virtualenv in .venv with mvlattice, Delta's jars and the FoodMart data
# artifact (both fetched once with Maven). With --test, also the test tools and headless
# Chromium for the status page's browser tests (the quick start needs neither). Quick when
# nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
case "${1:-}" in
    "") ;;
    --test) extras="[test]" ;;
    *) echo "usage: bash scripts/bootstrap.sh [--test]" >&2; exit 2 ;;
esac

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "mvlattice needs Python >= 3.11 (found $("$PYTHON" --version 2>&1)); set PYTHON=…" >&2
    exit 1
fi
command -v java >/dev/null || { echo "mvlattice needs Java 17 (java not on PATH)" >&2; exit 1; }

# Headless Chromium for the browser tests: Debian's packages, never a browser that a test tool
# downloads. Installed once; apt needs root, so sudo when we are not root.
if [ -n "$extras" ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
    echo "bootstrap: installing Debian's chromium for the browser tests …" >&2
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
        chromium-driver >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    echo "bootstrap: creating .venv …" >&2
    "$PYTHON" -m venv .venv
fi
# The stamp names what is installed: the test set includes the runtime one, not the reverse.
stamp=".venv/.mvlattice-installed"
want="$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)"  # how, too
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$have" != "$want test" ] && [ "$have" != "$want${extras:+ test}" ]; then
    echo "bootstrap: installing mvlattice${extras} and its dependencies into .venv (a minute or two the first time) …" >&2
    .venv/bin/python -m pip install --quiet --upgrade pip
    # a standard editable install: `import mvlattice` (and `mvlattice`) work from any directory;
    # setuptools' warning about editable installs (folders shadowing the package) is not news
    PYTHONWARNINGS=ignore .venv/bin/python -m pip install --quiet -e ".${extras}"
    echo "$want${extras:+ test}" > "$stamp"
fi
.venv/bin/mvlattice setup >/dev/null

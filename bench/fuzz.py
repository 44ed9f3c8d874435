"""Long fuzzing runs of the model loader and the rewriter (the suite runs a few hundred
inputs of each; this runs as many as asked) and the count of inputs tried.

    python bench/fuzz.py [--examples N] [--only model|rewriter]

--examples is per fuzz test (three for the loader, three for the rewriter). Any failure is
printed with Hypothesis's minimal failing input; the exit code is 1 when one was found.
"""

# bench/ holds profile.py, which would shadow the standard library's `profile` if this
# script's folder stayed first on sys.path; the repository root goes there instead.
import sys
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import logging
import os
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=3000, help="inputs per fuzz test")
    parser.add_argument("--only", choices=["model", "rewriter"])
    args = parser.parse_args(argv)
    # Read by the test modules when they are imported: set before importing them.
    os.environ["MVLATTICE_FUZZ_EXAMPLES"] = str(args.examples)
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # token soup warns on every input
    counts: Counter[str] = Counter()
    tests = _tests(args.only, counts)
    failures = 0
    for name, run in tests:
        start = time.perf_counter()
        before = sum(counts.values())
        try:
            run()
            status = "ok"
        except Exception:  # noqa: BLE001 - report every failing test, then go on
            failures += 1
            status = "FAILED\n" + traceback.format_exc(limit=3)
        tried = sum(counts.values()) - before
        print(f"{name:<42} {tried:>7} inputs {time.perf_counter() - start:7.1f}s  {status}",
              flush=True)  # fmt: skip
    print(f"inputs tried: {sum(counts.values())} (model loader {counts['model']}, "
          f"rewriter {counts['rewriter']}); failing tests: {failures}")  # fmt: skip
    return 1 if failures else 0


def _counting(counts: Counter[str], key: str, function: Callable[..., Any]) -> Callable:
    def counted(*a: Any, **k: Any) -> Any:
        counts[key] += 1
        return function(*a, **k)

    return counted


def _tests(only: str | None, counts: Counter[str]) -> list[tuple[str, Callable[[], None]]]:
    found: list[tuple[str, Callable[[], None]]] = []
    if only in (None, "model"):
        from tests.unit import test_fuzz_model as model

        model.load_model = _counting(counts, "model", model.load_model)
        folder = Path(tempfile.mkdtemp(prefix="mvlattice-fuzz-"))
        for test in (model.test_random_documents, model.test_mutations_of_a_valid_model,
                     model.test_random_text):  # fmt: skip
            found.append((f"model: {test.__name__}", lambda t=test: t(tmp_path=folder)))
    if only in (None, "rewriter"):
        from tests.fuzz import sql
        from tests.unit import test_fuzz_rewriter as rewriter

        sql.rewrite = _counting(counts, "rewriter", sql.rewrite)
        for test in (rewriter.test_mutated_queries, rewriter.test_mutated_queries_on_tiles,
                     rewriter.test_random_text):  # fmt: skip
            found.append((f"rewriter: {test.__name__}", test))
    return found


if __name__ == "__main__":
    sys.exit(main())

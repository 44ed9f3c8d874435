"""A newcomer's first hour, scripted (issue 36): every README command on FoodMart in a fresh
warehouse, then the typical mistakes. Each command runs as a user runs it (`mvlattice …` in a
subprocess); its stderr is read line by line as it arrives. Per step it prints the wall time,
the exit code, the progress lines and the longest silence (from the start, between two lines
or before the end), and checks:

- no step prints a traceback (stdout or stderr);
- every step that runs longer than 5 s says something on stderr while it runs;
- a mistake in a name or a path is one line (`mvlattice: error: …`), exit code 2, within 5 s;
- a mistake in SQL is one line and a non-zero exit code (Spark must start to judge it).

    python bench/newcomer.py [--keep] [--json] [--only NAME ...]

Exits 1 when a check fails. Needs `mvlattice setup` to have run once (or network for it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "models" / "foodmart.yaml")
MVLATTICE = [sys.executable, "-m", "mvlattice.cli.main"]
QUICK = 5.0  # seconds: what a name or path mistake may take, and a step may stay silent before
MONTHS = (
    "select the_year, the_month, sum(unit_sales) as units from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) group by the_year, the_month"
)


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]
    kind: str = "step"  # step | mistake (a name or path: quick) | sql (a query Spark refuses)
    python: bool = False  # argv runs under Python, not `mvlattice`


@dataclass
class Outcome:
    name: str
    kind: str
    exit_code: int
    seconds: float
    progress_lines: int
    longest_silence: float
    first_line_after: float | None
    problems: list[str] = field(default_factory=list)
    last_stderr: str = ""


def steps(work: Path, queries: str) -> list[Step]:
    wh = ("--warehouse", str(work / "warehouse"))
    return [
        Step("version", ("--version",)),
        Step("setup", ("setup",)),
        Step("datasets foodmart", ("datasets", "foodmart", *wh)),
        Step("validate --data", ("validate", MODEL, "--data", *wh)),
        Step("sql", ("sql", MODEL, "select count(*) as n from foodmart.sales_fact_1997", *wh)),
        Step("profile", ("profile", MODEL, *wh)),
        Step("plan", ("plan", MODEL, *wh)),
        Step("materialize", ("materialize", MODEL, *wh)),
        Step("README's Python API", (str(readme_python(work)),), python=True),
        Step("tiles", ("tiles", MODEL, *wh)),
        Step("rewrite --explain", ("rewrite", MODEL, MONTHS, "--explain", *wh)),
        Step("query", ("query", MODEL, MONTHS, *wh)),
        Step("refresh --dry-run", ("refresh", MODEL, "--dry-run", *wh)),
        Step("refresh", ("refresh", MODEL, *wh)),
        Step("log", ("log", MODEL, *wh)),
        Step("advise", ("advise", MODEL, *wh)),
        Step("gc --dry-run", ("gc", MODEL, "--dry-run", *wh)),
        Step(
            "suggest",
            ("suggest", "--log", queries, "--model", MODEL, "-o", str(work / "suggested.yaml")),
        ),  # fmt: skip
        Step("validate the suggestion", ("validate", str(work / "suggested.yaml"))),
        Step("no such model", ("validate", str(work / "nope.yaml")), "mistake"),
        Step(
            "wrong --warehouse", ("tiles", MODEL, "--warehouse", str(work / "nowhere")), "mistake"
        ),  # fmt: skip
        Step("misspelt --lattice", ("plan", MODEL, "--lattice", "strar", *wh), "mistake"),
        Step(
            "misspelt --tile", ("refresh", MODEL, "--tile", "mvlattice.star__nope", *wh), "mistake"
        ),  # fmt: skip
        Step("misspelt command", ("materialise", MODEL, *wh), "mistake"),
        Step(
            "unknown column",
            ("query", MODEL, "select the_mnth from foodmart.time_by_day", *wh),
            "sql",
        ),  # fmt: skip
    ]


def run(step: Step, env: dict[str, str]) -> Outcome:
    start = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, *step.argv] if step.python else [*MVLATTICE, *step.argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    err_lines: list[tuple[float, str]] = []
    out_chunks: list[str] = []
    reader = threading.Thread(target=lambda: out_chunks.append(process.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    for line in process.stderr:  # type: ignore[union-attr]
        err_lines.append((time.monotonic() - start, line.rstrip("\n")))
    process.wait()
    reader.join()
    seconds = time.monotonic() - start
    stamps = [0.0] + [t for t, _ in err_lines] + [seconds]
    silence = max(b - a for a, b in zip(stamps, stamps[1:], strict=False))
    outcome = Outcome(
        step.name, step.kind, process.returncode, seconds, len(err_lines), silence,
        err_lines[0][0] if err_lines else None, last_stderr=err_lines[-1][1] if err_lines else "",
    )  # fmt: skip
    outcome.problems = check(step, outcome, "".join(out_chunks), [t for _, t in err_lines])
    return outcome


def check(step: Step, outcome: Outcome, out: str, err: list[str]) -> list[str]:
    problems = []
    if "Traceback (most recent call last)" in out + "\n".join(err):
        problems.append("printed a traceback")
    if step.kind == "step":
        if outcome.exit_code != 0:
            problems.append(f"exit code {outcome.exit_code}: {outcome.last_stderr}")
        if outcome.seconds > QUICK and outcome.first_line_after is None:
            problems.append(f"silent for all of its {outcome.seconds:.0f} s")
        return problems
    errors = [line for line in err if re.match(r"^mvlattice[\w -]*: error: ", line)]
    if outcome.exit_code == 0:
        problems.append("exit code 0 for a mistake")
    if len(errors) != 1:
        problems.append(f"{len(errors)} error lines, not one")
    if step.kind == "mistake":
        if outcome.exit_code != 2:
            problems.append(f"exit code {outcome.exit_code}, not 2")
        if outcome.seconds > QUICK:
            problems.append(f"took {outcome.seconds:.1f} s, over {QUICK:.0f} s")
    return problems


def readme_python(work: Path) -> Path:
    """The README's Python API block as a script, run as written (the warehouse comes from
    $MVLATTICE_WAREHOUSE)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    script = work / "python_api.py"
    script.write_text(block)
    return script


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", nargs="*", help="only these steps (by name)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="newcomer-"))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MVLATTICE_WAREHOUSE": str(work / "warehouse")}
    queries = _query_set(env)
    outcomes = []
    for step in steps(work, queries):
        if args.only and step.name not in args.only:
            continue
        outcomes.append(run(step, env))
        _print(outcomes[-1], args.json)
    failed = [o for o in outcomes if o.problems]
    total = sum(o.seconds for o in outcomes)
    kept = f"; work kept in {work}" if args.keep else ""
    print(f"newcomer: {len(outcomes)} steps in {total:.0f} s; {len(failed)} with problems{kept}")
    if args.json:
        print(json.dumps({"steps": [asdict(o) for o in outcomes], "failed": len(failed)}))
    return 1 if failed else 0


def _query_set(env: dict[str, str]) -> str:
    """Where FoodMart's query set is (`datasets foodmart-queries` prints it)."""
    done = subprocess.run([*MVLATTICE, "datasets", "foodmart-queries"], env=env, text=True,
                          capture_output=True, check=True)  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def _print(o: Outcome, as_json: bool) -> None:
    if as_json:
        return
    first = "-" if o.first_line_after is None else f"{o.first_line_after:.1f}"
    verdict = "ok" if not o.problems else "PROBLEM: " + "; ".join(o.problems)
    print(f"{o.name:26} {o.kind:8} exit {o.exit_code:3}  {o.seconds:7.1f} s  "
          f"{o.progress_lines:4} lines  first {first:>6} s  silent ≤ {o.longest_silence:6.1f} s"
          f"  {verdict}", flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

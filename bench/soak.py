"""Memory of a long-running `mvlattice serve` under load (issue 31's soak): 32 clients send
new texts for --minutes (tile-answerable queries, and a --spark-share of queries only Spark
answers), while the server's memory is sampled after every window of --window seconds: the
Python process's resident set (where the tile engine, kept answers and caches live), the whole
process tree's (with the Spark driver's JVM), and the JVM's heap in use after a full GC
(`jcmd <pid> GC.class_histogram`: the live objects' bytes, counted at the safepoint of a full
collection), so that garbage waiting for collection is not counted as growth. Goal: every
measure at the end within 10 % of its value at --baseline minutes (5). Exits 1 when a measure
grew more, or when any request failed.

    python bench/soak.py [--minutes 30] [--baseline 5] [--window 60] [--clients 32]
                         [--spark-share 0.25] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# `python bench/soak.py` makes bench/ sys.path[0], where bench/profile.py would shadow the
# stdlib `profile` that pyspark imports: the repository root goes first, bench/ after the stdlib.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])
sys.path.append(str(Path(__file__).resolve().parent))

from serve_load import (  # noqa: E402 - bench/ is not a package
    _status_kb,
    _tree,
    engine_load,
    engine_warm_up,
    say,
    shop_picker,
    shop_warm_up_texts,
    start_server,
)

GROWTH_LIMIT = 0.10  # the bound: within 10 % of the value at the baseline


def jvm_pid(server_pid: int) -> int | None:
    """The Spark driver's JVM: the server's descendant whose command is java."""
    for pid in _tree(server_pid)[1:]:
        try:
            exe = Path(f"/proc/{pid}/exe").resolve().name
        except OSError:
            continue
        if exe == "java":
            return pid
    return None


def heap_after_gc_mb(pid: int | None) -> float | None:
    """The JVM's live objects in MB, counted by a full collection (None when jcmd cannot say).
    Not `GC.run` then `GC.heap_info`: under load, what the JVM allocates between those two
    calls is counted too, and a flat heap read as 270 to 510 MB from one minute to the next."""
    if pid is None:
        return None
    try:
        histogram = subprocess.run(["jcmd", str(pid), "GC.class_histogram"], capture_output=True,
                                   text=True, timeout=120, check=True).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"^Total\s+\d+\s+(\d+)\s*$", histogram, re.MULTILINE)
    return round(int(found.group(1)) / 1024 / 1024, 1) if found else None


def sample(server_pid: int, java: int | None, minute: float, summary: dict) -> dict:
    tree_kb = sum(_status_kb(p, "VmRSS") or 0 for p in _tree(server_pid))
    return {
        "minute": round(minute, 1),
        "python_rss_mb": round((_status_kb(server_pid, "VmRSS") or 0) / 1024, 1),
        "tree_rss_mb": round(tree_kb / 1024, 1),
        "jvm_heap_after_gc_mb": heap_after_gc_mb(java),
        "requests": summary["requests"],
        "throughput_per_s": summary["throughput_per_s"],
        "errors": summary["all"]["errors"],
        "error_kinds": summary["all"]["error_kinds"],
        "tile_p99_ms": summary["tile"]["p99_ms"],
    }


def growth(samples: list[dict], baseline_minute: float) -> dict:
    """Per measure: its value at the baseline, at the end, and the relative change."""
    base = next(s for s in samples if s["minute"] >= baseline_minute)
    last = samples[-1]
    out = {}
    for key in ("python_rss_mb", "tree_rss_mb", "jvm_heap_after_gc_mb"):
        if base[key] and last[key] is not None:
            out[key] = {"at_baseline": base[key], "at_end": last[key],
                        "change": round(last[key] / base[key] - 1, 3)}  # fmt: skip
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--baseline", type=float, default=5.0, help="minute compared against")
    parser.add_argument("--window", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--spark-share", type=float, default=0.25)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.baseline >= args.minutes:
        parser.error("--baseline must come before the end (--minutes)")
    root = Path(tempfile.mkdtemp(prefix="soak_"))
    server = start_server(root, "shop")
    from tests.integration.test_service_support import TOKEN

    try:
        pid = server.process.pid
        java = jvm_pid(pid)
        say("warming up …")
        asyncio.run(engine_warm_up(server.url, TOKEN, shop_warm_up_texts()))
        samples = []
        started = time.monotonic()
        window = 0
        while (time.monotonic() - started) / 60 < args.minutes:
            window += 1

            def picker(seed: int, w: int = window):  # new texts in every window
                return shop_picker(seed * 1000 + w, args.spark_share, unique=True)

            _, summary = asyncio.run(engine_load(server.url, TOKEN, args.clients, args.window,
                                                 picker, None))  # fmt: skip
            point = sample(pid, java, (time.monotonic() - started) / 60, summary)
            samples.append(point)
            say(json.dumps(point))
    finally:
        server.stop()
    result = {"samples": samples, "growth": growth(samples, args.baseline)}
    failed = [k for k, g in result["growth"].items() if g["change"] > GROWTH_LIMIT]
    failed += ["requests failed"] if any(s["errors"] for s in samples) else []
    result["failed"] = failed
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, g in result["growth"].items():
            print(f"{key:22} {g['at_baseline']:>9} MB at {args.baseline:g} min -> "
                  f"{g['at_end']:>9} MB at the end ({g['change']:+.1%})")  # fmt: skip
        print("FAILED: " + ", ".join(failed) if failed else "OK: within 10 %, no errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Load on the HTTP service: 32 concurrent clients sending a mix of rewrite requests (no
execution) for 60 s, against `mvlattice serve` on loopback — throughput, p50/p99 latency and
errors, next to one client alone (the same mix, measured first in the same run), and the
server's own rewrite-time histogram from /metrics.

Without --url the bench is self-contained: it writes a small shop star (Delta) to a temporary
warehouse, starts `mvlattice serve` on a free loopback port, builds the lattice's tiles through
`POST /v1/lattices/star/materialize`, runs the load and stops the server. With --url it loads an
already-running service (loopback only; --token-file if the service wants one) using the shop
model's queries, so point it at a server started by an earlier run with --keep.

Each client holds one keep-alive connection and sends its next request when the answer to the
previous one has arrived (closed loop), so at 32 clients latency includes queueing (Little's
law: mean latency = clients / throughput). As a baseline in the same run, the same load goes to
a server whose backend answers at once without rewriting (the HTTP layer alone: auth, body
limit, SQL gate, JSON, metrics, query-log hand-off); --no-baseline skips it.

    python bench/serve_load.py [--clients 32] [--seconds 60] [--solo-seconds 10] [--json]
                               [--url http://127.0.0.1:PORT] [--token-file F] [--keep]
                               [--no-baseline]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

STAR = "from shop.sales s join shop.product p on s.product_id = p.product_id"


def mix(rng: random.Random) -> tuple[str, bool]:
    """One request of the mix: (sql, explain). Literals vary so no two are alike."""
    year, units, cat = rng.choice((2020, 2021)), rng.randint(0, 6), f"c{rng.randint(0, 2)}"
    queries = [
        f"select p.category, sum(s.units) as units, count(*) as n {STAR} group by p.category",
        f"select p.category, sum(s.units) {STAR} where s.year = {year} group by p.category",
        f"select s.year, count(*) {STAR} where p.category = '{cat}' group by s.year",
        f"select p.category, s.year, sum(s.units) {STAR} group by p.category, s.year "
        f"order by 3 desc limit {rng.randint(1, 5)}",
        f"select count(*) {STAR} where s.year in ({year}, {year + 1})",
        f"select p.brand, sum(s.units) {STAR} group by p.brand",  # no tile: not rewritten
        f"select sale_id, units from shop.sales where units > {units}",  # no aggregate
        f"with c as (select p.category as k, sum(s.units) as u {STAR} group by p.category) "
        f"select k from c where u > {units * 10}",
    ]
    return rng.choice(queries), rng.random() < 0.25


class Connection:
    """A minimal HTTP/1.1 keep-alive client: enough for JSON POSTs to our own server."""

    def __init__(self, host: str, port: int, token: str | None) -> None:
        self.host, self.port, self.token = host, port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        auth = f"Authorization: Bearer {self.token}\r\n" if self.token else ""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{auth}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "connection" and "close" in value.lower():
                close = True
        payload = await self.reader.readexactly(length)
        if close:
            await self.close()
        return int(status_line.split()[1]), payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def client(
    url: str, token: str | None, seed: int, stop_at: float, timeout: float
) -> tuple[list[float], list[str], int]:
    """(latencies in ms, error descriptions, rewritten answers) of one closed-loop client."""
    parts = urllib.parse.urlsplit(url)
    conn = Connection(parts.hostname or "127.0.0.1", parts.port or 80, token)
    rng = random.Random(seed)
    latencies, errors, rewritten = [], [], 0
    while time.perf_counter() < stop_at:
        sql, explain = mix(rng)
        body = json.dumps({"sql": sql, "explain": explain}).encode()
        started = time.perf_counter()
        try:
            status, payload = await asyncio.wait_for(conn.post("/v1/rewrite", body), timeout)
        except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
            errors.append(type(exc).__name__)
            await conn.close()
            await asyncio.sleep(0.1)  # no busy loop on a refused connection
            continue
        latencies.append((time.perf_counter() - started) * 1000.0)
        if status != 200:
            errors.append(f"{status} {payload[:200].decode(errors='replace')}")
        elif json.loads(payload)["rewritten"]:
            rewritten += 1
    await conn.close()
    return latencies, errors, rewritten


async def load(url: str, token: str | None, clients: int, seconds: float) -> dict:
    stop_at = time.perf_counter() + seconds
    started = time.perf_counter()
    runs = await asyncio.gather(
        *(client(url, token, 1000 + i, stop_at, 30.0) for i in range(clients))
    )
    elapsed = time.perf_counter() - started
    latencies = sorted(x for run in runs for x in run[0])
    errors = [e for run in runs for e in run[1]]
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": len(latencies),
        "throughput_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50), 2),
        "p90_ms": round(percentile(latencies, 90), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(latencies[-1], 2) if latencies else None,
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:5],
        "rewritten_share": round(sum(run[2] for run in runs) / max(1, len(latencies)), 3),
    }


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    rank = max(0, min(len(values) - 1, round(p / 100 * len(values) + 0.5) - 1))
    return values[rank]


def server_rewrite_times(url: str, token: str | None) -> dict:
    """The server's rewrite-time histogram: how much of the latency is rewriting."""
    import urllib.request

    request = urllib.request.Request(url + "/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    text = urllib.request.urlopen(request, timeout=60).read().decode()
    buckets = {
        float(m.group(1)) if m.group(1) != "+Inf" else float("inf"): float(m.group(2))
        for m in re.finditer(
            r'mvlattice_rewrite_latency_seconds_bucket\{le="([^"]+)"\} (\S+)', text
        )
    }
    count = buckets.get(float("inf"), 0.0)
    total = float(re.search(r"^mvlattice_rewrite_latency_seconds_sum (\S+)$", text, re.M).group(1))
    under = {f"<= {int(b * 1000)} ms": round(n / count, 4) for b, n in buckets.items()
             if b in (0.005, 0.01, 0.025, 0.05)} if count else {}  # fmt: skip
    pending = re.search(r"^mvlattice_query_log_pending (\S+)$", text, re.M)
    dropped = re.search(r"^mvlattice_query_log_dropped_total (\S+)$", text, re.M)
    return {
        "rewrites": int(count),
        "mean_ms": round(1000 * total / count, 2) if count else None,
        "share": under,
        "query_log_pending": pending and float(pending.group(1)),
        "query_log_dropped": dropped and float(dropped.group(1)),
    }


# -- a self-contained server ---------------------------------------------------------------------
def start_server(root: Path):  # noqa: ANN201 - a tests.integration Server
    from mvlattice.spark import build_session, spark_conf
    from tests.integration.test_service_support import make_shop, start, wait_for_job

    say("writing the shop star (Delta) with a short-lived Spark session …")
    conf = spark_conf("local[1]", str(root), ({"spark.sql.shuffle.partitions": "1"},))
    spark = build_session("local[1]", str(root), conf, app_name="serve-load-data")
    model = make_shop(spark, root)
    spark.stop()
    say("starting `mvlattice serve` (its own Spark driver) …")
    server = start(model, root / "warehouse", root / "server.log")
    say(f"server up at {server.url}; building the tiles through the API …")
    status, job = server.call("POST", "/v1/lattices/star/materialize")
    done = wait_for_job(server, job["id"])
    if done["status"] != "succeeded":
        raise SystemExit(f"materialize failed: {done}")
    return server


class NullBackend:
    """Answers every rewrite at once with the query unrewritten: the HTTP layer alone (auth,
    body limit, SQL gate, JSON, metrics, query-log hand-off), for a side-by-side baseline."""

    def models(self) -> tuple[str, ...]:
        return ("null",)

    def ready(self) -> bool:
        return True

    def rewrite(self, sql: str, explain: bool, model: str | None):  # noqa: ANN201
        from mvlattice.service.http.backend import Rewritten

        doc = {"rewritten": False, "sql": sql, "materializations": [], "explain": []}
        return Rewritten("null", doc, False, (), 0.0)


def null_server(port: int) -> None:
    import uvicorn

    from mvlattice.service.http.app import Service, Settings, create_app
    from tests.integration.test_service_support import TOKEN

    service = Service(NullBackend(), Settings(token=TOKEN))  # type: ignore[arg-type]
    uvicorn.run(create_app(service), host="127.0.0.1", port=port, log_level="warning")


def start_null_server():  # noqa: ANN201 - (url, Popen)
    import subprocess
    import urllib.request

    from tests.integration.test_service_support import free_port

    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--null-server", str(port)])
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2).read()
            return url, process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the null server did not start")


def say(line: str) -> None:
    print(f"[serve_load] {line}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running service on loopback (default: start one)")
    parser.add_argument("--token-file", help="the service's bearer token (with --url)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--solo-seconds", type=float, default=10.0, help="one client first")
    parser.add_argument("--keep", action="store_true", help="leave the started server running")
    parser.add_argument("--no-baseline", action="store_true", help="skip the HTTP-only baseline")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--null-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.null_server:
        null_server(args.null_server)
        return 0
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600:
        raise SystemExit("bounded: 1..256 clients, at most 600 s")
    server = None
    if args.url:
        host = urllib.parse.urlsplit(args.url).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"loopback only: {host} is not a loopback address")
        url, token = args.url.rstrip("/"), None
        if args.token_file:
            token = Path(args.token_file).read_text().strip()
    else:
        root = Path(tempfile.mkdtemp(prefix="serve_load_"))
        server = start_server(root)
        from tests.integration.test_service_support import TOKEN

        url, token = server.url, TOKEN
    try:
        results = {}
        if args.solo_seconds > 0:
            say(f"1 client for {args.solo_seconds:g} s …")
            results["solo"] = asyncio.run(load(url, token, 1, args.solo_seconds))
        say(f"{args.clients} clients for {args.seconds:g} s …")
        results["load"] = asyncio.run(load(url, token, args.clients, args.seconds))
        results["server_rewrite_time"] = server_rewrite_times(url, token)
    finally:
        if server is not None and not args.keep:
            server.stop()
    if not args.no_baseline:
        from tests.integration.test_service_support import TOKEN

        null_url, null_process = start_null_server()
        try:
            say(f"HTTP layer alone (no rewriting): {args.clients} clients for {args.seconds:g} s …")
            results["http_only"] = asyncio.run(load(null_url, TOKEN, args.clients, args.seconds))
        finally:
            null_process.terminate()
            null_process.wait(30)
    report(results, args.json)
    return 0 if results["load"]["errors"] == 0 else 1


def report(results: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(results, indent=2))
        return
    for name in ("solo", "load", "http_only"):
        r = results.get(name)
        if r is None:
            continue
        print(
            f"{name:9} {r['clients']:3} clients  {r['seconds']:5.1f} s  {r['requests']:7} requests"
            f"  {r['throughput_per_s']:8.1f} req/s  p50 {r['p50_ms']:7.2f} ms  p90 "
            f"{r['p90_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  max {r['max_ms']:8.2f} ms  "
            f"errors {r['errors']}  rewritten {r['rewritten_share']:.1%}"
        )
    if "solo" in results:
        solo, full = results["solo"], results["load"]
        ratio = full["throughput_per_s"] / solo["throughput_per_s"]
        p50, p99 = full["p50_ms"] / solo["p50_ms"], full["p99_ms"] / solo["p99_ms"]
        print(f"ratio load/solo: throughput {ratio:.2f}x, p50 {p50:.2f}x, p99 {p99:.2f}x")
    if "http_only" in results:
        base, full = results["http_only"], results["load"]
        ratio = base["throughput_per_s"] / full["throughput_per_s"]
        print(f"ratio http_only/load: throughput {ratio:.2f}x (the rest is rewriting)")
    s = results["server_rewrite_time"]
    print(
        f"server-side rewrite time: {s['rewrites']} rewrites, mean {s['mean_ms']} ms, share "
        f"{s['share']}; query log pending {s['query_log_pending']}, dropped "
        f"{s['query_log_dropped']}"
    )
    goal = results["load"]["errors"] == 0 and results["load"]["p99_ms"] < 50
    print(f"goal (zero errors, p99 < 50 ms at {results['load']['clients']} clients): "
          f"{'met' if goal else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

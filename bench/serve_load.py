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

With --mixed the clients run queries (`POST /v1/query`, executed in the service's sandbox)
instead of rewrites, and a share of their requests (--hostile-share, 1 in 4) are hostile: script
transforms, file-path relations (the query log's too), reflection, function creation, commands,
the same hidden in CTEs and subqueries, huge generators, deep nesting, a foreign Host or Origin,
form POSTs, no token. It reports per class (normal / hostile) the count, statuses and p50/p99
latency, and fails (exit 1) on any 5xx, any normal query not answered 200 or any hostile request
not refused with a 4xx. No solo run or HTTP-only baseline then; a short warm-up goes first.

With --engines the clients run queries (`POST /v1/query`) in two phases of --seconds each:
"tiles", every query one the shop's (category, year) tile answers (rewritten onto a small fresh
tile: the tile engine's to answer in the server's driver), then "mixed", where a share of them
(--spark-share, 1 in 4) are queries no view answers, which Spark must run; `--phase unique`
(or `all`) adds a phase of tile-answerable queries whose every text is new (a numbering comment),
so no kept answer serves them: each is rewritten and run by the tile engine. It reports per kind
(tile / spark) the count, p50/p90/p99 latency, errors and the engine each answer names, the
server's peak resident memory (its process tree sampled every 0.5 s, and each process's VmHWM;
with --url only given --server-pid) and, when /metrics shows them, the tile cache's bytes
against its budget and the queries answered per engine. Goals (issue 19): tiles p99 <= 50 ms
with 0 errors; mixed, the tile-answerable queries' p99 <= 100 ms. --phase runs one phase only.

`--engines --phase adhoc` (and `all`, after the shop's phases, on a server of its own) loads
FoodMart and `mvlattice.proof.adhoc`'s model (day- and month-grain tiles) and sends its traffic:
--templates query shapes (64; random dimensions, measures and aliases), each bound anew to
dimension values read from the data, IN lists of 1-20 values, month-aligned and unaligned date
ranges and LIMITs, every text new. Afterwards --check answers (300, drawn at random) are asked
again with rewriting off (Spark over the base tables) and compared: column names, rows as
multisets, numbers by value. Under `phases.adhoc`: throughput_per_s, tile.p50_ms, tile.p99_ms,
tile.errors, checked, differences, template_hit_rate — from /metrics'
mvlattice_template_hits_total and _misses_total, null (with a note) while the server has no
template cache. Any difference or unchecked answer fails the run (exit 1). Goal (issue 31):
>= 500 req/s, p99 <= 50 ms at 32 clients, 0 errors, 0 differences. With --url every phase
goes to that server: the ad-hoc phase needs one serving the ad-hoc model (left by --keep).

    python bench/serve_load.py [--clients 32] [--seconds 60] [--solo-seconds 10] [--json]
                               [--url http://127.0.0.1:PORT] [--token-file F] [--keep]
                               [--no-baseline] [--mixed [--hostile-share 0.25]]
                               [--engines [--spark-share 0.25]
                                [--phase both|tiles|mixed|unique|adhoc|all]
                                [--templates 64] [--check 300] [--literal-seed N]
                                [--server-pid PID]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import datetime as dt
import itertools

import yaml

from mvlattice.proof import adhoc
from mvlattice.proof.compare import as_multiset, difference

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
    """A minimal HTTP/1.1 keep-alive client: enough for JSON POSTs to our own server, and for
    the requests a hostile client would send (another Host, an Origin, a form body, no token)."""

    def __init__(self, host: str, port: int, token: str | None) -> None:
        self.host, self.port, self.token = host, port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(
        self, path: str, body: bytes, headers: dict[str, str | None] | None = None
    ) -> tuple[int, bytes]:
        return await self.request("POST", path, body, headers)

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        headers: dict[str, str | None] | None = None,
    ) -> tuple[int, bytes]:
        """(status, body). `headers` replace the defaults (Host, Authorization, Content-Type)
        by name, case-insensitively; a None value leaves that header out."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        fields: dict[str, tuple[str, str | None]] = {
            "host": ("Host", f"{self.host}:{self.port}"),
            "authorization": ("Authorization", f"Bearer {self.token}" if self.token else None),
            "content-type": ("Content-Type", "application/json"),
        }
        for name, value in (headers or {}).items():
            fields[name.lower()] = (name, value)
        fields["content-length"] = ("Content-Length", str(len(body)))
        lines = "".join(
            f"{name}: {value}\r\n" for name, value in fields.values() if value is not None
        )
        self.writer.write(f"{method} {path} HTTP/1.1\r\n{lines}\r\n".encode("latin-1") + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:  # the server closed the connection instead of answering
            await self.close()
            raise ConnectionResetError("connection closed before an answer")
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


def connect(url: str, token: str | None) -> Connection:
    """A connection to the service at `url` (opened on its first request)."""
    parts = urllib.parse.urlsplit(url)
    return Connection(parts.hostname or "127.0.0.1", parts.port or 80, token)


async def client(
    url: str, token: str | None, seed: int, stop_at: float, timeout: float
) -> tuple[list[float], list[str], int]:
    """(latencies in ms, error descriptions, rewritten answers) of one closed-loop client."""
    conn = connect(url, token)
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


def metrics_text(url: str, token: str | None) -> str:
    """The server's /metrics (Prometheus text)."""
    import urllib.request

    request = urllib.request.Request(url + "/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    return urllib.request.urlopen(request, timeout=60).read().decode()


def server_rewrite_times(url: str, token: str | None) -> dict:
    """The server's rewrite-time histogram: how much of the latency is rewriting."""
    text = metrics_text(url, token)
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


# -- mixed mode: normal queries among hostile requests --------------------------------------------
# Hostile requests, by kind; {warehouse} and {data} are the served warehouse and data folders.
# None of them may be answered other than with a 4xx (and a one-line JSON error).
HOSTILE_SQL: tuple[tuple[str, str], ...] = (
    # script transforms, also hidden in CTEs and subqueries
    ("transform", "SELECT TRANSFORM(1) USING 'id' AS (out STRING)"),
    ("transform", "SELECT TRANSFORM(product_id) USING 'cat /etc/passwd' AS (o STRING) "
                  "FROM shop.product"),
    ("transform", "WITH c AS (SELECT TRANSFORM(1) USING 'id' AS (o STRING)) SELECT * FROM c"),
    ("transform", "SELECT * FROM shop.sales WHERE units IN "
                  "(SELECT TRANSFORM(1) USING 'id' AS (o INT))"),
    # path relations of each file format (the query log and the model's own data too)
    ("path", "SELECT * FROM text.`/etc/hostname`"),
    ("path", "SELECT * FROM csv.`/etc/passwd`"),
    ("path", "SELECT * FROM json.`/etc/hostname`"),
    ("path", "SELECT * FROM parquet.`/tmp`"),
    ("path", "SELECT * FROM orc.`/tmp`"),
    ("path", "SELECT * FROM binaryFile.`/etc/hostname`"),
    ("path", "SELECT * FROM delta.`{warehouse}/_mvlattice/query_log`"),
    ("path", "SELECT * FROM parquet.`{warehouse}/_mvlattice/query_log`"),
    ("path", "SELECT count(*) FROM json.`{warehouse}/_mvlattice/query_log/_delta_log`"),
    ("path", "SELECT * FROM delta.`{data}/sales`"),
    ("path", "SELECT * FROM parquet.`{data}/sales`"),
    ("path", "WITH x AS (SELECT * FROM text.`/etc/hostname`) SELECT * FROM x"),
    ("path", "WITH q AS (SELECT * FROM delta.`{warehouse}/_mvlattice/query_log`) "
             "SELECT count(*) FROM q"),
    ("path", "SELECT * FROM shop.sales WHERE year IN "
             "(SELECT length(value) FROM text.`/etc/hostname`)"),
    ("path", "SELECT * FROM shop.sales WHERE EXISTS (SELECT 1 FROM delta.`{data}/product`)"),
    ("path", "SELECT * FROM read_files('/etc/hostname')"),
    # reflection and other functions that reach out of the plan
    ("reflection", "SELECT reflect('java.lang.System', 'getProperty', 'user.home')"),
    ("reflection", "SELECT java_method('java.lang.Runtime', 'getRuntime')"),
    ("reflection", "SELECT try_reflect('java.lang.System', 'getenv', 'HOME')"),
    ("reflection", "WITH c AS (SELECT reflect('java.lang.System', 'getProperty', 'user.home') "
                   "AS r) SELECT * FROM c"),
    ("reflection", "SELECT * FROM shop.sales WHERE units = (SELECT length(java_method("
                   "'java.lang.System', 'getProperty', 'user.home')))"),
    ("reflection", "SELECT year FROM shop.sales GROUP BY year HAVING max(reflect("
                   "'java.lang.System', 'getProperty', 'x')) IS NULL"),
    ("reflection", "SELECT input_file_name() FROM shop.sales"),
    ("reflection", "SELECT current_user()"),
    ("reflection", "SELECT xpath_string('<a>1</a>', 'a')"),
    # functions created, and commands of every kind (also hidden behind a CTE)
    ("udf", "CREATE TEMPORARY FUNCTION f AS 'org.apache.hadoop.hive.ql.udf.UDFJson'"),
    ("udf", "CREATE FUNCTION f AS 'x.Y' USING JAR '/tmp/x.jar'"),
    ("udf", "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1"),
    ("command", "SET spark.sql.runSQLOnFiles=true"),
    ("command", "RESET"),
    ("command", "ADD JAR /tmp/x.jar"),
    ("command", "ADD FILE /etc/passwd"),
    ("command", "LIST FILES"),
    ("command", "CACHE TABLE shop.sales"),
    ("command", "CACHE TABLE c AS SELECT * FROM shop.sales"),
    ("command", "UNCACHE TABLE shop.sales"),
    ("command", "REFRESH TABLE shop.sales"),
    ("command", "DROP TABLE shop.sales"),
    ("command", "INSERT INTO shop.sales SELECT * FROM shop.sales"),
    ("command", "WITH x AS (SELECT 1) INSERT INTO shop.sales SELECT * FROM x"),
    ("command", "DELETE FROM shop.sales"),
    ("command", "CREATE TABLE stolen AS SELECT * FROM shop.sales"),
    ("command", "SHOW TABLES"),
    ("command", "DESCRIBE shop.sales"),
    ("command", "EXPLAIN SELECT 1"),
    ("command", "USE default"),
    ("command", "SELECT 1; DROP TABLE shop.sales"),
    ("command", "SELECT /*+ REPARTITION(100000) */ * FROM shop.sales"),
    # huge generators and sized values
    ("generator", "SELECT count(*) FROM range(1000000000000)"),
    ("generator", "WITH r AS (SELECT * FROM range(0, 9000000000000, 1)) SELECT count(*) FROM r"),
    ("generator", "SELECT explode(sequence(1, 1000000000))"),
    ("generator", "SELECT explode(sequence(1, units * 100000000)) FROM shop.sales"),
    ("generator", "SELECT repeat('x', 1000000000)"),
    ("generator", "SELECT array_repeat(1, 1000000000)"),
    ("generator", "SELECT lpad('x', 2000000000, 'y')"),
    ("generator", "SELECT repeat(cast(sale_id AS STRING), units * 1000000000) FROM shop.sales"),
    # deep nesting (the deepest one is also over the service's body limit in the bench)
    ("nesting", "SELECT " + "(" * 300 + "1" + ")" * 300),
    ("nesting", "SELECT " + "(" * 200 + "1" + ")" * 200),
    ("nesting", "SELECT " + "(" * 5000 + "1" + ")" * 5000),
    ("nesting", "SELECT * FROM " + "(SELECT * FROM " * 150 + "shop.sales" + ") t" * 150),
    # a relation that is not the model's
    ("not_model", "SELECT * FROM default.nosuch"),
    # aggregates whose buffer grows with the input: one group fills the JVM's heap (issue 30)
    ("memory", "SELECT size(collect_list(repeat('x', 100000))) AS n FROM range(100000)"),
    ("memory", "SELECT year, collect_set(sale_id) FROM shop.sales GROUP BY year"),
    ("memory", "SELECT percentile(units, 0.5) FROM shop.sales"),
    ("memory", "SELECT percentile_approx(units, 0.5, 1000000000) FROM shop.sales"),
    # regular expressions that backtrack without end, in tasks and constant-folded
    ("regex", "SELECT count(*) FROM shop.sales WHERE repeat(cast(sale_id AS STRING), 30) "
              "RLIKE '(.*a){12}$'"),
    ("regex", "SELECT repeat('a', 40) RLIKE '(a|aa)*c'"),
    ("regex", "SELECT regexp_replace(repeat('x', 40), '(x+x+)+y', '')"),
    ("regex", "SELECT split(repeat('a', 40), '(a*)*b')"),
    ("regex", "SELECT count(*) FROM shop.sales WHERE cast(sale_id AS STRING) LIKE '%1%2%3%4%'"),
    # texts Spark parses recursively while analyzing
    ("parsed_text", "SELECT from_json('[]', '" + "array<" * 6000 + "int" + ">" * 6000 + "')"),
    ("parsed_text", "SELECT CAST(NULL AS " + "array<" * 200 + "int" + ">" * 200 + ")"),
    ("parsed_text", "SELECT levenshtein(repeat('a', 50000), repeat('b', 50000))"),
    # old versions, change feeds, hidden file columns
    ("old_versions", "SELECT * FROM shop.sales VERSION AS OF 0"),
    ("old_versions", "SELECT * FROM shop.sales TIMESTAMP AS OF '2000-01-01'"),
    ("old_versions", "SELECT * FROM table_changes('shop.sales', 0)"),
    ("old_versions", "SELECT _metadata.file_path FROM shop.sales"),
)  # fmt: skip

FORM = "application/x-www-form-urlencoded"
# (kind, method, path, body, headers): HTTP-level hostility around an otherwise normal query.
HOSTILE_HTTP: tuple[tuple[str, str, str, bytes, dict[str, str | None]], ...] = (
    ("foreign_host", "POST", "/v1/query", b"", {"Host": "attacker.example:8765"}),
    ("foreign_host", "GET", "/v1/tiles", b"", {"Host": "attacker.example"}),
    ("foreign_origin", "POST", "/v1/query", b"", {"Origin": "http://attacker.example"}),
    ("foreign_origin", "POST", "/v1/query", b"", {"Origin": "null"}),
    ("foreign_origin", "POST", "/v1/query", b"", {"Sec-Fetch-Site": "cross-site"}),
    ("form_post", "POST", "/v1/query", b"sql=select+1", {"Content-Type": FORM}),
    ("form_post", "POST", "/v1/query", b"", {"Content-Type": "text/plain"}),
    ("form_post", "POST", "/v1/query", b"", {"Content-Type": None}),
    ("form_post", "POST", "/v1/tiles/units_by_year/refresh", b"a=1", {"Content-Type": FORM}),
    ("form_post", "POST", "/v1/lattices/star/materialize", b"",
     {"Content-Type": "multipart/form-data; boundary=x"}),
    ("no_token", "POST", "/v1/query", b"", {"Authorization": None}),
    ("no_token", "POST", "/v1/query", b"", {"Authorization": "Bearer not-the-token-0123456789"}),
    ("bad_body", "POST", "/v1/query", b"{not json", {}),
    ("bad_body", "POST", "/v1/query", b'{"sql": ""}', {}),
    ("bad_body", "POST", "/v1/query", b'{"sql": "select 1", "stolen": true}', {}),
    ("bad_body", "POST", "/v1/query", b'{"sql": "' + b"1" * 10_000 + b'"}', {}),
)  # fmt: skip

MIXED_TIMEOUT = 180.0  # s a mixed-mode client waits for one answer (> the server's 60 s default)


@dataclass(frozen=True, slots=True)
class Outcome:
    cls: str  # normal | hostile
    kind: str  # the hostile request's kind ("" for normal)
    what: str  # the request, shortened
    status: int | str  # the HTTP status, or the client-side error's name
    ms: float
    body_ok: bool  # 200 with rows (normal) / a one-line JSON error (hostile)
    detail: str  # the start of the answer when it was not the expected one
    rewritten: bool = False  # a normal query's answer came from tiles or materializations


def hostile_picks(seed: int) -> Iterator[int]:
    """Indexes into HOSTILE_SQL + HOSTILE_HTTP: every one in turn, shuffled anew each round, so
    a short run still sends the whole list (the clients share one such sequence)."""
    rng, order = random.Random(seed), list(range(len(HOSTILE_SQL) + len(HOSTILE_HTTP)))
    while True:
        rng.shuffle(order)
        yield from order


def hostile(
    pick: int, rng: random.Random, warehouse: str, data: str
) -> tuple[str, str, str, bytes, dict]:
    """Hostile request number `pick`: (kind, method, path, body, headers)."""
    if pick < len(HOSTILE_SQL):
        kind, sql = HOSTILE_SQL[pick]
        sql = sql.replace("{warehouse}", warehouse).replace("{data}", data)
        return kind, "POST", "/v1/query", json.dumps({"sql": sql}).encode(), {}
    kind, method, path, body, headers = HOSTILE_HTTP[pick - len(HOSTILE_SQL)]
    if not body and method == "POST":  # a normal query, sent the hostile way
        body = json.dumps({"sql": mix(rng)[0]}).encode()
    return kind, method, path, body, headers


def well_formed_error(payload: bytes) -> bool:
    try:
        doc = json.loads(payload)
    except ValueError:
        return False
    error = doc.get("error") if isinstance(doc, dict) and set(doc) == {"error"} else None
    message = error.get("message") if isinstance(error, dict) else None
    return (
        isinstance(message, str)
        and bool(message)
        and "\n" not in message
        and "Traceback" not in message
        and isinstance(error.get("code"), str)
    )


def answered_rows(payload: bytes) -> tuple[bool, bool]:
    """(a query's answer with its rows, rewritten onto tiles or materializations)."""
    try:
        doc = json.loads(payload)
    except ValueError:
        return False, False
    ok = isinstance(doc, dict) and isinstance(doc.get("rows"), list)
    return ok, ok and doc.get("rewritten") is True


async def mixed_client(
    url: str,
    token: str | None,
    seed: int,
    stop_at: float,
    share: float,
    paths: tuple[str, str],
    picks: Iterator[int],
) -> list[Outcome]:
    """One closed-loop client of the mixed mode: a hostile request with probability `share`,
    else a normal `/v1/query` of the shop mix."""
    conn = connect(url, token)
    rng = random.Random(seed)
    outcomes: list[Outcome] = []
    while time.perf_counter() < stop_at:
        if rng.random() < share:
            kind, method, path, body, headers = hostile(next(picks), rng, *paths)
            cls, what = "hostile", f"{kind}: {method} {path} {body[:80]!r} {headers}"
        else:
            sql = mix(rng)[0]
            cls, kind, method, path, headers = "normal", "", "POST", "/v1/query", {}
            body, what = json.dumps({"sql": sql}).encode(), sql[:120]
        started = time.perf_counter()
        try:
            status, payload = await asyncio.wait_for(
                conn.request(method, path, body, headers), MIXED_TIMEOUT
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            ms = (time.perf_counter() - started) * 1000.0
            outcomes.append(Outcome(cls, kind, what, type(exc).__name__, ms, False, str(exc)))
            await conn.close()
            await asyncio.sleep(0.1)  # no busy loop on a refused connection
            continue
        ms = (time.perf_counter() - started) * 1000.0
        rewritten = False
        if cls == "normal":
            body_ok, rewritten = answered_rows(payload)
        else:
            body_ok = well_formed_error(payload)
        expected = status == 200 if cls == "normal" else 400 <= status < 500
        detail = "" if expected and body_ok else payload[:300].decode(errors="replace")
        outcomes.append(Outcome(cls, kind, what, status, ms, body_ok, detail, rewritten))
    await conn.close()
    return outcomes


async def watch_health(url: str, stop: asyncio.Event) -> dict:
    """/healthz every half second during the load: the gate's peak and any other answer."""
    conn = connect(url, None)
    peak = {"samples": 0, "max_running": 0, "max_waiting": 0, "saturated_samples": 0,
            "not_ok": []}  # fmt: skip
    while not stop.is_set():
        try:
            status, payload = await asyncio.wait_for(conn.request("GET", "/healthz"), 10.0)
            doc = json.loads(payload) if status == 200 else {}
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            status, doc = type(exc).__name__, {}
            await conn.close()
        peak["samples"] += 1
        queries = doc.get("queries") or {}
        peak["max_running"] = max(peak["max_running"], queries.get("running", 0))
        peak["max_waiting"] = max(peak["max_waiting"], queries.get("waiting", 0))
        peak["saturated_samples"] += bool(queries.get("saturated"))
        if (status != 200 or doc.get("status") != "ok") and len(peak["not_ok"]) < 5:
            peak["not_ok"].append(f"{status} {doc.get('status')}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
    await conn.close()
    return peak


async def warm_up(url: str, token: str | None) -> list[str]:
    """Each query shape of the mix once, one after the other (not measured): the first queries
    of a fresh driver compile and load classes. Returns the problems seen."""
    conn = connect(url, token)
    rng, seen, problems = random.Random(7), set(), []
    for _ in range(64):
        sql = mix(rng)[0]
        shape = re.sub(r"\d+|'c\d'", "?", sql)
        if shape in seen:
            continue
        seen.add(shape)
        try:
            status, payload = await asyncio.wait_for(
                conn.post("/v1/query", json.dumps({"sql": sql}).encode()), MIXED_TIMEOUT
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            problems.append(f"{type(exc).__name__} on {sql[:80]}")
            await conn.close()
            continue
        if status != 200:
            problems.append(f"{status} on {sql[:80]}: {payload[:200].decode(errors='replace')}")
    await conn.close()
    return problems


async def mixed_load(
    url: str, token: str | None, clients: int, seconds: float, share: float, paths: tuple
) -> dict:
    stop_at = time.perf_counter() + seconds
    started = time.perf_counter()
    stop = asyncio.Event()
    picks = hostile_picks(17)
    health = asyncio.create_task(watch_health(url, stop))
    runs = await asyncio.gather(
        *(mixed_client(url, token, 2000 + i, stop_at, share, paths, picks) for i in range(clients))
    )
    elapsed = time.perf_counter() - started
    stop.set()
    outcomes = [o for run in runs for o in run]
    result = {
        "mode": "mixed",
        "clients": clients,
        "seconds": round(elapsed, 1),
        "hostile_share": share,
        "requests": len(outcomes),
        "throughput_per_s": round(len(outcomes) / elapsed, 1),
        "normal": class_summary([o for o in outcomes if o.cls == "normal"]),
        "hostile": class_summary([o for o in outcomes if o.cls == "hostile"]),
        "5xx": sum(isinstance(o.status, int) and o.status >= 500 for o in outcomes),
        "healthz_during": await health,
    }
    unexpected = [o for o in outcomes if not expected(o)]
    result["unexpected"] = [
        {"class": o.cls, "request": o.what[:200], "status": o.status, "ms": round(o.ms, 1),
         "answer": o.detail[:300]}
        for o in unexpected[:10]
    ]  # fmt: skip
    return result


def expected(o: Outcome) -> bool:
    if o.cls == "normal":
        return o.status == 200
    return isinstance(o.status, int) and 400 <= o.status < 500


def class_summary(outcomes: list[Outcome]) -> dict:
    latencies = sorted(o.ms for o in outcomes)
    statuses: dict[str, int] = {}
    for o in outcomes:
        statuses[str(o.status)] = statuses.get(str(o.status), 0) + 1
    by_kind: dict[str, list[float]] = {}
    for o in outcomes:
        if o.kind:
            by_kind.setdefault(o.kind, []).append(o.ms)
    kinds = {
        k: {"count": len(v), "p50_ms": round(percentile(sorted(v), 50), 1)}
        for k, v in sorted(by_kind.items())
    }
    return {
        "count": len(outcomes),
        "statuses": dict(sorted(statuses.items())),
        "p50_ms": round(percentile(latencies, 50), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(latencies[-1], 2) if latencies else None,
        "as_expected": sum(expected(o) for o in outcomes),
        "body_ok": sum(o.body_ok for o in outcomes),
        "rewritten": sum(o.rewritten for o in outcomes),
        **({"kinds": kinds} if kinds else {}),
    }


def health_now(url: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(url + "/healthz", timeout=30) as response:
        return json.loads(response.read())


def mixed_failed(r: dict) -> bool:
    normal, hostile = r["normal"], r["hostile"]
    return (
        r["5xx"] > 0
        or normal["as_expected"] != normal["count"]
        or hostile["as_expected"] != hostile["count"]
    )


def report_mixed(r: dict, as_json: bool) -> None:
    print(
        f"mixed  {r['clients']} clients  {r['seconds']:.1f} s  {r['requests']} requests  "
        f"{r['throughput_per_s']:.1f} req/s  (hostile share {r['hostile_share']:g})"
    )
    for cls in ("normal", "hostile"):
        c = r[cls]
        print(
            f"{cls:8} {c['count']:6} requests  p50 {c['p50_ms']:9.2f} ms  p99 "
            f"{c['p99_ms']:9.2f} ms  max {c['max_ms'] or 0:9.2f} ms  statuses {c['statuses']}"
        )
    kinds = r["hostile"].get("kinds", {})
    listed = ", ".join(f"{k} {v['count']} (p50 {v['p50_ms']:.0f} ms)" for k, v in kinds.items())
    print(f"hostile kinds: {listed}")
    h = r["healthz_during"]
    print(
        f"/healthz during the load: {h['samples']} samples, running <= {h['max_running']}, "
        f"waiting <= {h['max_waiting']}, saturated in {h['saturated_samples']}, "
        f"not ok: {h['not_ok'] or 'none'}; after: {r.get('healthz_after')}"
    )
    s = r["server_rewrite_time"]
    print(
        f"normal answers rewritten onto tiles/materializations: {r['normal']['rewritten']} of "
        f"{r['normal']['count']}; query log pending {s['query_log_pending']}, dropped "
        f"{s['query_log_dropped']}"
    )
    if r.get("warm_up_problems"):
        print(f"warm-up problems: {r['warm_up_problems']}")
    if "server_rss_peak_mib" in r:
        print(f"server RSS peak (MiB): {r['server_rss_peak_mib']}")
    if "server_log" in r:
        print(f"server log: {r['server_log']['tracebacks']} tracebacks, "
              f"{r['server_log']['internal_errors']} internal errors")  # fmt: skip
    n, x = r["normal"], r["hostile"]
    print(f"5xx: {r['5xx']}")
    print(f"normal answered (200): {n['as_expected']} of {n['count']}")
    print(f"hostile refused with 4xx: {x['as_expected']} of {x['count']}")
    print(f"normal 200 answers with rows: {n['body_ok']} of {n['count']}; hostile answers a "
          f"one-line JSON error: {x['body_ok']} of {x['count']}")  # fmt: skip
    for u in r["unexpected"]:
        print(f"  unexpected: {u['class']} {u['status']} after {u['ms']} ms: {u['request']} "
              f"-> {u['answer']}")  # fmt: skip
    print(f"result: {'FAILED' if mixed_failed(r) else 'ok'}")
    if as_json:
        print(json.dumps(r))


def rss_peaks(pid: int) -> dict[str, float]:
    """The peak resident memory (MiB) of the server's Python process and of its JVM."""
    peaks = {"python": _peak_mib(pid)}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                name, rest = Path(f"/proc/{entry}/stat").read_text().split("(", 1)[1].rsplit(")", 1)
                if name == "java" and int(rest.split()[1]) == pid:
                    peaks["jvm"] = _peak_mib(int(entry))
    return peaks


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def run_mixed(args: argparse.Namespace, url: str, token: str | None, server, root) -> int:
    warehouse = str(server.warehouse) if server is not None else "/tmp/mvlattice-warehouse"
    data = str(server.model.parent / "data") if server is not None else "/tmp/mvlattice-data"
    say("warming up: each query shape of the mix once …")
    problems = asyncio.run(warm_up(url, token))
    say(f"mixed: {args.clients} clients for {args.seconds:g} s, hostile share "
        f"{args.hostile_share:g} …")  # fmt: skip
    results = asyncio.run(
        mixed_load(url, token, args.clients, args.seconds, args.hostile_share,
                   (warehouse, data))
    )  # fmt: skip
    results["warm_up_problems"] = problems
    results["healthz_after"] = health_now(url).get("queries")
    results["server_rewrite_time"] = server_rewrite_times(url, token)
    if server is not None:
        results["server_rss_peak_mib"] = rss_peaks(server.process.pid)
        text = server.output()
        results["server_log"] = {
            "path": str(server.log),
            "tracebacks": text.count("Traceback"),
            "internal_errors": text.count("internal error"),
        }
    report_mixed(results, args.json)
    failed = mixed_failed(results)
    if failed and root is not None:
        say(f"FAILED: the server log and the warehouse are under {root} ({root / 'server.log'})")
    return 1 if failed else 0


# -- engine mode: tile-answerable queries, and a share that needs Spark ---------------------------
def tile_query(rng: random.Random) -> str:
    """A query the shop's (category, year) tile answers: rewritten, small, fresh — the tile
    engine's to answer in the server's driver. Literals vary so no two are alike."""
    year, cat, k = rng.choice((2020, 2021)), f"c{rng.randint(0, 2)}", rng.randint(1, 5)
    return rng.choice((
        f"select p.category, sum(s.units) as units, count(*) as n {STAR} group by p.category",
        f"select p.category, sum(s.units) as u {STAR} where s.year = {year} group by p.category",
        f"select s.year, count(*) as n {STAR} where p.category = '{cat}' group by s.year",
        f"select p.category, s.year, sum(s.units) as u {STAR} group by p.category, s.year "
        f"order by u desc, p.category, s.year limit {k}",
        f"select count(*) as n {STAR} where s.year in ({year}, {year + 1})",
    ))  # fmt: skip


def spark_query(rng: random.Random) -> str:
    """A query no view answers (not rewritten): Spark's to answer."""
    units = rng.randint(0, 6)
    return rng.choice((
        f"select p.brand, sum(s.units) as u {STAR} where s.units > {units} group by p.brand",
        f"select sale_id, units from shop.sales where units > {units} order by sale_id limit 50",
    ))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Answered:
    cls: str  # tile | spark: which kind of query was sent
    status: int | str  # the HTTP status, or the client-side error's name
    ms: float
    engine: str  # who answered, as the response says ("" when it does not say)
    rewritten: bool
    detail: str  # the start of the answer when it was not a 200 with rows
    reason: str = ""  # why Spark answered a rewritten query, as the response says
    sql: str = ""  # kept for the ad-hoc phase's check on Spark, with
    answer: dict | None = None  # its columns, rows (numbers as Decimal) and truncated flag


# A client's next query: (kind: tile | spark, SQL), drawn with the client's own generator.
Pick = Callable[[random.Random], tuple[str, str]]


def shop_picker(seed: int, spark_share: float, unique: bool) -> Pick:
    """The shop's queries: one needing Spark with probability `spark_share`, else one the
    tile answers. `unique`: each text is new (a comment numbers it), so no answer kept for an
    earlier text serves it: rewritten and run every time."""
    sent = itertools.count(1)

    def pick(rng: random.Random) -> tuple[str, str]:
        cls = "spark" if rng.random() < spark_share else "tile"
        sql = spark_query(rng) if cls == "spark" else tile_query(rng)
        number = next(sent)
        return cls, f"/* client {seed} query {number} */ {sql}" if unique else sql

    return pick


async def engine_client(
    url: str, token: str | None, seed: int, stop_at: float, pick: Pick, keep: bool = False
) -> list[Answered]:
    """One closed-loop client: `POST /v1/query` of what `pick` draws, until `stop_at`.
    `keep`: each answer's SQL, columns and rows are kept (for a check afterwards)."""
    conn = connect(url, token)
    rng = random.Random(seed)
    out: list[Answered] = []
    while time.perf_counter() < stop_at:
        cls, sql = pick(rng)
        started = time.perf_counter()
        try:
            status, payload = await asyncio.wait_for(
                conn.post("/v1/query", json.dumps({"sql": sql}).encode()), MIXED_TIMEOUT
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            ms = (time.perf_counter() - started) * 1000.0
            out.append(Answered(cls, type(exc).__name__, ms, "", False, str(exc)))
            await conn.close()
            await asyncio.sleep(0.1)  # no busy loop on a refused connection
            continue
        ms = (time.perf_counter() - started) * 1000.0
        doc = _json_or_none(payload, exact=keep)
        ok = status == 200 and isinstance(doc, dict) and isinstance(doc.get("rows"), list)
        engine = str(doc.get("engine", "")) if isinstance(doc, dict) else ""
        rewritten = isinstance(doc, dict) and doc.get("rewritten") is True
        reason = str(doc.get("engine_reason") or "") if isinstance(doc, dict) else ""
        detail = "" if ok else payload[:300].decode(errors="replace")
        kept = (sql, _kept(doc)) if keep and ok else ("", None)
        out.append(Answered(cls, status if ok or status != 200 else "200 without rows", ms,
                            engine, rewritten, detail, reason, *kept))  # fmt: skip
    await conn.close()
    return out


def _json_or_none(payload: bytes, exact: bool = False) -> object:
    """The JSON document; `exact`: its numbers as Decimal (as the text has them), for
    comparing answers without float rounding."""
    try:
        return json.loads(payload, parse_float=Decimal) if exact else json.loads(payload)
    except ValueError:
        return None


def _kept(doc: Any) -> dict:
    return {key: doc.get(key) for key in ("columns", "rows", "truncated")}


def shop_warm_up_texts() -> Iterator[str]:
    """Each of the shop's query shapes a few times."""
    rng = random.Random(7)
    for i in range(60):
        yield spark_query(rng) if i % 4 == 3 else tile_query(rng)


async def engine_warm_up(url: str, token: str | None, texts: Iterable[str]) -> list[str]:
    """The texts one after the other (not measured): the first queries of a fresh driver
    compile and load classes, the tile engine reads the tile and asks Spark for the schema
    once per SQL text. Returns the problems seen."""
    conn = connect(url, token)
    problems: list[str] = []
    for sql in texts:
        try:
            status, payload = await asyncio.wait_for(
                conn.post("/v1/query", json.dumps({"sql": sql}).encode()), MIXED_TIMEOUT
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            problems.append(f"{type(exc).__name__} on {sql[:80]}")
            await conn.close()
            continue
        if status != 200:
            problems.append(f"{status} on {sql[:80]}: {payload[:200].decode(errors='replace')}")
    await conn.close()
    return problems


def engine_summary(answers: list[Answered]) -> dict:
    latencies = sorted(a.ms for a in answers)
    statuses: dict[str, int] = {}
    engines: dict[str, int] = {}
    for a in answers:
        statuses[str(a.status)] = statuses.get(str(a.status), 0) + 1
        engines[a.engine or "?"] = engines.get(a.engine or "?", 0) + 1
    errors = [a for a in answers if a.status != 200]
    return {
        "count": len(answers),
        "statuses": dict(sorted(statuses.items())),
        "engines": dict(sorted(engines.items())),
        "rewritten": sum(a.rewritten for a in answers),
        "p50_ms": round(percentile(latencies, 50), 2),
        "p90_ms": round(percentile(latencies, 90), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(latencies[-1], 2) if latencies else None,
        "errors": len(errors),
        "error_kinds": sorted({f"{a.status} {a.detail[:120]}" for a in errors})[:5],
        "spark_reasons": sorted({a.reason for a in answers if a.reason})[:5],
    }


async def engine_load(
    url: str,
    token: str | None,
    clients: int,
    seconds: float,
    pickers: Callable[[int], Pick],
    pid: int | None,
    keep: bool = False,
) -> tuple[list[Answered], dict]:
    """`clients` closed-loop clients for `seconds`, client i drawing from `pickers(seed i)`:
    (their answers, the load's summary without the Spark share)."""
    stop_at = time.perf_counter() + seconds
    started = time.perf_counter()
    stop = asyncio.Event()
    memory = asyncio.create_task(watch_rss(pid, stop))
    runs = await asyncio.gather(
        *(engine_client(url, token, 3000 + i, stop_at, pickers(3000 + i), keep)
          for i in range(clients))
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    stop.set()
    answers = [a for run in runs for a in run]
    return answers, {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": len(answers),
        "throughput_per_s": round(len(answers) / elapsed, 1),
        "all": engine_summary(answers),
        "tile": engine_summary([a for a in answers if a.cls == "tile"]),
        "spark": engine_summary([a for a in answers if a.cls == "spark"]),
        "server_rss": await memory,
    }


async def shop_load(
    url: str, token: str | None, args: argparse.Namespace, share: float, pid: int | None,
    unique: bool,
) -> dict:  # fmt: skip
    """A phase on the shop star: tile-answerable queries and a `share` needing Spark."""
    _, result = await engine_load(url, token, args.clients, args.seconds,
                                  lambda seed: shop_picker(seed, share, unique), pid)  # fmt: skip
    return {"spark_share": share, **result}


# -- the server's memory ---------------------------------------------------------------------------
def _status_kb(pid: int, field: str) -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(found.group(1)) if found else None


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (the server's Python and the Spark driver's JVM under it)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in task.read_text().split()]
    return out


async def watch_rss(pid: int | None, stop: asyncio.Event) -> dict | None:
    """The server's resident memory every half second during the load (its whole process tree,
    and the Python process alone, where the tile engine and its cache live), and at the end
    each process's own peak (VmHWM, since it started)."""
    if pid is None:
        return None
    peak_tree = peak_python = 0
    while not stop.is_set():
        sizes = {p: _status_kb(p, "VmRSS") or 0 for p in _tree(pid)}
        peak_tree = max(peak_tree, sum(sizes.values()))
        peak_python = max(peak_python, sizes.get(pid, 0))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
    hwm = {p: _status_kb(p, "VmHWM") for p in _tree(pid)}
    return {
        "pid": pid,
        "peak_tree_rss_mb": round(peak_tree / 1024, 1),  # sampled
        "peak_python_rss_mb": round(peak_python / 1024, 1),  # sampled
        "python_hwm_mb": round((hwm.get(pid) or 0) / 1024, 1),
        "children_hwm_mb": {
            str(p): round((kb or 0) / 1024, 1) for p, kb in hwm.items() if p != pid
        },  # fmt: skip
    }


def tile_cache_metrics(url: str, token: str | None) -> dict | None:
    """The tile cache's bytes against its budget, when /metrics shows them (a gauge named
    mvlattice_tile_cache_*); None when the server does not expose it."""
    text = metrics_text(url, token)
    found = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^mvlattice_tile_cache_(\w+)(?:\{[^}]*\})? (\S+)$", text, re.M)
    }
    answered = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r'^mvlattice_queries_total\{engine="(\w+)"\} (\S+)$', text, re.M)
    }
    kept = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^mvlattice_kept_answers_(\w+) (\S+)$", text, re.M)
    }
    return {
        "tile_cache": found or None,
        "kept_answers": kept or None,
        "queries_by_engine": answered or None,
    }


def report_engine(results: dict, as_json: bool) -> None:
    for phase, r in results["phases"].items():
        print(
            f"{phase:6} {r['clients']} clients  {r['seconds']:.1f} s  {r['requests']} requests  "
            f"{r['throughput_per_s']:.1f} req/s  (share needing Spark {r['spark_share']:g})"
        )
        for cls in ("tile", "spark"):
            c = r[cls]
            if not c["count"]:
                continue
            print(
                f"  {cls:5} {c['count']:7} queries  p50 {c['p50_ms']:8.2f} ms  p90 "
                f"{c['p90_ms']:8.2f} ms  p99 {c['p99_ms']:8.2f} ms  max {c['max_ms'] or 0:8.2f} ms"
                f"  errors {c['errors']}  answered by {c['engines']}"
            )
            for kind in c["error_kinds"]:
                print(f"        error: {kind}")
            for reason in c["spark_reasons"]:
                print(f"        Spark answered a rewritten query: {reason}")
        if phase == "adhoc":
            report_adhoc(r)
        rss = r["server_rss"]
        if rss:
            print(
                f"  server memory: peak RSS {rss['peak_tree_rss_mb']:.0f} MB (process tree, "
                f"sampled), Python {rss['peak_python_rss_mb']:.0f} MB (VmHWM "
                f"{rss['python_hwm_mb']:.0f} MB), children VmHWM {rss['children_hwm_mb']} MB"
            )
        else:
            print("  server memory: unknown (give --server-pid with --url)")
    if "server_metrics" in results:  # the shop's server (the ad-hoc phase reports its own)
        cache = results["server_metrics"] or {}
        tiles = cache.get("tile_cache")
        if tiles:
            print(f"tile cache (from /metrics): {tiles}")
        else:
            print("tile cache: not exposed by the server's /metrics")
        print(f"queries by engine (from /metrics): {cache.get('queries_by_engine')}")
        print(f"kept answers (from /metrics): {cache.get('kept_answers')}")
    if results.get("warm_up_problems"):
        print(f"warm-up problems: {results['warm_up_problems']}")
    for line in engine_verdicts(results):
        print(line)
    if as_json:
        print(json.dumps(results))


def report_adhoc(r: dict) -> None:
    print(f"  {r['templates']} templates; literal kinds bound: {r['literal_kinds']}")
    print(f"  checked on Spark over the base tables (rewrite off): {r['checked']} answers, "
          f"{r['differences']} differences, {r['check_errors']} errors; Spark's answers by "
          f"{r['check_engines']}")  # fmt: skip
    for d in r["difference_examples"]:
        print(f"        difference: {d['difference']}\n          in: {d['sql']}")
    for e in r["check_error_kinds"]:
        print(f"        check error: {e}")
    rate = r["template_hit_rate"]
    print(f"  template hit rate: {rate if rate is not None else 'null'}"
          f"{' (' + r['template_hit_rate_note'] + ')' if rate is None else ''}")  # fmt: skip
    metrics = r.get("server_metrics") or {}
    print(f"  queries by engine (from /metrics, warm-up and check included): "
          f"{metrics.get('queries_by_engine')}; kept answers: "
          f"{metrics.get('kept_answers')}")  # fmt: skip
    if r["warm_up_problems"]:
        print(f"  warm-up problems: {r['warm_up_problems']}")


def engine_verdicts(results: dict) -> list[str]:
    out = []
    phases = results["phases"]
    if "tiles" in phases:
        t = phases["tiles"]["tile"]
        ok = t["errors"] == 0 and t["p99_ms"] <= 50
        out.append(f"goal tiles (p99 <= 50 ms, 0 errors): {'met' if ok else 'NOT met'} "
                   f"(p99 {t['p99_ms']} ms, {t['errors']} errors)")  # fmt: skip
    if "mixed" in phases:
        t, s = phases["mixed"]["tile"], phases["mixed"]["spark"]
        ok = t["errors"] == 0 and s["errors"] == 0 and t["p99_ms"] <= 100
        out.append(f"goal mixed (tile-answerable p99 <= 100 ms, 0 errors): "
                   f"{'met' if ok else 'NOT met'} (p99 {t['p99_ms']} ms, "
                   f"{t['errors'] + s['errors']} errors)")  # fmt: skip
    if "adhoc" in phases:
        a = phases["adhoc"]
        t = a["tile"]
        ok = (a["throughput_per_s"] >= 500 and t["p99_ms"] <= 50 and t["errors"] == 0
              and a["differences"] == 0 and a["check_errors"] == 0)  # fmt: skip
        out.append(f"goal adhoc (>= 500 req/s, p99 <= 50 ms, 0 errors, 0 differences): "
                   f"{'met' if ok else 'NOT met'} ({a['throughput_per_s']} req/s, p99 "
                   f"{t['p99_ms']} ms, {t['errors']} errors, {a['differences']} differences "
                   f"in {a['checked']} checked)")  # fmt: skip
    local = sum(p["tile"]["engines"].get("local", 0) for p in phases.values())
    sent = sum(p["tile"]["count"] for p in phases.values())
    out.append(f"tile-answerable queries answered by the tile engine: {local} of {sent}")
    return out


def engine_failed(results: dict) -> bool:
    """Any error, and (ad-hoc) any difference from Spark or any answer Spark could not check."""
    return any(
        p["all"]["errors"] or p.get("differences") or p.get("check_errors")
        for p in results["phases"].values()
    )


# The star each --engines phase loads: one server per star, one after the other (2 cores).
PHASE_STAR = {"tiles": "shop", "mixed": "shop", "unique": "shop", "adhoc": "foodmart"}


def run_engines(args: argparse.Namespace) -> int:
    """--engines: the phases asked, each group on a server of its star."""
    phases = {"both": ("tiles", "mixed"), "all": tuple(PHASE_STAR)}.get(args.phase, (args.phase,))
    results: dict = {"phases": {}}
    for star in dict.fromkeys(PHASE_STAR[p] for p in phases):
        with served(args, star) as (url, token, server, _root):
            pid = server.process.pid if server is not None else args.server_pid
            if star == "foodmart":
                results["phases"]["adhoc"] = run_adhoc(args, url, token, pid)
            else:
                wanted = [p for p in phases if PHASE_STAR[p] == star]
                run_shop_phases(args, url, token, pid, wanted, results)
    report_engine(results, args.json)
    return 1 if engine_failed(results) else 0


def run_shop_phases(
    args: argparse.Namespace, url: str, token: str | None, pid: int | None,
    phases: list[str], results: dict,
) -> None:  # fmt: skip
    """The tile-answerable load, the mixed one, every text new: on the shop's server."""
    shares = {"tiles": 0.0, "mixed": args.spark_share, "unique": 0.0}
    say("warming up: each query shape a few times …")
    results["warm_up_problems"] = asyncio.run(engine_warm_up(url, token, shop_warm_up_texts()))
    for phase in phases:
        share = shares[phase]
        say(f"{phase}: {args.clients} clients for {args.seconds:g} s, share needing Spark "
            f"{share:g} …")  # fmt: skip
        results["phases"][phase] = asyncio.run(
            shop_load(url, token, args, share, pid, phase == "unique")
        )
    results["server_metrics"] = tile_cache_metrics(url, token)


# -- the ad-hoc phase: new texts of known shapes, checked on Spark afterwards --------------------
ADHOC_SEED = 31
CHECK_CLIENTS = 2  # Spark answers the check's queries: a few at a time on 2 cores
TEMPLATE_METRICS = ("mvlattice_template_hits_total", "mvlattice_template_misses_total")


def run_adhoc(args: argparse.Namespace, url: str, token: str | None, pid: int | None) -> dict:
    """`mvlattice.proof.adhoc`'s traffic from --clients clients for --seconds (one generator
    for all: no text is sent twice), then --check answers asked again on Spark."""
    say("reading the dimension values and the dates from the data (Spark) …")
    domain = asyncio.run(read_domain(url, token))
    traffic = adhoc.AdhocTraffic(domain, ADHOC_SEED, args.templates, args.literal_seed)
    kinds: Counter[str] = Counter()

    def pick(_rng: random.Random | None = None) -> tuple[str, str]:
        query = traffic.next()
        kinds.update(query.kinds)
        return "tile", query.sql

    say("warming up: 16 ad-hoc texts one after the other …")
    problems = asyncio.run(engine_warm_up(url, token, [pick()[1] for _ in range(16)]))
    kinds.clear()
    say(f"adhoc: {args.clients} clients for {args.seconds:g} s, every text new …")
    answers, result = asyncio.run(
        engine_load(url, token, args.clients, args.seconds, lambda _seed: pick, pid, keep=True)
    )
    say(f"checking {args.check} answers on Spark over the base tables (rewrite off) …")
    check = asyncio.run(check_on_spark(url, token, answers, args.check))
    return {
        "spark_share": 0.0, **result, **check, **template_hit_rate(url, token),
        "templates": len(traffic.templates), "literal_kinds": dict(sorted(kinds.items())),
        "warm_up_problems": problems, "server_metrics": tile_cache_metrics(url, token),
    }  # fmt: skip


async def ask(conn: Connection, sql: str, rewrite: bool = True) -> dict:
    """One /v1/query's answer document (numbers as Decimal); anything but a 200 with rows
    raises RuntimeError."""
    body = json.dumps({"sql": sql, "rewrite": rewrite}).encode()
    status, payload = await asyncio.wait_for(conn.post("/v1/query", body), MIXED_TIMEOUT)
    doc = _json_or_none(payload, exact=True)
    if status != 200 or not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise RuntimeError(f"{status} {payload[:200].decode(errors='replace')}")
    return doc


async def read_domain(url: str, token: str | None) -> adhoc.Domain:
    """The literals the traffic binds, read through the service (rewrite off: Spark over the
    base tables), so that they are the served data's own."""
    conn = connect(url, token)
    rows = {name: (await ask(conn, sql, rewrite=False))["rows"]
            for name, sql in adhoc.DOMAIN_SQL.items()}  # fmt: skip
    await conn.close()
    first, last = (dt.date.fromisoformat(str(v)[:10]) for v in rows.pop("the_date")[0])
    return adhoc.Domain.of({name: [r[0] for r in found] for name, found in rows.items()},
                           first, last)  # fmt: skip


async def check_on_spark(url: str, token: str | None, answers: list[Answered], size: int) -> dict:
    """`size` of the answers (drawn at random) asked again with rewriting off — Spark over the
    base tables — and compared: the same column names, the same rows as multisets (numbers by
    value, DECIMAL 1.50 = 1.5, within proof.compare's tolerance)."""
    kept = [a for a in answers if a.answer is not None]
    sample = iter(random.Random(ADHOC_SEED).sample(kept, min(size, len(kept))))
    differences: list[dict] = []
    errors: list[str] = []
    engines: Counter[str] = Counter()

    async def worker() -> None:
        conn = connect(url, token)
        for a in sample:  # one iterator for the workers: each answer is checked once
            try:
                base = await ask(conn, a.sql, rewrite=False)
            except (RuntimeError, TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
                await conn.close()
                continue
            engines[str(base.get("engine"))] += 1
            found = answer_difference(a.answer or {}, base)
            if found:
                differences.append({"sql": a.sql, "difference": found[:400]})
        await conn.close()

    await asyncio.gather(*(worker() for _ in range(CHECK_CLIENTS)))
    return {
        "checked": sum(engines.values()), "differences": len(differences),
        "check_errors": len(errors), "check_engines": dict(engines),
        "difference_examples": differences[:5], "check_error_kinds": sorted(set(errors))[:5],
    }  # fmt: skip


def answer_difference(fast: dict, base: dict) -> str:
    """What differs between an answer and Spark's on the base tables ("" when nothing)."""
    if fast.get("truncated") or base.get("truncated"):
        return "an answer was cut at the server's --max-rows: not comparable"
    if list(fast["columns"]) != list(base["columns"]):
        return f"columns {fast['columns']} vs Spark's {base['columns']}"
    return difference(as_multiset(base["rows"]), as_multiset(fast["rows"]))


def template_hit_rate(url: str, token: str | None) -> dict:
    """Hits / (hits + misses) of the server's template cache, from /metrics; None (and why)
    when the server exposes neither counter."""
    text = metrics_text(url, token)
    counts = [
        [float(v) for v in re.findall(rf"^{name}(?:\{{[^}}]*\}})? (\S+)$", text, re.M)]
        for name in TEMPLATE_METRICS
    ]
    if not any(counts):
        note = f"/metrics has no {' or '.join(TEMPLATE_METRICS)}: the server has no template cache"
        return {"template_hit_rate": None, "template_hit_rate_note": note}
    hits, misses = (sum(c) for c in counts)
    rate = round(hits / (hits + misses), 4) if hits + misses else None
    return {"template_hit_rate": rate, "template_hits": hits, "template_misses": misses}


# -- a self-contained server ---------------------------------------------------------------------
@contextlib.contextmanager
def served(args: argparse.Namespace, star: str) -> Iterator[tuple[str, str | None, Any, Any]]:
    """(url, token, server, root): the --url service, or one started on `star`'s data in a new
    temporary folder (server and root None with --url), stopped on leaving unless --keep."""
    if args.url:
        token = Path(args.token_file).read_text().strip() if args.token_file else None
        yield args.url.rstrip("/"), token, None, None
        return
    from tests.integration.test_service_support import TOKEN

    root = Path(tempfile.mkdtemp(prefix="serve_load_"))
    server = start_server(root, star)
    try:
        yield server.url, TOKEN, server, root
    finally:
        if not args.keep:
            server.stop()


def shop_data(spark: Any, root: Path) -> tuple[Path, tuple[str, ...]]:
    """The shop star under root/data, its model: (model, extra `serve` arguments)."""
    from tests.integration.test_service_support import make_shop

    return make_shop(spark, root), ()


def foodmart_data(spark: Any, root: Path) -> tuple[Path, tuple[str, ...]]:
    """FoodMart under the served warehouse, and `proof.adhoc`'s model of it (tiles that answer
    every ad-hoc text). Answers of up to 100,000 rows, so that none is cut before the check."""
    from mvlattice.datasets import foodmart
    from tests.integration.test_service_support import TOKEN

    foodmart.load(spark, str(root / "warehouse"), progress=say)
    model = root / "foodmart_adhoc.yaml"
    model.write_text(yaml.safe_dump(adhoc.foodmart_document()))
    (root / "token").write_text(TOKEN + "\n")
    return model, ("--max-rows", "100000")


STAR_DATA = {"shop": shop_data, "foodmart": foodmart_data}


def start_server(root: Path, star: str = "shop"):  # a tests.integration Server
    from mvlattice.spark import build_session, spark_conf
    from tests.integration.test_service_support import start, wait_for_job

    say(f"writing the {star} star (Delta) with a short-lived Spark session …")
    conf = spark_conf("local[1]", str(root), ({"spark.sql.shuffle.partitions": "1"},))
    spark = build_session("local[1]", str(root), conf, app_name="serve-load-data")
    model, extra = STAR_DATA[star](spark, root)
    spark.stop()
    say("starting `mvlattice serve` (its own Spark driver) …")
    server = start(model, root / "warehouse", root / "server.log", extra=extra)
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

    def rewrite(self, sql: str, explain: bool, model: str | None):
        from mvlattice.http.backend import Rewritten

        doc = {"rewritten": False, "sql": sql, "materializations": [], "explain": []}
        return Rewritten("null", doc, False, (), 0.0)


def null_server(port: int) -> None:
    import uvicorn

    from mvlattice.http.app import create_app
    from mvlattice.http.service import Service, Settings
    from tests.integration.test_service_support import TOKEN

    service = Service(NullBackend(), Settings(token=TOKEN))  # type: ignore[arg-type]
    uvicorn.run(create_app(service), host="127.0.0.1", port=port, log_level="warning")


def start_null_server():  # (url, Popen)
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
    parser.add_argument(
        "--mixed",
        action="store_true",
        help="executing /v1/query requests with a share of hostile ones among them",
    )
    parser.add_argument(
        "--hostile-share", type=float, default=0.25, help="with --mixed: hostile share (0.25)"
    )
    parser.add_argument(
        "--engines",
        action="store_true",
        help="executing /v1/query requests the tile engine can answer, then a mixed load",
    )
    parser.add_argument(
        "--spark-share", type=float, default=0.25, help="with --engines: mixed share (0.25)"
    )
    parser.add_argument(
        "--phase",
        choices=("both", "tiles", "mixed", "unique", "adhoc", "all"),
        default="both",
        help="with --engines: both = tiles then mixed; unique = tile-answerable, every text "
        "new; adhoc = FoodMart, new texts of known shapes, checked on Spark; all = every phase",
    )
    parser.add_argument(
        "--templates", type=int, default=64, help="with --phase adhoc: query shapes (64)"
    )
    parser.add_argument(
        "--literal-seed",
        type=int,
        default=None,
        help="with --phase adhoc: another seed for the literals (the same shapes, other texts: "
        "a second run against a server kept warm with --keep)",
    )
    parser.add_argument(
        "--check", type=int, default=300, help="with --phase adhoc: answers checked on Spark"
    )
    parser.add_argument("--server-pid", type=int, help="with --url: its pid, for its memory")
    parser.add_argument("--null-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.null_server:
        null_server(args.null_server)
        return 0
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600:
        raise SystemExit("bounded: 1..256 clients, at most 600 s")
    if not 0 <= args.hostile_share <= 1:
        raise SystemExit("--hostile-share is a share: 0..1")
    if not 0 <= args.spark_share <= 1:
        raise SystemExit("--spark-share is a share: 0..1")
    if args.url:
        host = urllib.parse.urlsplit(args.url).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit(f"loopback only: {host} is not a loopback address")
    if args.engines:
        return run_engines(args)
    with served(args, "shop") as (url, token, server, root):
        if args.mixed:
            return run_mixed(args, url, token, server, root)
        results = {}
        if args.solo_seconds > 0:
            say(f"1 client for {args.solo_seconds:g} s …")
            results["solo"] = asyncio.run(load(url, token, 1, args.solo_seconds))
        say(f"{args.clients} clients for {args.seconds:g} s …")
        results["load"] = asyncio.run(load(url, token, args.clients, args.seconds))
        results["server_rewrite_time"] = server_rewrite_times(url, token)
    if not args.no_baseline:  # after the server stopped: the cores are the baseline's alone
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

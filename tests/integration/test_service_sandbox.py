"""Hostile clients against ONE real `mvlattice serve` (issue 17): script transforms, file and
path relations, reflection, function creation, commands, hidden in CTEs and subqueries, huge
generators, deep nesting, oversized answers, foreign Host/Origin, form POSTs. Each is refused
with a 4xx and one line, never a 5xx or a traceback, and a normal query answers right after.
Then the deadline: a slow join is cancelled at `--query-timeout` (and when its client goes
away) and the cores are idle again within seconds while a normal query is still answered."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.test_service_support import (
    SALES_DDL,
    TOKEN,
    Server,
    make_shop,
    sales,
    start,
)
from tests.support import wait_until

pytestmark = pytest.mark.spark

TIMEOUT = 10  # --query-timeout of this module's server, seconds
MAX_RESPONSE = 3000  # --max-response-bytes
NORMAL = "select year, count(*) as n, sum(units) as units from shop.sales group by year"
# A theta self-join over the module's 100,200 sales: ~5e9 comparisons, minutes of work that
# Spark can interrupt between rows. (Cartesian products are refused outright.)
SLOW = "select count(*) from shop.sales a join shop.sales b on a.sale_id < b.sale_id"
MORE_SALES = 100_000

HOSTILE_SQL = [
    # script transforms, also hidden
    ("SELECT TRANSFORM(1) USING 'id' AS (out STRING)", "TRANSFORM"),
    (
        "SELECT TRANSFORM(product_id) USING 'cat /etc/passwd' AS (o STRING) FROM shop.product",
        "TRANSFORM",
    ),
    ("WITH c AS (SELECT TRANSFORM(1) USING 'id' AS (o STRING)) SELECT * FROM c", "TRANSFORM"),
    (
        "SELECT * FROM shop.sales WHERE units IN (SELECT TRANSFORM(1) USING 'id' AS (o INT))",
        "TRANSFORM",
    ),
    # path relations of each file format, the query log, hidden in CTEs and subqueries
    ("SELECT * FROM text.`/etc/hostname`", "hostname"),
    ("SELECT * FROM csv.`/etc/passwd`", "passwd"),
    ("SELECT * FROM json.`/etc/hostname`", "hostname"),
    ("SELECT * FROM parquet.`/tmp`", "tmp"),
    ("SELECT * FROM orc.`/tmp`", "tmp"),
    ("SELECT * FROM avro.`/tmp`", "tmp"),
    ("SELECT * FROM binaryFile.`/etc/hostname`", "hostname"),
    ("SELECT * FROM delta.`{warehouse}/_mvlattice/query_log`", "file or path"),
    ("SELECT * FROM delta.`{data}/sales`", "file or path"),
    ("SELECT * FROM parquet.`{data}/sales`", "sales"),
    ("WITH x AS (SELECT * FROM text.`/etc/hostname`) SELECT * FROM x", "hostname"),
    (
        "SELECT * FROM shop.sales WHERE year IN (SELECT length(value) FROM text.`/etc/hostname`)",
        "hostname",
    ),
    (
        "SELECT * FROM shop.sales WHERE EXISTS (SELECT 1 FROM delta.`{data}/product`)",
        "file or path",
    ),
    ("SELECT * FROM read_files('/etc/hostname')", ""),
    # reflection, file names, the OS user, XML readers
    ("SELECT reflect('java.lang.System', 'getProperty', 'user.home')", "reflect"),
    ("SELECT java_method('java.lang.Runtime', 'getRuntime')", "java_method"),
    ("SELECT try_reflect('java.lang.System', 'getenv', 'HOME')", "reflect"),
    (
        "WITH c AS (SELECT reflect('java.lang.System', 'getProperty', 'user.home') AS r) "
        "SELECT * FROM c",
        "reflect",
    ),
    (
        "SELECT * FROM shop.sales WHERE units = (SELECT length(java_method('java.lang.System', "
        "'getProperty', 'user.home')))",
        "java_method",
    ),
    (
        "SELECT year FROM shop.sales GROUP BY year HAVING max(reflect('java.lang.System', "
        "'getProperty', 'x')) IS NULL",
        "reflect",
    ),
    ("SELECT input_file_name() FROM shop.sales", "input_file_name"),
    ("SELECT current_user()", "user"),
    ("SELECT xpath_string('<a>1</a>', 'a')", "xpath"),
    ("SELECT from_xml('<a>1</a>', 'a INT')", "from_xml"),
    # functions and views created, commands of every kind
    ("CREATE TEMPORARY FUNCTION f AS 'org.apache.hadoop.hive.ql.udf.UDFJson'", "only queries"),
    ("CREATE FUNCTION f AS 'x.Y' USING JAR '/tmp/x.jar'", "only queries"),
    ("CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1", "only queries"),
    ("SET spark.sql.runSQLOnFiles=true", "only queries"),
    ("RESET", "only queries"),
    ("ADD JAR /tmp/x.jar", "only queries"),
    ("ADD FILE /etc/passwd", "only queries"),
    ("LIST FILES", "only queries"),
    ("CACHE TABLE shop.sales", "only queries"),
    ("UNCACHE TABLE shop.sales", "only queries"),
    ("REFRESH TABLE shop.sales", "only queries"),
    ("DROP TABLE shop.sales", "only queries"),
    ("INSERT INTO shop.sales SELECT * FROM shop.sales", "only queries"),
    ("WITH x AS (SELECT 1) INSERT INTO shop.sales SELECT * FROM x", "only queries"),
    ("DELETE FROM shop.sales", "only queries"),
    ("CREATE TABLE stolen AS SELECT * FROM shop.sales", "only queries"),
    ("SHOW TABLES", "only queries"),
    ("DESCRIBE shop.sales", "only queries"),
    ("EXPLAIN SELECT 1", "only queries"),
    ("USE default", "only queries"),
    ("ANALYZE TABLE shop.sales COMPUTE STATISTICS", "only queries"),
    ("SELECT 1; DROP TABLE shop.sales", "statement"),
    # hints that reshape the job
    ("SELECT /*+ REPARTITION(100000) */ * FROM shop.sales", "hint"),
    ("SELECT /*+ BROADCAST(s) */ * FROM shop.sales s", "hint"),
    # huge generators and sized values
    ("SELECT count(*) FROM range(1000000000000)", "range"),
    ("WITH r AS (SELECT * FROM range(0, 9000000000000, 1)) SELECT count(*) FROM r", "range"),
    ("SELECT explode(sequence(1, 1000000000))", "sequence"),
    ("SELECT explode(sequence(1, units * 100000000)) FROM shop.sales", "sequence"),
    ("SELECT repeat('x', 1000000000)", "repeat"),
    ("SELECT array_repeat(1, 1000000000)", "array_repeat"),
    ("SELECT lpad('x', 2000000000, 'y')", "lpad"),
    ("SELECT repeat(cast(sale_id AS STRING), units * 1000000000) FROM shop.sales", "repeat"),
    # deep nesting
    ("SELECT " + "(" * 200 + "1" + ")" * 200, "nests"),
    ("SELECT " + "(" * 1900 + "1" + ")" * 1900, "nests"),
    ("SELECT " + "(" * 5000 + "1" + ")" * 5000, "body larger"),
    ("SELECT * FROM " + "(SELECT * FROM " * 150 + "shop.sales" + ") t" * 150, "nests"),
    # a relation that is not the model's
    ("SELECT * FROM default.nosuch", "nosuch"),
    # cartesian products, explicit and implicit
    ("SELECT count(*) FROM shop.sales a CROSS JOIN shop.sales b", "CROSS JOIN"),
    ("SELECT count(*) FROM shop.sales a, shop.sales b, shop.sales c", "cartesian"),
    # aggregates whose buffer grows with the input: one group fills the JVM's heap (issue 30)
    ("SELECT size(collect_list(repeat('x', 100000))) AS n FROM range(100000)", "collect_list"),
    ("SELECT year, collect_set(sale_id) FROM shop.sales GROUP BY year", "collect_set"),
    ("SELECT array_agg(units) FROM shop.sales", "collect_list"),
    ("SELECT percentile(units, 0.5) FROM shop.sales", "percentile"),
    ("SELECT median(units) FROM shop.sales", "refused"),
    ("SELECT mode(sale_id) FROM shop.sales", "mode"),
    ("SELECT string_agg(cast(sale_id AS STRING), ',') FROM shop.sales", "agg"),
    ("SELECT percentile_approx(units, 0.5, 1000000000) FROM shop.sales", "percentile_approx"),
    ("SELECT count_min_sketch(units, 0.0000001d, 0.99d, 1) FROM shop.sales", "count_min_sketch"),
    # regular expressions that backtrack without end, in tasks and constant-folded
    ("SELECT count(*) FROM shop.sales WHERE repeat(cast(sale_id AS STRING), 30) "
     "RLIKE '(.*a){{12}}$'", "pattern"),
    ("SELECT repeat('a', 40) RLIKE '(a|aa)*c'", "pattern"),
    ("SELECT regexp_replace(repeat('x', 40), '(x+x+)+y', '')", "pattern"),
    ("SELECT regexp_extract(repeat('ab', 40), '((ab)*c)*', 0)", "pattern"),
    ("SELECT split(repeat('a', 40), '(a*)*b')", "pattern"),
    ("SELECT count(*) FROM shop.sales WHERE cast(units AS STRING) RLIKE cast(sale_id AS STRING)",
     "literal pattern"),
    ("SELECT count(*) FROM shop.sales WHERE cast(sale_id AS STRING) LIKE '%1%2%3%4%'",
     "wildcards"),
    ("SELECT count(*) FROM shop.sales WHERE cast(sale_id AS STRING) LIKE ALL ('%1%', '%2%')",
     "LIKE ALL"),
    # texts Spark parses recursively while it analyzes
    ("SELECT from_json('[]', '" + "array<" * 500 + "int" + ">" * 500 + "')", "from_json"),
    ("SELECT schema_of_json('" + "[" * 500 + "]" * 500 + "')", "schema_of_json"),
    ("SELECT CAST(NULL AS " + "array<" * 200 + "int" + ">" * 200 + ")", "nests"),
    ("SELECT levenshtein(repeat('a', 50000), repeat('b', 50000))", "levenshtein"),
    # old versions, change feeds and hidden file columns
    ("SELECT * FROM shop.sales VERSION AS OF 0", "old versions"),
    ("SELECT * FROM shop.sales TIMESTAMP AS OF '2000-01-01'", "old versions"),
    ("SELECT count(*) FROM shop.sales WHERE sale_id IN "
     "(SELECT sale_id FROM shop.sales VERSION AS OF 0)", "old versions"),
    ("SELECT * FROM table_changes('shop.sales', 0)", "change feed"),
    ("SELECT _metadata.file_path FROM shop.sales", "hidden column"),
    ("SELECT count(*) FROM shop.sales WHERE _metadata.file_size > 0", "hidden column"),
]  # fmt: skip


@pytest.fixture(scope="module")
def server(spark, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("service_sandbox")
    model = make_shop(spark, root)
    more = spark.createDataFrame(sales(200, MORE_SALES), SALES_DDL)
    more.write.format("delta").mode("append").save(str(root / "data" / "sales"))
    extra = (
        "--query-timeout",
        str(TIMEOUT),
        "--max-response-bytes",
        str(MAX_RESPONSE),
        "--no-scheduler",
        "--master",
        "local[4]",
    )  # fmt: skip  (2 slots a core, as serve)
    running = start(model, root / "warehouse", root / "server.log", extra=extra)
    warm_up(running)
    yield running
    running.stop()


def warm_up(server: Server, patience_s: float = 300.0) -> None:
    """The first queries compile and warm the JVM; on a slow machine several meet the short
    deadline, and a cancelled job keeps the cores a while. Ask until one is answered in time."""
    give_up = time.monotonic() + patience_s
    while time.monotonic() < give_up:
        if server.call("POST", "/v1/query", {"sql": NORMAL}, timeout=120)[0] == 200:
            return
        time.sleep(2)
    raise AssertionError(f"the server never answered {NORMAL!r} within {TIMEOUT} s")


def truth(spark, server: Server, sql: str) -> Counter:
    data = server.model.parent / "data"
    frame = spark.read.format("delta").load(str(data / "sales"))
    frame.createOrReplaceTempView("sandbox_sales")
    return Counter(
        tuple(r) for r in spark.sql(sql.replace("shop.sales", "sandbox_sales")).collect()
    )


def normal_answer_is_right(spark, server: Server) -> None:
    status, doc = server.call("POST", "/v1/query", {"sql": NORMAL})
    assert status == 200, doc
    assert Counter(tuple(r) for r in doc["rows"]) == truth(spark, server, NORMAL)


def refused_cleanly(status: int, doc: object) -> str:
    assert 400 <= status < 500, (status, doc)
    assert isinstance(doc, dict) and set(doc) == {"error"}, doc
    message = doc["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


@pytest.mark.parametrize("sql, says", HOSTILE_SQL, ids=[s[:60] for s, _ in HOSTILE_SQL])
def test_hostile_sql_is_refused_with_one_line(spark, server: Server, sql: str, says: str) -> None:
    data = server.model.parent / "data"
    text = sql.format(warehouse=server.warehouse, data=data)
    status, doc = server.call("POST", "/v1/query", {"sql": text})
    message = refused_cleanly(status, doc)
    assert says.lower() in message.lower(), message
    normal_answer_is_right(spark, server)


def test_nothing_hostile_reached_the_machine(server: Server) -> None:
    """The script transform never ran and no command changed the session or the data."""
    assert not (Path(str(server.warehouse)) / "_spark_catalog" / "stolen").exists()
    status, doc = server.call("POST", "/v1/query", {"sql": "select count(*) from shop.sales"})
    assert (status, doc["rows"]) == (200, [[200 + MORE_SALES]])


HOSTILE_HTTP = [
    ("foreign Host (DNS rebinding)", "GET", "/v1/tiles", None, {"Host": "attacker.example"}, 421),
    (
        "foreign Host on a query",
        "POST",
        "/v1/query",
        b'{"sql": "select 1"}',
        {"Host": "attacker.example:8765"},
        421,
    ),
    (
        "foreign Origin",
        "POST",
        "/v1/query",
        b'{"sql": "select 1"}',
        {"Origin": "http://attacker.example"},
        403,
    ),
    ("null Origin", "GET", "/v1/tiles", None, {"Origin": "null"}, 403),
    ("cross-site fetch", "GET", "/v1/lattices", None, {"Sec-Fetch-Site": "cross-site"}, 403),
    (
        "form POST to refresh",
        "POST",
        "/v1/tiles/units_by_year/refresh",
        b"a=1",
        {"Content-Type": "application/x-www-form-urlencoded"},
        415,
    ),
    (
        "form POST to materialize",
        "POST",
        "/v1/lattices/star/materialize",
        b"",
        {"Content-Type": "multipart/form-data; boundary=x"},
        415,
    ),
    (
        "text/plain query",
        "POST",
        "/v1/query",
        b'{"sql": "select 1"}',
        {"Content-Type": "text/plain"},
        415,
    ),
    ("body not JSON", "POST", "/v1/query", b"{not json", {}, 400),
    ("empty SQL", "POST", "/v1/query", b'{"sql": ""}', {}, 400),
    ("body over the limit", "POST", "/v1/query", b'{"sql": "' + b"1" * 10_000 + b'"}', {}, 413),
]


@pytest.mark.parametrize("what, method, path, body, headers, expected", HOSTILE_HTTP,
                         ids=[h[0] for h in HOSTILE_HTTP])  # fmt: skip
def test_hostile_requests_are_refused(
    spark, server: Server, what: str, method: str, path: str, body: bytes | None,
    headers: dict, expected: int,
) -> None:  # fmt: skip
    status, doc = server.call(method, path, raw=body, headers=headers)
    assert status == expected, (what, doc)
    refused_cleanly(status, doc)
    normal_answer_is_right(spark, server)


def test_an_answer_over_the_byte_limit_is_cut_or_refused(server: Server) -> None:
    wide = "select s.*, repeat('x', 100) as pad from shop.sales s"
    status, doc = server.call("POST", "/v1/query", {"sql": wide})
    assert status == 200 and doc["truncated"] is True, doc
    assert 0 < doc["row_count"] == len(doc["rows"]) < 3000 // 100
    # Every row is at least 4,000 bytes, over the 3,000-byte cap whichever row comes first.
    huge = "select repeat(cast(sale_id as string), 4000) as s from shop.sales"
    status, doc = server.call("POST", "/v1/query", {"sql": huge})
    assert "larger than" in refused_cleanly(status, doc) and status == 413


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_huge_answer_never_sits_in_the_server_whole(spark, server: Server) -> None:
    """900 MB of rows under a 3,000-byte response cap: fetched a partition at a time and cut,
    so the server's Python peak grows by far less than the answer (it grew ~1 GB)."""
    before = peak_rss_mib(server.process.pid)
    sql = "SELECT repeat('x', 100000) AS s FROM range(9000)"
    status, doc = server.call("POST", "/v1/query", {"sql": sql}, timeout=120)
    assert status in (200, 413), doc
    assert peak_rss_mib(server.process.pid) - before < 300
    normal_answer_is_right(spark, server)


def test_substitution_never_reads_the_environment_and_the_log_shows_what_ran(
    spark, server: Server
) -> None:
    for text in ("SELECT '${env:HOME}' AS x", "SELECT '${system:user.dir}' AS x"):
        status, doc = server.call("POST", "/v1/query", {"sql": text})
        assert status == 200 and doc["rows"] == [[text.split("'")[1]]], doc
    on_tiles = ("SELECT p.category, '${env:HOME}' AS h, count(*) AS n FROM shop.sales s "
                "JOIN shop.product p USING (product_id) GROUP BY p.category")  # fmt: skip
    status, doc = server.call("POST", "/v1/query", {"sql": on_tiles})
    assert status == 200 and {row[1] for row in doc["rows"]} == {"${env:HOME}"}, doc
    status, base = server.call("POST", "/v1/query", {"sql": on_tiles, "rewrite": False})
    assert Counter(map(tuple, base["rows"])) == Counter(map(tuple, doc["rows"])), base
    hidden = ("SELECT 1 AS shown -- ${system:line.separator}, (SELECT max(units) "
              "FROM shop.sales) AS hidden")  # fmt: skip
    status, doc = server.call("POST", "/v1/query", {"sql": hidden})
    assert status == 200 and doc["columns"] == ["shown"] and doc["rows"] == [[1]], doc
    status, log = server.call("GET", "/v1/querylog?limit=5")
    assert hidden in [entry["sql"] for entry in log["entries"]]
    normal_answer_is_right(spark, server)


def test_nan_infinity_and_intervals_answer_as_json(server: Server) -> None:
    sql = ("select cast('NaN' as double) as nan, double('inf') as inf, "
           "interval '1' day as d, interval '1-2' year to month as ym")  # fmt: skip
    status, doc = server.call("POST", "/v1/query", {"sql": sql})
    assert status == 200, doc
    nan, inf, day, ym = doc["rows"][0]
    assert (nan, inf) == (None, None)
    assert isinstance(day, str) and "1" in day and isinstance(ym, str) and "1-2" in ym


def test_the_log_holds_no_traceback(server: Server) -> None:
    assert "Traceback" not in server.output()
    status, health = server.call("GET", "/healthz", token=None)
    assert status == 200 and health["status"] == "ok"


# -- deadlines -------------------------------------------------------------------------------------
def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by a process and all its descendants (the JVM)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    tree, grew = {pid}, True
    while grew:
        more = {p for p, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(times.get(p, 0.0) for p in tree)


IDLE = 0.5  # cores: the service's own background work (the query-log writer) stays below it


def busy_cores(pid: int, seconds: float = 1.5) -> float:
    before = tree_cpu_seconds(pid)
    time.sleep(seconds)  # the window the CPU use is measured over, not a wait for an event
    return (tree_cpu_seconds(pid) - before) / seconds


def test_a_slow_query_is_cancelled_at_the_deadline(spark, server: Server) -> None:
    answers: dict[str, tuple] = {}

    def slow_running() -> bool:  # admitted, and its join busy on the cores
        status, health = server.call("GET", "/healthz", token=None)
        return health["queries"]["running"] >= 1 and busy_cores(server.process.pid, 0.5) > IDLE

    def normal_meanwhile() -> None:
        try:
            wait_until(slow_running, 60, "the slow query to run", interval=0.05)
            answers["normal"] = server.call("POST", "/v1/query", {"sql": NORMAL}, timeout=120)
        except AssertionError as failed:
            answers["normal"] = (None, str(failed))

    helper = threading.Thread(target=normal_meanwhile)
    helper.start()
    started = time.monotonic()
    status, doc = server.call("POST", "/v1/query", {"sql": SLOW}, timeout=120)
    took = time.monotonic() - started
    assert status == 408 and "cancelled" in refused_cleanly(status, doc), doc
    assert TIMEOUT - 1 <= took <= TIMEOUT + 15, took
    helper.join(120)
    status, doc = answers["normal"]
    assert status == 200, doc
    assert Counter(tuple(r) for r in doc["rows"]) == truth(spark, server, NORMAL)
    idle_by = time.monotonic() + 5.0
    while busy_cores(server.process.pid) > IDLE:
        assert time.monotonic() < idle_by, "the cores were still busy 5 s after the deadline"


def test_a_client_that_goes_away_cancels_its_query(server: Server) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    body = json.dumps({"sql": SLOW})
    started = time.monotonic()
    connection = http.client.HTTPConnection(host, int(port), timeout=1.5)
    connection.request(
        "POST",
        "/v1/query",
        body,
        {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
    )
    with pytest.raises(OSError):  # no answer before the client gives up
        connection.getresponse()
    connection.close()  # the client goes away
    status, health = server.call("GET", "/healthz", token=None)
    assert health["queries"]["running"] == 1, "the slow join should still be running"
    while health["queries"]["running"] or busy_cores(server.process.pid) > IDLE:
        assert time.monotonic() - started < TIMEOUT - 1, "not cancelled before the deadline"
        status, health = server.call("GET", "/healthz", token=None)
    assert status == 200 and health["status"] == "ok"

"""Queries Spark rejects are never answered (issue 36): a corpus of near misses — each a
FoodMart query the tiles answer, changed by one quirk of another dialect or one mistake Spark's
parser or analyzer refuses (`proof.rejected`) — none answered by the Python API, the CLI or the
HTTP service, each failing as the same query fails unrewritten (SqlError, Spark's first line).

sqlglot reads many of them and writes them back as valid Spark SQL (double-quoted names,
`LIMIT 0, 5`, `CAST(x AS TEXT)`, a column left out of the GROUP BY …): the rewriter alone
answers dozens from the tiles, which is what `Workspace` no longer lets through.

The module has a warehouse of its own (FoodMart's data read where the session loaded it): the
service's query log must not weigh the plans of other tests on the session's warehouse."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.errors import SqlError
from mvlattice.model.loader import known_columns
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.proof.rejected import NearMiss, near_misses
from mvlattice.workspace import Workspace
from tests.conftest import FOODMART_MODEL
from tests.integration.test_service_support import TOKEN, Server, start

pytestmark = pytest.mark.spark

LATTICE = "rj_star"  # its own lattice: its tiles never meet other tests' tiles
F = "foodmart"
BY_TIME = f"{F}.sales_fact_1997 s join {F}.time_by_day t on s.time_id = t.time_id"
BY_PRODUCT = (
    f"{F}.sales_fact_1997 s join {F}.product p on s.product_id = p.product_id "
    f"join {F}.product_class pc on p.product_class_id = pc.product_class_id"
)
BY_BOTH = f"{BY_PRODUCT} join {F}.time_by_day t on s.time_id = t.time_id"
USING = f"{F}.sales_fact_1997 join {F}.time_by_day using (time_id)"
TEMPLATES = (
    f"select t.the_month, count(*) as c from {BY_TIME} group by t.the_month",
    f"select the_year, the_month, sum(unit_sales) as units from {USING} "
    "group by the_year, the_month",
    f"select t.the_year, count(*) as c, sum(s.unit_sales) as units from {BY_TIME} "
    "where t.the_month = 'March' group by t.the_year",
    f"select pc.product_family, sum(s.store_sales) as sales from {BY_PRODUCT} "
    "group by pc.product_family",
    f"select pc.product_family, t.the_year, min(s.store_cost) as lo, max(s.store_cost) as hi "
    f"from {BY_BOTH} group by pc.product_family, t.the_year",
    f"select pc.product_family, count(*) as c from {BY_BOTH} where t.the_year = 1997 "
    "group by pc.product_family order by pc.product_family",
    f"select t.the_month, sum(s.unit_sales) as units from {BY_TIME} group by t.the_month "
    "order by units desc limit 3",
    f"select t.the_year, t.the_month, count(*) as c from {BY_TIME} "
    "where t.the_month in ('May', 'June') group by t.the_year, t.the_month having count(*) > 100",
    f"with m as (select t.the_month, count(*) as c from {BY_TIME} group by t.the_month) "
    "select the_month, c from m where c > 7000",
    f"select pc.product_family, sum(s.unit_sales) as units, count(*) as c from {BY_PRODUCT} "
    "where pc.product_family <> 'Drink' group by pc.product_family",
    f"select the_month, count(*) as c from {USING} group by the_month",
    f"select t.the_year, sum(s.store_sales) as sales, max(s.store_cost) as hi from {BY_BOTH} "
    "group by t.the_year",
)
# The issue's own query, as a Calcite user writes it.
ISSUE = (
    'select "the_month", count(*) as c from "foodmart"."sales_fact_1997" '
    'join "foodmart"."time_by_day" using ("time_id") group by "the_month"'
)
TILES = """
        tiles:
          - dimensions: [the_year, the_month]
            measures: [{agg: count}, {agg: sum, args: unit_sales}]
          - dimensions: [product_family, the_year]
            measures: [{agg: count}, {agg: sum, args: unit_sales}, {agg: sum, args: store_sales},
                       {agg: min, args: store_cost}, {agg: max, args: store_cost}]
"""
# Quirks whose near misses sqlglot parses (the CLI's and the service's own checks pass them
# on), most of them rewritten by the rewriter alone: the samples the CLI and HTTP are asked.
SAMPLED = (
    "double_quoted_names",
    "double_quoted_tables",
    "mysql_limit",
    "fetch_first",
    "postgres_text_cast",
    "postgres_double_colon",
    "foreign_aggregate",
    "too_many_arguments",
    "ungrouped_output",
    "compared_with_array",
    "number_as_condition",
    "order_by_position_out_of_range",
)


@pytest.fixture(scope="module")
def model_file(foodmart: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FoodMart's model over the session's FoodMart data, with two declared tiles."""
    root = tmp_path_factory.mktemp("rejected")
    text = FOODMART_MODEL.read_text()
    text = text.replace("location: foodmart ", f"location: {foodmart / 'foodmart'} ")
    text = text.replace("- name: star", f"- name: {LATTICE}")
    text = text.replace("algorithm: true", "algorithm: false" + TILES.rstrip())
    path = root / "foodmart.yaml"
    path.write_text(text)
    (root / "token").write_text(TOKEN + "\n")
    return path


@pytest.fixture(scope="module")
def ws(model_file: Path) -> Workspace:
    workspace = Workspace(model_file, warehouse=str(model_file.parent / "warehouse"))
    built = workspace.materialize(lattice=LATTICE)
    assert built.ok, built.to_json()
    return workspace


@pytest.fixture(scope="module")
def corpus(ws: Workspace) -> tuple[NearMiss, ...]:
    columns = {c for t in ws.model.tables for c in known_columns(t) or ()}
    return tuple(m for sql in TEMPLATES for m in near_misses(sql, columns))


@pytest.fixture(scope="module")
def server(ws: Workspace, model_file: Path) -> Iterator[Server]:
    root = model_file.parent
    running = start(model_file, root / "warehouse", root / "server.log")
    yield running
    running.stop()


def spark_rejection(ws: Workspace, sql: str) -> str:
    """Spark's own error for `sql`, as the Python API reports it; fails if Spark accepts."""
    with pytest.raises(SqlError) as rejected:
        ws.sql(sql)
    return str(rejected.value)


def sample(corpus: tuple[NearMiss, ...], per_quirk: int) -> list[NearMiss]:
    found: dict[str, list[NearMiss]] = {}
    for miss in corpus:
        if miss.quirk in SAMPLED and len(found.setdefault(miss.quirk, [])) < per_quirk:
            found[miss.quirk].append(miss)
    return [m for q in SAMPLED for m in found.get(q, [])]


def test_the_templates_are_answered_from_tiles(ws: Workspace) -> None:
    for sql in TEMPLATES:
        answered = ws.query(sql)
        assert answered.rewrite.rewritten, (sql, [e.message for e in ws.rewrite(sql).explain])
        base = ws.query(sql, rewrite=False)
        assert Counter(answered.rows) == Counter(base.rows) and base.rows, sql


def test_the_corpus_is_large_varied_and_rejected_by_spark(
    ws: Workspace, corpus: tuple[NearMiss, ...]
) -> None:
    assert len(corpus) >= 200
    assert len({m.quirk for m in corpus}) >= 30
    assert len({m.sql for m in corpus}) == len(corpus)
    for miss in corpus:
        assert spark_rejection(ws, miss.sql).startswith("SQL ")


def test_the_rewriter_alone_answers_many_of_them(ws: Workspace, corpus) -> None:
    """What the workspace did before it asked Spark: sqlglot's reading rewritten onto tiles."""
    context = context_for(ws.model)

    def rewritten(sql: str) -> bool:
        try:
            return rewrite(sql, context, explain=False).rewritten
        except SqlError:  # sqlglot rejects it too
            return False

    assert rewritten(ISSUE)
    answered = Counter(m.quirk for m in corpus if rewritten(m.sql))
    assert sum(answered.values()) >= 60, answered
    assert {"double_quoted_tables", "mysql_limit", "ungrouped_output"} <= set(answered)


def test_none_is_answered_by_the_python_api(ws: Workspace, corpus) -> None:
    assert spark_rejection(ws, ISSUE).startswith("SQL does not parse: [PARSE_SYNTAX_ERROR]")
    analyses = ws.acceptance.analyses
    for miss in (NearMiss("issue", ISSUE, ISSUE), *corpus):
        spark_says = spark_rejection(ws, miss.sql)
        with pytest.raises(SqlError) as queried:
            ws.query(miss.sql)
        with pytest.raises(SqlError) as rewritten:
            ws.rewrite(miss.sql)
        assert str(queried.value) == str(rewritten.value) == spark_says, miss
    assert ws.acceptance.analyses == analyses + 2 * (len(corpus) + 1)  # rejections not kept


def test_an_accepted_text_is_analyzed_once(ws: Workspace) -> None:
    sql = f"/* asked once */ {TEMPLATES[0]}"
    analyses = ws.acceptance.analyses
    for _ in range(3):
        assert ws.rewrite(sql, explain=False).rewritten
    assert ws.acceptance.analyses == analyses + 1


def test_none_is_answered_by_the_cli(ws: Workspace, model_file: Path, corpus, capsys) -> None:
    common = ["--warehouse", str(model_file.parent / "warehouse")]
    for miss in [NearMiss("issue", ISSUE, ISSUE), *sample(corpus, 1)]:
        spark_says = spark_rejection(ws, miss.sql)
        for command in (["query", "--no-log"], ["rewrite"]):
            argv = [command[0], str(model_file), miss.sql, *common, *command[1:]]
            assert main(argv) == 2, miss
            out, err = capsys.readouterr()
            assert out == "" and err == f"mvlattice: error: {spark_says}\n", miss
    assert main(["query", str(model_file), TEMPLATES[0], *common, "--no-log"]) == 0
    assert "January" in capsys.readouterr().out  # the template itself is answered


def test_none_is_answered_by_the_service(ws: Workspace, server: Server, corpus) -> None:
    status, doc = server.call("POST", "/v1/query", {"sql": TEMPLATES[0]})
    assert status == 200 and doc["rewritten"] and doc["engine"] == "local", doc
    for miss in [NearMiss("issue", ISSUE, ISSUE), *sample(corpus, 2)]:
        spark_says = spark_rejection(ws, miss.sql)
        for path in ("/v1/query", "/v1/rewrite"):
            status, doc = server.call("POST", path, {"sql": miss.sql})
            assert status == 400 and "rows" not in doc, (path, miss, doc)
            assert doc["error"] == {"code": "bad_sql", "message": spark_says}, (path, miss)


def test_the_service_asks_its_sandbox_which_reads_no_files(server: Server) -> None:
    """Spark is asked in the sandbox's session: a file path is no table there, and analyzing
    the text reads nothing (the workspace's own session would infer the file's schema)."""
    for path in ("/v1/query", "/v1/rewrite"):
        status, doc = server.call("POST", path, {"sql": "select x from csv.`/etc/passwd`"})
        assert status == 400 and "TABLE_OR_VIEW_NOT_FOUND" in doc["error"]["message"], doc

"""Statistic providers on real Spark and Delta: FoodMart's published counts, NULLs, keys, FDs,
an all-NULL column, the sketch's precision, and the cache keyed by Delta versions."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

import pytest

from mvlattice.delta.sources import SourceVersion
from mvlattice.lattice.statistic_provider import Counts
from mvlattice.statistics.exact import ExactCounter
from mvlattice.statistics.factory import provider_for
from mvlattice.statistics.memory import MemoryCounter
from mvlattice.statistics.sketch import SketchCounter
from mvlattice.statistics.store import statistics_store
from mvlattice.workspace import Workspace
from tests.conftest import FOODMART_MODEL

pytestmark = pytest.mark.spark

FACT_DDL = "id INT, d INT, a INT, b STRING, z STRING"
DIM_DDL = "d INT, g STRING"
# id is a key; d -> g through the dimension; a and b hold NULLs, and (NULL, 'x') and (1, NULL)
# are both there, so a NULL-dropping count(DISTINCT a, b) would get the pairs wrong; z is NULL.
FACT_ROWS = [
    (1, 1, 1, "x", None),
    (2, 1, None, "x", None),
    (3, 2, 1, None, None),
    (4, 2, None, None, None),
    (5, 3, 2, "y", None),
    (6, 3, 2, "y", None),
    (7, 4, None, "x", None),
    (8, 4, 1, "x", None),
]
DIM_ROWS = [(1, "low"), (2, "low"), (3, "high"), (4, None), (5, "unused")]
LABELS = ("id", "f.d", "a", "b", "z", "m.d", "g")

MODEL = """
version: "1.0"
schemas:
  - name: {schema}
    type: delta
    location: {location}
    tables:
      - name: fact
      - name: dim
        primaryKey: [d]
    lattices:
      - name: tiny
        sql: select 1 from {schema}.fact as f join {schema}.dim as m using (d)
"""


def make_star(spark, location: Path, model_dir: Path) -> Path:
    """The tiny star as Delta tables at `location`, in a schema named after it (the session's
    catalog is shared by the whole run); returns its model file."""
    for name, ddl, rows in (("fact", FACT_DDL, FACT_ROWS), ("dim", DIM_DDL, DIM_ROWS)):
        frame = spark.createDataFrame(rows, ddl)
        frame.write.format("delta").mode("overwrite").save(str(location / name))
    model = model_dir / "tiny.yaml"
    model.write_text(textwrap.dedent(MODEL.format(location=location, schema=location.name)))
    return model


@pytest.fixture(scope="module")
def inline(spark, warehouse: Path, tmp_path_factory) -> Path:
    return make_star(spark, warehouse / "stats_inline", tmp_path_factory.mktemp("stats_model"))


def expected_counts(sets):
    rows = [
        dict(zip(LABELS, (i, d, a, b, z, d, dict(DIM_ROWS)[d]), strict=True))
        for i, d, a, b, z in FACT_ROWS
    ]
    return MemoryCounter(rows).count(sets)


def all_sets(labels, max_size):
    return [frozenset(c) for k in range(1, max_size + 1) for c in itertools.combinations(labels, k)]


def test_exact_reproduces_calcites_foodmart_counts(spark, foodmart):
    ws = Workspace(FOODMART_MODEL, warehouse=str(foodmart))
    assert ws.spark is spark
    counter = ExactCounter(spark, ws.model.lattice("star"))
    published = {
        ("customer_id",): 5581,
        ("s.product_id",): 1559,
        ("s.time_id",): 323,
        ("brand_name",): 111,
        ("store_id",): 13,
        ("fiscal_period",): 1,  # all NULL: one value, as GROUP BY sees it
        ("customer_id", "brand_name"): 69_203,
    }
    counts = counter.count([frozenset(k) for k in published])
    assert counts.rows == 86_837
    assert {k: counts.distinct[frozenset(k)] for k in published} == published
    assert counter.jobs == 1


def test_profiler_is_within_two_percent_of_exact_on_foodmart(spark, foodmart):
    ws = Workspace(FOODMART_MODEL, warehouse=str(foodmart))
    lattice = ws.model.lattice("star")
    columns = ("customer_id", "s.product_id", "s.time_id", "store_id", "promotion_id",
               "store_sales", "unit_sales", "brand_name", "the_month", "fiscal_period")  # fmt: skip
    sets = all_sets(columns, 2) + [frozenset({"customer_id", "s.product_id", "s.time_id"})]
    sketch = SketchCounter(spark, lattice)
    approx = sketch.count(sets)
    exact = ExactCounter(spark, lattice, batch_size=len(sets)).count(sets)
    assert sketch.jobs == 1 and approx.rows == exact.rows == 86_837
    worst = max(abs(approx.distinct[s] - exact.distinct[s]) / exact.distinct[s] for s in sets)
    assert worst <= 0.02, worst


def test_exact_and_profiler_count_nulls_as_values_on_the_star(spark, inline):
    ws = Workspace(inline)
    lattice = ws.model.lattice("tiny")
    assert lattice.labels == LABELS
    sets = all_sets(LABELS, 2) + [frozenset({"a", "b", "g"})]
    expected = expected_counts(sets)
    exact = ExactCounter(ws.spark, lattice, batch_size=8).count(sets)  # several batches
    sketched = SketchCounter(ws.spark, lattice).count(sets)
    assert exact.rows == sketched.rows == 8
    assert dict(exact.distinct) == dict(expected.distinct)
    assert dict(sketched.distinct) == dict(expected.distinct)  # tiny sets: sketches are exact
    assert exact.distinct[frozenset({"a", "b"})] == 5  # (1,x) (NULL,x) (1,NULL) (NULL,NULL) (2,y)
    assert exact.distinct[frozenset({"z"})] == 1


@pytest.mark.parametrize("kind", ["exact", "profiler"])
def test_provider_finds_keys_dependencies_and_the_null_column(spark, inline, warehouse, kind):
    ws = Workspace(inline)
    stats = provider_for(ws.spark, ws.model, "tiny", kind=kind, cache=False, max_size=2)
    profile = stats.profile
    assert stats.row_count() == 8
    assert ("id",) in profile.unique_keys
    found = {str(f) for f in profile.dependencies}
    assert {"f.d -> g", "f.d -> m.d", "-> z"} <= found
    assert all(f.exact is (kind == "exact") for f in profile.dependencies)
    assert stats.distinct_count(["a", "b"]) == 5
    assert stats.distinct_count(["g", "f.d", "z"]) == 4  # by the FDs, never counted


def test_cache_hits_on_a_second_run_and_misses_after_an_append(spark, warehouse, tmp_path):
    ws = Workspace(make_star(spark, warehouse / "stats_inline_cache", tmp_path))
    first = provider_for(ws.spark, ws.model, "tiny", warehouse=str(tmp_path), max_size=2)
    assert first.row_count() == 8
    assert first.counter.misses > 0 and first.counter.hits == 0
    assert list((tmp_path / "_mvlattice" / "statistics" / "tiny").glob("*.json"))
    first.count_sets([("a", "b", "g")])  # as tile planning does; kept in the cache too

    second = provider_for(ws.spark, ws.model, "tiny", warehouse=str(tmp_path), max_size=2)
    assert second.profile.counts == first.profile.counts
    assert second.is_counted(["a", "b", "g"])
    assert second.counter.misses == 0 and second.counter.inner.jobs == 0

    appended = spark.createDataFrame([(9, 1, 7, "w", None)], FACT_DDL)
    appended.write.format("delta").mode("append").save(str(warehouse / "stats_inline_cache/fact"))
    third = provider_for(ws.spark, ws.model, "tiny", warehouse=str(tmp_path), max_size=2)
    assert third.row_count() == 9
    assert third.counter.hits == 0 and third.counter.inner.jobs == 1


def test_cli_prints_the_documented_json(inline, tmp_path, capsys):
    from mvlattice.cli.main import main

    argv = ["profile", str(inline), "--json", "--max-size", "2", "--provider", "exact"]
    assert main([*argv, "--warehouse", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["lattice"] == "tiny" and doc["rows"] == 8
    assert {"columns": ["a", "b"], "count": 5, "exact": True} in doc["distinct"]
    assert len(doc["distinct"]) == 7 + 21
    assert ["id"] in doc["unique_keys"]
    assert {"determinant": ["f.d"], "dependent": "g", "exact": True} in doc[
        "functional_dependencies"
    ]
    assert "pass 1: 28 column sets" in err  # progress goes to stderr


def test_cli_table_and_bad_input(inline, tmp_path, capsys):
    from mvlattice.cli.main import main

    assert main(["profile", str(inline), "--max-size", "1", "--warehouse", str(tmp_path)]) == 0
    out, _ = capsys.readouterr()
    assert "lattice tiny: 8 rows; HyperLogLog over per-column xxhash64 (numpy, p=16)" in out
    assert "unique keys: (id)" in out and "-> z  (approximate)" not in out
    assert "approximate one" in out and "from sketches: --all)" in out  # counted, not listed
    assert main(["profile", str(inline), "--max-size", "1", "--all",
                 "--warehouse", str(tmp_path)]) == 0  # fmt: skip
    assert "-> z  (approximate)" in capsys.readouterr().out
    assert main(["profile", str(inline), "--lattice", "nope"]) == 2
    _, err = capsys.readouterr()
    assert err.strip() == f"mvlattice: error: no lattice 'nope' in {inline}"


def test_cache_files_through_hadoop_for_uri_warehouses(spark, tmp_path):
    from mvlattice.lattice.lattice import Lattice, LatticeColumn, Node
    from mvlattice.statistics.store import HadoopFiles

    lat = Lattice(
        "lat", "s", "select 1 from s.f as f", (Node("f", "s", "f"),), (),
        (LatticeColumn("a", "f", "a", "`f`.`a`"),),
    )  # fmt: skip
    store = statistics_store(
        f"file://{tmp_path}", lat, "exact", {"s.f": SourceVersion(2, "id")}, spark
    )
    assert store is not None and isinstance(store.files, HadoopFiles)
    assert store.load() is None
    store.save(Counts(5, {frozenset({"a"}): 3.0}, exact=True))
    assert store.load() == Counts(5, {frozenset({"a"}): 3.0}, exact=True)
    assert list((tmp_path / "_mvlattice" / "statistics" / "lat").glob("*.json"))

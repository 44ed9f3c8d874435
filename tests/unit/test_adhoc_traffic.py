"""The ad-hoc traffic generator (`mvlattice.proof.adhoc`): new texts, valid SQL, every literal
kind, shapes that repeat, and every text answerable by the tiles of its model (no Spark: the
model's columns are written in)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from sqlglot import exp

from mvlattice.datasets.foodmart import declared_types, with_columns
from mvlattice.model.loader import load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.proof import adhoc
from mvlattice.sql.parse import parse_query

TEXTS = 1500


@pytest.fixture(scope="module")
def queries() -> list[adhoc.Query]:
    traffic = adhoc.AdhocTraffic(adhoc.EXAMPLE_DOMAIN, seed=5)
    return [traffic.next() for _ in range(TEXTS)]


@pytest.fixture(scope="module")
def trees(queries: list[adhoc.Query]) -> list[exp.Query]:
    return [parse_query(q.sql) for q in queries]


def test_every_text_is_new_and_the_shapes_repeat(queries: list[adhoc.Query]) -> None:
    assert len({q.sql for q in queries}) == TEXTS
    uses = Counter(q.template for q in queries)
    assert len(uses) == 64 and min(uses.values()) >= 5


def test_every_text_parses_as_one_query(trees: list[exp.Query]) -> None:
    assert len(trees) == TEXTS  # parse_query raises on anything but one query


def test_every_literal_kind_is_bound(queries: list[adhoc.Query], trees: list[exp.Query]) -> None:
    assert set().union(*(q.kinds for q in queries)) == set(adhoc.LITERAL_KINDS)
    lengths = {len(node.expressions) for tree in trees for node in tree.find_all(exp.In)}
    assert {1, adhoc.MAX_IN} <= lengths and lengths <= set(range(1, adhoc.MAX_IN + 1))
    limits = {int(m) for q in queries for m in re.findall(r" limit (\d+)$", q.sql)}
    assert len(limits) > 10


def test_aligned_ranges_start_months_and_unaligned_ones_mostly_do_not(
    queries: list[adhoc.Query],
) -> None:
    def bounds(q: adhoc.Query) -> list[str]:
        return re.findall(r"the_date [<>]=? '\d{4}-\d\d-(\d\d)'", q.sql)

    aligned = [d for q in queries if adhoc.ALIGNED in q.kinds for d in bounds(q)]
    unaligned = [d for q in queries if adhoc.UNALIGNED in q.kinds for d in bounds(q)]
    assert aligned and set(aligned) == {"01"}
    assert sum(d != "01" for d in unaligned) > 0.8 * len(unaligned)


def test_one_template_binds_both_alignments(queries: list[adhoc.Query]) -> None:
    """The grain guard a template cache must keep is crossed within one template."""
    kinds: dict[int, set[str]] = {}
    for q in queries:
        kinds.setdefault(q.template, set()).update(q.kinds)
    assert any({adhoc.ALIGNED, adhoc.UNALIGNED} <= k for k in kinds.values())


def test_the_models_tiles_answer_every_text(queries: list[adhoc.Query], tmp_path: Path) -> None:
    path = tmp_path / "foodmart_adhoc.yaml"
    path.write_text(yaml.safe_dump(with_columns(adhoc.foodmart_document())))
    context = context_for(load_model(path, warehouse=str(tmp_path)), types=declared_types())
    read: Counter[tuple[str, ...]] = Counter()
    for q in queries[:150]:
        result = rewrite(q.sql, context, explain=False)
        assert result.rewritten, q.sql
        read[result.materializations] += 1
    assert len(read) == len(adhoc.TILES)  # by day and without dates, wide and narrow

"""Join direction: declared keys, then data, then naming, then FROM order; which one decided."""

from __future__ import annotations

import pytest

from mvlattice.model.loader import ForeignKey
from mvlattice.statistics.dict_provider import DictStatisticProvider
from mvlattice.suggest.catalog_blocks import BlockTable, JoinPair
from mvlattice.suggest.direction import (
    DATA,
    DECLARED,
    FROM_ORDER,
    MANY_TO_MANY,
    NAMING,
    NOT_A_FOREIGN_KEY,
    DirectedJoin,
    Undecided,
    direct,
)
from mvlattice.suggest.table_catalog import Catalog, TableInfo, open_catalog

F, D = BlockTable("f", "s", "facts"), BlockTable("d", "s", "things")
PAIR = JoinPair("f", "d", ("thing_ref",), ("code",))


def catalog(**tables: TableInfo) -> Catalog:
    return Catalog("s", {("s", k): v for k, v in tables.items()}, closed=True)


def test_declared_foreign_key_decides_either_way_round() -> None:
    fk = ForeignKey(("thing_ref",), ("s", "things"), ("code",))
    cat = catalog(
        facts=TableInfo("s", "facts", foreign_keys=(fk,)), things=TableInfo("s", "things")
    )
    assert direct(PAIR, (F, D), cat) == DirectedJoin("f", "d", ("thing_ref",), ("code",), DECLARED)
    backwards = JoinPair("d", "f", ("code",), ("thing_ref",))
    assert direct(backwards, (D, F), cat) == DirectedJoin(
        "f", "d", ("thing_ref",), ("code",), DECLARED
    )


def test_declared_key_decides() -> None:
    cat = catalog(facts=TableInfo("s", "facts"), things=TableInfo("s", "things", keys=(("code",),)))
    assert direct(PAIR, (F, D), cat).source == DECLARED


def test_a_join_outside_the_declared_foreign_keys_is_refused() -> None:
    fk = ForeignKey(("other",), ("s", "elsewhere"), ("id",))
    cat = catalog(
        facts=TableInfo("s", "facts", foreign_keys=(fk,)),
        things=TableInfo("s", "things", keys=(("code",),)),
    )
    verdict = direct(PAIR, (F, D), cat)
    assert isinstance(verdict, Undecided) and verdict.reason == NOT_A_FOREIGN_KEY


def uniqueness_from(providers: dict[str, DictStatisticProvider]):
    """Uniqueness as the data adapter answers it: distinct count against rows."""

    def unique(key: tuple[str, str], columns: tuple[str, ...]) -> bool | None:
        stats = providers.get(key[1])
        if stats is None:
            return None
        return stats.distinct_count(columns) >= stats.row_count()

    return unique


def test_data_decides_when_nothing_is_declared() -> None:
    providers = {
        "facts": DictStatisticProvider(1000, {"thing_ref": 40}),
        "things": DictStatisticProvider(40, {"code": 40}),
    }
    verdict = direct(PAIR, (F, D), open_catalog("s"), uniqueness_from(providers))
    assert verdict == DirectedJoin("f", "d", ("thing_ref",), ("code",), DATA)


def test_data_finds_many_to_many() -> None:
    providers = {
        "facts": DictStatisticProvider(1000, {"thing_ref": 40}),
        "things": DictStatisticProvider(80, {"code": 40}),
    }
    verdict = direct(PAIR, (F, D), open_catalog("s"), uniqueness_from(providers))
    assert isinstance(verdict, Undecided) and verdict.reason == MANY_TO_MANY
    assert "neither side is unique" in verdict.detail


def test_one_to_one_in_the_data_falls_through_to_naming() -> None:
    providers = {
        "emp": DictStatisticProvider(10, {"empno": 10}),
        "emp_extra": DictStatisticProvider(10, {"empno": 10}),
    }
    a, b = BlockTable("x", "s", "emp_extra"), BlockTable("e", "s", "emp")
    pair = JoinPair("x", "e", ("empno",), ("empno",))
    verdict = direct(pair, (a, b), open_catalog("s"), uniqueness_from(providers))
    assert verdict == DirectedJoin("x", "e", ("empno",), ("empno",), NAMING)


@pytest.mark.parametrize(
    ("many", "many_col", "one", "one_col"),
    [
        ("sales_fact_1997", "product_id", "product", "product_id"),
        ("emp", "deptno", "dept", "deptno"),
        ("emp", "mgr", "emp", "empno"),
        ("orders", "customer_id", "customers", "id"),
        ("sales_fact_1997", "time_id", "time_by_day", "time_id"),
        ("customer", "customer_region_id", "region", "region_id"),
        ("line_line_class", "line_id", "line", "line_id"),  # exact name beats a prefix
        ("salary", "pay_date", "time_by_day", "the_date"),  # a time table is a dimension
        ("fact", "prod_id", "product_csv", "prod_id"),  # ... and a fact table is not
        ("orders", "category_key", "categories", "category_key"),
    ],
)
def test_naming_conventions(many: str, many_col: str, one: str, one_col: str) -> None:
    a, b = BlockTable("a", "s", many), BlockTable("b", "s", one)
    for pair, tables in (
        (JoinPair("a", "b", (many_col,), (one_col,)), (a, b)),
        (JoinPair("b", "a", (one_col,), (many_col,)), (b, a)),
    ):
        verdict = direct(pair, tables, open_catalog("s"))
        assert verdict == DirectedJoin("a", "b", (many_col,), (one_col,), NAMING)


def test_from_order_is_the_last_resort() -> None:
    a, b = BlockTable("a", "s", "store"), BlockTable("b", "s", "customer")
    pair = JoinPair("a", "b", ("store_state",), ("state_province",))
    assert direct(pair, (a, b), open_catalog("s")).source == FROM_ORDER
    assert direct(pair, (a, b), open_catalog("s")).many == "a"
    assert direct(pair, (b, a), open_catalog("s")).many == "b"

"""The near misses of `proof.rejected`, without Spark (Spark's rejection of each is checked in
tests/integration/test_rejected_queries.py): which quirks apply, and what they write."""

from __future__ import annotations

from mvlattice.proof.rejected import QUIRKS, near_misses

USING = (
    "select the_month, count(*) as c from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) group by the_month"
)
ON = (
    "select t.the_year, sum(s.unit_sales) as units from foodmart.sales_fact_1997 s "
    "join foodmart.time_by_day t on s.time_id = t.time_id group by t.the_year"
)


def quirk(sql: str, name: str, columns: tuple[str, ...] = ()) -> str:
    (found,) = [m.sql for m in near_misses(sql, columns) if m.quirk == name]
    return found


def test_the_issues_query_is_a_near_miss_of_its_unquoted_form() -> None:
    assert quirk(USING, "double_quoted_names") == (
        'SELECT "the_month", COUNT(*) AS "c" FROM "foodmart"."sales_fact_1997" '
        'JOIN "foodmart"."time_by_day" USING ("time_id") GROUP BY "the_month"'
    )


def test_near_misses_are_distinct_changes_and_the_same_each_time() -> None:
    for sql in (USING, ON):
        found = near_misses(sql)
        assert found == near_misses(sql)
        assert all(m.template == sql and m.sql != sql for m in found)
        assert len({m.sql for m in found}) == len(found)
    assert {m.quirk for m in near_misses(ON)} | {m.quirk for m in near_misses(USING)} == {
        name for name, _ in QUIRKS
    }


def test_quirks_apply_where_they_can() -> None:
    assert "ambiguous_column" not in {m.quirk for m in near_misses(USING)}  # USING merges it
    assert quirk(ON, "ambiguous_column").startswith("SELECT t.the_year, SUM(s.unit_sales) AS "
                                                    "units, time_id FROM")  # fmt: skip
    assert quirk(ON, "mysql_limit").endswith(" LIMIT 0, 10")
    assert quirk(ON, "ungrouped_output").endswith("ON s.time_id = t.time_id")  # no GROUP BY


def test_a_misspelled_name_is_never_another_real_one() -> None:
    assert quirk(USING, "unknown_column").endswith("GROUP BY the_mont")
    assert quirk(USING, "unknown_column", ("The_Mont",)).endswith("GROUP BY the_month_x")

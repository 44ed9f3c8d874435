"""Stored names of a materialization's outputs: unnamed expressions and repeated names get
names Delta accepts, by position, the same on every build (issue 20)."""

from __future__ import annotations

from mvlattice.jobs.record import TileRecord, from_properties, to_properties
from mvlattice.sql.stored_names import renamed, stored_names, valid_name


def test_valid_names_are_kept() -> None:
    assert stored_names(["the_year", "amount", "c"]) == ("the_year", "amount", "c")
    assert renamed(["the_year", "amount"]) == {}


def test_unnamed_expressions_are_stored_by_position() -> None:
    names = ["(product_id + 2)", "sum(1)", "amt", "date_trunc(month, ts)"]
    assert stored_names(names) == ("_c0", "_c1", "amt", "_c3")
    assert renamed(names) == {"_c0": "(product_id + 2)", "_c1": "sum(1)", "_c3": names[3]}


def test_repeated_names_keep_the_first_and_number_the_others() -> None:
    names = ["sale_id", "product_id", "name", "product_id", "NAME"]
    assert stored_names(names) == ("sale_id", "product_id", "name", "product_id_3", "NAME_4")


def test_a_stored_name_never_takes_another_outputs_name() -> None:
    assert stored_names(["(a + 1)", "_c0"]) == ("_c0_", "_c0")
    assert stored_names(["x", "x", "x_1"]) == ("x", "x_1_", "x_1")
    assert len(set(stored_names(["a", "a", "a", "a_1", "a_2"]))) == 5


def test_stable_and_valid() -> None:
    names = ["x BETWEEN 1 AND 3", "x", "x", "", "count(1)", "a=b"]
    first = stored_names(names)
    assert first == stored_names(list(names))
    assert all(valid_name(n) for n in first)
    assert len({n.lower() for n in first}) == len(first)
    assert not valid_name("") and not valid_name("a b") and not valid_name("a;b")


def test_renames_survive_the_record() -> None:
    record = TileRecord(
        "materialization", "s.v", "select 1", (), 3, 0.0, renamed=(("_c0", "1 + 1"),)
    )
    back = from_properties(to_properties(record))
    assert back is not None and back.renamed == (("_c0", "1 + 1"),)
    plain = from_properties(to_properties(TileRecord("tile", "s.t", "x", (), 1, 0.0)))
    assert plain is not None and plain.renamed == ()

"""Which refresh path a tile takes, from Delta commit actions — pure, no Spark."""

from __future__ import annotations

from mvlattice.jobs.changes import (
    FULL,
    INCREMENTAL,
    NONE,
    AddedFile,
    Commit,
    changed_sources,
    decide_refresh,
    parse_commit,
)

FACT, DIM = "shop.sales", "shop.product"


def append(version: int, *files: str) -> list[dict]:
    return [
        {"commitInfo": {"operation": "WRITE", "operationParameters": {"mode": "Append"}}},
        *({"add": {"path": f, "dataChange": True, "size": 10}} for f in files),
    ]


def test_parse_commit_reads_appends_deletes_compactions_and_schema_changes() -> None:
    added = parse_commit(3, append(3, "p=1/part-0%20a.parquet", "part-1.parquet"))
    files = (AddedFile("p=1/part-0 a.parquet"), AddedFile("part-1.parquet"))
    assert added == Commit(3, "WRITE", files, 0, (), 0)
    assert added.added_files == ("part-0 a.parquet", "part-1.parquet")
    partitioned = parse_commit(
        8, [{"add": {"path": "d=x/f.parquet", "partitionValues": {"d": "x", "c": None}}}]
    )
    assert partitioned.added == (AddedFile("d=x/f.parquet", (("c", None), ("d", "x"))),)
    assert added.append_only
    delete = parse_commit(
        4,
        [
            {"commitInfo": {"operation": "DELETE"}},
            {"remove": {"path": "part-1.parquet", "dataChange": True}},
        ],
    )
    assert not delete.append_only and delete.removes == 1
    optimize = parse_commit(
        5,
        [
            {"commitInfo": {"operation": "OPTIMIZE"}},
            {"add": {"path": "big.parquet", "dataChange": False}},
        ],
    )
    assert not optimize.append_only and optimize.unsafe_adds == 1
    schema = parse_commit(6, [*append(6, "x.parquet"), {"metaData": {"id": "m"}}])
    assert schema.other_actions == ("metaData",) and not schema.append_only
    idempotent = parse_commit(7, [*append(7, "y.parquet"), {"txn": {"appId": "a", "version": 1}}])
    assert idempotent.append_only


def decide(**kw):
    base = dict(recorded={FACT: 2, DIM: 1}, current={FACT: 4, DIM: 1}, fact=FACT)
    base.update(kw)
    return decide_refresh(**base)


def test_appends_only_take_the_incremental_path() -> None:
    commits = (parse_commit(3, append(3, "a.parquet")), parse_commit(4, append(4, "b.parquet")))
    decision = decide(fact_commits=commits)
    assert decision.path == INCREMENTAL
    assert decision.added_files == ("a.parquet", "b.parquet") and decision.fact_version == 4
    assert decision.reason == "versions 3–4 of shop.sales only append rows (2 files)"


def test_every_other_change_takes_the_full_path_with_its_reason() -> None:
    appended = (parse_commit(3, append(3, "a")), parse_commit(4, append(4, "b")))
    deleted = (
        appended[0],
        parse_commit(4, [{"commitInfo": {"operation": "DELETE"}}, {"remove": {"path": "a"}}]),
    )
    cases = {
        "not built yet": decide(recorded=None),
        "its definition changed since it was built": decide(definition_changed=True),
        "a full rebuild was asked for": decide(full=True, fact_commits=appended),
        "dimension table shop.product (version 1 → 2) changed": decide(
            current={FACT: 4, DIM: 2}, fact_commits=appended
        ),
        "COUNT(DISTINCT …) cannot merge appended rows": decide(
            blocker="COUNT(DISTINCT …) cannot merge appended rows", fact_commits=appended
        ),
        "the Delta log of shop.sales no longer holds versions 3–4": decide(fact_commits=None),
        "version 4 of shop.sales (DELETE) does more than append: it removes 1 file(s)": decide(
            fact_commits=deleted
        ),
        "versions 3–4 of shop.sales are not all readable": decide(fact_commits=appended[:1]),
        "materializations are rebuilt in full": decide(fact=None),
        "fact table shop.sales has no Delta history to read changes from": decide(
            recorded={FACT: "files=1;bytes=2;mtime=3", DIM: 1},
            current={FACT: "files=2;bytes=4;mtime=5", DIM: 1},
        ),
    }
    for reason, decision in cases.items():
        assert (decision.path, decision.reason) == (FULL, reason)


def test_nothing_to_do_when_no_source_changed() -> None:
    decision = decide(current={FACT: 2, DIM: 1})
    assert (decision.path, decision.reason) == (NONE, "fresh: no source table changed")


def test_unknown_or_missing_versions_count_as_changed() -> None:
    assert changed_sources({"a": 1, "b": None}, {"a": 1, "b": None}) == ("b",)
    assert changed_sources({"a": 1}, {"a": 1, "c": 2}) == ("c",)
    assert changed_sources({"a": "files=1"}, {"a": "files=1"}) == ()

"""Which refresh path a tile takes, from Delta commit actions — pure, no Spark."""

from __future__ import annotations

from mvlattice.delta.commits import AddedFile, Commit, parse_commit
from mvlattice.jobs.changes import FULL, INCREMENTAL, NONE, changed_sources, decide_refresh
from mvlattice.jobs.record import Snapshot

FACT, DIM = "shop.sales", "shop.product"
IDS = {FACT: "id-sales", DIM: "id-product"}


def snap(versions: dict, ids: dict = IDS) -> Snapshot:
    return Snapshot(versions, ids)


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


def test_parse_commit_reads_who_wrote_it_and_whether_it_changed_data() -> None:
    tagged = [{"commitInfo": {"operation": "WRITE", "userMetadata": "mvlattice build t"}}]
    assert parse_commit(1, tagged).user_metadata == "mvlattice build t"
    assert parse_commit(1, append(1, "a")).user_metadata is None
    assert parse_commit(1, append(1, "a")).changes_data
    optimize = [
        {"commitInfo": {"operation": "OPTIMIZE"}},
        {"add": {"path": "big", "dataChange": False}},
        {"remove": {"path": "small", "dataChange": False}},
    ]
    assert not parse_commit(2, optimize).changes_data
    assert not parse_commit(3, [{"commitInfo": {"operation": "VACUUM END"}}]).changes_data
    delete = [{"commitInfo": {"operation": "DELETE"}}, {"remove": {"path": "a"}}]
    assert parse_commit(4, delete).changes_data
    altered = [{"commitInfo": {"operation": "SET TBLPROPERTIES"}}, {"metaData": {"id": "m"}}]
    assert parse_commit(5, altered).changes_data


def decide(**kw):
    base = dict(
        recorded=snap({FACT: 2, DIM: 1}),
        current=snap({FACT: 4, DIM: 1}),
        fact=FACT,
        tile_change=None,
    )
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
    altered = (
        appended[0],
        parse_commit(4, [{"commitInfo": {"operation": "SET TBLPROPERTIES"}}, {"metaData": {}}]),
    )
    cases = {
        "not built yet": decide(recorded=None),
        "its definition changed since it was built": decide(definition_changed=True),
        "a full rebuild was asked for": decide(full=True, fact_commits=appended),
        "dimension table shop.product (version 1 → 2) changed": decide(
            current=snap({FACT: 4, DIM: 2}), fact_commits=appended
        ),
        "COUNT(DISTINCT …) cannot merge appended rows": decide(
            blocker="COUNT(DISTINCT …) cannot merge appended rows", fact_commits=appended
        ),
        "the Delta log of shop.sales no longer holds versions 3–4": decide(fact_commits=None),
        "version 4 of shop.sales (DELETE) does more than append: it removes 1 file(s) and "
        "shop.sales has no change data feed": decide(fact_commits=deleted),
        "version 4 of shop.sales (SET TBLPROPERTIES) does more than append: it carries "
        "metaData": decide(fact_commits=altered, change_feed=True),
        "versions 3–4 of shop.sales are not all readable": decide(fact_commits=appended[:1]),
        "materializations are rebuilt in full": decide(fact=None),
        "fact table shop.sales has no Delta history to read changes from": decide(
            recorded=snap({FACT: "files=1;bytes=2;mtime=3", DIM: 1}),
            current=snap({FACT: "files=2;bytes=4;mtime=5", DIM: 1}),
        ),
    }
    for reason, decision in cases.items():
        assert (decision.path, decision.reason) == (FULL, reason)


def test_nothing_to_do_when_no_source_changed() -> None:
    decision = decide(current=snap({FACT: 2, DIM: 1}))
    assert (decision.path, decision.reason) == (NONE, "fresh: no source table changed")
    # a Parquet source has no table id: its fingerprint is all there is to compare
    files = {FACT: "files=1;bytes=2;mtime=3", DIM: 1}
    unkeyed = decide(recorded=snap(files, {DIM: "id-product"}), current=snap(files))
    assert unkeyed.path == NONE


def test_a_recreated_source_is_a_full_rebuild_never_incremental() -> None:
    # The new table's commits 3–4 only append — merging them would add the new table's rows
    # to the old table's totals. Its id tells it apart.
    appended = (parse_commit(3, append(3, "a")), parse_commit(4, append(4, "b")))
    recreated = {**IDS, FACT: "id-sales-2"}
    decision = decide(current=snap({FACT: 4, DIM: 1}, recreated), fact_commits=appended)
    assert (decision.path, decision.reason) == (
        FULL,
        "shop.sales was recreated (table id changed): full rebuild",
    )
    same_version = decide(current=snap({FACT: 2, DIM: 1}, recreated))
    assert same_version.path == FULL  # equal versions of another table prove nothing
    dimension = decide(current=snap({FACT: 2, DIM: 1}, {**IDS, DIM: "id-product-2"}))
    assert dimension.reason == "shop.product was recreated (table id changed): full rebuild"


def test_an_unknown_identity_is_a_full_rebuild() -> None:
    older_tile = decide(recorded=snap({FACT: 2, DIM: 1}, {}), current=snap({FACT: 2, DIM: 1}))
    assert (older_tile.path, older_tile.reason) == (
        FULL,
        "the table id of shop.product is unknown (not recorded: built by an older mvlattice):"
        " full rebuild",
    )
    unreadable = decide(current=snap({FACT: 2, DIM: 1}, {**IDS, FACT: None}))
    assert unreadable.reason == (
        "the table id of shop.sales is unknown (its Delta log does not say): full rebuild"
    )


def test_someone_elses_commit_to_the_tile_is_a_full_rebuild() -> None:
    change = "version 7 of the table (DELETE) was not written by mvlattice"
    decision = decide(current=snap({FACT: 2, DIM: 1}), tile_change=change)
    assert (decision.path, decision.reason) == (FULL, f"{change}: full rebuild")
    assert decide(tile_change=change, full=True).reason == "a full rebuild was asked for"


def test_unknown_or_missing_versions_count_as_changed() -> None:
    assert changed_sources({"a": 1, "b": None}, {"a": 1, "b": None}) == ("b",)
    assert changed_sources({"a": 1}, {"a": 1, "c": 2}) == ("c",)
    assert changed_sources({"a": "files=1"}, {"a": "files=1"}) == ()


def test_deletes_and_updates_are_incremental_with_the_change_data_feed() -> None:
    delete = [
        {
            "commitInfo": {
                "operation": "DELETE",
                "operationMetrics": {
                    "numDeletedRows": "7",
                    "numCopiedRows": "90",
                    "numOutputRows": "90",
                },
            }
        },
        {"remove": {"path": "a"}},
        {"add": {"path": "b", "stats": '{"numRecords": 90}'}},
        {"cdc": {"path": "_change_data/c"}},
    ]
    update = [
        {"commitInfo": {"operation": "UPDATE", "operationMetrics": {"numUpdatedRows": "3"}}},
        {"remove": {"path": "b"}},
        {"add": {"path": "c"}},
    ]
    commits = (parse_commit(3, delete), parse_commit(4, update))
    assert commits[0].rows_changed == 7 and commits[1].rows_changed == 6
    assert commits[0].added[0].rows == 90
    decision = decide(fact_commits=commits, change_feed=True)
    assert (decision.path, decision.feed, decision.from_version) == (INCREMENTAL, True, 2)
    assert decision.change_rows == 13
    assert (
        decision.reason == "versions 3–4 of shop.sales change rows; read from its change data feed"
    )
    appended = (parse_commit(3, append(3, "a")), parse_commit(4, append(4, "b")))
    plain = decide(fact_commits=appended, change_feed=True)
    assert (plain.path, plain.feed, plain.change_rows) == (INCREMENTAL, False, None)

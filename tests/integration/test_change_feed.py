"""A table's change feed equals DuckDB 1.5.5's ``ducklake_table_changes`` on every pair of snapshots.

DuckDB writes the lakes here with random operation sequences (inserts, updates, deletes, several statements in
one transaction, added columns, inlined rows and their flush, merged files, rewritten deletes, deleting
everything), with data inlining on (DuckDB's default) and off. The feed is compared as a multiset, row by row,
because DuckDB lists a row more than once in some cases (a row updated twice in one transaction, a file with
both a delete file and its end in the range) and we must list it the same number of times.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import duckdb
import pytest

from airflow_provider_lakehouse.exceptions import SnapshotNotFoundError
from tests import referee
from tests.referee import LakeSetup

pytestmark = pytest.mark.integration

MAINTENANCE = ("add_column", "merge", "rewrite", "flush", "delete_all")


def random_history(con: Any, seed: int) -> None:
    """Create ``lake.t`` and run a random sequence of transactions on it (each one snapshot)."""
    rnd = random.Random(seed)
    con.sql("CREATE TABLE lake.t (id INTEGER, v VARCHAR)")
    next_id = 0
    for step in range(rnd.randint(4, 9)):
        statements: list[str] = []
        separate: list[str] = []  # DDL and maintenance calls run in their own snapshots
        for _ in range(rnd.choice([1, 1, 2, 3])):
            op = rnd.choice(
                ["insert", "insert", "update", "delete", "update_all"]
                + (list(MAINTENANCE) if rnd.random() < 0.3 else [])
            )
            if op == "insert":
                n = rnd.choice([1, 3, 20])
                statements.append(
                    f"INSERT INTO lake.t (id, v) SELECT i, 'v' || i FROM range({next_id}, {next_id + n}) r(i)"
                )
                next_id += n
            elif op == "update":
                statements.append(
                    f"UPDATE lake.t SET v = v || 'u{step}' WHERE id % {rnd.randint(2, 5)} = {rnd.randint(0, 1)}"
                )
            elif op == "update_all":
                statements.append(f"UPDATE lake.t SET v = v || 'a{step}'")
            elif op == "delete":
                statements.append(f"DELETE FROM lake.t WHERE id % {rnd.randint(3, 7)} = {rnd.randint(0, 2)}")
            elif op == "delete_all":
                statements.append("DELETE FROM lake.t")
            elif op == "add_column":
                separate.append(f"ALTER TABLE lake.t ADD COLUMN c{step}_{len(separate)} INTEGER DEFAULT {step}")
            elif op == "merge":
                separate.append("CALL ducklake_merge_adjacent_files('lake')")
            elif op == "rewrite":
                separate.append("CALL ducklake_rewrite_data_files('lake', delete_threshold => 0.0)")
            else:
                separate.append("CALL ducklake_flush_inlined_data('lake')")
        if statements:
            con.sql("BEGIN")
            for statement in statements:
                con.sql(statement)
            con.sql("COMMIT")
        for statement in separate:
            con.sql(statement)


def assert_feeds_equal(setup: LakeSetup, con: Any, table: str = "t", schema: str = "main") -> int:
    """Our feed equals DuckDB's for every pair of snapshots; returns how many rows were compared."""
    lake = setup.open()
    snapshots = referee.lake_snapshots(lake)
    compared = 0
    for start in snapshots:
        for end in (s for s in snapshots if s >= start):
            try:
                theirs = con.sql(f"FROM ducklake_table_changes('lake', '{schema}', '{table}', {start}, {end})")
            except duckdb.Error as exc:  # the table does not exist at the end snapshot: we raise too
                assert "does not exist" in str(exc)
                with pytest.raises(LookupError):
                    lake.table_changes(f"{schema}.{table}", start, end)
                continue
            ours = lake.table_changes(f"{schema}.{table}", start, end)
            assert ours.column_names == theirs.columns, (start, end)
            expected = Counter(map(repr, theirs.to_arrow_table().to_pylist()))
            actual = Counter(map(repr, ours.to_pylist()))
            assert actual == expected, (
                start,
                end,
                list((expected - actual).items())[:3],
                list((actual - expected).items())[:3],
            )
            compared += sum(expected.values())
    return compared


@pytest.mark.parametrize("inlining", ["default", "off"])
@pytest.mark.parametrize("seed", range(6))
def test_random_histories_list_the_changes_duckdb_lists(setup: LakeSetup, seed: int, inlining: str) -> None:
    con = referee.connect()
    setup.attach(con, **({"DATA_INLINING_ROW_LIMIT": 0} if inlining == "off" else {}))
    random_history(con, seed)
    assert assert_feeds_equal(setup, con) > 0


def test_rows_changed_twice_in_one_transaction(setup: LakeSetup) -> None:
    """Updated then deleted, and inserted then deleted, within one DuckDB transaction each: DuckDB keeps such
    changes in memory until the commit and writes only their outcome, so its feed lists the net change, and so
    does ours (the lake written by our engine, which writes each statement's files, is checked in
    tests/integration/test_spark_sql.py: there the steps are listed, by DuckDB and by us)."""
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("CREATE TABLE lake.t (id INTEGER, v VARCHAR)")
    con.sql("INSERT INTO lake.t VALUES (1, 'a'), (2, 'b')")
    con.sql("BEGIN")
    con.sql("UPDATE lake.t SET v = 'a2' WHERE id = 1")
    con.sql("DELETE FROM lake.t WHERE id = 1")
    con.sql("INSERT INTO lake.t VALUES (3, 'c')")
    con.sql("DELETE FROM lake.t WHERE id = 3")
    con.sql("COMMIT")
    latest = referee.lake_snapshots(setup.open())[-1]
    assert setup.open().table_changes("t", latest, latest).select(["change_type", "id", "v"]).to_pylist() == [
        {"change_type": "delete", "id": 1, "v": "a"}
    ]
    assert_feeds_equal(setup, con)


def test_changes_of_a_missing_snapshot_or_table_raise_like_duckdb(setup: LakeSetup) -> None:
    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE TABLE lake.t (id INTEGER)")
    con.sql("INSERT INTO lake.t VALUES (1)")
    lake = setup.open()
    latest = referee.lake_snapshots(lake)[-1]
    for start, end in ((0, latest + 5), (latest + 5, latest)):
        with pytest.raises(Exception, match="No snapshot found"):
            con.sql(f"FROM ducklake_table_changes('lake', 'main', 't', {start}, {end})").fetchall()
        with pytest.raises(SnapshotNotFoundError):
            lake.table_changes("t", start, end)
    with pytest.raises(Exception, match="out of range"):
        con.sql(f"FROM ducklake_table_changes('lake', 'main', 't', -1, {latest})").fetchall()
    with pytest.raises(ValueError, match="not negative"):
        lake.table_changes("t", -1, latest)
    with pytest.raises(Exception, match="does not exist"):
        con.sql(f"FROM ducklake_table_changes('lake', 'main', 'missing', 0, {latest})").fetchall()
    with pytest.raises(LookupError):
        lake.table_changes("missing", 0, latest)
    assert lake.table_changes("t", latest, latest - 1).num_rows == 0  # an empty range, as in DuckDB
    assert con.sql(f"FROM ducklake_table_changes('lake', 'main', 't', {latest}, {latest - 1})").fetchall() == []


@pytest.mark.parametrize("rows", [40, 300])
def test_a_flushed_update_then_delete_is_labelled_as_duckdb_labels_it(setup: LakeSetup, rows: int) -> None:
    """Inlined rows updated in one snapshot and deleted in the next, then flushed: the flushed file holds both
    versions of each row id, and DuckDB labels both deletions with the snapshot its hash map of positions happens
    to give last (found by tests/fuzz/duckdb_lakes_read_back.py, seed 28003). Over both snapshots it lists some
    rows as deleted in the second and others as updated twice in the first; we list the same rows."""
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=rows)
    con.sql("CREATE TABLE lake.t (id BIGINT, v INTEGER)")
    con.sql(f"INSERT INTO lake.t SELECT range, NULL FROM range({rows})")
    con.sql("UPDATE lake.t SET v = 1 WHERE id % 2 = 1")
    con.sql("DELETE FROM lake.t WHERE v = 1")
    con.sql("CALL ducklake_flush_inlined_data('lake')")
    assert assert_feeds_equal(setup, con) > 0

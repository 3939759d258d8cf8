"""SQL on Spark against real lakes (SQLite + local files, Postgres + SeaweedFS S3), refereed by DuckDB 1.5.5."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.ducklake.store import PostgresStore
from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.exceptions import ParameterError, StatementError, UnsupportedStatementError
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark.driver import PlanRunner, RunOptions
from airflow_provider_lakehouse.spark.plan import plan_script
from airflow_provider_lakehouse.spark.tasks import META_COLUMN, WriteLease, WriteTask, write_batches
from tests import referee
from tests.conftest import REPO_ROOT
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def spec_of(setup: LakeSetup) -> DuckLakeSpec:
    if isinstance(setup.store, PostgresStore):
        return DuckLakeSpec(
            name="main",
            catalog=setup.store.spec,
            data_path=setup.data_path,
            metadata_schema=setup.store.metadata_schema,
            s3=setup.s3,
        )
    return DuckLakeSpec(name="main", catalog=setup.store.path, data_path=setup.data_path)  # type: ignore[attr-defined]


def run(
    spark: Any, setup: LakeSetup, sql: str, parameters: Any = None, *, autocommit: bool = False, **options: Any
) -> dict[str, Any]:
    plan = plan_script(sql, parameters=parameters, autocommit=autocommit)
    return PlanRunner(spark, spec_of(setup), RunOptions(**options)).run(plan)


def selected(response: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the last SELECT in a response."""
    return [c for c in response["result"]["commands"] if c["kind"] == "select"][-1]["rows"]


def duck_rows(con: Any, sql: str) -> list[dict[str, Any]]:
    return to_json_safe(referee.rows(con, sql))


ITEMS = """
ATTACH 'ducklake' AS dl; USE dl;
CREATE TABLE items (id INTEGER NOT NULL, name VARCHAR, price DECIMAL(10, 2), tags VARCHAR[],
                    info STRUCT(origin VARCHAR, weight DOUBLE), seen DATE, at TIMESTAMPTZ);
INSERT INTO items VALUES
  (1, 'apple', 1.50, ['fruit', 'red'], {'origin': 'PT', 'weight': 0.2}, DATE '2026-01-01', TIMESTAMPTZ '2026-01-01 10:00:00+00'),
  (2, 'pear', 2.25, ['fruit'], {'origin': 'ES', 'weight': 0.3}, DATE '2026-01-02', NULL),
  (3, 'leek', 0.99, [], NULL, NULL, NULL);
INSERT INTO items (id, name) SELECT id + 10, upper(name) FROM items WHERE price > $min_price;
UPDATE items SET price = price * 2, name = name || '!' WHERE id IN (1, 11);
DELETE FROM items WHERE name = $gone;
MERGE INTO items AS t
  USING (SELECT 2 AS id, 'pear (ripe)' AS name UNION ALL SELECT 4, 'kiwi') AS s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET name = s.name
  WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.name);
ALTER TABLE items ADD COLUMN qty INTEGER DEFAULT 7;
ALTER TABLE items RENAME COLUMN name TO label;
INSERT INTO items (id, label, qty) VALUES (5, 'fig', 1);
"""


def test_dml_script_lands_snapshots_duckdb_reads_identically(spark: Any, setup: LakeSetup) -> None:
    """With autocommit, one snapshot per statement: DuckDB and we read every intermediate state alike."""
    response = run(spark, setup, ITEMS, {"min_price": 2, "gone": "leek"}, autocommit=True)
    commands = {c["command_index"]: c for c in response["result"]["commands"]}
    assert [commands[i]["affected_rows"] for i in (4, 5, 6, 7, 8)] == [3, 1, 1, 1, 2]
    info = response["catalog_info"]
    assert info["snapshots_created"] == list(range(info["snapshot_before"] + 1, info["snapshot_after"] + 1))
    assert len(info["snapshots_created"]) == 9  # one per data-changing statement
    assert info["tables_touched"][0]["table"] == "main.items"

    con = referee.connect()
    setup.attach(con)
    lake = setup.open()
    compared = 0
    for snap in lake_snapshots(lake):
        try:
            duck = duck_rows(con, f"FROM lake.items AT (VERSION => {snap}) ORDER BY id")
        except Exception as exc:  # the table does not exist yet at early snapshots
            assert "does not exist" in str(exc) or "not found" in str(exc).lower()
            continue
        ours = selected(run(spark, setup, f"SELECT * FROM items AT (VERSION => {snap}) ORDER BY id"))
        assert ours == duck, f"snapshot {snap}"
        compared += 1
    assert compared == 9
    final = duck_rows(con, "SELECT id, label, price, qty FROM lake.items ORDER BY id")
    assert final == [
        {"id": 1, "label": "apple!", "price": 3.0, "qty": 7},
        {"id": 2, "label": "pear (ripe)", "price": 2.25, "qty": 7},
        {"id": 4, "label": "kiwi", "price": None, "qty": 7},
        {"id": 5, "label": "fig", "price": None, "qty": 1},
        {"id": 12, "label": "PEAR", "price": None, "qty": 7},
    ]


ROLLED_BACK_BLOCK = """BEGIN;
UPDATE acct SET balance = 0 WHERE id = 11;
DELETE FROM acct WHERE id = 1;
ROLLBACK;
"""
READ_YOUR_WRITES = (
    """
ATTACH 'ducklake' AS dl; USE dl;
CREATE TABLE acct (id INTEGER, owner VARCHAR, balance DECIMAL(10, 2));
INSERT INTO acct VALUES (1, 'ann', 10.00), (2, 'bob', 20.00), (3, 'cy', 30.00);
UPDATE acct SET balance = balance + 5 WHERE id <= 2;
DELETE FROM acct WHERE owner = 'cy';
INSERT INTO acct SELECT id + 10, upper(owner), balance * 2 FROM acct;
"""
    + ROLLED_BACK_BLOCK
    + """MERGE INTO acct AS t USING (SELECT 2 AS id, 1.00 AS add UNION ALL SELECT 4, 4.00) AS s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET balance = t.balance + s.add
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'dee', s.add);
UPDATE acct SET owner = owner || '*' WHERE id IN (2, 4, 12);
CREATE TABLE acct_summary AS SELECT count(*) AS n, sum(balance) AS total FROM acct;
SELECT id, owner, balance FROM acct ORDER BY id;
"""
)


def test_a_script_is_one_snapshot_and_reads_its_own_writes_as_duckdb_does(spark: Any, setup: LakeSetup) -> None:
    """Default mode: every statement sees the ones before it, ROLLBACK undoes its BEGIN block, one snapshot
    lands; the SELECT and the committed tables equal DuckDB running the same script in one transaction."""
    lake = setup.create()
    before = lake.current_snapshot_id()
    response = run(spark, setup, READ_YOUR_WRITES)
    info = response["catalog_info"]
    assert info["snapshots_created"] == [before + 1] and lake.current_snapshot_id() == before + 1
    writes = [c for c in response["result"]["commands"] if c["kind"] in ("insert", "update", "delete", "merge", "ctas")]
    assert {c.get("snapshot_id") for c in writes if c["status"] == "executed"} == {before + 1}
    assert [c["status"] for c in response["result"]["commands"] if c["command_index"] in (9, 10)] == ["rolled_back"] * 2
    scans = [s for c in response["result"]["commands"] for s in c.get("scans", ()) if s.get("uncommitted_files")]
    assert scans, "later statements read files the script wrote before committing"

    con = referee.connect()
    con.sql("ATTACH ':memory:' AS mem; USE mem")
    # DuckDB has no savepoints: its run leaves the undone BEGIN ... ROLLBACK block out
    script = READ_YOUR_WRITES.replace("ATTACH 'ducklake' AS dl; USE dl;", "").replace(ROLLED_BACK_BLOCK, "")
    con.sql("BEGIN")
    for statement in [s for s in script.split(";") if s.strip()][:-1]:
        con.sql(statement)
    con.sql("COMMIT")
    expected = duck_rows(con, "SELECT id, owner, balance FROM acct ORDER BY id")
    assert selected(response) == expected
    setup.attach(con, "lake")
    assert duck_rows(con, "SELECT id, owner, balance FROM lake.acct ORDER BY id") == expected
    assert duck_rows(con, "SELECT n, total FROM lake.acct_summary") == duck_rows(
        con, "SELECT n, total FROM mem.acct_summary"
    )
    assert lake.delete_orphaned_files(older_than=dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).files_deleted == []


def test_rows_written_before_a_column_was_added_read_its_default_in_duckdb(spark: Any, setup: LakeSetup) -> None:
    """A script that adds a column with a default and then writes a file: the table's column stats cover the
    default the older rows read (DuckDB 1.5, given the new file's bounds alone, read -443 for them; DML fuzzer
    seed 38002)."""
    script = (
        "CREATE TABLE added_later (id INTEGER, c0 DATE); "
        "INSERT INTO added_later VALUES (2, DATE '2010-07-05'), (4, DATE '2038-12-27'); "
        "ALTER TABLE added_later ADD COLUMN a INTEGER DEFAULT -699; "
        "ALTER TABLE added_later ADD COLUMN s VARCHAR DEFAULT 'zz'; "
        "ALTER TABLE added_later ADD COLUMN n DOUBLE; "
        "INSERT INTO added_later VALUES (6, NULL, -595, 'aa', 1.5)"
    )
    run(spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; {script}")
    con = referee.connect()
    con.sql("ATTACH ':memory:' AS mem; USE mem")
    for statement in script.split(";"):
        con.sql(statement)
    queries = [
        "SELECT * FROM {t} ORDER BY id",
        "SELECT id FROM {t} WHERE a = -699 ORDER BY id",
        "SELECT id FROM {t} WHERE s > 'b' AND n IS NULL ORDER BY id",
    ]
    expected = [duck_rows(con, q.format(t="mem.added_later")) for q in queries]
    setup.attach(con, "lake")
    assert [duck_rows(con, q.format(t="lake.added_later")) for q in queries] == expected
    assert expected[1] == [{"id": 2}, {"id": 4}]


def test_text_that_is_not_json_fails_in_a_json_column_as_in_duckdb(spark: Any, setup: LakeSetup) -> None:
    """DuckDB checks the text it stores in a JSON column (DML fuzzer seeds 38107, 38108): a failing script leaves
    no snapshot; JSON scalars, ``null`` and nested values are stored, and what DuckDB's reader also takes."""
    good = (
        "INSERT INTO docs VALUES (1, 'null'), (2, '{\"a\": [1, 2.5, true]}'), (3, '\"text\"'), (4, NULL), "
        "(5, '[1, NaN, {\"b\": 2,},]')"  # DuckDB's reader takes trailing commas and NaN
    )
    run(spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE docs (id INTEGER, j JSON); {good}")
    lake = setup.create()
    before = lake.current_snapshot_id()
    for bad in ("'''null'''", "''", "'[1, 2'", "'01'", "'{}{}'"):
        con = referee.connect()
        con.sql("CREATE TABLE docs (id INTEGER, j JSON)")
        with pytest.raises(duckdb.ConversionException, match="Malformed JSON"):
            con.sql(f"INSERT INTO docs VALUES (9, {bad})")
        with pytest.raises(StatementError, match="Malformed JSON"):
            run(spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; INSERT INTO docs VALUES (9, {bad})")
    assert lake.current_snapshot_id() == before
    con = referee.connect()
    setup.attach(con, "lake")
    assert duck_rows(con, "SELECT id, j::VARCHAR AS j FROM lake.docs ORDER BY id") == [
        {"id": 1, "j": "null"},
        {"id": 2, "j": '{"a": [1, 2.5, true]}'},
        {"id": 3, "j": '"text"'},
        {"id": 4, "j": None},
        {"id": 5, "j": '[1, NaN, {"b": 2,},]'},
    ]


def test_spark_reads_what_duckdb_wrote(spark: Any, setup: LakeSetup) -> None:
    """Inlined rows, deletes, updates and schema changes written by DuckDB, read by Spark at every snapshot."""
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT="10")
    con.sql("CREATE TABLE lake.events (id INTEGER, kind VARCHAR, amount DOUBLE)")
    con.sql("INSERT INTO lake.events SELECT i, 'k' || (i % 3), i * 1.5 FROM range(100) t(i)")  # a file
    con.sql("INSERT INTO lake.events VALUES (1000, 'small', 1.0), (1001, 'small', 2.0)")  # inlined
    con.sql("DELETE FROM lake.events WHERE id % 10 = 0 OR id = 1000")
    con.sql("UPDATE lake.events SET amount = -amount WHERE kind = 'k1'")
    con.sql("ALTER TABLE lake.events ADD COLUMN note VARCHAR DEFAULT 'n/a'")
    con.sql("ALTER TABLE lake.events RENAME COLUMN kind TO category")
    con.sql("INSERT INTO lake.events VALUES (2000, 'late', 5.0, 'inlined after alter')")
    lake = setup.open()
    compared = 0
    for snap in lake_snapshots(lake):
        try:
            duck = duck_rows(con, f"FROM lake.events AT (VERSION => {snap}) ORDER BY id")
        except Exception:
            continue
        ours = selected(run(spark, setup, f"SELECT * FROM events AT (VERSION => {snap}) ORDER BY id", max_rows=10_000))
        assert ours == duck, f"snapshot {snap}"
        compared += 1
    assert compared >= 7  # every snapshot since CREATE TABLE
    agg = selected(
        run(
            spark,
            setup,
            "SELECT category, count(*) AS n, round(sum(amount), 2) AS total "
            "FROM events GROUP BY category ORDER BY category",
        )
    )
    assert agg == duck_rows(
        con,
        "SELECT category, count(*) AS n, round(sum(amount), 2) AS total "
        "FROM lake.events GROUP BY category ORDER BY category",
    )


def _late_partition(task: Any, batches: Any) -> Any:
    """Partition 0 finishes its file seconds after partition 1 failed the job (Spark no longer waits for it)."""
    batches = list(batches)
    if any(1 in b.column(0).to_pylist() for b in batches):
        raise ValueError("partition 1 fails at once")
    time.sleep(4)
    yield from write_batches(task, batches)


def test_a_file_finished_after_its_job_failed_is_removed_by_its_executor(spark: Any, setup: LakeSetup) -> None:
    run(spark, setup, "CREATE TABLE t (id BIGINT)")
    lake = setup.open()
    table_dir = lake.data_path.rstrip("/") + "/main/late"
    task = WriteTask(lake.data_path, setup.s3, table_dir, (Column(1, "id", "int64"),), tag="5a7e0f1e5a7e")
    frame = spark.range(0, 2, 1, 2)  # partition 0 holds id 0, partition 1 id 1
    lease = WriteLease(task)
    lease.take()
    with pytest.raises(Exception, match="partition 1 fails at once"):
        frame.mapInArrow(lambda batches: _late_partition(task, batches), f"{META_COLUMN} binary").toArrow()
    assert lease.abandon() == 0  # partition 0 is still sleeping: nothing to sweep yet
    deadline = time.monotonic() + 60
    while spark.sparkContext.statusTracker().getActiveStageIds() and time.monotonic() < deadline:
        time.sleep(0.2)
    # partition 0's worker wakes, writes its file, finds the lease gone and deletes the file; on a loaded machine
    # the delete comes later than on an idle one, so it is waited for (a fixed 8 s failed once under load)
    time.sleep(10)
    deadline = time.monotonic() + 50
    while (left := [f.uri for f in lake.storage.list_files(table_dir)]) and time.monotonic() < deadline:
        time.sleep(1)
    assert left == []


def test_transaction_is_one_snapshot_and_failures_leave_none(spark: Any, setup: LakeSetup) -> None:
    run(spark, setup, "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR); INSERT INTO t VALUES (1, 'a')")
    lake = setup.open()
    before = lake.current_snapshot_id()
    response = run(
        spark,
        setup,
        "BEGIN; DELETE FROM t WHERE id = 1; INSERT INTO t VALUES (2, 'b'); "
        "CREATE TABLE u AS SELECT 42 AS answer; COMMIT",
    )
    assert lake.current_snapshot_id() == before + 1
    assert {c["snapshot_id"] for c in response["result"]["commands"] if c["kind"] in ("insert", "delete", "ctas")} == {
        before + 1
    }

    files_before = {f.uri for f in lake.storage.list_files(lake.data_path)}
    good = lake.current_snapshot_id()
    # A failing statement inside a transaction: nothing of the transaction lands, no file is left behind.
    with pytest.raises(StatementError) as failure:
        run(spark, setup, "BEGIN; INSERT INTO t VALUES (3, 'c'); INSERT INTO t SELECT * FROM missing_table; COMMIT")
    assert failure.value.index == 3 and "missing_table" in str(failure.value)
    # A NOT NULL violation found by the executors: no snapshot, and the files already written are removed.
    with pytest.raises(StatementError) as violation:
        run(spark, setup, "INSERT INTO t SELECT CASE WHEN id = 5 THEN NULL ELSE id END, 'x' FROM range(10) r(id)")
    assert "NOT NULL" in str(violation.value) and violation.value.index == 1
    # A script is one transaction: a failure in its last statement takes back the earlier ones too.
    with pytest.raises(StatementError) as late:
        run(spark, setup, "INSERT INTO t VALUES (6, 'f'); DELETE FROM t WHERE id = 2; SELECT CAST('x' AS INTEGER)")
    assert late.value.index == 3
    # An unsupported statement fails before anything runs, even when it comes last.
    with pytest.raises(UnsupportedStatementError, match="Statement 2"):
        run(spark, setup, "INSERT INTO t VALUES (4, 'd'); CREATE SEQUENCE seq")
    with pytest.raises(ParameterError):
        run(spark, setup, "INSERT INTO t VALUES ($id, 'e')", {"id": 5, "typo": 1})
    assert lake.current_snapshot_id() == good
    assert {f.uri for f in lake.storage.list_files(lake.data_path)} == files_before

    con = referee.connect()
    setup.attach(con)
    assert duck_rows(con, "SELECT id, v FROM lake.t ORDER BY id") == [{"id": 2, "v": "b"}]
    assert duck_rows(con, "SELECT answer FROM lake.u") == [{"answer": 42}]


@pytest.mark.parametrize("setup", ["sqlite"], indirect=True)  # decided by the planner: no catalog is involved
@pytest.mark.parametrize(
    ("failing", "message"),
    [
        ("SELECT initcap('lake') AS r FROM {t}", "Catalog Error: Scalar Function with name initcap does not exist!"),
        ("ALTER TABLE {t} ADD COLUMN m MAP(VARCHAR, INTEGER) DEFAULT NULL", "cannot have a default (as in DuckDB)"),
        ("ALTER TABLE {t} ADD COLUMN d DATE DEFAULT DATE '2020-01-01'", "non-literal default"),
        (
            "CREATE TABLE {t}_keyed (k INTEGER PRIMARY KEY)",
            "PRIMARY KEY/UNIQUE constraints are not supported in DuckLake",
        ),
        ("CREATE TABLE {t}_checked (k INTEGER, CHECK (k > 0))", "CHECK constraints are not supported in DuckLake"),
    ],
    ids=["missing-function", "nested-default", "cast-default", "primary-key", "check"],
)
def test_a_statement_duckdb_refuses_fails_at_its_turn(spark: Any, setup: LakeSetup, failing: str, message: str) -> None:
    """Statements DuckDB fails when it reaches them (a function it does not have, such as Spark's ``initcap``; a
    default or a constraint its ``ducklake`` refuses): a script commits nothing, and an autocommit script keeps what ran before
    the failing statement, on Spark as in DuckDB."""
    script = "CREATE TABLE {t} AS SELECT 1 AS id; INSERT INTO {t} VALUES (2); " + failing
    con = referee.connect()
    setup.attach(con)  # DuckDB creates the lake
    con.sql("USE lake")
    lake = setup.open()
    for autocommit in (False, True):
        ours, theirs = f"ours_{int(autocommit)}", f"theirs_{int(autocommit)}"
        before = lake.current_snapshot_id()
        with pytest.raises(StatementError) as failure:
            run(spark, setup, script.format(t=ours), autocommit=autocommit)
        assert failure.value.index == 3 and message in failure.value.message
        # one transaction commits nothing; autocommit commits the first two statements, one snapshot each
        assert lake.current_snapshot_id() - before == (2 if autocommit else 0)
        if not autocommit:
            con.sql("BEGIN")
        with pytest.raises(duckdb.Error):
            for statement in script.format(t=theirs).split("; "):
                con.sql(statement)
        try:
            con.sql("ROLLBACK")
        except duckdb.Error:  # an autocommit statement's failure may have ended its transaction already
            pass
    tables = {
        row[0] for row in con.sql("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()
    }
    assert {"ours_0", "theirs_0", "ours_1", "theirs_1"} & tables == {"ours_1", "theirs_1"}
    assert duck_rows(con, "SELECT * FROM ours_1 ORDER BY id") == duck_rows(con, "SELECT * FROM theirs_1 ORDER BY id")
    assert duck_rows(con, "SELECT * FROM ours_1 ORDER BY id") == [{"id": 1}, {"id": 2}]


def test_a_run_killed_between_statements_starts_no_more_and_commits_nothing(spark: Any, setup: LakeSetup) -> None:
    """The task's kill found nothing running (it landed between two statements): the next statement must not
    start, and the statements before it do not commit."""
    run(spark, setup, "CREATE TABLE k (id BIGINT)")
    lake = setup.open()
    good = lake.current_snapshot_id()
    files_before = {f.uri for f in lake.storage.list_files(lake.data_path)}
    asked = []

    def killed() -> bool:  # the kill arrives while statement 2 runs: asked again before statement 3
        asked.append(True)
        return len(asked) > 2

    plan = plan_script("INSERT INTO k VALUES (1); INSERT INTO k VALUES (2); INSERT INTO k VALUES (3)")
    with pytest.raises(StatementError) as failure:
        PlanRunner(spark, spec_of(setup), killed=killed).run(plan)
    assert failure.value.index == 3 and "killed before this statement started" in str(failure.value)
    assert lake.current_snapshot_id() == good
    assert {f.uri for f in lake.storage.list_files(lake.data_path)} == files_before
    con = referee.connect()
    setup.attach(con)
    assert duck_rows(con, "SELECT count(*) AS n FROM lake.k") == [{"n": 0}]


def test_catalog_functions_and_maintenance(spark: Any, setup: LakeSetup) -> None:
    run(
        spark,
        setup,
        "CREATE TABLE m (id INTEGER); " + "; ".join(f"INSERT INTO m VALUES ({i})" for i in range(4)),
        autocommit=True,
    )
    con = referee.connect()
    setup.attach(con)
    ours = selected(run(spark, setup, "SELECT snapshot_id FROM ducklake_snapshots('dl') ORDER BY 1", max_rows=100))
    assert ours == duck_rows(con, "SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY 1")
    columns = "table_name, schema_id, table_id, file_count, file_size_bytes, delete_file_count, delete_file_size_bytes"
    info = selected(run(spark, setup, f"SELECT {columns} FROM ducklake_table_info('dl')"))
    assert info == duck_rows(con, f"SELECT {columns} FROM ducklake_table_info('lake')")
    with pytest.raises(StatementError, match="row_count"):  # DuckDB's ducklake_table_info has no row_count
        run(spark, setup, "SELECT row_count FROM ducklake_table_info('dl')")
    changes = selected(
        run(
            spark,
            setup,
            "SELECT snapshot_id, change_type, id FROM ducklake_table_changes('dl', 'main', 'm', 3, 4) ORDER BY id",
        )
    )
    assert changes == duck_rows(
        con, "SELECT snapshot_id, change_type, id FROM ducklake_table_changes('lake', 'main', 'm', 3, 4) ORDER BY id"
    )

    response = run(
        spark,
        setup,
        "CALL ducklake_merge_adjacent_files('dl'); "
        "CALL ducklake_expire_snapshots('dl', older_than => now() + INTERVAL 1 DAY); "
        "CALL ducklake_cleanup_old_files('dl', cleanup_all => true)",
    )
    merged, expired, cleaned = response["result"]["commands"]
    assert merged["files_merged"] == 4 and expired["snapshots_expired"] and cleaned["files_deleted"]
    con2 = referee.connect()
    setup.attach(con2)
    assert duck_rows(con2, "SELECT id FROM lake.m ORDER BY id") == [{"id": i} for i in range(4)]
    assert duck_rows(con2, "SELECT count(*) AS files FROM ducklake_list_files('lake', 'm')") == [{"files": 1}]


def test_files_in_and_out_on_s3(spark: Any, stack: Any) -> None:
    """CTAS from Parquet files on S3 (glob and FROM 'path'), CSV, and COPY TO S3; DuckDB checks the results."""
    setup = referee.postgres_lake(stack)
    from airflow_provider_lakehouse.ducklake.storage import Storage

    storage = Storage("s3://landing/", setup.s3)
    prefix = setup.data_path.split("/")[-2]
    for part in range(3):
        table = pa.table({"id": list(range(part * 10, part * 10 + 10)), "day": [dt.date(2026, 1, part + 1)] * 10})
        with storage.fs.open_output_stream(f"landing/{prefix}/in/part-{part}.parquet") as out:
            pq.write_table(table, out)
    with storage.fs.open_output_stream(f"landing/{prefix}/in/extra.csv") as out:
        out.write(b"id,label\n1,one\n2,two\n")
    response = run(
        spark,
        setup,
        f"""
        CREATE TABLE landed AS SELECT * FROM read_parquet('s3://landing/{prefix}/in/*.parquet');
        CREATE TABLE labels AS SELECT * FROM read_csv('s3://landing/{prefix}/in/extra.csv', header = true);
        SELECT count(*) AS n FROM 's3://landing/{prefix}/in/part-1.parquet';
        COPY (SELECT day, count(*) AS n FROM landed GROUP BY day ORDER BY day) TO 's3://landing/{prefix}/out/by_day.parquet' (FORMAT parquet);
    """,
    )
    assert [c.get("affected_rows", c.get("row_count")) for c in response["result"]["commands"]] == [30, 2, 1, 3]
    con = referee.connect()
    setup.attach(con)
    assert duck_rows(con, "SELECT count(*) AS n, sum(id) AS s FROM lake.landed") == [{"n": 30, "s": 435}]
    assert duck_rows(con, "SELECT * FROM lake.labels ORDER BY id") == [
        {"id": 1, "label": "one"},
        {"id": 2, "label": "two"},
    ]
    with storage.fs.open_input_file(f"landing/{prefix}/out/by_day.parquet") as handle:
        copied = pq.read_table(handle).to_pylist()
    assert to_json_safe(copied) == duck_rows(
        con, "SELECT day, count(*) AS n FROM lake.landed GROUP BY day ORDER BY day"
    )


def test_s3_lakes_are_read_by_sparks_own_reader_over_s3a(spark: Any, stack: Any) -> None:
    """With the S3A jars on the classpath, Spark's Parquet reader reads an S3 lake itself (credentials set per
    session); the rows equal DuckDB's. Forced off, or where hadoop-aws is missing, executors read the files with
    pyarrow (the response says which reader ran)."""
    setup = referee.postgres_lake(stack)
    run(spark, setup, "CREATE TABLE s (id INTEGER, v VARCHAR); INSERT INTO s SELECT i, 'v' || i FROM range(50) r(i)")
    run(spark, setup, "DELETE FROM s WHERE id % 7 = 0")
    query = "SELECT count(*) AS n, sum(id) AS total, max(v) AS top FROM s"
    con = referee.connect()
    setup.attach(con)
    expected = duck_rows(con, "SELECT count(*) AS n, sum(id) AS total, max(v) AS top FROM lake.s")
    native = run(spark, setup, query)
    assert selected(native) == expected
    assert native["result"]["commands"][-1]["scans"][0]["reader"] == "spark-parquet"
    forced_off = run(spark, setup, query, s3a=False)
    assert selected(forced_off) == expected
    assert forced_off["result"]["commands"][-1]["scans"][0]["reader"] == "python-source"
    # a Spark without hadoop-aws: the probe finds no S3A and the pyarrow readers take over on their own
    script = (
        "import json, sys\n"
        "from airflow_provider_lakehouse.spark.session import local_session\n"
        "from airflow_provider_lakehouse.spark.driver import PlanRunner\n"
        "from airflow_provider_lakehouse.spark.plan import plan_script\n"
        "from tests.integration.test_spark_sql import spec_of\n"
        "from tests.integration.lake_writer import setup_from_env\n"
        "spark = local_session({'spark.master': 'local[1]'})\n"
        "response = PlanRunner(spark, spec_of(setup_from_env())).run(plan_script(sys.argv[1]))\n"
        "print(json.dumps(response['result']['commands'][-1]))\n"
    )
    from tests.integration.lake_writer import setup_to_env

    env = dict(os.environ, LAKE_SETUP=setup_to_env(setup), PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", script, query], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    command = json.loads(proc.stdout.strip().splitlines()[-1])
    assert command["rows"] == expected and command["scans"][0]["reader"] == "python-source"


def test_remaining_statements_parameters_dialect_and_pruning(spark: Any, setup: LakeSetup) -> None:
    """Temp views, DROP COLUMN/TABLE, time travel by timestamp, capped SELECTs, typed parameters, Spark SQL,
    and file pruning from the WHERE constants, all checked against DuckDB or the catalog."""
    for start in (0, 100, 200):  # three files with disjoint id ranges
        run(
            spark,
            setup,
            (
                "CREATE TABLE IF NOT EXISTS r (id BIGINT, tag VARCHAR, extra INTEGER); "
                f"INSERT INTO r SELECT id + {start}, 'g' || (id % 3), 1 FROM range(100) t(id)"
            ),
        )
    lake = setup.open()
    cut = lake.snapshot().snapshot_time
    all_files = len(lake.scan("r").files)
    response = run(
        spark,
        setup,
        """
        CREATE TEMP VIEW small AS SELECT * FROM r WHERE id BETWEEN 150 AND 160;
        SELECT count(*) AS n FROM small;
        SELECT id FROM r ORDER BY id;
        ALTER TABLE r DROP COLUMN extra;
        DELETE FROM r WHERE id >= 200;
        SELECT count(*) AS n FROM r AT (TIMESTAMP => $cut);
        SELECT $day AS day, $flag AS flag, $ids AS ids, $doc->>'k' AS k, $n + 1 AS n1;
        CREATE TABLE gone AS SELECT 1 AS x;
        DROP TABLE gone;
        DROP TABLE IF EXISTS gone;
    """,
        {"cut": cut, "day": dt.date(2026, 3, 1), "flag": True, "ids": [1, 2], "doc": {"k": "v"}, "n": 41},
        max_rows=50,
    )
    c = {x["command_index"]: x for x in response["result"]["commands"]}
    assert c[2]["rows"] == [{"n": 11}]
    assert all_files >= 3 and c[1]["scans"][0] == {  # BETWEEN 150 AND 160 keeps the one file holding 100..199
        "table": "main.r",
        "snapshot_id": c[1]["scans"][0]["snapshot_id"],
        "columns": ["id", "tag", "extra"],
        "files": 1,
        "files_pruned": all_files - 1,
        "inlined_rows": 0,
        "reader": c[1]["scans"][0]["reader"],
    }
    assert c[3]["row_count"] == 300 and len(c[3]["rows"]) == 50 and c[3]["truncated"]
    assert c[6]["rows"] == [{"n": 300}]  # as of before the delete
    assert c[7]["rows"] == [{"day": "2026-03-01", "flag": True, "ids": [1, 2], "k": "v", "n1": 42}]
    assert c[10]["status"] == "absent"

    con = referee.connect()
    setup.attach(con)
    assert duck_rows(con, "SELECT count(*) AS n, max(id) AS top FROM lake.r") == [{"n": 200, "top": 199}]
    assert [r["column_name"] for r in duck_rows(con, "DESCRIBE lake.r")] == ["id", "tag"]
    assert duck_rows(con, "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'gone'") == [{"n": 0}]

    spark_sql = PlanRunner(spark, spec_of(setup)).run(
        plan_script(
            "SELECT tag, collect_list(id)[0] AS first_id FROM r WHERE id < 3 GROUP BY tag ORDER BY tag", dialect="spark"
        )
    )
    assert selected(spark_sql) == [
        {"tag": "g0", "first_id": 0},
        {"tag": "g1", "first_id": 1},
        {"tag": "g2", "first_id": 2},
    ]


def _write_landing(setup: LakeSetup, name: str, tables: dict[str, pa.Table], row_group_size: int = 1000) -> str:
    """Parquet files next to the lake's data (local directory or S3), as a landing area."""
    from airflow_provider_lakehouse.ducklake.storage import Storage

    storage = Storage(setup.data_path, setup.s3)
    base = setup.data_path.rstrip("/") + f"_landing/{name}"
    for file_name, table in tables.items():
        if not base.startswith("s3://"):
            Path(base).mkdir(parents=True, exist_ok=True)
        pq.write_table(
            table, storage.fs_path(f"{base}/{file_name}"), filesystem=storage.fs, row_group_size=row_group_size
        )
    return base


def _sample(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int32()),
            "big": pa.array([i * 1_000_003 if i % 7 else None for i in ids], pa.int64()),
            "price": pa.array([None if i % 5 == 0 else Decimal(i % 1000) / 100 for i in ids], pa.decimal128(7, 2)),
            "name": pa.array([f"n{i % 97}" if i % 11 else None for i in ids], pa.string()),
            "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i % 400) for i in ids], pa.date32()),
            "ratio": pa.array([i / 3 for i in ids], pa.float64()),
            "flag": pa.array([i % 2 == 0 for i in ids], pa.bool_()),
        }
    )


def test_parquet_load_is_copied_by_executors_exactly_as_the_query_path_writes_it(spark: Any, setup: LakeSetup) -> None:
    """``CREATE TABLE AS SELECT * FROM read_parquet(...)`` copies row groups with pyarrow on the executors; the table
    (types, rows) is the one the query path writes, DuckDB reads it, and a file that does not fit fails cleanly."""
    setup.create()
    landing = _write_landing(
        setup, "ok", {"a.parquet": _sample(0, 5000), "b.parquet": _sample(5000, 1200), "c.parquet": _sample(0, 0)}
    )
    response = run(
        spark,
        setup,
        f"""ATTACH 'ducklake' AS dl; USE dl;
        CREATE TABLE copied AS SELECT * FROM read_parquet('{landing}/*.parquet');
        CREATE TABLE queried AS SELECT * FROM read_parquet('{landing}/*.parquet') WHERE true;""",
    )
    copied, queried = response["result"]["commands"][2:4]
    assert copied["write"] == "parquet-copy" and "write" not in queried
    assert copied["affected_rows"] == queried["affected_rows"] == 6200

    con = referee.connect()
    setup.attach(con)
    assert duck_rows(con, "DESCRIBE lake.copied") == duck_rows(con, "DESCRIBE lake.queried")
    source = f"read_parquet('{landing}/*.parquet')"  # on S3: the lake's secret covers the landing bucket too
    assert (
        duck_rows(con, "SELECT * FROM lake.copied ORDER BY id, day")
        == duck_rows(con, "SELECT * FROM lake.queried ORDER BY id, day")
        == duck_rows(con, f"SELECT * FROM {source} ORDER BY id, day")
    )
    info = {r["table_name"]: r["file_count"] for r in duck_rows(con, "FROM ducklake_table_info('lake')")}
    assert info["copied"] >= 2  # one work item per source file with rows, at least
    con.close()

    # Types Spark's reader converts (unsigned integers, large strings) take the query path, with Spark's types.
    odd = _write_landing(
        setup,
        "odd",
        {
            "x.parquet": pa.table(
                {"u": pa.array([1, 65535], pa.uint16()), "s": pa.array(["a", None], pa.large_string())}
            )
        },
    )
    fallback = run(spark, setup, f"CREATE TABLE odd AS SELECT * FROM read_parquet('{odd}/x.parquet')")
    assert "write" not in fallback["result"]["commands"][0] and fallback["result"]["commands"][0]["affected_rows"] == 2

    # A second file with other column types: the statement fails, no snapshot, no file left behind.
    lake = setup.open()
    good, files_before = lake.current_snapshot_id(), {f.uri for f in lake.storage.list_files(lake.data_path)}
    bad = _write_landing(
        setup,
        "bad",
        {
            "1.parquet": _sample(0, 100),
            "2.parquet": _sample(0, 100).set_column(0, "id", pa.array(range(100), pa.int64())),
        },
    )
    with pytest.raises(StatementError, match="differ from the first file") as failure:
        run(spark, setup, f"CREATE TABLE broken AS SELECT * FROM read_parquet('{bad}/*.parquet')")
    assert failure.value.index == 1
    assert lake.current_snapshot_id() == good
    assert {f.uri for f in lake.storage.list_files(lake.data_path)} == files_before


def test_a_retry_of_a_try_that_committed_does_not_commit_again(spark: Any, setup: LakeSetup) -> None:
    """Exactly-once per task instance: the commit records the try; a retry (the worker died after the commit)
    returns the recorded outcome; a run cleared by a user (a new clearing generation) runs again."""
    from dataclasses import replace

    from airflow_provider_lakehouse.ducklake.task_commits import TaskIdentity

    run(spark, setup, "CREATE TABLE r (id INTEGER)")
    script = "INSERT INTO r VALUES (1), (2); UPDATE r SET id = id * 10 WHERE id = 2; SELECT count(*) AS n FROM r"
    first = TaskIdentity("dag", "load", "manual__1", map_index=2, try_number=1, first_try_number=1)
    committed = run(spark, setup, script, task=first)
    (snapshot,) = committed["catalog_info"]["snapshots_created"]
    lake = setup.open()
    assert lake.snapshot(snapshot).author == "dag.load"

    retried = run(spark, setup, script, task=replace(first, try_number=2))
    assert retried["deduplicated"] == {"snapshot_id": snapshot, "committed_by_try": 1}
    assert retried["catalog_info"]["snapshots_created"] == [] and lake.current_snapshot_id() == snapshot
    assert [(c["kind"], c.get("affected_rows")) for c in retried["result"]["commands"]] == [
        ("insert", 2),
        ("update", 1),
        ("select", None),
    ]
    assert retried["catalog_info"]["tables_touched"] == [
        {"table": "main.r", "rows_written": 3, "snapshot_id": snapshot}
    ]
    assert sorted(lake.read("r").column("id").to_pylist()) == [1, 20]

    cleared = run(spark, setup, script, task=replace(first, try_number=3, first_try_number=3))
    assert "deduplicated" not in cleared and cleared["catalog_info"]["snapshots_created"] == [snapshot + 1]
    assert sorted(lake.read("r").column("id").to_pylist()) == [1, 1, 20, 20]


def test_maintenance_snapshots_name_their_task_but_are_not_the_scripts_commit(spark: Any, setup: LakeSetup) -> None:
    """A CALL that compacts or flushes commits a snapshot naming the task (author, message and the task record
    the UI links), without the task key retries deduplicate on: a retry of a maintenance-only task runs again."""
    import json
    from dataclasses import replace

    from airflow_provider_lakehouse.ducklake.task_commits import TASK_FIELD, TASK_KEY, TaskIdentity

    run(spark, setup, "CREATE TABLE m (id INTEGER)")
    for value in range(3):
        run(spark, setup, f"INSERT INTO m VALUES ({value})")
    task = TaskIdentity("dag", "maintain", "manual__1", try_number=1, first_try_number=1)
    response = run(spark, setup, "CALL ducklake_merge_adjacent_files('dl')", task=task)
    (snapshot_id,) = response["catalog_info"]["snapshots_created"]
    lake = setup.open()
    snapshot = lake.snapshot(snapshot_id)
    info = json.loads(snapshot.commit_extra_info or "{}")
    assert snapshot.author == "dag.maintain" and snapshot.commit_message == task.message
    assert info[TASK_FIELD]["task_id"] == "maintain" and TASK_KEY not in info

    run(spark, setup, "INSERT INTO m VALUES (3)")
    retried = run(spark, setup, "CALL ducklake_merge_adjacent_files('dl')", task=replace(task, try_number=2))
    assert "deduplicated" not in retried
    assert sorted(lake.read("m").column("id").to_pylist()) == [0, 1, 2, 3]
    # flushing passes the same record (this call failed with a TypeError before: the lake took no author)
    flushed = run(spark, setup, "CALL ducklake_flush_inlined_data('dl')", task=task)
    assert [c["kind"] for c in flushed["result"]["commands"]] == ["call"]


def test_change_feed_of_a_script_that_changes_a_row_twice_equals_duckdbs(spark: Any, setup: LakeSetup) -> None:
    """Our engine writes each statement's files, so a script that inserts, updates and deletes the same rows in
    one snapshot leaves every step in the lake; DuckDB's ``ducklake_table_changes`` lists every step, and so do
    the pure-Python feed (the Lakehouse UI) and ``ducklake_table_changes`` in lake SQL."""
    from collections import Counter

    from tests.integration.test_change_feed import assert_feeds_equal

    run(
        spark,
        setup,
        "ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE c (id INTEGER, v VARCHAR); "
        "INSERT INTO c SELECT i, 'v' || i FROM range(6) r(i)",
    )
    response = run(
        spark,
        setup,
        "ATTACH 'ducklake' AS dl; USE dl; "
        "UPDATE c SET v = v || '+' WHERE id < 3; DELETE FROM c WHERE id = 1; "
        "INSERT INTO c VALUES (10, 'new'); UPDATE c SET v = 'newer' WHERE id = 10; "
        "DELETE FROM c WHERE id = 4",
    )
    snapshot = response["catalog_info"]["snapshot_after"]
    con = referee.connect()
    setup.attach(con)
    duck = Counter(
        r[0]
        for r in con.sql(
            f"SELECT change_type FROM ducklake_table_changes('lake', 'main', 'c', {snapshot}, {snapshot})"
        ).fetchall()
    )
    net = {"update_preimage": 2, "update_postimage": 2, "delete": 2, "insert": 1}  # ids 0, 2; 1, 4; 10
    assert duck != Counter(net), "DuckDB lists the steps, not the net change"
    assert_feeds_equal(setup, con, table="c")
    in_sql = selected(
        run(
            spark,
            setup,
            "ATTACH 'ducklake' AS dl; SELECT change_type FROM "
            f"ducklake_table_changes('dl', 'main', 'c', {snapshot}, {snapshot})",
        )
    )
    assert Counter(r["change_type"] for r in in_sql) == duck


# DuckDB spellings sqlglot alone reads otherwise: a column rename without COLUMN (sqlglot: a table rename) and
# MERGE's UPDATE SET * (sqlglot: a star it cannot assign).
DUCKDB_SPELLINGS = """
CREATE TABLE stock (id INTEGER, name VARCHAR, qty INTEGER);
INSERT INTO stock VALUES (1, 'a', 1), (2, 'b', 2);
CREATE TABLE delivery (id INTEGER, name VARCHAR, qty INTEGER);
INSERT INTO delivery VALUES (2, 'b2', 20), (3, 'c', 30);
MERGE INTO stock USING delivery ON stock.id = delivery.id
  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
ALTER TABLE stock RENAME qty TO quantity;
"""


def test_duckdb_spellings_that_sqlglot_reads_otherwise_run_as_in_duckdb(spark: Any, setup: LakeSetup) -> None:
    run(spark, setup, "ATTACH 'ducklake' AS dl; USE dl;" + DUCKDB_SPELLINGS)
    referee_con = referee.connect()
    referee_con.execute(DUCKDB_SPELLINGS)  # the same script on DuckDB's own tables
    con = referee.connect()
    setup.attach(con)
    assert duck_rows(con, "SELECT * FROM lake.stock ORDER BY id") == duck_rows(
        referee_con, "SELECT * FROM stock ORDER BY id"
    )
    assert [r[0] for r in con.sql("DESCRIBE lake.stock").fetchall()] == ["id", "name", "quantity"]
    assert {
        r[0] for r in con.sql("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()
    } == {
        "stock",
        "delivery",
    }


def test_timestamps_with_a_time_zone_are_written_as_duckdb_writes_them(
    spark: Any, setup: LakeSetup, tmp_path: Path
) -> None:
    """CREATE TABLE AS and COPY TO of a ``TIMESTAMP WITH TIME ZONE`` column: PySpark 4 refused to convert Spark's
    TIMESTAMP to Arrow without a zone (a bare AssertionError), and a literal's column came NOT NULL while the file's
    was nullable. DuckDB writes the same script; both must hold the same instants, typed TIMESTAMPTZ."""
    setup.create()
    out = tmp_path / "ts.parquet"
    sql = (
        "CREATE TABLE t AS SELECT TIMESTAMPTZ '2024-01-02 03:04:05+02' AS ts, 1 AS id;"
        "CREATE TABLE u AS SELECT * FROM t;"
        f"COPY (SELECT ts FROM u) TO '{out}' (FORMAT parquet);"
    )
    run(spark, setup, sql)
    con = referee.connect()
    setup.attach(con)
    expected = con.execute("SELECT TIMESTAMPTZ '2024-01-02 03:04:05+02'").fetchall()
    for table in ("lake.t", "lake.u", f"'{out}'"):
        assert con.execute(f"SELECT ts FROM {table}").fetchall() == expected, table
        assert con.execute(f"SELECT typeof(ts) FROM {table}").fetchall() == [("TIMESTAMP WITH TIME ZONE",)], table


def test_copy_to_parquet_stores_decimals_as_duckdb_does(spark: Any, setup: LakeSetup, tmp_path: Path) -> None:
    """``COPY … TO`` a Parquet file: decimals in the physical types DuckDB's own ``COPY`` picks for them."""
    setup.create()
    ours, theirs = tmp_path / "ours.parquet", tmp_path / "theirs.parquet"
    query = (
        "SELECT CAST(-12.5 AS DECIMAL(4,1)) AS d4, CAST(1234567.89 AS DECIMAL(9,2)) AS d9, "
        "CAST(-123456789012345.678 AS DECIMAL(18,3)) AS d18, CAST(1.5 AS DECIMAL(38,10)) AS d38"
    )
    run(spark, setup, f"COPY ({query}) TO '{ours}' (FORMAT parquet);")
    con = referee.connect()
    con.execute(f"COPY ({query}) TO '{theirs}' (FORMAT parquet)")
    layout = "SELECT path_in_schema, type FROM parquet_metadata('{}') ORDER BY column_id"
    assert con.sql(layout.format(ours)).fetchall() == con.sql(layout.format(theirs)).fetchall()
    assert con.sql(f"FROM '{ours}'").fetchall() == con.sql(query).fetchall()


def test_rows_reach_the_file_writers_in_unmeasured_batches_unless_the_lake_sets_a_byte_limit(
    spark: Any, setup: LakeSetup
) -> None:
    """Spark measures each Arrow batch for the Python writers after every row unless the byte limit is off: the
    planner turns it off (a third of a wide-table write), and keeps a limit the lake's ``spark_conf`` sets. Both
    write the same rows."""
    import dataclasses

    key = "spark.sql.execution.arrow.maxBytesPerBatch"
    setup.create()
    spec = spec_of(setup)
    try:
        PlanRunner(spark, spec).run(
            plan_script("CREATE TABLE t AS SELECT range AS id, repeat('x', 100) AS s FROM range(5000);")
        )
        assert spark.conf.get(key) == str(2**31 - 1)
        spark.conf.set(key, "4096")  # as the hook does with a lake's spark_conf when it opens the session
        limited = dataclasses.replace(spec, spark_conf={**spec.spark_conf, key: "4096"})
        PlanRunner(spark, limited).run(plan_script("INSERT INTO t SELECT range + 5000, 'y' FROM range(5000);"))
        assert spark.conf.get(key) == "4096"
    finally:
        spark.conf.unset(key)
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT count(*), sum(id), count(DISTINCT s) FROM lake.t").fetchall() == [(10000, 49995000, 2)]


def test_a_statement_reading_a_table_several_times_answers_as_duckdb(spark: Any, setup: LakeSetup) -> None:
    """Every reference of a table gets its own view; equal ones (same table, snapshot, columns, filters) share the
    first one's resolved files. Self-joins, repeated subqueries and deleted rows still answer as in DuckDB."""
    setup.create()
    run(
        spark,
        setup,
        "CREATE TABLE t AS SELECT range AS k, range % 3 AS g FROM range(10);"
        "INSERT INTO t SELECT range + 10, range % 3 FROM range(5);"
        "DELETE FROM t WHERE k IN (4, 11);",
    )
    query = (
        "SELECT (SELECT count(*) FROM t WHERE g = 0) AS zeros, (SELECT count(*) FROM t WHERE g = 0) AS zeros_again, "
        "(SELECT count(*) FROM t) AS all_rows, (SELECT count(*) FROM t a JOIN t b ON a.k = b.k + 1) AS neighbours, "
        "(SELECT sum(a.k * b.k) FROM t a JOIN t b ON a.g = b.g AND a.k < b.k) AS products"
    )
    response = run(spark, setup, query + ";")
    scans = [c for c in response["result"]["commands"] if c["kind"] == "select"][-1]["scans"]
    assert [s["table"] for s in scans] == ["main.t"] * 7
    con = referee.connect()
    setup.attach(con)
    con.execute("USE lake")
    assert selected(response) == duck_rows(con, query)


def test_spark_sizes_a_lake_table_by_the_columns_it_reads(spark: Any, tmp_path: Path) -> None:
    """A wide table read for its key is sized by that column, as Spark sizes a projection: joined with a larger
    table it is broadcast, where sizing it by its whole files would shuffle both sides (a sort-merge join)."""
    from airflow_provider_lakehouse.spark.native import native_frame

    setup = referee.sqlite_lake(tmp_path)
    setup.create()
    pads = ", ".join(f"repeat(CAST(range % 97 AS VARCHAR), 30) AS pad{n}" for n in range(6))
    run(
        spark,
        setup,
        f"CREATE TABLE dim AS SELECT range AS k, {pads} FROM range(20000);"
        "CREATE TABLE fact AS SELECT range % 25000 AS k FROM range(300000);",
    )
    lake = setup.open()

    def frame(name: str, sized_by_columns: bool) -> Any:
        table = lake.table(name)
        return native_frame(
            spark, lake.scan(name, columns=["k"]), lake.storage, table.columns if sized_by_columns else ()
        )

    dim_bytes, fact_bytes = (sum(f.file_size_bytes for f in lake.scan(t, columns=["k"]).files) for t in ("dim", "fact"))
    threshold = min(dim_bytes, fact_bytes) // 2  # neither table, sized by whole files, is small enough
    key = "spark.sql.autoBroadcastJoinThreshold"
    spark.conf.set(key, str(threshold))
    try:
        joins = {}
        for sized_by_columns in (True, False):
            joined = frame("fact", sized_by_columns).join(frame("dim", sized_by_columns), "k")
            plan = joined._jdf.queryExecution().sparkPlan().toString()
            joins[sized_by_columns] = "BroadcastHashJoin" if "BroadcastHashJoin" in plan else plan
            assert joined.count() == 240000  # keys 0..19999 of each 25,000-row cycle
    finally:
        spark.conf.unset(key)
    assert joins[True] == "BroadcastHashJoin"
    assert "SortMergeJoin" in joins[False]

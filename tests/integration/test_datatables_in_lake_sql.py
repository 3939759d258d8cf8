"""Data Tables inside lake SQL (``ATTACH 'datatable://NAME' AS dt`` next to ``ATTACH 'ducklake://NAME' AS dl``)
on the real stack: Postgres for the Data Table and the lake's catalog, SeaweedFS S3 for the lake's files.

The referee is DuckDB itself: its ``postgres`` extension attaches the same kind of Postgres schema and its
``ducklake`` extension the same kind of lake, and it runs the same script statement by statement. Both engines
must leave both stores as DuckDB does, and a failure anywhere must leave both unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.datatables.transaction import DataTableTransactions, task_gid_prefix
from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
from airflow_provider_lakehouse.ducklake.task_commits import TaskIdentity
from airflow_provider_lakehouse.exceptions import StatementError, UnsupportedStatementError
from airflow_provider_lakehouse.spark.driver import PlanRunner, RunOptions
from airflow_provider_lakehouse.spark.plan import plan_script
from airflow_provider_lakehouse.sql.split import split_statements
from tests import referee
from tests.integration.test_duckdb_engine import strays
from tests.integration.test_spark_sql import spec_of
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ENGINES = ["spark", "duckdb"]

SETUP_DATATABLE = """
CREATE TABLE {s}.customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tier TEXT);
INSERT INTO {s}.customers VALUES (1, 'ada', 'basic'), (2, 'bob', 'basic'), (3, 'cy', NULL), (4, 'di', 'basic');
CREATE TABLE {s}.payments (id INTEGER, customer_id INTEGER, amount NUMERIC(10, 2));
INSERT INTO {s}.payments VALUES (2, 2, 99.50), (50, 4, 12.25), (51, 1, 7.00);
CREATE TABLE {s}.order_totals (name TEXT, total NUMERIC(12, 2), n BIGINT);
"""

SETUP_LAKE = """
CREATE TABLE orders (id INTEGER, customer_id INTEGER, total DECIMAL(10, 2), day DATE);
INSERT INTO orders VALUES (1, 1, 10.00, DATE '2026-01-01'), (2, 2, 250.00, DATE '2026-01-02'),
  (3, 2, 40.00, DATE '2026-01-03'), (4, 3, 120.00, DATE '2026-01-04'), (5, 9, 5.00, DATE '2026-01-05');
"""

#: every kind of cross-store statement; {s} is the Data Table schema (the referee attaches the same database)
SCRIPT = """
CREATE TABLE dl.customer_copy AS SELECT id, name, tier FROM dt.{s}.customers WHERE id <= $max_id;
INSERT INTO dt.{s}.order_totals
  SELECT c.name, sum(o.total) AS total, count(*) AS n FROM dl.orders o JOIN dt.{s}.customers c ON c.id = o.customer_id
  GROUP BY c.name;
CREATE TABLE dt.{s}.big_orders AS SELECT id, customer_id, total FROM dl.orders WHERE total > $min_total;
MERGE INTO dl.orders AS o USING (SELECT id, customer_id, amount FROM dt.{s}.payments) AS p ON o.id = p.id
  WHEN MATCHED THEN UPDATE SET total = p.amount
  WHEN NOT MATCHED THEN INSERT (id, customer_id, total) VALUES (p.id, p.customer_id, p.amount);
DELETE FROM dt.{s}.big_orders WHERE total < $min_total + 30;
UPDATE dt.{s}.customers SET tier = 'gold' WHERE id IN (SELECT customer_id FROM dt.{s}.big_orders);
INSERT INTO dl.orders SELECT id + 1000, customer_id, total, DATE '2026-02-01' FROM dt.{s}.big_orders;
SELECT coalesce(c.tier, 'none') AS tier, count(*) AS n, sum(o.total) AS total
  FROM dt.{s}.customers c JOIN dl.orders o ON o.customer_id = c.id GROUP BY ALL ORDER BY tier;
"""
PARAMETERS = {"max_id": 3, "min_total": 100}


def datatable_spec() -> PostgresSpec:
    return referee.postgres_spec(json.loads(os.environ["AIRFLOW_CONN_DATATABLE_MAIN"]))


class Schemas:
    """Fresh schemas in the stack's Data Table ``main``, dropped at the end of the test."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def new(self) -> str:
        name = f"x_{uuid.uuid4().hex[:10]}"
        pg(f"CREATE SCHEMA {name}")
        self.made.append(name)
        return name

    def drop(self) -> None:
        for name in self.made:
            pg(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture
def schemas(stack: Any) -> Iterator[Schemas]:
    maker = Schemas()
    yield maker
    maker.drop()


def pg(sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    with psycopg.connect(**datatable_spec().connect_kwargs(), autocommit=True) as conn:
        cur = conn.execute(sql, params)  # type: ignore[arg-type]  # fixed test SQL
        return cur.fetchall() if cur.description else []


def pg_rows(schema: str, table: str) -> list[tuple[Any, ...]]:
    return sorted(pg(f"SELECT * FROM {schema}.{table}"), key=repr)


def pg_columns(schema: str, table: str) -> list[tuple[str, str]]:
    return pg(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
        "ORDER BY ordinal_position",
        (schema, table),
    )


def new_world(stack: Any, schemas: Schemas) -> tuple[str, LakeSetup]:
    """A Data Table schema and a lake, both with the starting rows."""
    schema = schemas.new()
    for statement in split_statements(SETUP_DATATABLE.format(s=schema)):
        pg(statement.text)
    lake = referee.postgres_lake(stack)
    lake.create()
    con = referee.connect()
    lake.attach(con, "dl")
    con.execute("USE dl")
    for statement in split_statements(SETUP_LAKE):
        con.execute(statement.text)
    con.close()
    return schema, lake


def run(engine: str, spark: Any, lake: LakeSetup, sql: str, parameters: Any = None, **kwargs: Any) -> Any:
    plan = plan_script(sql, parameters=parameters, autocommit=kwargs.pop("autocommit", False))
    options = RunOptions(**kwargs)
    secrets = [datatable_spec().password, *spec_of(lake).secrets]

    def redact(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    datatables = {"main": datatable_spec()}
    if engine == "duckdb":
        return DuckDBPlanRunner(spec_of(lake), options, redact=redact, datatables=datatables).run(plan)
    return PlanRunner(spark, spec_of(lake), options, redact=redact, datatables=datatables).run(plan)


def referee_run(schema: str, lake: LakeSetup) -> list[Any]:
    """DuckDB runs SCRIPT with its own extensions, one statement per transaction (it cannot write two attached
    databases in one); returns each statement's rows."""
    con = referee.connect()
    con.execute("LOAD postgres")
    con.execute(f"ATTACH {referee.sql_literal(referee.postgres_conninfo(datatable_spec()))} AS dt (TYPE postgres)")
    lake.attach(con, "dl")
    out = []
    for statement in split_statements(SCRIPT.format(s=schema)):
        used = {k: v for k, v in PARAMETERS.items() if f"${k}" in statement.text}
        cursor = con.execute(statement.text, used or None)
        out.append(cursor.fetchall() if cursor.description else None)
    con.close()
    return out


def lake_rows(lake: LakeSetup, table: str) -> list[tuple[Any, ...]]:
    con = referee.connect()
    lake.attach(con, "dl")
    rows = sorted(con.execute(f"SELECT * FROM dl.{table}").fetchall(), key=repr)
    con.close()
    return rows


def prepared_transactions() -> list[str]:
    return [r[0] for r in pg("SELECT gid FROM pg_prepared_xacts WHERE starts_with(gid, 'lakehouse:')")]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cross_store_script_leaves_both_stores_as_duckdb_does(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    ours, our_lake = new_world(stack, schemas)
    theirs, their_lake = new_world(stack, schemas)
    before = our_lake.open().current_snapshot_id()

    response = run(
        engine,
        spark,
        our_lake,
        "ATTACH 'datatable://main' AS dt; ATTACH 'ducklake://main' AS dl;" + SCRIPT.format(s=ours),
        PARAMETERS,
    )
    expected = referee_run(theirs, their_lake)

    commands = response["result"]["commands"]
    assert [c["kind"] for c in commands[2:]] == [
        "ctas", "insert", "ctas", "merge", "delete", "update", "insert", "select"
    ]  # fmt: skip
    got_select = [tuple(r.values()) for r in commands[-1]["rows"]]
    assert [tuple(map(_plain, r)) for r in got_select] == [tuple(map(_plain, r)) for r in expected[-1]]
    for table in ("customers", "order_totals", "big_orders", "payments"):
        assert pg_rows(ours, table) == pg_rows(theirs, table), table
    assert pg_columns(ours, "big_orders") == pg_columns(theirs, "big_orders")
    for table in ("orders", "customer_copy"):
        assert lake_rows(our_lake, table) == lake_rows(their_lake, table), table
    # one lake snapshot for the whole script; the Data Table changes are reported next to the lake's
    info = response["catalog_info"]
    assert info["snapshots_created"] == [before + 1]
    touched = {t["table"]: t["rows_written"] for t in info["tables_touched"]}
    assert touched[f"datatable://main/{ours}.big_orders"] == 2 + 1  # created with 2 rows, then 1 deleted
    assert touched[f"datatable://main/{ours}.order_totals"] == 3
    assert touched[f"datatable://main/{ours}.customers"] == 1
    assert touched["main.orders"] == 3 + 1  # the MERGE's 1 update + 2 inserts, then 1 inserted
    assert prepared_transactions() == []


def _plain(value: Any) -> Any:
    """JSON responses carry decimals as numbers: compare values, not their Python types."""
    return float(value) if isinstance(value, (Decimal, float)) else value


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failure_late_in_the_script_changes_neither_store(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    schema, lake = new_world(stack, schemas)
    before = lake_snapshots(lake.open())
    customers, payments = pg_rows(schema, "customers"), pg_rows(schema, "payments")
    sql = (
        "ATTACH 'datatable://main' AS dt; ATTACH 'ducklake://main' AS dl;"
        + SCRIPT.format(s=schema).rsplit("SELECT coalesce", 1)[0]
        + f"SELECT CAST('not a number' AS INTEGER) FROM dt.{schema}.customers;"
    )
    with pytest.raises(StatementError) as raised:
        run(engine, spark, lake, sql, PARAMETERS)
    assert raised.value.index == 10
    assert datatable_spec().password not in str(raised.value)
    assert lake_snapshots(lake.open()) == before
    assert strays(lake) == set()
    assert pg_rows(schema, "customers") == customers and pg_rows(schema, "payments") == payments
    assert pg_rows(schema, "order_totals") == []
    assert pg(f"SELECT to_regclass('{schema}.big_orders')") == [(None,)]  # the CTAS is gone too
    assert prepared_transactions() == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_failing_postgres_statement_is_named_and_lands_nothing(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    schema, lake = new_world(stack, schemas)
    before = lake_snapshots(lake.open())
    sql = (
        f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake://main' AS dl;"
        "INSERT INTO dl.orders VALUES (77, 1, 1.00, DATE '2026-03-01');"
        "INSERT INTO dt.customers SELECT id, 'dup', NULL FROM dl.orders WHERE id = 1;"  # primary key violation
    )
    with pytest.raises(StatementError) as raised:
        run(engine, spark, lake, sql)
    assert raised.value.index == 4
    assert "customers_pkey" in str(raised.value)
    assert lake_snapshots(lake.open()) == before
    assert [r[1] for r in pg_rows(schema, "customers")] == ["ada", "bob", "cy", "di"]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_attached_schema_and_public_are_where_unqualified_tables_are(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    schema, lake = new_world(stack, schemas)
    table = f"pub_{uuid.uuid4().hex[:8]}"
    try:
        response = run(
            engine,
            spark,
            lake,
            f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'datatable' AS pub; ATTACH 'ducklake://main' AS dl;"
            f"CREATE TABLE pub.{table} AS SELECT name FROM dt.customers WHERE id = 1;"
            f"USE dt; SELECT count(*) AS n FROM payments;"
            f"SELECT p.name FROM pub.{table} p;",
        )
        commands = response["result"]["commands"]
        assert commands[5]["rows"] == [{"n": 3}]
        assert commands[6]["rows"] == [{"name": "ada"}]
        assert pg(f"SELECT name FROM public.{table}") == [("ada",)]
    finally:
        pg(f"DROP TABLE IF EXISTS public.{table}")


@pytest.mark.parametrize("engine", ENGINES)
def test_autocommit_commits_each_data_table_statement_on_its_own(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    schema, lake = new_world(stack, schemas)
    sql = (
        f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake://main' AS dl;"
        "DELETE FROM dt.payments WHERE id = 50;"
        "INSERT INTO dt.order_totals SELECT 'all', sum(total), count(*) FROM dl.orders;"
        "SELECT CAST('x' AS INTEGER);"
    )
    with pytest.raises(StatementError):
        run(engine, spark, lake, sql, autocommit=True)
    assert [r[0] for r in pg_rows(schema, "payments")] == [2, 51]
    assert pg_rows(schema, "order_totals") == [("all", Decimal("425.00"), 5)]


def test_a_rolled_back_block_undoes_its_data_table_changes_on_spark(spark: Any, stack: Any, schemas: Schemas) -> None:
    schema, lake = new_world(stack, schemas)
    run(
        "spark",
        spark,
        lake,
        f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake://main' AS dl;"
        "DELETE FROM dt.payments WHERE id = 2;"
        "BEGIN; DELETE FROM dt.payments WHERE id = 50; INSERT INTO dt.order_totals VALUES ('x', 1, 1); ROLLBACK;"
        "INSERT INTO dt.order_totals SELECT 'kept', count(*), count(*) FROM dt.payments;",
    )
    assert [r[0] for r in pg_rows(schema, "payments")] == [50, 51]
    assert pg_rows(schema, "order_totals") == [("kept", Decimal("2.00"), 2)]


def test_a_change_reading_the_lake_runs_nowhere_and_says_why() -> None:
    with pytest.raises(UnsupportedStatementError, match="read only that Data Table"):
        plan_script(
            "ATTACH 'datatable' AS dt; ATTACH 'ducklake' AS dl; DELETE FROM dt.t WHERE id IN (SELECT id FROM dl.u)"
        )


def test_a_lake_commit_failure_rolls_back_the_prepared_data_table_change(stack: Any, schemas: Schemas) -> None:
    schema = schemas.new()
    pg(f"CREATE TABLE {schema}.t (id INTEGER)")
    transactions = DataTableTransactions({"main": datatable_spec()})
    import pyarrow as pa

    transactions.insert("main", schema, "t", pa.table({"id": [1, 2]}))
    seen_prepared: list[str] = []

    def failing_lake_commit() -> None:
        seen_prepared.extend(prepared_transactions())  # Postgres holds it prepared while the lake commits
        raise RuntimeError("the lake's catalog refused the commit")

    with pytest.raises(RuntimeError, match="refused"):
        transactions.commit(failing_lake_commit)
    assert len(seen_prepared) == 1
    assert prepared_transactions() == []
    assert pg_rows(schema, "t") == []


CRASH_CHILD = """
import json, os, sys
from airflow_provider_lakehouse.datatables import transaction
from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
from airflow_provider_lakehouse.spark.driver import RunOptions
from airflow_provider_lakehouse.spark.plan import plan_script
from airflow_provider_lakehouse.ducklake.task_commits import TaskIdentity
from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.connections.lake import S3Spec
from airflow_provider_lakehouse.connections.specs import PostgresSpec

when = sys.argv[1]
args = json.loads(sys.argv[2])
original = transaction.DataTableTransactions.commit

def crash(self, lake_commit=None):
    def lake_commit_then_crash():
        if when == "after":
            lake_commit()
        os._exit(17)  # the worker dies: nothing after this runs
    return original(self, lake_commit_then_crash)

transaction.DataTableTransactions.commit = crash
spec = DuckLakeSpec(name="main", catalog=PostgresSpec(**args["catalog"]), data_path=args["data_path"],
                    metadata_schema=args["metadata_schema"], s3=S3Spec(**args["s3"]))
task = TaskIdentity("dag", "task", args["run_id"], try_number=1)
DuckDBPlanRunner(spec, RunOptions(task=task), datatables={"main": PostgresSpec(**args["datatable"])}).run(
    plan_script(args["sql"]))
"""


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_retry_finishes_what_a_crashed_try_prepared(when: str, stack: Any, schemas: Schemas, tmp_path: Path) -> None:
    """The worker dies after Postgres prepared the Data Table change, before or after the lake committed: the
    task's retry commits the prepared change when the lake's snapshot landed and rolls it back otherwise (and
    then runs the script itself), so the two stores agree either way and nothing is written twice."""
    schema, lake = new_world(stack, schemas)
    run_id = f"manual__{uuid.uuid4().hex[:8]}"
    sql = (
        f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake://main' AS dl;"
        "INSERT INTO dl.orders VALUES (60, 1, 6.00, DATE '2026-03-01');"
        "INSERT INTO dt.order_totals SELECT 'sum', sum(total), count(*) FROM dl.orders;"
    )
    spec = spec_of(lake)
    fields = ("host", "port", "user", "dbname", "password")
    args = {
        "when": when,
        "sql": sql,
        "run_id": run_id,
        "catalog": {k: getattr(spec.catalog, k) for k in fields},
        "datatable": {k: getattr(datatable_spec(), k) for k in fields},
        "data_path": spec.data_path,
        "metadata_schema": spec.metadata_schema,
        "s3": {
            "access_key": spec.s3.access_key,
            "secret_key": spec.s3.secret_key,
            "endpoint_url": spec.s3.endpoint_url,
        },
    }
    child = subprocess.run(
        [sys.executable, "-c", CRASH_CHILD, when, json.dumps(args)], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 17, child.stderr[-3000:]
    prefix = task_gid_prefix(TaskIdentity("dag", "task", run_id).key)
    assert [g for g in prepared_transactions() if g.startswith(prefix)] != []  # left waiting, holding its rows
    landed = len(lake_snapshots(lake.open()))

    retry = DuckDBPlanRunner(
        spec, RunOptions(task=TaskIdentity("dag", "task", run_id, try_number=2)), datatables={"main": datatable_spec()}
    ).run(plan_script(sql))

    assert [g for g in prepared_transactions() if g.startswith(prefix)] == []
    assert pg_rows(schema, "order_totals") == [("sum", Decimal("431.00"), 6)]  # exactly once
    orders = [r[0] for r in lake_rows(lake, "orders")]
    assert orders.count(60) == 1
    if when == "after":
        assert "deduplicated" in retry  # the retry found try 1's snapshot and only finished its Postgres side
        assert len(lake_snapshots(lake.open())) == landed
    else:
        assert "deduplicated" not in retry


def test_spark_executors_read_large_data_tables_in_page_ranges_at_the_scripts_snapshot(
    spark: Any, stack: Any, schemas: Schemas
) -> None:
    """A table above ``datatable_partition_bytes`` is read by the executors in page ranges at the snapshot the
    script's transaction exported: the same rows the driver reads, even with a commit by someone else in between;
    once the script changed the Data Table, the driver reads it (the change is visible only in its transaction)."""
    schema, lake = new_world(stack, schemas)
    pg(
        f"CREATE TABLE {schema}.big AS SELECT g AS id, g % 7 AS k, repeat('x', 200) AS pad FROM generate_series(1, 20000) g"
    )
    sql = (
        f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake://main' AS dl;"
        "SELECT count(*) AS n, sum(id) AS total, count(DISTINCT k) AS ks FROM dt.big;"
        "CREATE TABLE dl.big_copy AS SELECT id, k FROM dt.big;"
        "DELETE FROM dt.big WHERE k = 0;"
        "SELECT count(*) AS n FROM dt.big;"
    )
    response = run("spark", spark, lake, sql, datatable_partition_bytes=256 * 1024)
    commands = response["result"]["commands"]
    first_read = commands[2]["datatable_reads"][0]["reader"]
    assert first_read.startswith("executors:") and int(first_read.split(":")[1]) > 2, first_read
    assert commands[2]["rows"] == [{"n": 20000, "total": 200010000, "ks": 7}]
    assert commands[3]["affected_rows"] == 20000
    assert commands[5]["datatable_reads"] == [{"table": f"datatable://main/{schema}.big", "reader": "driver"}]
    assert commands[5]["rows"] == [{"n": 20000 - 2857}]
    assert lake_rows(lake, "big_copy") == sorted(((i, i % 7) for i in range(1, 20001)), key=repr)


def test_spark_stages_data_table_writes_and_a_failure_leaves_neither_rows_nor_staging(
    spark: Any, stack: Any, schemas: Schemas
) -> None:
    """Spark's rows reach Postgres from the executors through a staging table that the script's transaction
    empties into the target; a later failure leaves the target unchanged and no staging table behind."""
    schema, lake = new_world(stack, schemas)
    staging_before = pg("SELECT count(*) FROM pg_tables WHERE schemaname = 'lakehouse_staging'")
    ok = run(
        "spark",
        spark,
        lake,
        f"ATTACH 'datatable://main:{schema}' AS dt;"
        "CREATE TABLE dt.many AS SELECT id, id % 13 AS k FROM range(50000) r(id);"
        "INSERT INTO dt.many SELECT id, -1 FROM range(5) r(id);",
    )
    assert [c.get("affected_rows") for c in ok["result"]["commands"][1:]] == [50000, 5]
    assert pg(f"SELECT count(*), count(DISTINCT id), min(k) FROM {schema}.many") == [(50005, 50000, -1)]
    with pytest.raises(StatementError):
        run(
            "spark",
            spark,
            lake,
            f"ATTACH 'datatable://main:{schema}' AS dt;"
            "INSERT INTO dt.many SELECT id, 99 FROM range(1000) r(id);"
            "SELECT CAST('x' AS INTEGER);",
        )
    assert pg(f"SELECT count(*) FROM {schema}.many WHERE k = 99") == [(0,)]
    assert pg("SELECT count(*) FROM pg_tables WHERE schemaname = 'lakehouse_staging'") == staging_before


def test_a_retried_partition_replaces_what_its_first_attempt_staged(stack: Any, schemas: Schemas) -> None:
    """Spark runs a failed task again: the staged rows of a partition are replaced, never doubled."""
    import pyarrow as pa

    from airflow_provider_lakehouse.datatables.partitions import stage_partition

    transactions = DataTableTransactions({"main": datatable_spec()})
    try:
        staging = transactions.open_staging("main", pa.schema([("id", pa.int64())]))
        batch = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["id"])
        assert stage_partition(staging, 0, [batch]) == 3
        assert stage_partition(staging, 0, [batch]) == 3  # the retried attempt
        assert stage_partition(staging, 1, [batch.slice(0, 1)]) == 1
        staged = pg(f"SELECT __lakehouse_part, count(*) FROM lakehouse_staging.{staging.name} GROUP BY 1 ORDER BY 1")
        assert pg(f"SELECT sum(c0) FROM lakehouse_staging.{staging.name}") == [(7,)]
        assert staged == [(0, 3), (1, 1)]
    finally:
        transactions.rollback()
    assert pg("SELECT to_regclass(%s)", (f"lakehouse_staging.{staging.name}",)) == [(None,)]


def lake_and_postgres(lake: LakeSetup) -> Any:
    """A DuckDB connection with ``lake`` attached as ``dl`` and Data Table ``main`` through DuckDB's own postgres
    extension as ``pg``: the referee of what a Data Table reads as."""
    con = referee.connect()
    lake.attach(con, "dl")
    con.execute("LOAD postgres")
    con.execute(f"ATTACH {referee.sql_literal(referee.postgres_conninfo(datatable_spec()))} AS pg (TYPE postgres)")
    return con


def column_types(con: Any, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE {table}").fetchall()}


ODD_TYPES = {
    "i2": ("smallint", "7"),
    "i8": ("bigint", "9000000000"),
    "f4": ("real", "1.5"),
    "n": ("numeric", "3.14159"),  # no precision: DOUBLE
    "n2": ("numeric(10,3)", "12.345"),
    "b": ("boolean", "true"),
    "t": ("text", "'héllo'"),
    "vc": ("varchar(5)", "'ab'"),
    "ch": ("char(3)", "'x'"),  # blank-padded by Postgres, read without the padding
    "d": ("date", "'2024-02-29'"),
    "tm": ("time", "'13:14:15.5'"),
    "ts": ("timestamp", "'2024-01-02 03:04:05.678'"),
    "tz": ("timestamptz", "'2024-01-02 03:04:05+02'"),
    "iv": ("interval", "'1 day 2 hours'"),
    "u": ("uuid", "'12345678-1234-5678-1234-567812345678'"),
    "j": ("json", """'{"a": 1}'"""),
    "jb": ("jsonb", """'{"b": [1, 2]}'"""),
    "by": ("bytea", "'\\x0001'"),
    "ai": ("int[]", "'{1,2,NULL}'"),
    "at": ("text[]", """'{"a","b"}'"""),
    "na": ("numeric(10,2)[]", "'{1.5,2.25,NULL}'"),
    "nn": ("numeric[]", "'{1.5,2.25}'"),  # no precision: DOUBLE[]
    "tsa": ("timestamp[]", """'{"2024-01-01 00:00:00.5"}'"""),
    "tza": ("timestamptz[]", """'{"2024-01-01 00:00:00+02"}'"""),
    "ua": ("uuid[]", "'{12345678-1234-5678-1234-567812345678}'"),
    "ia": ("interval[]", """'{"1 mon 2 days",NULL}'"""),
    "ba": ("bytea[]", """'{"\\x01ff"}'"""),
    "ja": ("jsonb[]", """ARRAY['{"a": 1}'::jsonb]"""),
    "ca": ("char(3)[]", "'{a,bc}'"),  # without the padding, as DuckDB reads them
    "i2a": ("smallint[]", "'{1,2}'"),
    "i8a": ("bigint[]", "'{9000000000}'"),
    "boa": ("boolean[]", "'{t,f}'"),
    "oid": ("oid", "4000000000"),  # UINTEGER
    "inet": ("inet", "'10.0.0.1/24'"),  # types without a DuckDB counterpart: Postgres's text
    "money": ("money", "'12.34'"),
    "bit": ("bit(3)", "B'101'"),
    "n50": ("numeric(50,2)", "'1.5'"),  # beyond 38 digits: DOUBLE
    "nan": ("float8", "'NaN'"),
}
#: what reads differently from DuckDB's postgres extension, and why (docs/ducklake.md, "Data Tables in lake SQL")
KNOWN_TYPE_DIFFERENCES = {
    "duckdb": {},
    # the Spark engine stores no intervals: DuckDB's text of it; and lists of UUIDs or intervals hold their text
    "spark": {"iv": "VARCHAR", "ua": "VARCHAR[]", "ia": "VARCHAR[]"},
}


@pytest.mark.parametrize("engine", ENGINES)
def test_postgres_types_reach_the_lake_as_duckdb_reads_them(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    """A Data Table table of every common Postgres type, copied into the lake with CREATE TABLE AS: each column's
    type and value are what DuckDB's own postgres extension reads, but for the differences listed (and named in
    the docs)."""
    schema = schemas.new()
    columns = ", ".join(f"{name} {kind}" for name, (kind, _value) in ODD_TYPES.items())
    pg(f"CREATE TABLE {schema}.odd ({columns})")
    pg(f"INSERT INTO {schema}.odd VALUES ({', '.join(v for _k, v in ODD_TYPES.values())})")
    pg(f"INSERT INTO {schema}.odd (i2) VALUES (NULL)")
    lake = referee.postgres_lake(stack)
    lake.create()
    run(engine, spark, lake, f"ATTACH 'datatable://main:{schema}' AS dt; CREATE TABLE copy AS SELECT * FROM dt.odd")

    con = lake_and_postgres(lake)
    ours, theirs = column_types(con, "dl.copy"), column_types(con, f"pg.{schema}.odd")
    known = KNOWN_TYPE_DIFFERENCES[engine]
    assert ours == {name: known.get(name, kind) for name, kind in theirs.items()}
    order = "ORDER BY i2 NULLS LAST"
    names = ", ".join(f'"{c}"::VARCHAR' for c in ODD_TYPES if c not in known)
    assert (
        con.execute(f"SELECT {names} FROM dl.copy {order}").fetchall()
        == con.execute(f"SELECT {names} FROM pg.{schema}.odd {order}").fetchall()
    )
    for name in known:  # the same value, as DuckDB's text of it
        got = con.execute(f'SELECT "{name}"::VARCHAR FROM dl.copy {order}').fetchall()
        assert got == con.execute(f'SELECT "{name}"::VARCHAR FROM pg.{schema}.odd {order}').fetchall(), name


#: each engine, and on Spark both Data Table readers: the driver's, and the executors' page ranges (1 byte a range)
EVERY_READER = pytest.mark.parametrize(
    ("engine", "partition_bytes"),
    [("duckdb", None), ("spark", None), ("spark", 1)],
    ids=["duckdb", "spark-driver", "spark-executors"],
)


def reader_options(partition_bytes: int | None) -> dict[str, int]:
    return {} if partition_bytes is None else {"datatable_partition_bytes": partition_bytes}


#: interval, uuid and time values as Postgres takes them: months, mixed signs, fractions, the extremes of a day
TEXTUAL_VALUES = [
    ("'1 year 2 mons 3 days 04:05:06.789'", "'12345678-1234-5678-1234-567812345678'", "'00:00:00'"),
    ("'-1 mons +2 days -00:00:01.5'", "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'", "'23:59:59.999999'"),
    ("'-178000000 years'", "'A0EEBC999C0B4EF8BB6D6BB9BD380A12'", "'12:00:00.5'"),
    ("'0 seconds'", "'00000000-0000-0000-0000-000000000000'", "'01:02:03'"),
    ("'36 hours 0.000001 seconds'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "NULL"),
    ("NULL", "NULL", "'13:14:15'"),
]


@EVERY_READER
def test_intervals_uuids_and_times_read_as_duckdb_reads_them(
    engine: str, partition_bytes: int | None, spark: Any, stack: Any, schemas: Schemas
) -> None:
    """Postgres ``interval``, ``uuid`` and ``time`` values in a Data Table read as DuckDB's postgres extension reads
    them: a lake copy has DuckDB's types (the Spark engine stores an interval as DuckDB's text of it) and values, a
    filter on a UUID finds its row, and a copy into another Data Table keeps Postgres's values and types. On Spark
    both readers: the driver's and the executors' page ranges."""
    schema = schemas.new()
    pg(f"CREATE TABLE {schema}.src (id INTEGER, iv INTERVAL, u UUID, tm TIME)")
    rows = ", ".join(f"({i}, {iv}, {u}, {tm})" for i, (iv, u, tm) in enumerate(TEXTUAL_VALUES))
    pg(f"INSERT INTO {schema}.src VALUES {rows}")
    lake = referee.postgres_lake(stack)
    lake.create()
    response = run(
        engine,
        spark,
        lake,
        f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake' AS dl; "
        "CREATE TABLE dl.copy AS SELECT * FROM dt.src; "
        "SELECT id FROM dt.src WHERE u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'; "
        "CREATE TABLE dt.pg_copy AS SELECT * FROM dt.src; "
        "INSERT INTO dt.pg_copy SELECT * FROM dt.src WHERE id < 2",
        **reader_options(partition_bytes),
    )
    commands = response["result"]["commands"]
    if engine == "spark":
        assert commands[2]["datatable_reads"][0]["reader"].startswith("executors:" if partition_bytes else "driver")
    assert commands[3]["rows"] == [{"id": 1}]

    con = lake_and_postgres(lake)
    ours, theirs = column_types(con, "dl.copy"), column_types(con, f"pg.{schema}.src")
    assert theirs == {"id": "INTEGER", "iv": "INTERVAL", "u": "UUID", "tm": "TIME"}
    assert ours == (theirs if engine == "duckdb" else dict(theirs, iv="VARCHAR"))
    assert (
        con.execute("SELECT id, iv::VARCHAR, u, tm FROM dl.copy ORDER BY id").fetchall()
        == con.execute(f"SELECT id, iv::VARCHAR, u, tm FROM pg.{schema}.src ORDER BY id").fetchall()
    )
    assert pg_columns(schema, "pg_copy") == [
        ("id", "integer"),
        ("iv", "interval" if engine == "duckdb" else "text"),
        ("u", "uuid"),
        ("tm", "time without time zone"),
    ]
    copied = pg(f"SELECT id, iv::text, u::text, tm::text FROM {schema}.pg_copy ORDER BY id, iv")
    source = pg(f"SELECT id, iv::text, u::text, tm::text FROM {schema}.src ORDER BY id")
    if engine != "duckdb":  # an interval reached Postgres as DuckDB's text of it
        duckdb_text = dict(con.execute(f"SELECT id, iv::VARCHAR FROM pg.{schema}.src").fetchall())
        source = [(i, duckdb_text[i], u, tm) for i, _iv, u, tm in source]
    assert copied == sorted(source + [r for r in source if r[0] < 2], key=lambda r: (r[0], r[1] or ""))


@EVERY_READER
def test_infinite_dates_and_timestamps_read_as_duckdb_reads_them(
    engine: str, partition_bytes: int | None, spark: Any, stack: Any, schemas: Schemas
) -> None:
    """Postgres's ``infinity`` and ``-infinity`` dates and timestamps (psycopg refuses to load them) reach the lake
    as DuckDB's infinities, as DuckDB's postgres extension reads them, next to ordinary values."""
    schema = schemas.new()
    pg(f"CREATE TABLE {schema}.src (id INTEGER, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, ds DATE[])")
    pg(
        f"INSERT INTO {schema}.src VALUES (1, 'infinity', 'infinity', 'infinity', '{{infinity,2024-02-29}}'), "
        f"(2, '-infinity', '-infinity', '-infinity', NULL), (3, '2024-02-29', '2024-02-29 01:02:03.5', "
        f"'2024-02-29 01:02:03+05', '{{-infinity}}'), (4, NULL, NULL, NULL, NULL)"
    )
    lake = referee.postgres_lake(stack)
    lake.create()
    script = f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake' AS dl; CREATE TABLE dl.copy AS SELECT * FROM dt.src"
    run(engine, spark, lake, script, **reader_options(partition_bytes))

    con = lake_and_postgres(lake)
    assert column_types(con, "dl.copy") == column_types(con, f"pg.{schema}.src")
    texts = "id, d::VARCHAR, ts::VARCHAR, tz::VARCHAR, ds::VARCHAR, isinf(d)"
    assert (
        con.execute(f"SELECT {texts} FROM dl.copy ORDER BY id").fetchall()
        == con.execute(f"SELECT {texts} FROM pg.{schema}.src ORDER BY id").fetchall()
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_unquoted_names_find_postgres_tables_as_duckdb_does(
    engine: str, spark: Any, stack: Any, schemas: Schemas
) -> None:
    """Postgres folds unquoted names to lower case; DuckDB's postgres extension finds ``dt.MixedCase`` as
    mixedcase. A quoted name keeps its case."""
    schema = schemas.new()
    pg(f'CREATE TABLE {schema}."Quoted" (a INTEGER)')
    pg(f'INSERT INTO {schema}."Quoted" VALUES (40)')
    lake = referee.postgres_lake(stack)
    lake.create()
    response = run(
        engine,
        spark,
        lake,
        f"ATTACH 'datatable://main:{schema}' AS dt;"
        "CREATE TABLE dt.MixedCase AS SELECT 1 AS a;"
        "INSERT INTO dt.MIXEDCASE VALUES (2);"
        'SELECT (SELECT sum(a) FROM dt.mixedcase) + (SELECT sum(a) FROM dt."Quoted") AS total;',
    )
    assert response["result"]["commands"][-1]["rows"] == [{"total": 43}]
    assert pg(f"SELECT a FROM {schema}.mixedcase ORDER BY a") == [(1,), (2,)]


RANDOM_STATEMENTS = [
    "INSERT INTO dt.{s}.kv SELECT k + {a}, v FROM dl.kv WHERE v % {m} = {r}",
    "INSERT INTO dl.kv SELECT k + {a}, v * 2 FROM dt.{s}.kv WHERE k < {b}",
    "DELETE FROM dt.{s}.kv WHERE v % {m} = {r}",
    "UPDATE dt.{s}.kv SET v = v + {a} WHERE k % {m} = {r}",
    "DELETE FROM dl.kv WHERE k IN (SELECT k FROM dt.{s}.kv WHERE v > {b})",
    "UPDATE dl.kv SET v = v - 1 WHERE k % {m} = {r}",
    "MERGE INTO dl.kv AS t USING (SELECT k, max(v) AS v FROM dt.{s}.kv WHERE k % {m} = {r} GROUP BY k) AS s "
    "ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v)",
    "CREATE OR REPLACE TABLE dt.{s}.snap AS SELECT k, sum(v) AS total, count(*) AS n FROM dl.kv GROUP BY k",
    "INSERT INTO dt.{s}.kv VALUES ({a}, {b}), ({b}, {a})",
]


def random_script(seed: int, schema: str, count: int = 14) -> list[str]:
    import random

    rng = random.Random(seed)
    statements = []
    for _ in range(count):
        template = rng.choice(RANDOM_STATEMENTS)
        values = {"a": rng.randint(0, 40), "b": rng.randint(5, 60), "m": rng.randint(2, 5)}
        statements.append(template.format(s=schema, r=rng.randint(0, values["m"] - 1), **values))
    return statements


@pytest.mark.parametrize("engine, seed", [("spark", 7), ("duckdb", 7), ("duckdb", 2026)])
def test_random_cross_store_scripts_end_as_duckdb_ends_them(
    engine: str, seed: int, spark: Any, stack: Any, schemas: Schemas
) -> None:
    """Random sequences of reads and writes across a lake table and a Data Table, run as one script on the engine
    and statement by statement by DuckDB (its postgres and ducklake extensions) on a copy: both stores end the same."""
    worlds = []
    for _ in range(2):
        schema = schemas.new()
        pg(f"CREATE TABLE {schema}.kv (k INTEGER, v INTEGER)")
        pg(f"INSERT INTO {schema}.kv SELECT g, g * 3 % 17 FROM generate_series(1, 30) g")
        lake = referee.postgres_lake(stack)
        lake.create()
        con = referee.connect()
        lake.attach(con, "dl")
        con.execute("CREATE TABLE dl.kv AS SELECT range::INTEGER AS k, (range * 7 % 11)::INTEGER AS v FROM range(40)")
        con.close()
        worlds.append((schema, lake))
    (ours, our_lake), (theirs, their_lake) = worlds

    run(
        engine,
        spark,
        our_lake,
        "ATTACH 'datatable' AS dt; ATTACH 'ducklake' AS dl;" + ";".join(random_script(seed, ours)),
    )

    con = referee.connect()
    con.execute("LOAD postgres")
    con.execute(f"ATTACH {referee.sql_literal(referee.postgres_conninfo(datatable_spec()))} AS dt (TYPE postgres)")
    their_lake.attach(con, "dl")
    for statement in random_script(seed, theirs):
        con.execute(statement)
    con.close()
    assert lake_rows(our_lake, "kv") == lake_rows(their_lake, "kv")
    assert pg_rows(ours, "kv") == pg_rows(theirs, "kv")
    snap = pg(f"SELECT to_regclass('{ours}.snap') IS NOT NULL, to_regclass('{theirs}.snap') IS NOT NULL")
    assert snap[0][0] == snap[0][1]
    if snap[0][0]:
        assert pg_rows(ours, "snap") == pg_rows(theirs, "snap")

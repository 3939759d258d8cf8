"""Column defaults as DuckDB 1.5 applies them, on Spark; the same script run by DuckDB on a second lake is the
referee, and DuckDB reads both lakes.

- ``DEFAULT`` in an ``INSERT``'s ``VALUES`` and in a ``MERGE``'s ``INSERT VALUES``, and ``INSERT ... DEFAULT
  VALUES``: Spark failed them (``DEFAULT`` cannot be resolved).
- A ``MERGE`` whose ``WHEN NOT MATCHED`` clauses name different columns: a row of a clause that leaves a column out
  took a later clause's value for it, where DuckDB gives the column's default.
- ``UPDATE ... SET c = DEFAULT``: DuckDB's ``ducklake`` refuses it; so do we, with its error.
- Defaults of list, struct and map columns: refused in ``CREATE TABLE`` (Spark took and applied them), recorded by
  ``SET DEFAULT`` and ignored by inserts (Spark refused the statement).
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from tests import referee
from tests.integration.test_spark_sql import duck_rows, run, selected
from tests.integration.test_spark_values_as_duckdb import run_on_both, same_table
from tests.integration.test_values_typed_as_duckdb import fails_on_both
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPTS = {
    "default_cells": [
        "CREATE TABLE t (i INTEGER, j INTEGER DEFAULT 5, d DATE DEFAULT '2020-01-01', s VARCHAR DEFAULT 'x', "
        "u UUID DEFAULT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', n DOUBLE)",
        "INSERT INTO t VALUES (1, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT), (2, 3, '2021-02-03', 'y', NULL, 1.5)",
        "INSERT INTO t VALUES (DEFAULT, 7, DATE '2022-01-01', 4, DEFAULT, 2)",
        "INSERT INTO t (s, i) VALUES (DEFAULT, 10), ('z', DEFAULT)",
        "INSERT INTO t (j) VALUES (DEFAULT)",
    ],
    "default_values": [
        "CREATE TABLE t (i INTEGER DEFAULT 3 NOT NULL, j VARCHAR DEFAULT 'd', k INTEGER[])",
        "INSERT INTO t DEFAULT VALUES",
        "INSERT INTO t DEFAULT VALUES",
        "INSERT INTO t VALUES (1, 'e', [1])",
    ],
    "merge_default_and_columns_left_out": [
        "CREATE TABLE t (i BIGINT, j VARCHAR DEFAULT 'd', k DATE, n INTEGER DEFAULT -1)",
        "INSERT INTO t VALUES (100, 'kept', NULL, 0)",
        "MERGE INTO t USING (SELECT i, 'x' || i AS j, NULL::DATE AS k, i * 2 AS n FROM range(7) r(i)) s "
        "ON t.i = s.i "
        "WHEN NOT MATCHED AND s.i = 0 THEN INSERT VALUES (s.i, DEFAULT, DEFAULT, DEFAULT) "
        "WHEN NOT MATCHED AND s.i = 1 THEN DO NOTHING "
        "WHEN NOT MATCHED AND s.i < 4 THEN INSERT (k, i) VALUES (DATE '2020-01-01', s.i + 10) "
        "WHEN NOT MATCHED AND s.i = 4 THEN INSERT (i, n) VALUES (s.i, DEFAULT) "
        "WHEN NOT MATCHED THEN INSERT *",
    ],
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_defaults_in_inserts_and_merges_are_duckdbs(spark: Any, lakes: tuple[LakeSetup, LakeSetup], name: str) -> None:
    ours, theirs = lakes
    con = run_on_both(spark, ours, theirs, SCRIPTS[name])
    same_table(con, "t")


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO keep VALUES (1); UPDATE keep SET i = DEFAULT",
        "INSERT INTO keep VALUES (1); MERGE INTO keep USING (SELECT 1 AS i) s ON keep.i = s.i "
        "WHEN MATCHED THEN UPDATE SET i = DEFAULT",
    ],
)
def test_an_update_to_default_fails_as_in_duckdb(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup], statement: str
) -> None:
    fails_on_both(
        spark,
        lakes,
        statement,
        duckdb_error="SET DEFAULT is not yet supported for updates of a DuckLake table",
        ours="SET DEFAULT is not yet supported for updates of a DuckLake table",
    )


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("CREATE TABLE t (l INTEGER[] DEFAULT [1, 2])", "LIST"),
        ("CREATE TABLE t (a INTEGER[3] DEFAULT NULL)", "LIST"),
        ("CREATE TABLE t (i INTEGER, s STRUCT(a INTEGER) DEFAULT {'a': 1})", "STRUCT"),
        ("CREATE TABLE t (m MAP(VARCHAR, INTEGER) DEFAULT NULL)", "MAP"),
    ],
)
def test_a_nested_columns_default_in_create_table_fails_as_in_duckdb(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup], statement: str, kind: str
) -> None:
    """DuckDB's ``ducklake`` refuses any default of a list, array, struct or map column in ``CREATE TABLE`` (as in
    ``ADD COLUMN``); Spark created the table and filled its inserts with the default."""
    fails_on_both(
        spark,
        lakes,
        statement,
        duckdb_error=f"Default value for {kind} type not supported",
        ours="cannot have a default",
    )


NESTED_DEFAULTS = [
    "ALTER TABLE t ALTER COLUMN l SET DEFAULT [1, 2]",
    "ALTER TABLE t ALTER COLUMN s SET DEFAULT {'a': 1}",
    "ALTER TABLE t ALTER COLUMN m SET DEFAULT MAP {'k': 1}",
]
INSERTS = ["INSERT INTO t (id) VALUES (1)", "INSERT INTO t VALUES (2, DEFAULT, DEFAULT, DEFAULT)"]
CREATE = "CREATE TABLE t (id INTEGER, l INTEGER[], s STRUCT(a INTEGER), m MAP(VARCHAR, INTEGER))"


def test_a_nested_columns_default_set_later_is_recorded_and_later_inserts_store_null_as_in_duckdb(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup]
) -> None:
    """DuckDB 1.5.5 takes ``SET DEFAULT`` on a list, struct or map column of a committed table and records it, but
    the inserts of later transactions store NULL there; Spark refused the statement ("not a constant"). Each engine
    then inserts into the other's lake too."""
    ours, theirs = lakes
    for task in ([CREATE], NESTED_DEFAULTS, INSERTS):
        run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(task))
    con = referee.connect()
    theirs.attach(con, "theirs")
    con.sql("USE theirs")
    for task in ([CREATE], NESTED_DEFAULTS, INSERTS):
        con.sql("BEGIN")
        for statement in task:
            con.sql(statement)
        con.sql("COMMIT")
    con.sql("USE memory")
    ours.attach(con, "ours")
    same_table(con, "t")
    assert duck_rows(con, "SELECT count(*) AS nulls FROM ours.t WHERE l IS NULL AND s IS NULL AND m IS NULL") == [
        {"nulls": 2}
    ]
    con.sql("INSERT INTO ours.t (id) VALUES (3)")
    con.close()
    run(spark, theirs, "ATTACH 'ducklake' AS dl; USE dl; INSERT INTO t (id) VALUES (3)")
    con = referee.connect()
    theirs.attach(con, "theirs")
    ours.attach(con, "ours")
    same_table(con, "t")


@pytest.mark.parametrize("insert", [*INSERTS, "INSERT INTO t DEFAULT VALUES"])
def test_an_insert_using_a_nested_default_set_in_its_own_task_fails_and_leaves_nothing(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup], insert: str
) -> None:
    """In the transaction that set it, DuckDB fills the default ([1, 2]); the Spark engine does not evaluate it,
    so it refuses the insert (storing NULL would be a silent wrong answer), naming the columns."""
    ours, theirs = lakes
    con = referee.connect()
    theirs.attach(con, "theirs")
    con.sql(f"USE theirs; {CREATE}; BEGIN")
    for statement in [*NESTED_DEFAULTS, insert]:
        con.sql(statement)
    con.sql("COMMIT")
    assert duck_rows(con, "SELECT l FROM t") == [{"l": [1, 2]}]
    con.close()
    run(spark, ours, f"ATTACH 'ducklake' AS dl; USE dl; {CREATE}")
    with pytest.raises(StatementError, match=r"this task set the default of column.*'l', 's', 'm'"):
        run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join([*NESTED_DEFAULTS, insert]))
    assert lake_snapshots(ours.open()) == [0, 1]
    run(
        spark,
        ours,
        "ATTACH 'ducklake' AS dl; USE dl; "
        + "; ".join([*NESTED_DEFAULTS, "INSERT INTO t VALUES (1, [5], NULL, NULL)"]),
    )
    assert selected(run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; SELECT l FROM t")) == [{"l": [5]}]


def test_a_nested_columns_default_in_the_transaction_that_created_it_fails_as_in_duckdb(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup]
) -> None:
    """In the transaction that created the table DuckDB refuses it (as it refuses a typed constant there)."""
    ours, theirs = lakes
    script = ["CREATE TABLE t (l INTEGER[])", "ALTER TABLE t ALTER COLUMN l SET DEFAULT [1, 2]"]
    con = referee.connect()
    theirs.attach(con, "theirs")
    con.sql("USE theirs; BEGIN")
    con.sql(script[0])
    with pytest.raises(Exception, match="non-literal default value"):
        con.sql(script[1])
    with pytest.raises(StatementError, match="non-literal default value"):
        run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(script))
    assert lake_snapshots(ours.open()) == [0]

"""``ALTER TABLE … ALTER COLUMN``: a new type, a default, ``NOT NULL`` (and ``TRUNCATE``). Columns whose type was changed keep their
older data files and inlined rows in the old type, and every reader casts them to the new one as DuckDB does.
DuckDB 1.5 is the referee: it makes lakes that the Spark engine reads, and runs the same scripts the engines run,
on a lake of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_spark_sql import duck_rows, run, selected, spec_of
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: column, old type, new type, a value of the old type (chosen where a wrong cast shows)
CHANGES = [
    ("unsigned_to_double", "UINTEGER", "DOUBLE", "4000000000 - i"),  # Spark's reader gave -294967296
    ("decimal_to_double", "DECIMAL(4,1)", "DOUBLE", "12.5"),  # Spark's reader gave 125.0
    ("decimal_to_float", "DECIMAL(18,3)", "FLOAT", "1234567.125 + i"),
    ("bigint_to_float", "BIGINT", "FLOAT", "5000000001 + i"),  # no exact float: rounded, as DuckDB rounds
    ("smallint_to_float", "SMALLINT", "FLOAT", "(i - 150)::SMALLINT"),
    ("int_to_decimal", "INTEGER", "DECIMAL(15,2)", "i * 1000"),
    ("tinyint_to_decimal", "TINYINT", "DECIMAL(4,1)", "(i % 100)::TINYINT"),
    ("utinyint_to_uint", "UTINYINT", "UINTEGER", "(i % 250)::UTINYINT"),
    ("int_to_bigint", "INTEGER", "BIGINT", "2000000000 + i::INTEGER"),
    ("float_to_double", "FLOAT", "DOUBLE", "0.1::FLOAT"),
    ("date_to_timestamp", "DATE", "TIMESTAMP", "DATE '2020-01-01' + i::INTEGER"),
    ("date_to_timestamptz", "DATE", "TIMESTAMPTZ", "DATE '2020-01-01' + i::INTEGER"),
    ("seconds_to_timestamp", "TIMESTAMP_S", "TIMESTAMP", "TIMESTAMP '2021-03-04 05:06:07'"),
    ("list_widened", "INTEGER[]", "BIGINT[]", "[i::INTEGER, NULL]"),
    ("struct_widened", "STRUCT(a INTEGER, b VARCHAR)", "STRUCT(a BIGINT, b VARCHAR)", "{'a': i::INTEGER, 'b': 'x'}"),
]
#: DuckDB 1.5.5 itself fails an insert after a BOOLEAN column with inlined rows became an integer ("Could not
#: convert string 'true' to INT8"): that change is read from data files only
FILES_ONLY = [("boolean_to_int", "BOOLEAN", "INTEGER", "i % 3 = 0")]


def lake_with_changed_types(tmp_path: Path, rows: int, changes: list[tuple[str, str, str, str]]) -> referee.LakeSetup:
    """A DuckDB lake with table ``t``: ``rows`` rows of the old types (in a data file from 11 rows on, inlined in
    the catalog below), every column changed to its new type, then one row more in the new types."""
    columns = ", ".join(f"{name} {old}" for name, old, _new, _value in changes)
    values = ", ".join(value for _name, _old, _new, value in changes)
    script = [
        f"CREATE TABLE t (id INTEGER, {columns})",
        f"INSERT INTO t SELECT i::INTEGER, {values} FROM range({rows}) r(i)",
        "INSERT INTO t (id) VALUES (-1)",
        *(f"ALTER TABLE t ALTER COLUMN {name} TYPE {new}" for name, _old, new, _value in changes),
        f"INSERT INTO t SELECT 1000, {values} FROM range(7, 8) r(i)",
    ]
    return referee.sqlite_lake_made_by_duckdb(tmp_path, script)


@pytest.mark.parametrize(
    ("rows", "changes"), [(300, CHANGES + FILES_ONLY), (3, CHANGES)], ids=["data-files", "inlined-rows"]
)
def test_columns_of_a_changed_type_read_as_duckdb_reads_them(
    stackless_spark: Any, tmp_path: Path, rows: int, changes: list[tuple[str, str, str, str]]
) -> None:
    lake = lake_with_changed_types(tmp_path, rows, changes)
    con = referee.connect()
    lake.attach(con)
    queries = [
        "SELECT * FROM t ORDER BY id",
        # filters on the changed columns: their file statistics are still in the old type's spelling
        "SELECT id FROM t WHERE date_to_timestamp >= TIMESTAMP '2020-01-05 00:00:00' ORDER BY id",
        "SELECT id FROM t WHERE int_to_bigint > 2000000001 ORDER BY id",
        "SELECT count(*) AS n, sum(unsigned_to_double) AS s, min(bigint_to_float) AS m FROM t",
    ]
    for query in queries:
        ours = selected(run(stackless_spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {query}"))
        theirs = duck_rows(con, query.replace("FROM t", "FROM lake.t"))
        assert ours == theirs, query


#: scripts of ALTER COLUMN statements, each run in one task; the last statement of some fails, as in DuckDB
SCRIPTS = {
    "widened": [
        "INSERT INTO t SELECT i::INTEGER, 4000000000 - i, DATE '2020-01-01' + i::INTEGER, 'x', i::INTEGER, "
        "(i * 1.5)::DECIMAL(10, 2) FROM range(300) r(i)",
        "ALTER TABLE t ALTER COLUMN u TYPE DOUBLE",
        "ALTER TABLE t ALTER COLUMN d SET DATA TYPE TIMESTAMP",
        "ALTER TABLE t ALTER COLUMN m TYPE DECIMAL(14, 3)",
        "ALTER TABLE t ALTER COLUMN n TYPE INTEGER",  # the same type: DuckDB takes it and changes nothing
        "INSERT INTO t VALUES (1000, 1.5, TIMESTAMP '2021-01-01 10:00:00', 'y', 5, 12345678901.125)",
        "UPDATE t SET u = u + 0.25 WHERE id % 7 = 0",
    ],
    "defaults and not null": [
        "INSERT INTO t VALUES (1, 5, DATE '2020-01-01', NULL, 3, 1.5)",
        "ALTER TABLE t ALTER COLUMN s SET DEFAULT 'dflt'",
        "ALTER TABLE t ALTER COLUMN n SET DEFAULT (-7)",
        "ALTER TABLE t ALTER COLUMN n SET NOT NULL",
        "INSERT INTO t (id, u) VALUES (2, 6)",
        "ALTER TABLE t ALTER COLUMN s DROP DEFAULT",
        "ALTER TABLE t ALTER COLUMN n DROP NOT NULL",
        "INSERT INTO t (id) VALUES (3)",
    ],
    "narrowing fails": ["INSERT INTO t (id, n) VALUES (1, 2)", "ALTER TABLE t ALTER COLUMN n TYPE SMALLINT"],
    "text to number fails": ["ALTER TABLE t ALTER COLUMN s TYPE INTEGER"],
    "using fails": ["ALTER TABLE t ALTER COLUMN n TYPE BIGINT USING n + 1"],
    "not null over nulls fails": ["INSERT INTO t (id) VALUES (1)", "ALTER TABLE t ALTER COLUMN n SET NOT NULL"],
    "not null twice fails": [
        "INSERT INTO t (id, n) VALUES (1, 2)",
        "ALTER TABLE t ALTER COLUMN id SET NOT NULL",
        "ALTER TABLE t ALTER COLUMN id SET NOT NULL",
    ],
    "drop a missing not null fails": ["ALTER TABLE t ALTER COLUMN n DROP NOT NULL"],
    "a null into not null fails": [
        "INSERT INTO t (id, n) VALUES (1, 2)",
        "ALTER TABLE t ALTER COLUMN n SET NOT NULL",
        "INSERT INTO t (id) VALUES (2)",
    ],
    "truncate": [
        "INSERT INTO t (id, n) SELECT i, i FROM range(300) r(i)",
        "INSERT INTO t (id) VALUES (-1)",
        "TRUNCATE t",
        "INSERT INTO t (id) VALUES (1)",
        "TRUNCATE TABLE t",
        "INSERT INTO t (id) VALUES (2)",
    ],
    "not null on a table that never held a row fails": ["ALTER TABLE t ALTER COLUMN n SET NOT NULL"],
    "not null after every row was deleted": [
        "INSERT INTO t (id, n) VALUES (1, NULL)",
        "DELETE FROM t",
        "ALTER TABLE t ALTER COLUMN n SET NOT NULL",
    ],
}
CREATE = "CREATE TABLE t (id INTEGER, u UINTEGER, d DATE, s VARCHAR, n INTEGER, m DECIMAL(10, 2))"


def on_engine(engine: str, spark: Any, lake: referee.LakeSetup, sql: str, *, autocommit: bool) -> str | None:
    """``sql`` as one lake task on ``engine``; its error, if it failed."""
    plan = plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}", autocommit=autocommit)
    try:
        if engine == "duckdb":
            DuckDBPlanRunner(spec_of(lake)).run(plan)
        else:
            PlanRunner(spark, spec_of(lake)).run(plan)
    except StatementError as exc:
        return str(exc)
    return None


#: the scripts that fail after other statements also run in autocommit mode, where DuckDB keeps what ran before
AUTOCOMMIT = ["narrowing fails", "not null over nulls fails", "not null twice fails", "a null into not null fails"]


@pytest.mark.parametrize("engine", ["spark", "duckdb"])
@pytest.mark.parametrize(
    ("name", "autocommit"),
    [(name, False) for name in SCRIPTS] + [(name, True) for name in AUTOCOMMIT],
    ids=[*SCRIPTS, *(f"{name}-autocommit" for name in AUTOCOMMIT)],
)
def test_alter_column_scripts_end_as_in_duckdb(
    stackless_spark: Any, tmp_path: Path, engine: str, autocommit: bool, name: str
) -> None:
    """The table made by ``CREATE`` and then changed by the script, on each engine and by DuckDB itself (in one
    transaction, or a statement at a time): the same columns, types, defaults, ``NOT NULL`` and rows, and the
    same statement failing with DuckDB's error."""
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours = referee.sqlite_lake(tmp_path / "ours")
    theirs = referee.sqlite_lake_made_by_duckdb(tmp_path / "theirs", [CREATE])
    assert on_engine(engine, stackless_spark, ours, CREATE, autocommit=False) is None
    our_error = on_engine(engine, stackless_spark, ours, "; ".join(SCRIPTS[name]), autocommit=autocommit)

    con = referee.connect()
    theirs.attach(con, "theirs")
    con.sql("USE theirs")
    their_error, failed_at = None, None
    if not autocommit:
        con.sql("BEGIN")
    for index, statement in enumerate(SCRIPTS[name]):
        try:
            con.sql(statement)
        except Exception as exc:  # DuckDB's failure is the referee's answer
            their_error, failed_at = str(exc).splitlines()[0], index
            break
    if not autocommit:
        con.sql("ROLLBACK" if their_error else "COMMIT")
    con.sql("USE memory")
    ours.attach(con, "ours")

    assert (our_error is None) == (their_error is None), (our_error, their_error)
    if our_error is not None and failed_at is not None:
        # the same statement fails (the task's statements count ATTACH and USE first), with DuckDB's words
        assert f"Statement {failed_at + 3} failed" in our_error, (our_error, their_error)
        if their_error.startswith(("Catalog Error", "Not implemented Error")):
            assert their_error in our_error
    describe = 'SELECT column_name, column_type, "null", "default" FROM (DESCRIBE {}.t)'
    assert con.sql(describe.format("ours")).fetchall() == con.sql(describe.format("theirs")).fetchall()
    assert duck_rows(con, "SELECT * FROM ours.t ORDER BY ALL") == duck_rows(con, "SELECT * FROM theirs.t ORDER BY ALL")


def test_a_default_that_is_no_constant_fails_on_spark_and_leaves_the_table(
    stackless_spark: Any, tmp_path: Path
) -> None:
    """DuckDB stores such a default and evaluates it per insert (for a column not changed before: after a change
    it refuses it too); the Spark engine's writers fill defaults from constants, so the statement fails there,
    naming the default, and the script leaves nothing."""
    lake = referee.sqlite_lake_made_by_duckdb(tmp_path, [CREATE])
    error = on_engine(
        "spark",
        stackless_spark,
        lake,
        "INSERT INTO t (id) VALUES (1); ALTER TABLE t ALTER COLUMN n SET DEFAULT now()",
        autocommit=False,
    )
    assert error is not None and "statement 4 failed: the default now() is not a constant" in error.lower()
    con = referee.connect()
    lake.attach(con)
    assert con.sql("SELECT count(*) FROM lake.t").fetchall() == [(0,)]
    assert con.sql("SELECT \"default\" FROM (DESCRIBE lake.t) WHERE column_name = 'n'").fetchall() == [("NULL",)]


TYPED_DEFAULTS = (
    "CREATE TABLE t (id INTEGER, b BOOLEAN DEFAULT true, c BOOLEAN, d DATE DEFAULT DATE '2020-01-02', "
    "s VARCHAR DEFAULT 'it''s', m DECIMAL(10, 2) DEFAULT 1.5)"
)


@pytest.mark.parametrize("created_by", ["duckdb", "spark"])
def test_typed_defaults_fill_inserts_as_duckdb_fills_them(
    stackless_spark: Any, tmp_path: Path, created_by: str
) -> None:
    """DuckDB stores a typed constant default as an expression (``CAST('t' AS BOOLEAN)``, ``CAST('2020-01-02' AS
    "DATE")``): an insert on Spark that leaves the column out gets that constant (a boolean was read as false, a
    date failed), whichever engine created the table; an expression DuckDB evaluates per insert fails by name."""
    script = [TYPED_DEFAULTS, "ALTER TABLE t ALTER COLUMN c SET DEFAULT false"]
    if created_by == "duckdb":
        lake = referee.sqlite_lake_made_by_duckdb(tmp_path, script)
    else:
        lake = referee.sqlite_lake(tmp_path)
        for statement in script:  # a task each, as DuckDB commits each: in one, DuckDB refuses the SET DEFAULT
            run(stackless_spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {statement}")
    run(stackless_spark, lake, "ATTACH 'ducklake' AS dl; USE dl; INSERT INTO t (id) VALUES (1)")
    con = referee.connect()
    lake.attach(con)
    con.sql("INSERT INTO lake.t (id) VALUES (2)")
    ours, theirs = (duck_rows(con, f"SELECT * EXCLUDE (id) FROM lake.t WHERE id = {n}") for n in (1, 2))
    assert ours == theirs == [{"b": True, "c": False, "d": "2020-01-02", "s": "it's", "m": 1.5}]

    con.sql("ALTER TABLE lake.t ALTER COLUMN s SET DEFAULT 'x' || 'y'")  # a column not changed before: DuckDB takes it
    error = on_engine("spark", stackless_spark, lake, "INSERT INTO t (id) VALUES (3)", autocommit=False)
    assert error is not None and "Column 's' has the default ('x' || 'y'), an expression" in error, error


def test_added_number_defaults_are_stored_as_duckdb_stores_them(stackless_spark: Any, tmp_path: Path) -> None:
    """DuckDB folds a number default to its value's text: ``-0.0`` is ``0.0`` (a DOUBLE column's earlier rows read
    0.0, not -0.0; fuzzer seed 23000), ``1e2`` is ``100.0``; a decimal keeps its digits."""
    script = [
        "CREATE TABLE t (id INTEGER)",
        "INSERT INTO t VALUES (1)",
        "ALTER TABLE t ADD COLUMN z DOUBLE DEFAULT -0.0",
        "ALTER TABLE t ADD COLUMN zz DECIMAL(5, 2) DEFAULT -0.00",
        "ALTER TABLE t ADD COLUMN q DOUBLE DEFAULT -0.25",
        "ALTER TABLE t ADD COLUMN e DOUBLE DEFAULT 1e2",
        "ALTER TABLE t ADD COLUMN n INTEGER DEFAULT -0",
    ]
    (tmp_path / "duckdb").mkdir()
    (tmp_path / "spark").mkdir()
    theirs = referee.sqlite_lake_made_by_duckdb(tmp_path / "duckdb", script)
    ours = referee.sqlite_lake(tmp_path / "spark")
    run(stackless_spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(script))
    con = referee.connect()
    answers = []
    for alias, lake in (("ours", ours), ("theirs", theirs)):
        lake.attach(con, alias=alias)
        answers.append(
            (
                con.sql(f'SELECT column_name, "default" FROM (DESCRIBE {alias}.t)').fetchall(),
                con.sql(f"SELECT z, CAST(z AS VARCHAR), zz, q, e, n FROM {alias}.t").fetchall(),
            )
        )
    assert answers[0] == answers[1]
    assert answers[1][1] == [(0.0, "0.0", 0, -0.25, 100.0, 0)]


#: column type, default: typed constants DuckDB stores as a cast of text, and a BLOB's escapes
CONSTANT_DEFAULTS = [
    ("DATE", "DATE '2020-01-02'"),
    ("TIME", "TIME '21:43:00'"),
    ("TIMESTAMPTZ", "TIMESTAMPTZ '2026-01-13 10:00:00+01'"),
    ("UUID", "'36d5a6d7a93584b86f93305acdc2a62b'::UUID"),
    ("INTEGER", "CAST('7' AS INT)"),
    ("BLOB", "'\\xAA\\x00a'::BLOB"),
    ("BLOB", "'\\xAA\\x00a'"),
]


@pytest.mark.parametrize(("kind", "default"), CONSTANT_DEFAULTS)
@pytest.mark.parametrize("how", ["create", "set"])
def test_constant_defaults_are_stored_and_filled_as_duckdb_does(
    stackless_spark: Any, tmp_path: Path, kind: str, default: str, how: str
) -> None:
    """A typed constant default in ``CREATE TABLE`` or ``ALTER COLUMN … SET DEFAULT`` (which the Spark engine
    refused as "not a constant") is stored with DuckDB's text (``CAST('2020-01-02' AS "DATE")``) and fills
    inserts with DuckDB's value; a BLOB default's ``\\xHH`` escapes are its bytes (they were stored as the
    characters)."""
    for side in ("theirs", "ours"):
        (tmp_path / side).mkdir()
    if how == "create":  # DuckDB refuses it inside BEGIN … COMMIT (as an added column's): each statement alone
        created, script = f"CREATE TABLE t (id INTEGER, c {kind} DEFAULT {default})", []
        theirs = referee.sqlite_lake_made_by_duckdb(tmp_path / "theirs", [created, "INSERT INTO t (id) VALUES (1)"])
    else:
        created, script = (
            f"CREATE TABLE t (id INTEGER, c {kind})",
            [f"ALTER TABLE t ALTER COLUMN c SET DEFAULT {default}"],
        )
        theirs = referee.sqlite_lake_made_by_duckdb(
            tmp_path / "theirs", [created, "BEGIN", *script, "INSERT INTO t (id) VALUES (1)", "COMMIT"]
        )
    ours = referee.sqlite_lake(tmp_path / "ours")
    run(stackless_spark, ours, f"ATTACH 'ducklake' AS dl; USE dl; {created}")
    run(
        stackless_spark,
        ours,
        "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join([*script, "INSERT INTO t (id) VALUES (1)"]),
    )
    found = []
    for lake in (theirs, ours):
        con = referee.connect()
        lake.attach(con)
        found.append(
            (
                con.sql(
                    "SELECT default_value, default_value_type FROM __ducklake_metadata_lake.ducklake_column "
                    "WHERE column_name = 'c'"
                ).fetchall(),
                con.sql("SELECT c FROM lake.t").fetchall(),
            )
        )
    assert found[1] == found[0]


def test_a_cast_that_is_no_typed_constant_is_refused_as_a_default(stackless_spark: Any, tmp_path: Path) -> None:
    """``DEFAULT CAST(5 AS VARCHAR)`` was stored as the text ``CAST(5 AS TEXT)``, which every insert then wrote
    into the column; DuckDB evaluates it (``'5'``). The Spark engine refuses it by name before anything runs."""
    lake = referee.sqlite_lake(tmp_path)
    with pytest.raises(Exception, match=r"the default CAST\(5 AS TEXT\) of column 'c' is not a constant"):
        run(
            stackless_spark,
            lake,
            "ATTACH 'ducklake' AS dl; CREATE TABLE dl.t (id INTEGER, c VARCHAR DEFAULT CAST(5 AS VARCHAR))",
        )


@pytest.mark.parametrize(
    ("default", "refused"),
    [("DATE '2020-01-02'", True), ("'2020-01-02'", False), ("NULL", False)],
)
def test_a_typed_default_on_a_table_created_in_the_same_task_fails_as_in_duckdb(
    stackless_spark: Any, tmp_path: Path, default: str, refused: bool
) -> None:
    """DuckDB 1.5.5 refuses ``SET DEFAULT`` of a typed constant (stored as a cast) on a table created in the same
    transaction, with its error for an added column's non-literal default (script fuzzer seed 32311, where the
    Spark engine ran it); a plain literal passes. The task fails naming the statement and lands nothing."""
    script = ["CREATE TABLE t (id INTEGER, d DATE)", f"ALTER TABLE t ALTER COLUMN d SET DEFAULT {default}"]
    con = referee.connect()
    theirs = referee.sqlite_lake(tmp_path / "theirs")
    (tmp_path / "theirs").mkdir()
    theirs.create()
    theirs.attach(con)
    con.sql("USE lake")
    con.sql("BEGIN")
    ours = referee.sqlite_lake(tmp_path / "ours")
    (tmp_path / "ours").mkdir()
    task = "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(script)
    if not refused:
        for statement in script:
            con.sql(statement)
        con.sql("COMMIT")
        run(stackless_spark, ours, task)
        stored = (
            "SELECT default_value FROM __ducklake_metadata_lake.ducklake_column "
            "WHERE column_name = 'd' AND end_snapshot IS NULL"
        )
        expected = con.sql(stored).fetchall()
        con.sql("USE memory")
        con.sql("DETACH lake")
        ours.attach(con)
        assert con.sql(stored).fetchall() == expected
        return
    con.sql(script[0])
    with pytest.raises(Exception, match="We cannot add a column with a non-literal default value"):
        con.sql(script[1])
    ours.create()
    before = referee.lake_snapshots(ours.open())
    with pytest.raises(
        StatementError, match=r"(?s)We cannot add a column with a non-literal default value.*SET DEFAULT"
    ):
        run(stackless_spark, ours, task)
    assert referee.lake_snapshots(ours.open()) == before


def test_an_added_blob_columns_default_reads_as_its_bytes(tmp_path: Path) -> None:
    """Rows from before ``ADD COLUMN b BLOB DEFAULT '\\xAA\\x00a'`` read the default's three bytes, as in DuckDB
    (the provider's reader gave the ten characters of the text)."""
    lake = referee.sqlite_lake_made_by_duckdb(
        tmp_path,
        [
            "CREATE TABLE a (id INT)",
            "INSERT INTO a SELECT range FROM range(20)",
            "ALTER TABLE a ADD COLUMN b BLOB DEFAULT '\\xAA\\x00a'",
        ],
    )
    con = referee.connect()
    lake.attach(con)
    (theirs,) = con.sql("SELECT DISTINCT b FROM lake.a").fetchone() or (None,)
    assert set(lake.open().read("main.a").column("b").to_pylist()) == {theirs} == {b"\xaa\x00a"}


def _created_on_both(spark: Any, tmp_path: Path, create: str) -> tuple[LakeSetup, LakeSetup, Any]:
    """Two lakes where ``create`` committed, ours by Spark and theirs by DuckDB, and DuckDB with theirs attached
    as ``theirs``."""
    (tmp_path / "ours").mkdir()
    ours = referee.sqlite_lake(tmp_path / "ours")
    theirs = referee.sqlite_lake_made_by_duckdb(tmp_path, [create])
    run(spark, ours, f"ATTACH 'ducklake' AS dl; USE dl; {create}")
    con = referee.connect()
    theirs.attach(con, "theirs")
    return ours, theirs, con


@pytest.mark.parametrize(
    "changes",
    [
        ["ALTER TABLE t RENAME COLUMN c0 TO r", "ALTER TABLE t ALTER COLUMN r SET DEFAULT TIME '06:59:00'"],
        ["ALTER TABLE t RENAME COLUMN c0 TO C0", "ALTER TABLE t ALTER COLUMN C0 SET DEFAULT TIME '06:59:00'"],
        ["ALTER TABLE t ADD COLUMN z TIME", "ALTER TABLE t ALTER COLUMN z SET DEFAULT TIME '06:59:00'"],
        ["ALTER TABLE t ADD COLUMN b BOOLEAN", "ALTER TABLE t ALTER COLUMN b SET DEFAULT TRUE"],
        ["ALTER TABLE t RENAME TO u", "ALTER TABLE u ALTER COLUMN c0 SET DEFAULT TIME '06:59:00'"],
        # DuckDB looks the column up by name in the committed table: these pass
        [
            "ALTER TABLE t RENAME COLUMN c0 TO tmp",
            "ALTER TABLE t RENAME COLUMN d TO c0",
            "ALTER TABLE t RENAME COLUMN tmp TO d",
            "ALTER TABLE t ALTER COLUMN d SET DEFAULT TIME '06:59:00'",
        ],
        [
            "ALTER TABLE t RENAME COLUMN c0 TO r",
            "ALTER TABLE t RENAME COLUMN r TO c0",
            "ALTER TABLE t ALTER COLUMN c0 SET DEFAULT TIME '06:59:00'",
        ],
        ["ALTER TABLE t RENAME COLUMN c0 TO r", "ALTER TABLE t ALTER COLUMN r SET DEFAULT '06:59:00'"],
        ["ALTER TABLE t DROP COLUMN n", "ALTER TABLE t ALTER COLUMN c0 SET DEFAULT TIME '06:59:00'"],
        ["ALTER TABLE t SET PARTITIONED BY (id)", "ALTER TABLE t ALTER COLUMN c0 SET DEFAULT TIME '06:59:00'"],
    ],
    ids=[
        "renamed",
        "renamed-case",
        "added",
        "added-boolean",
        "table-renamed",
        "names-swapped",
        "renamed-back",
        "renamed-plain-literal",
        "other-dropped",
        "partitioned",
    ],
)
def test_a_typed_default_on_a_column_renamed_or_added_in_the_same_task_fails_as_in_duckdb(
    stackless_spark: Any, tmp_path: Path, changes: list[str]
) -> None:
    """DuckDB 1.5.5 takes a column it cannot find by its exact name in the committed table for one added in the
    transaction, and refuses a typed constant default on it (script fuzzer seed 33324: a rename, then ``SET
    DEFAULT TIME '06:59:00'``, ran on Spark). Each script runs in one transaction in DuckDB and in one task on
    Spark, after the table was committed: the same outcome, and the same stored defaults where both commit."""
    create = "CREATE TABLE t (id INTEGER, c0 TIME, d DATE, n INTEGER)"
    ours, _theirs, con = _created_on_both(stackless_spark, tmp_path, create)
    con.sql("USE theirs")
    con.sql("BEGIN")
    try:
        for statement in changes:
            con.sql(statement)
        con.sql("COMMIT")
        duckdb_error = None
    except Exception as exc:  # the referee's answer
        duckdb_error = str(exc)
        con.sql("ROLLBACK")
    con.sql("USE memory")
    before = referee.lake_snapshots(ours.open())
    task = "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(changes)
    if duckdb_error is not None:
        assert "We cannot add a column with a non-literal default value" in duckdb_error
        with pytest.raises(StatementError, match=r"(?s)We cannot add a column with a non-literal default value"):
            run(stackless_spark, ours, task)
        assert referee.lake_snapshots(ours.open()) == before
        return
    run(stackless_spark, ours, task)
    ours.attach(con, "ours")
    stored = (
        "SELECT column_name, default_value FROM __ducklake_metadata_{}.ducklake_column "
        "WHERE end_snapshot IS NULL ORDER BY column_id"
    )
    assert con.sql(stored.format("ours")).fetchall() == con.sql(stored.format("theirs")).fetchall()


@pytest.mark.parametrize(
    "statement",
    [
        'ALTER TABLE t RENAME COLUMN c0 TO "C0"',
        "ALTER TABLE t RENAME COLUMN c0 TO c0",
        'ALTER TABLE t RENAME COLUMN c0 TO "dX"',
        'ALTER TABLE t ADD COLUMN "dX" INTEGER',
        'ALTER TABLE t ADD COLUMN IF NOT EXISTS "dX" INTEGER',
    ],
    ids=["to-itself-in-another-case", "to-itself", "to-another-columns-name", "add-taken", "add-if-not-exists"],
)
def test_column_names_taken_or_not_as_in_duckdb(stackless_spark: Any, tmp_path: Path, statement: str) -> None:
    """A column renamed to its own name (in any case) is renamed, as in DuckDB, where the Spark engine said the
    name was taken; a name another column has (in any case) fails with DuckDB's error."""
    create = 'CREATE TABLE t (id INTEGER, c0 TIME, "Dx" DATE)'
    ours, theirs, con = _created_on_both(stackless_spark, tmp_path, create)
    try:
        con.sql(statement.replace("TABLE t", "TABLE theirs.t"))
        duckdb_error = None
    except Exception as exc:  # the referee's answer
        duckdb_error = str(exc)
    task = f"ATTACH 'ducklake' AS dl; USE dl; {statement}"
    if duckdb_error is not None:
        with pytest.raises(StatementError) as raised:
            run(stackless_spark, ours, task)
        assert duckdb_error.splitlines()[0] in str(raised.value)
        return
    run(stackless_spark, ours, task)
    ours.attach(con, "ours")
    assert con.sql("DESCRIBE ours.t").fetchall() == con.sql("DESCRIBE theirs.t").fetchall()
    assert len(referee.lake_snapshots(ours.open())) == len(referee.lake_snapshots(theirs.open()))

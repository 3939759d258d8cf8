"""``ALTER TABLE … SET SORTED BY`` and ``RESET SORTED BY`` in lake scripts on Spark, as DuckDB 1.5's ``ducklake``
runs them: the same catalog rows (each key's text, direction and NULLs order; a new sort id per change, none for a
reset), the same errors, and later writes sorted by the new keys. DuckDB runs the same statements on a twin table
and is the referee; both tables sit in one SQLite-catalog lake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from tests import referee
from tests.integration.test_spark_sql import run
from tests.referee import LakeSetup, rows

pytestmark = [pytest.mark.integration, pytest.mark.slow]

META = "__ducklake_metadata_lake"

#: statements run in order on each twin (``{t}`` is its name); each is its own script (its own snapshot)
CHANGES = [
    'ALTER TABLE {t} SET SORTED BY (k DESC NULLS FIRST, lower(s), "Mixed Name" ASC NULLS LAST)',
    "ALTER TABLE {t} SET SORTED BY (K + 1 DESC, s COLLATE nocase, k ASC NULLS FIRST)",
    "alter table {t} reset sorted by;",
    "ALTER TABLE {t} SET SORTED BY (s)",
]


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture
def lake(tmp_path: Path) -> LakeSetup:
    return referee.sqlite_lake_made_by_duckdb(
        tmp_path,
        [
            f'CREATE TABLE {name} (k INTEGER, s VARCHAR, "Mixed Name" DOUBLE)'
            for name in ("ours", "theirs", "ours_rows", "theirs_rows")
        ],
    )


def _connect(lake: LakeSetup) -> Any:
    con = referee.connect()
    lake.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("USE lake")
    return con


def _sort_history(con: Any, table: str) -> list[tuple[Any, ...]]:
    """Each sort order the table had, oldest first: its keys, and whether it is still in force (sort ids and
    snapshot ids differ between the twins, so they are compared by position)."""
    orders = rows(
        con,
        f"SELECT i.sort_id, i.end_snapshot IS NULL AS current FROM {META}.ducklake_sort_info i "
        f"JOIN {META}.ducklake_table t ON t.table_id = i.table_id AND t.end_snapshot IS NULL "
        f"WHERE t.table_name = '{table}' ORDER BY i.sort_id",
    )
    history = []
    for order in orders:
        keys = con.sql(
            f"SELECT sort_key_index, expression, dialect, sort_direction, null_order FROM {META}.ducklake_sort_expression "
            f"WHERE sort_id = {order['sort_id']} ORDER BY sort_key_index"
        ).fetchall()
        history.append((order["current"], keys))
    return history


def _run(engine: str, spark: Any, lake: LakeSetup, script: str) -> dict[str, Any]:
    if engine == "duckdb":
        from tests.integration.test_duckdb_engine import run as run_on_duckdb

        return run_on_duckdb(lake, script)  # type: ignore[no-any-return]
    return run(spark, lake, script)


@pytest.mark.parametrize("engine", ["spark", "duckdb"])
def test_set_and_reset_sorted_by_write_the_catalog_rows_duckdb_writes(spark: Any, lake: LakeSetup, engine: str) -> None:
    con = _connect(lake)
    for change in CHANGES:
        con.sql(change.format(t="theirs"))
        _run(engine, spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {change.format(t='ours')}")
    con = _connect(lake)
    theirs = _sort_history(con, "theirs")
    assert len(theirs) == 3 and theirs[-1] == (True, [(0, "s", "duckdb", "ASC", "NULLS_LAST")])
    assert _sort_history(con, "ours") == theirs
    # each change is a snapshot that alters the table and begins a schema version, as DuckDB's are
    last_two = con.sql(
        f"SELECT s.schema_version, c.changes_made FROM {META}.ducklake_snapshot s "
        f"JOIN {META}.ducklake_snapshot_changes c USING (snapshot_id) ORDER BY snapshot_id DESC LIMIT 2"
    ).fetchall()
    ours_id = con.sql(f"SELECT table_id FROM {META}.ducklake_table WHERE table_name = 'ours'").fetchone()[0]
    assert last_two[0][1] == f"altered_table:{ours_id}"
    assert last_two[0][0] == last_two[1][0] + 1


def test_rows_written_after_set_sorted_by_are_sorted_as_duckdb_sorts_them(spark: Any, lake: LakeSetup) -> None:
    """In the same script as the ALTER and in a later one; DuckDB inserts the same rows into its twin."""
    values = "(3, 'c', 1.5), (NULL, 'a', 2.5), (1, NULL, NULL), (2, 'b', 0.5), (5, 'e', -1.0), (4, 'd', 9.0)"
    run(
        spark,
        lake,
        "ATTACH 'ducklake' AS dl; USE dl; ALTER TABLE ours_rows SET SORTED BY (k DESC NULLS FIRST); "
        f"INSERT INTO ours_rows VALUES {values}",
    )
    con = _connect(lake)
    con.sql("ALTER TABLE theirs_rows SET SORTED BY (k DESC NULLS FIRST)")
    con.sql(f"INSERT INTO theirs_rows VALUES {values}")
    # every file is sorted (Spark writes one per task; DuckDB one here)
    for table in ("ours_rows", "theirs_rows"):
        files = _file_values(con, table, "k")
        assert sorted(v for f in files for v in f if v is not None) == [1, 2, 3, 4, 5]
        for values_in_file in files:
            assert values_in_file == sorted(values_in_file, key=lambda k: (k is not None, -(k or 0)))
    # a later script's insert follows the order DuckDB set since
    con.sql("ALTER TABLE ours_rows SET SORTED BY (s DESC)")
    before = {tuple(f) for f in _file_values(con, "ours_rows", "s")}
    run(spark, lake, "ATTACH 'ducklake' AS dl; INSERT INTO dl.ours_rows VALUES (7, 'x', 0), (8, 'z', 0), (9, 'y', 0)")
    con = _connect(lake)
    new_files = [f for f in _file_values(con, "ours_rows", "s") if tuple(f) not in before]
    assert sorted(v for f in new_files for v in f) == ["x", "y", "z"]
    for values_in_file in new_files:
        assert values_in_file == sorted(values_in_file, reverse=True)
    assert rows(con, "SELECT * FROM ours_rows ORDER BY k NULLS FIRST") == rows(
        con,
        "SELECT * FROM (SELECT * FROM theirs_rows UNION ALL "
        "SELECT * FROM (VALUES (7, 'x', 0.0), (8, 'z', 0.0), (9, 'y', 0.0))) ORDER BY k NULLS FIRST",
    )


def _file_values(con: Any, table: str, column: str) -> list[list[Any]]:
    """``column``'s values in each of ``table``'s files, in the files' own order."""
    paths = [r[0] for r in con.sql(f"SELECT data_file FROM ducklake_list_files('lake', '{table}')").fetchall()]
    return [[r[0] for r in con.sql(f"SELECT {column} FROM read_parquet('{p}')").fetchall()] for p in paths]


@pytest.mark.parametrize("engine", ["spark", "duckdb"])
@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE {t} SET SORTED BY (nope, k + missing)",
        "ALTER TABLE {t} SET SORTED BY ({t}.k)",
        "ALTER TABLE no_such_table SET SORTED BY (k)",
    ],
)
def test_a_sort_order_duckdb_refuses_fails_as_in_duckdb_and_commits_nothing(
    spark: Any, lake: LakeSetup, statement: str, engine: str
) -> None:
    con = _connect(lake)
    with pytest.raises(Exception) as duckdb_error:
        con.sql(statement.format(t="theirs"))
    before = con.sql(f"SELECT count(*) FROM {META}.ducklake_snapshot").fetchone()[0]
    with pytest.raises(StatementError) as ours:
        _run(engine, spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {statement.format(t='ours')}")
    assert ours.value.index == 3
    if "no_such_table" not in statement:
        assert ours.value.message == str(duckdb_error.value).replace("theirs", "ours")
    con = _connect(lake)
    assert con.sql(f"SELECT count(*) FROM {META}.ducklake_snapshot").fetchone()[0] == before
    assert _sort_history(con, "ours") == []


def test_if_exists_skips_a_missing_table_and_a_read_only_alias_is_refused(spark: Any, lake: LakeSetup) -> None:
    response = run(spark, lake, "ATTACH 'ducklake' AS dl; ALTER TABLE IF EXISTS dl.gone SET SORTED BY (k)")
    assert response["result"]["commands"][-1]["status"] == "absent"
    with pytest.raises(StatementError, match="READ_ONLY"):
        run(spark, lake, "ATTACH 'ducklake' AS dl (READ_ONLY); ALTER TABLE dl.ours SET SORTED BY (k)")


def test_renaming_a_sort_column_rewrites_the_keys_and_dropping_one_fails_as_in_duckdb(
    spark: Any, lake: LakeSetup
) -> None:
    """DuckDB rewrites the keys that name a renamed column (a new sort order) and refuses to drop a column the
    table is sorted by; a lake whose keys named a column that no longer exists would fail DuckDB's next insert."""
    con = _connect(lake)
    for table in ("ours", "theirs"):
        con.sql(f'ALTER TABLE {table} SET SORTED BY (lower(s) DESC, k + "Mixed Name")')
    con.sql('ALTER TABLE theirs RENAME COLUMN "Mixed Name" TO m')
    con.sql("ALTER TABLE theirs RENAME s TO text")
    run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl; ALTER TABLE ours RENAME COLUMN \"Mixed Name\" TO m")
    run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl; ALTER TABLE ours RENAME s TO text")
    con = _connect(lake)
    theirs = _sort_history(con, "theirs")
    # "text" is a keyword, so DuckDB quotes it
    assert theirs[-1] == (
        True,
        [(0, 'lower("text")', "duckdb", "DESC", "NULLS_LAST"), (1, "(k + m)", "duckdb", "ASC", "NULLS_LAST")],
    )
    assert _sort_history(con, "ours") == theirs
    con.sql("INSERT INTO ours VALUES (1, 'B', 2.0), (2, 'a', 1.0)")  # DuckDB binds the rewritten keys
    with pytest.raises(Exception) as duckdb_error:
        con.sql("ALTER TABLE theirs DROP COLUMN m")
    with pytest.raises(StatementError) as ours:
        run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl; ALTER TABLE ours DROP COLUMN m")
    assert ours.value.message == str(duckdb_error.value)

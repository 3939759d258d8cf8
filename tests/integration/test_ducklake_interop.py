"""DuckDB 1.5.5's ducklake extension and our pure-Python DuckLake read and write the same lakes.

Every test runs on SQLite + local files and on PostgreSQL + SeaweedFS S3 (the local stack).
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from airflow_provider_lakehouse.exceptions import SpecVersionError
from tests import referee
from tests.referee import LakeSetup, assert_same_at_every_snapshot, rows

pytestmark = pytest.mark.integration


def sample(n: int, start: int = 0) -> pa.Table:
    ids = range(start, start + n)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"n{i}" if i % 7 else None for i in ids], pa.string()),
            "amount": pa.array([decimal.Decimal(i) / 4 for i in ids], pa.decimal128(12, 2)),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1) + dt.timedelta(minutes=i, microseconds=500000 * (i % 2)) for i in ids],
                pa.timestamp("us"),
            ),
            "tz": pa.array(
                [dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=i) for i in ids], pa.timestamp("us", "UTC")
            ),
            "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 30) for i in ids], pa.date32()),
            "f": pa.array([i / 3 for i in ids], pa.float64()),
            "f32": pa.array([i / 8 for i in ids], pa.float32()),
            "ok": [i % 2 == 0 for i in ids],
            "bl": [bytes([i % 256, 1]) for i in ids],
            "tags": [[f"t{i % 3}", "x"] for i in ids],
            "meta": [{"a": i, "b": f"b{i}"} for i in ids],
            "m": pa.array([[("k", i)] for i in ids], pa.map_(pa.string(), pa.int32())),
            "i8": pa.array([i % 100 for i in ids], pa.int8()),
            "u": pa.array([str(uuid.UUID(int=i)) for i in ids]),
            "tm": pa.array([dt.time(i % 24, i % 60, 0, 250000 * (i % 2)) for i in ids], pa.time64("us")),
            "j": pa.array([f'{{"k": {i}}}' for i in ids], pa.json_()),
        }
    )


def table_schema() -> pa.Schema:
    schema = sample(1).schema
    return schema.set(schema.get_field_index("u"), pa.field("u", pa.uuid()))


def test_killed_writer_leaves_a_readable_lake_and_its_files_for_cleanup(setup: LakeSetup) -> None:
    import datetime as _dt
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT
    from tests.integration.lake_writer import setup_to_env

    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("t", pa.schema([("id", pa.int64())]))
        tx.append("t", pa.table({"id": pa.array([1, 2], pa.int64())}))
    script = (
        "import os, sys, time, pyarrow as pa\n"
        "from tests.integration.lake_writer import setup_from_env\n"
        "tx = setup_from_env().open().transaction()\n"
        "tx.append('t', pa.table({'id': pa.array(range(100, 200), pa.int64())}))\n"
        "print(tx._written[0], flush=True)\n"
        "time.sleep(600)\n"
    )
    env = dict(os.environ, LAKE_SETUP=setup_to_env(setup), PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    written = proc.stdout.readline().strip()  # files are written; the commit has not started
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert lake.storage.exists(written)
    assert sorted(lake.read("t").column("id").to_pylist()) == [1, 2]
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT count(*) FROM lake.t").fetchone() == (2,)
    later = _dt.datetime.now(_dt.UTC) + _dt.timedelta(seconds=1)
    assert lake.delete_orphaned_files(older_than=later).files_deleted == [written]


def test_duckdb_reads_everything_we_write(setup: LakeSetup) -> None:
    lake = setup.create()
    with lake.transaction(author="tests", message="create") as tx:
        tx.create_schema("sales")
        tx.create_table("sales.t", table_schema())
    with lake.transaction() as tx:
        assert tx.append("sales.t", sample(1000)) == 1000
    with lake.transaction() as tx:
        assert tx.delete_where("sales.t", pc.field("id") < 50) == 50
    with lake.transaction() as tx:
        assert tx.delete_where("sales.t", pc.field("id").isin([60, 61, 62])) == 3  # cumulative delete file
    with lake.transaction() as tx:
        assert tx.update_where("sales.t", pc.field("id") >= 990, {"name": "upd"}) == 10
    with lake.transaction() as tx:
        tx.add_column("sales.t", "extra", pa.int32(), default=7)
    with lake.transaction() as tx:
        tx.rename_column("sales.t", "name", "label")
    with lake.transaction() as tx:
        tx.drop_column("sales.t", "f32")
    with lake.transaction() as tx:
        tx.append("sales.t", pa.table({"id": pa.array([5000], pa.int64()), "label": ["late"]}))

    con = referee.connect()
    setup.attach(con)
    assert assert_same_at_every_snapshot(lake, con, "sales.t") == 9
    # answered from our statistics by DuckDB (COUNT/MIN/MAX pushdown) and from the data: must agree
    assert con.sql("SELECT count(*), min(id), max(id), min(amount), max(ts) FROM lake.sales.t").fetchall() == [
        (948, 50, 5000, decimal.Decimal("12.50"), dt.datetime(2024, 1, 1, 16, 39, 0, 500000))
    ]
    snapshots = rows(con, "FROM ducklake_snapshots('lake') ORDER BY snapshot_id")
    assert snapshots[1]["author"] == "tests" and snapshots[1]["commit_message"] == "create"
    assert dict(snapshots[1]["changes"]) == {"schemas_created": ["sales"], "tables_created": ["sales.t"]}
    assert dict(snapshots[5]["changes"]) == {"tables_inserted_into": ["2"], "tables_deleted_from": ["2"]}
    info = rows(con, "FROM ducklake_table_info('lake')")
    assert [(i["table_name"], i["file_count"], i["delete_file_count"]) for i in info] == [("t", 3, 1)]
    changes = rows(
        con,
        "SELECT change_type, count(*) AS n FROM ducklake_table_changes('lake', 'sales', 't', 5, 5) "
        "GROUP BY ALL ORDER BY 1",
    )
    assert changes == [{"change_type": "update_postimage", "n": 10}, {"change_type": "update_preimage", "n": 10}]


def test_duckdb_writes_on_top_of_our_lake_and_we_read_it(setup: LakeSetup) -> None:
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("t", table_schema())
        tx.append("t", sample(300))
    with lake.transaction() as tx:
        tx.rename_column("t", "name", "label")
        tx.delete_where("t", pc.field("id") < 20)
    con = referee.connect()
    setup.attach(con)
    con.sql("INSERT INTO lake.t (id, label, amount) VALUES (6000, 'small', 1.5), (6001, 'small 2', 2.5)")  # inlined
    con.sql("INSERT INTO lake.t (id, label) SELECT 7000 + i, 'big' FROM range(100) r(i)")
    con.sql("DELETE FROM lake.t WHERE id BETWEEN 100 AND 149")  # over our delete file's data file
    con.sql("DELETE FROM lake.t WHERE id = 200 OR id = 6000")  # inlined deletions
    con.sql("UPDATE lake.t SET amount = 99 WHERE id BETWEEN 30 AND 40")
    con.sql("ALTER TABLE lake.t ADD COLUMN later VARCHAR DEFAULT 'dflt'")
    con.sql("INSERT INTO lake.t (id, label) VALUES (8000, 'after alter')")
    lake = setup.open()
    assert assert_same_at_every_snapshot(lake, con, "t") >= 9
    ours = lake.read("t", filters=[("id", ">=", 6000)]).sort_by("id").to_pylist()
    assert [(r["id"], r["later"]) for r in ours][:2] == [(6001, "dflt"), (7000, "dflt")]
    # and we keep writing after DuckDB did
    with lake.transaction() as tx:
        tx.delete_where("t", pc.field("id") == 6001)  # a row DuckDB inlined in the catalog
        tx.append("t", pa.table({"id": pa.array([9000], pa.int64()), "later": ["ours"]}))
    assert assert_same_at_every_snapshot(lake, con, "t") >= 10


def test_we_read_every_feature_duckdb_writes(setup: LakeSetup) -> None:
    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE SCHEMA lake.s")
    con.sql(
        "CREATE TABLE lake.s.t (id BIGINT, name VARCHAR, amount DECIMAL(12,2), ts TIMESTAMP, tz TIMESTAMPTZ, "
        "tags VARCHAR[], meta STRUCT(a INT, b VARCHAR), m MAP(VARCHAR, INT), ok BOOLEAN, u UUID, bl BLOB, "
        "d DATE, f DOUBLE, j JSON)"
    )
    con.sql(
        "INSERT INTO lake.s.t SELECT i, 'n' || i, i * 1.25, TIMESTAMP '2024-01-01' + INTERVAL (i) MINUTE, "
        "TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i) HOUR, ['a', 'b, c', NULL], {'a': i::INT, 'b': 'x'}, "
        "MAP {'k': i::INT}, i % 2 = 0, uuid(), 'ab'::BLOB, DATE '2024-01-01' + i::INT, i / 3, '{\"k\": 1}' "
        "FROM range(100) r(i)"
    )
    con.sql(
        "INSERT INTO lake.s.t VALUES (1000, 'small, \"quoted\" ''x''', 1.25, TIMESTAMP '2024-05-05 01:02:03.5', "
        "TIMESTAMPTZ '2024-01-01 10:00:00+02', ['z', NULL], {'a': 5, 'b': 'q, r'}, MAP {'q': 1, 'r': NULL}, true, "
        "'12345678-1234-5678-1234-567812345678', '\\x00\\xFF'::BLOB, DATE '2024-02-02', 2.5, '[1, 2]')"
    )  # inlined
    con.sql("DELETE FROM lake.s.t WHERE id < 3")  # inlined file deletions
    con.sql("DELETE FROM lake.s.t WHERE id >= 50 AND id < 90")  # delete file
    con.sql("DELETE FROM lake.s.t WHERE id BETWEEN 90 AND 92")  # second delete on the same file
    con.sql("UPDATE lake.s.t SET name = 'upd' WHERE id >= 95")
    con.sql("ALTER TABLE lake.s.t ADD COLUMN extra INT DEFAULT 7")
    con.sql("ALTER TABLE lake.s.t RENAME COLUMN name TO label")
    con.sql("INSERT INTO lake.s.t (id, label) VALUES (2000, 'after')")
    con.sql("ALTER TABLE lake.s.t DROP COLUMN f")
    con.sql("CREATE TABLE lake.s.p (id INT, region VARCHAR, v DOUBLE)")
    con.sql("ALTER TABLE lake.s.p SET PARTITIONED BY (region)")
    con.sql("INSERT INTO lake.s.p SELECT i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END, i FROM range(50) r(i)")
    con.sql("CALL ducklake_flush_inlined_data('lake')")
    con.sql("INSERT INTO lake.s.t (id, label) SELECT 3000 + i, 'batch' FROM range(20) r(i)")
    con.sql("INSERT INTO lake.s.t (id, label) SELECT 4000 + i, 'batch2' FROM range(20) r(i)")
    con.sql("CALL ducklake_merge_adjacent_files('lake')")
    lake = setup.open()
    assert assert_same_at_every_snapshot(lake, con, "s.t") >= 10
    assert assert_same_at_every_snapshot(lake, con, "s.p") >= 2
    eu = lake.read("s.p", filters=[("region", "=", "eu")])
    assert eu.num_rows == 25 and set(eu.column("region").to_pylist()) == {"eu"}


def test_a_lake_we_create_is_one_duckdb_opens_as_its_own(setup: LakeSetup) -> None:
    setup.create()
    con = referee.connect()
    setup.attach(con)
    assert dict(con.sql("FROM ducklake_snapshots('lake')").fetchall()[0][3]) == {"schemas_created": ["main"]}
    con.sql("CREATE TABLE lake.t AS SELECT 1 AS a")
    assert rows(con, "FROM lake.t") == [{"a": 1}]
    with setup.store.connection() as conn:
        versions = conn.query("SELECT value FROM {M}ducklake_metadata WHERE key = 'version'")
    assert versions == [("1.0",)]


def test_other_spec_versions_are_refused(setup: LakeSetup) -> None:
    setup.create()
    with setup.store.connection() as conn:
        conn.execute("UPDATE {M}ducklake_metadata SET value = '0.3' WHERE key = 'version'")
    with pytest.raises(SpecVersionError, match=r"spec '0\.3'"):
        setup.open()


def test_rename_drop_table_drop_schema_and_unsigned_types(setup: LakeSetup) -> None:
    lake = setup.create()
    unsigned = pa.table(
        {
            "id": pa.array([1, 2], pa.int64()),
            "u8": pa.array([1, 255], pa.uint8()),
            "u32": pa.array([7, 4_000_000_000], pa.uint32()),
            "u64": pa.array([1, 2**63 + 5], pa.uint64()),
        }
    )
    with lake.transaction() as tx:
        tx.create_schema("s")
        tx.create_table("s.a", unsigned.schema)
        tx.append("s.a", unsigned)
        tx.create_table("s.b", pa.schema([("x", pa.int32())]))
    with lake.transaction() as tx:
        tx.rename_table("s.a", "a2")
    with lake.transaction() as tx:
        tx.drop_table("s.b")
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "FROM lake.s.a2 ORDER BY id") == lake.read("s.a2").to_pylist() == unsigned.to_pylist()
    assert rows(con, "FROM lake.s.a AT (VERSION => 1) ORDER BY id") == unsigned.to_pylist()  # before the rename
    assert [
        r[0] for r in con.sql("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()
    ] == ["a2"]
    assert [dict(r["changes"]) for r in rows(con, "FROM ducklake_snapshots('lake') ORDER BY snapshot_id")][2:] == [
        {"tables_created": ["s.a2"]},
        {"tables_dropped": ["3"]},
    ]
    con.close()
    with lake.transaction() as tx:
        tx.drop_table("s.a2")
        tx.drop_schema("s")
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'lake'").fetchall() == [("main",)]
    assert (
        rows(con, "FROM lake.s.a2 AT (VERSION => 3) ORDER BY id") == unsigned.to_pylist()
    )  # time travel past the drop
    con.sql("CREATE SCHEMA lake.s")  # the names are free again for DuckDB
    con.sql("CREATE TABLE lake.s.a2 AS SELECT 1 AS z")
    con.close()
    assert setup.open().read("s.a2").to_pylist() == [{"z": 1}]


def test_decimals_are_stored_in_the_physical_types_duckdb_uses(setup: LakeSetup) -> None:
    """Decimals of up to 18 digits are INT32/INT64 in the Parquet files, as in DuckDB's own files (Spark reads
    those faster than fixed-length byte arrays); wider ones stay fixed-length byte arrays. Values are exact."""
    schema = pa.schema(
        [
            ("d4", pa.decimal128(4, 1)),
            ("d9", pa.decimal128(9, 2)),
            ("d18", pa.decimal128(18, 3)),
            ("d38", pa.decimal128(38, 10)),
        ]
    )
    columns = [
        ["-999.9", "0.1", None, "999.9"],
        ["-9999999.99", "0.01", "1.00", None],
        ["-999999999999999.999", None, "0.001", "1"],
        [None, "-" + "9" * 28 + "." + "9" * 10, "1E-10", "0"],
    ]
    values = pa.table(
        [
            pa.array([None if v is None else decimal.Decimal(v) for v in column], field.type)
            for column, field in zip(columns, schema, strict=True)
        ],
        schema=schema,
    )
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_schema("s")
        tx.create_table("s.ours", schema)
    with lake.transaction() as tx:
        tx.append("s.ours", values)

    con = referee.connect()
    setup.attach(con, data_inlining_row_limit=0)  # DuckDB writes its four rows to a file too
    con.sql("CREATE TABLE lake.s.theirs AS FROM lake.s.ours")

    def physical_types(table: str) -> list[tuple[str, str]]:
        [(path,)] = con.sql(f"SELECT data_file FROM ducklake_list_files('lake', '{table}', schema => 's')").fetchall()
        return con.sql(f"SELECT path_in_schema, type FROM parquet_metadata('{path}') ORDER BY column_id").fetchall()

    theirs = physical_types("theirs")
    assert physical_types("ours") == theirs
    assert [kind for _, kind in theirs] == ["INT32", "INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"]
    assert con.sql("SELECT * FROM lake.s.ours").arrow().read_all().equals(values)
    # DuckDB answers min/max from our catalog statistics; they must agree with the data
    assert con.sql("SELECT min(d9), max(d18), min(d38) FROM lake.s.ours").fetchall() == [
        (decimal.Decimal("-9999999.99"), decimal.Decimal("1.000"), decimal.Decimal("-" + "9" * 28 + "." + "9" * 10))
    ]

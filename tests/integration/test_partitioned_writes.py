"""Inserts into partitioned tables write the files DuckDB would write (issue 15).

DuckDB is the referee: it writes the same rows into a twin table with the same partition spec, and both tables'
files must sit in the same hive directories with the same ``ducklake_file_partition_value`` rows. Pruning is
proven by removing a partition's file from storage: a query DuckDB prunes to the other partitions still runs.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
import uuid
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from tests import referee
from tests.referee import LakeSetup, rows

pytestmark = pytest.mark.integration

COLUMNS = (
    "id BIGINT, k VARCHAR, n INTEGER, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, f DOUBLE, f32 FLOAT, ok BOOLEAN, "
    'amount DECIMAL(12, 2), big DECIMAL(30, 4), u UUID, tm TIME, bl BLOB, "Odd Name" VARCHAR'
)


def random_rows(count: int, seed: int) -> list[dict[str, Any]]:
    """Values where DuckDB's text is easy to get wrong: escapes, NULLs, negatives, fractions, edge dates."""
    rng = random.Random(seed)
    texts = ["a", "a/b c=d%é", "", "x'y", "Z", "ü:+~_.-", None]
    out = []
    for i in range(count):

        def maybe(value: Any) -> Any:
            return None if rng.random() < 0.1 else value

        micros = rng.choice([0, 500000, 120000, 123456, 1])
        stamp = dt.datetime(rng.choice([1969, 1970, 2020, 2024]), rng.randint(1, 12), rng.randint(1, 28))
        stamp += dt.timedelta(hours=rng.randint(0, 23), minutes=rng.randint(0, 59), microseconds=micros)
        out.append(
            {
                "id": i,
                "k": rng.choice(texts),
                "n": maybe(rng.randint(-3, 3)),
                "d": maybe(stamp.date()),
                "ts": maybe(stamp),
                "tz": maybe(stamp.replace(tzinfo=dt.UTC)),
                "f": maybe(rng.choice([0.1, -0.0, 1e20, 1.5, 0.30000000000000004, 123456789012.0, 1e-7])),
                "f32": maybe(rng.choice([0.1, 1.1, 2.5, -7.0])),
                "ok": maybe(rng.random() < 0.5),
                "amount": maybe(decimal.Decimal(rng.randint(-500, 500)) / 4),
                "big": maybe(decimal.Decimal(rng.randint(-(10**12), 10**12)) / 10000),
                "u": maybe(str(uuid.UUID(int=rng.randint(0, 5)))),
                "tm": maybe(dt.time(rng.randint(0, 23), 30, 5, micros)),
                "bl": maybe(bytes([rng.randint(0, 255), 1])),
                "Odd Name": maybe(rng.choice(["p q", "r"])),
            }
        )
    return out


def arrow_rows(data: list[dict[str, Any]]) -> pa.Table:
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("k", pa.string()),
            ("n", pa.int32()),
            ("d", pa.date32()),
            ("ts", pa.timestamp("us")),
            ("tz", pa.timestamp("us", "UTC")),
            ("f", pa.float64()),
            ("f32", pa.float32()),
            ("ok", pa.bool_()),
            ("amount", pa.decimal128(12, 2)),
            ("big", pa.decimal128(30, 4)),
            ("u", pa.string()),
            ("tm", pa.time64("us")),
            ("bl", pa.binary()),
            ("Odd Name", pa.string()),
        ]
    )
    return pa.Table.from_pylist(data, schema=schema)


def file_layout(setup: LakeSetup, lake: Any, table: str) -> Counter[tuple[str, tuple[str | None, ...]]]:
    """Each visible file of ``table`` as (its hive directory, its partition values)."""
    info = lake.table(table)
    with setup.store.connection() as conn:
        found = conn.query(
            "SELECT f.data_file_id, f.path, f.partition_id FROM {M}ducklake_data_file f "
            "WHERE f.table_id = ? AND f.end_snapshot IS NULL",
            (info.table_id,),
        )
        values = conn.query(
            "SELECT data_file_id, partition_key_index, partition_value FROM {M}ducklake_file_partition_value "
            "WHERE table_id = ? ORDER BY data_file_id, partition_key_index",
            (info.table_id,),
        )
    by_file: dict[int, list[str | None]] = {}
    for fid, _index, value in values:
        by_file.setdefault(int(fid), []).append(value)
    layout: Counter[tuple[str, tuple[str | None, ...]]] = Counter()
    for fid, path, partition_id in found:
        assert partition_id is not None, f"{path} was written unpartitioned"
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        layout[(directory, tuple(by_file.get(int(fid), [])))] += 1
    return layout


def write_both_ways(setup: LakeSetup, columns: str, spec: str, data: pa.Table) -> Any:
    """Tables ``theirs`` and ``ours`` of ``columns``, partitioned by ``spec``: DuckDB inserts ``data`` into
    ``theirs`` (as files), the Python writer appends it to ``ours``; the lake, opened."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    for name in ("theirs", "ours"):
        con.sql(f"CREATE TABLE lake.{name} ({columns})")
        con.sql(f"ALTER TABLE lake.{name} SET PARTITIONED BY ({spec})")
    con.register("incoming", data)
    con.sql("INSERT INTO lake.theirs SELECT * FROM incoming")
    lake = setup.open()
    with lake.transaction() as tx:
        tx.append("main.ours", data)
    return lake


SPECS = [
    "k, n",
    "year(ts), month(ts), day(ts), hour(ts)",
    "year(d), month(tz), hour(tz), ok",
    "d, ts, tz, f, f32, amount",
    'u, tm, "Odd Name"',
    "bucket(4, k), bucket(3, n), bucket(5, d), bucket(7, ts), bucket(2, tz)",
    "bucket(6, f), bucket(4, amount), bucket(3, big), bucket(5, u), bucket(3, bl), bucket(4, ok), bucket(2, tm)",
    "k, year(ts), bucket(8, id)",
    "hour(d), day(d)",  # DuckDB takes the hour of a date: 0
]


@pytest.mark.parametrize("spec", SPECS)
def test_python_writer_writes_partitions_as_duckdb(setup: LakeSetup, spec: str) -> None:
    lake = write_both_ways(setup, COLUMNS, spec, arrow_rows(random_rows(120, seed=len(spec))))
    assert file_layout(setup, lake, "main.ours") == file_layout(setup, lake, "main.theirs")
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "SELECT * FROM lake.ours ORDER BY id") == rows(con, "SELECT * FROM lake.theirs ORDER BY id")


def test_duckdb_prunes_the_files_we_write(setup: LakeSetup) -> None:
    lake = setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("CREATE TABLE lake.p (id BIGINT, region VARCHAR, ts TIMESTAMP)")
    con.sql("ALTER TABLE lake.p SET PARTITIONED BY (region, year(ts))")
    data = pa.table(
        {
            "id": pa.array(range(6), pa.int64()),
            "region": ["eu", "eu", "us", "us", "ap", None],
            "ts": pa.array([dt.datetime(2020 + i % 2, 1, 1) for i in range(6)], pa.timestamp("us")),
        }
    )
    lake = setup.open()
    with lake.transaction() as tx:
        tx.append("main.p", data)
    info = lake.table("main.p")
    with setup.store.connection() as conn:
        paths = [
            r[0] for r in conn.query("SELECT path FROM {M}ducklake_data_file WHERE table_id = ?", (info.table_id,))
        ]
    us = [p for p in paths if p.startswith("region=us/")]
    assert len(us) == 2  # one per year
    for path in us:
        lake.storage.delete(f"{lake.table_dir(info).rstrip('/')}/{path}")
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "SELECT id FROM lake.p WHERE region = 'eu' ORDER BY id") == [{"id": 0}, {"id": 1}]
    assert rows(con, "SELECT id FROM lake.p WHERE region = 'ap' AND year(ts) = 2020") == [{"id": 4}]
    with pytest.raises(Exception, match=r"No files found|not exist|No such file|404|HTTP"):
        con.sql("SELECT sum(id) FROM lake.p").fetchall()
    # our own reader prunes by the same rows
    assert sorted(lake.read("main.p", filters=[("region", "=", "eu")]).column("id").to_pylist()) == [0, 1]


def test_set_and_reset_partitioned_by_as_duckdb_does(setup: LakeSetup) -> None:
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("main.t", pa.schema([("id", pa.int64()), ("k", pa.string()), ("ts", pa.timestamp("us"))]))
    with lake.transaction() as tx:
        tx.set_partitioned_by("main.t", [("k", "identity"), ("ts", "year"), ("id", "bucket(3)")])
        tx.append(
            "main.t",
            pa.table(
                {"id": [1, 2], "k": ["a", "b"], "ts": pa.array([dt.datetime(2021, 5, 1)] * 2, pa.timestamp("us"))}
            ),
        )
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("INSERT INTO lake.t VALUES (3, 'a', TIMESTAMP '2022-01-01')")
    expected = {
        (f"k={r['k']}/year={r['y']}/bucket={r['b']}", (r["k"], str(r["y"]), str(r["b"])))
        for r in rows(con, "SELECT k, year(ts) AS y, (murmur3_32(id) & 2147483647) % 3 AS b FROM lake.t")
    }
    assert set(file_layout(setup, lake, "main.t")) == expected
    with lake.transaction() as tx:
        tx.set_partitioned_by("main.t", [])
        tx.append("main.t", pa.table({"id": [9], "k": ["z"]}))
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "SELECT id FROM lake.t WHERE k = 'a' ORDER BY id") == [{"id": 1}, {"id": 3}]
    with setup.store.connection() as conn:
        last = conn.query(
            "SELECT f.path, f.partition_id FROM {M}ducklake_data_file f WHERE f.table_id = ? ORDER BY data_file_id "
            "DESC LIMIT 1",
            (lake.table("main.t").table_id,),
        )
    assert "/" not in last[0][0]


def test_refuses_partition_keys_duckdb_refuses(setup: LakeSetup) -> None:
    """DuckDB refuses an unknown column and ``bucket(0)`` at the ALTER, and ``year`` of text at the first insert;
    we refuse all three at the ALTER, before anything is written."""
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("main.t", pa.schema([("id", pa.int64()), ("k", pa.string())]))
    from airflow_provider_lakehouse.exceptions import LakehouseError

    for keys, duckdb_keys in (
        ([("k", "year")], "year(k)"),
        ([("nope", "identity")], "nope"),
        ([("id", "bucket(0)")], "bucket(0, id)"),
    ):
        with pytest.raises(LakehouseError, match=r"Cannot partition main\.t"), lake.transaction() as tx:
            tx.set_partitioned_by("main.t", keys)
        con = referee.connect()
        setup.attach(con)
        with pytest.raises(Exception, match=r"does not exist|must be positive|No function matches"):
            con.sql(f"ALTER TABLE lake.t SET PARTITIONED BY ({duckdb_keys})")
            con.sql("INSERT INTO lake.t VALUES (1, '2020-01-01')")


SPARK_SPEC = 'k, year(ts), bucket(4, id), day(tz), "Odd Name"'


@pytest.mark.slow
def test_spark_writes_partitions_as_duckdb(setup: LakeSetup, spark: Any) -> None:
    """INSERT, UPDATE and MERGE on Spark (executors write) into a table partitioned through DucklakeOperator SQL,
    next to DuckDB running the same statements on a twin table."""
    from tests.integration.test_spark_sql import run

    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.register("incoming", arrow_rows(random_rows(300, seed=3)))
    con.sql("CREATE TABLE lake.src AS SELECT * EXCLUDE (tm) FROM incoming")  # Spark has no TIME type
    changes = [
        "INSERT INTO {t} SELECT * FROM src",
        "UPDATE {t} SET k = 'moved', ts = ts + INTERVAL 400 DAY WHERE id % 5 = 0",
        'MERGE INTO {t} AS t USING (SELECT id + 1000 AS id, k, ts, tz, "Odd Name" FROM src WHERE id < 40) AS s '
        'ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, k, ts, tz, "Odd Name") '
        'VALUES (s.id, s.k, s.ts, s.tz, s."Odd Name")',
    ]
    columns = COLUMNS.replace("tm TIME, ", "")
    con.sql(f"CREATE TABLE lake.theirs ({columns})")
    con.sql(f"ALTER TABLE lake.theirs SET PARTITIONED BY ({SPARK_SPEC})")
    for change in changes:
        con.sql("USE lake; " + change.format(t="theirs"))
    script = (
        f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE ours ({columns}); "
        f"ALTER TABLE ours SET PARTITIONED BY ({SPARK_SPEC}); " + "; ".join(c.format(t="ours") for c in changes)
    )
    run(spark, setup, script)
    lake = setup.open()
    assert set(file_layout(setup, lake, "main.ours")) == set(file_layout(setup, lake, "main.theirs"))
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "SELECT * FROM lake.ours ORDER BY id") == rows(con, "SELECT * FROM lake.theirs ORDER BY id")
    # a reset through SQL: later rows go unpartitioned, as DuckDB's
    run(
        spark,
        setup,
        "ATTACH 'ducklake' AS dl; ALTER TABLE dl.ours RESET PARTITIONED BY; INSERT INTO dl.ours (id) VALUES (-1)",
    )
    with setup.store.connection() as conn:
        (last,) = conn.query(
            "SELECT path, partition_id FROM {M}ducklake_data_file WHERE table_id = ? ORDER BY data_file_id DESC LIMIT 1",
            (lake.table("main.ours").table_id,),
        )
    assert "/" not in last[0] and last[1] is None
    assert rows(con, "SELECT id FROM lake.ours WHERE id < 0") == [{"id": -1}]


def test_merge_keeps_partitions_apart(setup: LakeSetup) -> None:
    """Small files of different partitions are not merged together (the merged file has one partition's values:
    DuckDB would prune the other partition's rows away)."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("CREATE TABLE lake.p (id INT, region VARCHAR)")
    con.sql("ALTER TABLE lake.p SET PARTITIONED BY (region)")
    for batch in range(3):
        con.sql(
            f"INSERT INTO lake.p SELECT i + {batch * 10}, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END FROM range(4) r(i)"
        )
    lake = setup.open()
    report = lake.merge_adjacent_files("main.p")
    assert report.files_merged == 6 and len(report.files_written) == 2
    con = referee.connect()
    setup.attach(con)
    for region in ("eu", "us"):
        expected = [{"id": b * 10 + i} for b in range(3) for i in range(4) if (i % 2 == 0) == (region == "eu")]
        assert rows(con, f"SELECT id FROM lake.p WHERE region = '{region}' ORDER BY id") == expected
    assert set(file_layout(setup, lake, "main.p")) == {("region=eu", ("eu",)), ("region=us", ("us",))}


def test_flush_writes_one_file_per_partition_as_duckdb(setup: LakeSetup) -> None:
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=100)
    for name in ("ours", "theirs"):
        con.sql(f"CREATE TABLE lake.{name} (id INT, region VARCHAR, ts TIMESTAMP)")
        con.sql(f"ALTER TABLE lake.{name} SET PARTITIONED BY (region, month(ts))")
        con.sql(
            f"INSERT INTO lake.{name} SELECT i, ['eu', 'us', NULL][i % 3 + 1], TIMESTAMP '2024-01-31' + INTERVAL (i) DAY "
            "FROM range(10) r(i)"
        )
        con.sql(f"DELETE FROM lake.{name} WHERE id = 4")
    con.sql("CALL ducklake_flush_inlined_data('lake', table_name => 'theirs')")
    lake = setup.open()
    lake.flush_inlined_data("main.ours")
    assert file_layout(setup, lake, "main.ours") == file_layout(setup, lake, "main.theirs")
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "SELECT * FROM lake.ours ORDER BY id") == rows(con, "SELECT * FROM lake.theirs ORDER BY id")
    assert rows(con, "SELECT id FROM lake.ours AT (VERSION => 3) ORDER BY id") == [{"id": i} for i in range(10)]


def file_rows(con: Any, setup: LakeSetup, lake: Any, table: str, columns: str = "k, n") -> list[list[dict[str, Any]]]:
    """``columns`` of each visible file of ``table``, in file order, as DuckDB reads the Parquet."""
    info = lake.table(table)
    with setup.store.connection() as conn:
        paths = [
            p
            for (p,) in conn.query(
                "SELECT path FROM {M}ducklake_data_file WHERE table_id = ? AND end_snapshot IS NULL ORDER BY path",
                (info.table_id,),
            )
        ]
    return [rows(con, f"SELECT {columns} FROM read_parquet('{lake.table_dir(info).rstrip('/')}/{p}')") for p in paths]


@pytest.mark.parametrize("writer", ["python", "spark"])
def test_sorted_tables_are_written_in_duckdb_order(
    setup: LakeSetup, writer: str, request: pytest.FixtureRequest
) -> None:
    """``SET SORTED BY (k DESC, n)``: DuckDB sorts each file it writes; so do our writers (ties may differ)."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    data = arrow_rows(random_rows(200, seed=11)).select(["id", "k", "n"])
    for name in ("ours", "theirs"):
        con.sql(f"CREATE TABLE lake.{name} (id BIGINT, k VARCHAR, n INTEGER)")
        con.sql(f"ALTER TABLE lake.{name} SET SORTED BY (k DESC, n)")
        con.sql(f"ALTER TABLE lake.{name} SET PARTITIONED BY (bucket(2, id))")
    con.register("incoming", data)
    con.sql("INSERT INTO lake.theirs SELECT * FROM incoming")
    con.sql("CREATE TABLE lake.src AS SELECT * FROM incoming")
    lake = setup.open()
    if writer == "python":
        with lake.transaction() as tx:
            tx.append("main.ours", data)
    else:
        from tests.integration.test_spark_sql import run

        run(
            request.getfixturevalue("spark"), setup, "ATTACH 'ducklake' AS dl; INSERT INTO dl.ours SELECT * FROM dl.src"
        )
    ours, theirs = file_rows(con, setup, lake, "main.ours"), file_rows(con, setup, lake, "main.theirs")
    key = [(r["k"], r["n"]) for piece in theirs for r in piece]
    assert len(ours) >= 2 and sum(map(len, ours)) == len(key) == 200
    for piece in ours + theirs:
        keys = [(r["k"], r["n"]) for r in piece]
        assert keys == sorted(keys, key=_duckdb_order), keys[:5]
    assert rows(con, "SELECT * FROM lake.ours ORDER BY id") == rows(con, "SELECT * FROM lake.theirs ORDER BY id")


def _duckdb_order(key: tuple[str | None, int | None]) -> tuple[Any, ...]:
    """``k DESC NULLS LAST, n ASC NULLS LAST`` (DuckDB's defaults), as a Python sort key."""
    k, n = key
    inverted = (*tuple(-b for b in k.encode()), 1) if k is not None else ()
    return (k is None, inverted, n is None, n if n is not None else 0)


def test_unsigned_keys_bucket_as_duckdb(setup: LakeSetup) -> None:
    """DuckDB hashes unsigned integers by their decimal text (signed ones as 64-bit integers): values past the
    signed range of each width land in DuckDB's buckets."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    columns = "id BIGINT, u8 UTINYINT, u16 USMALLINT, u32 UINTEGER, u64 UBIGINT"
    values = [
        (0, 0, 0, 0, 0),
        (1, 200, 40000, 3247764897, 2**63),
        (2, 255, 65535, 2**32 - 1, 2**64 - 1),
        (3, 127, 1, 2**31, 2**63 - 1),
        (4, None, None, None, None),
    ]
    data = pa.table(
        {
            name: pa.array([row[i] for row in values], kind)
            for i, (name, kind) in enumerate(
                [
                    ("id", pa.int64()),
                    ("u8", pa.uint8()),
                    ("u16", pa.uint16()),
                    ("u32", pa.uint32()),
                    ("u64", pa.uint64()),
                ]
            )
        }
    )
    for key in ("bucket(7, u8)", "bucket(7, u16)", "bucket(7, u32)", "bucket(7, u64)", "u32, u64"):
        table = key.replace("(", "_").replace(")", "").replace(", ", "_").replace(" ", "")
        for name in (f"theirs_{table}", f"ours_{table}"):
            con.sql(f"CREATE TABLE lake.{name} ({columns})")
            con.sql(f"ALTER TABLE lake.{name} SET PARTITIONED BY ({key})")
        con.register("incoming", data)
        con.sql(f"INSERT INTO lake.theirs_{table} SELECT * FROM incoming")
        lake = setup.open()
        with lake.transaction() as tx:
            tx.append(f"main.ours_{table}", data)
        theirs = file_layout(setup, lake, f"main.theirs_{table}")
        assert file_layout(setup, lake, f"main.ours_{table}") == theirs, key
        assert len(theirs) > 2, key  # the rows spread over several partitions


def _partition_catalog(con: Any) -> list[Any]:
    """The lake's partition specs, their keys, the snapshots' changes and catalog ids, and each file's spec."""
    meta = "__ducklake_metadata_lake."
    return [
        rows(con, f"SELECT * FROM {meta}ducklake_partition_info ORDER BY ALL"),
        rows(con, f"SELECT * FROM {meta}ducklake_partition_column ORDER BY ALL"),
        rows(con, f"SELECT snapshot_id, changes_made FROM {meta}ducklake_snapshot_changes ORDER BY ALL"),
        rows(con, f"SELECT snapshot_id, schema_version, next_catalog_id FROM {meta}ducklake_snapshot ORDER BY ALL"),
        rows(con, f"SELECT data_file_id, partition_id FROM {meta}ducklake_data_file ORDER BY ALL"),
        rows(con, f"SELECT * FROM {meta}ducklake_file_partition_value ORDER BY ALL"),
    ]


SPEC_CHANGES = [
    ("", "ALTER TABLE a RESET PARTITIONED BY"),
    ("ALTER TABLE a SET PARTITIONED BY (k)", "ALTER TABLE a RESET PARTITIONED BY"),
    ("", "ALTER TABLE a SET PARTITIONED BY (k); ALTER TABLE a RESET PARTITIONED BY"),
    ("ALTER TABLE a SET PARTITIONED BY (k)", "ALTER TABLE a SET PARTITIONED BY (K)"),
    (
        "ALTER TABLE a SET PARTITIONED BY (k)",
        "ALTER TABLE a SET PARTITIONED BY (n); ALTER TABLE a SET PARTITIONED BY (k)",
    ),
    (
        "",
        "ALTER TABLE a SET PARTITIONED BY (k); INSERT INTO a VALUES (1, 'x', 1), (2, 'y', 2); "
        "ALTER TABLE a SET PARTITIONED BY (n); INSERT INTO a VALUES (3, 'x', 1), (4, 'y', 2)",
    ),
    (
        "ALTER TABLE a SET PARTITIONED BY (k)",
        "ALTER TABLE a SET PARTITIONED BY (n); INSERT INTO a VALUES (1, 'x', 2); ALTER TABLE a SET PARTITIONED BY (k)",
    ),
    (
        "",
        "INSERT INTO a VALUES (1, 'x', 1); ALTER TABLE a SET PARTITIONED BY (bucket(2, n)); "
        "DELETE FROM a WHERE id = 1; ALTER TABLE a SET PARTITIONED BY (n, k); INSERT INTO a VALUES (3, 'x', 1)",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("before", "script"), SPEC_CHANGES)
def test_spec_changes_in_one_script_as_duckdb(tmp_path: Any, spark: Any, before: str, script: str) -> None:
    """Several ``SET``/``RESET PARTITIONED BY`` in one script: each spec takes a catalog id and files written
    under a replaced one keep it, a spec the table already has changes nothing, and a script that ends on the
    spec it began with writes no spec rows, exactly as a DuckDB transaction does. (It failed at the commit when
    a script inserted rows before a later ``SET``.)"""
    from tests.integration.test_spark_sql import run

    catalogs = []
    for side in ("duckdb", "spark"):
        (tmp_path / side / "data").mkdir(parents=True)
        lake = referee.sqlite_lake(tmp_path / side)
        if side == "duckdb":
            con = referee.connect()
            lake.attach(con, DATA_INLINING_ROW_LIMIT=0)
            con.sql("USE lake; CREATE TABLE a (id INT, k VARCHAR, n INT)")
            if before:
                con.sql(before)
            con.sql(f"BEGIN; {script}; COMMIT")
        else:
            run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE a (id INT, k VARCHAR, n INT)")
            if before:
                run(spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {before}")
            run(spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {script}")
            con = referee.connect()
            lake.attach(con)
        catalogs.append(_partition_catalog(con))
    assert catalogs[1] == catalogs[0]


def test_a_partition_column_is_not_dropped(setup: LakeSetup) -> None:
    """DuckDB refuses to drop a column the table is partitioned by; so do we, with its message."""
    from airflow_provider_lakehouse.exceptions import LakehouseError

    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("main.t", pa.schema([("id", pa.int64()), ("k", pa.string())]))
        tx.set_partitioned_by("main.t", [("k", "identity")])
    con = referee.connect()
    setup.attach(con)
    with pytest.raises(Exception, match=r'Cannot drop column "k" - the table is partitioned by this column') as theirs:
        con.sql("ALTER TABLE lake.t DROP COLUMN k")
    with pytest.raises(LakehouseError) as ours, lake.transaction() as tx:
        tx.drop_column("main.t", "k")
    assert str(ours.value) == str(theirs.value)
    with lake.transaction() as tx:  # a reset frees it, in the same transaction
        tx.set_partitioned_by("main.t", [])
        tx.drop_column("main.t", "k")
    assert [c.name for c in lake.table("main.t").columns] == ["id"]


def test_uuid_keys_take_duckdbs_text_whatever_form_the_value_came_in(setup: LakeSetup) -> None:
    """A UUID written as text without hyphens, in braces or in capitals sits in the partition DuckDB names by
    the canonical text (identity and bucket keys alike)."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    texts = ["36d5a6d7a93584b86f93305acdc2a62b", "{E12E48A2-62C0-BF47-9F10-6C790A1957DF}", None]
    for name in ("theirs", "ours"):
        con.sql(f"CREATE TABLE lake.{name} (id BIGINT, u UUID)")
        con.sql(f"ALTER TABLE lake.{name} SET PARTITIONED BY (u, bucket(3, u))")
    con.sql(
        "INSERT INTO lake.theirs VALUES "
        + ", ".join(f"({i}, {'NULL' if t is None else referee.sql_literal(t)})" for i, t in enumerate(texts))
    )
    lake = setup.open()
    with lake.transaction() as tx:
        tx.append("main.ours", pa.table({"id": pa.array(range(3), pa.int64()), "u": pa.array(texts, pa.string())}))
    theirs = file_layout(setup, lake, "main.theirs")
    assert file_layout(setup, lake, "main.ours") == theirs
    assert ("u=36d5a6d7-a935-84b8-6f93-305acdc2a62b", "36d5a6d7-a935-84b8-6f93-305acdc2a62b") in {
        (d.split("/")[0], v[0]) for d, v in theirs
    }


#: DuckDB's text of these escapes quotes, backslashes and every byte outside printable ASCII (``\x22q\x27t``)
KEY_BLOBS = [b"abc", b"", b"\"q't/ %", b"\x01\x7f", "é".encode(), b"a\\b", None]
#: nanoseconds since the epoch: fractions of 9, 1 and no digits, before 1970, NULL
KEY_NANOS = [1704110400123456789, -1, 0, 1704067200100000000, 1704067200000000001, None, 86_400_000_000_000]


@pytest.mark.parametrize("spec", ["bl", "ns", "bl, bucket(3, ns)"])
def test_blob_and_nanosecond_keys_partition_as_duckdb(setup: LakeSetup, spec: str) -> None:
    data = pa.table(
        {
            "id": pa.array(range(len(KEY_BLOBS)), pa.int64()),
            "bl": pa.array(KEY_BLOBS, pa.binary()),
            "ns": pa.array(KEY_NANOS, pa.int64()).cast(pa.timestamp("ns")),
        }
    )
    lake = write_both_ways(setup, "id BIGINT, bl BLOB, ns TIMESTAMP_NS", spec, data)
    con = referee.connect()
    setup.attach(con)
    theirs = file_layout(setup, lake, "main.theirs")
    assert file_layout(setup, lake, "main.ours") == theirs
    assert len(theirs) >= 6
    assert rows(con, "SELECT * FROM lake.ours ORDER BY id") == rows(con, "SELECT * FROM lake.theirs ORDER BY id")


def test_a_blob_key_that_is_not_utf8_fails_as_in_duckdb(setup: LakeSetup, spark: Any) -> None:
    """DuckDB cannot make a partition value of a BLOB whose bytes are not UTF-8 and fails the insert; so do the
    Python writer and Spark, and nothing lands."""
    from airflow_provider_lakehouse.exceptions import LakehouseError, StatementError
    from tests.integration.test_spark_sql import run

    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("CREATE TABLE lake.p (id BIGINT, bl BLOB)")
    con.sql("ALTER TABLE lake.p SET PARTITIONED BY (bl)")
    with pytest.raises(Exception, match=r"Invalid unicode \(byte sequence mismatch\)"):
        con.sql(r"INSERT INTO lake.p VALUES (1, 'ok'::BLOB), (2, '\xAA\x00'::BLOB)")
    lake = setup.open()
    data = pa.table({"id": pa.array([1, 2], pa.int64()), "bl": pa.array([b"ok", b"\xaa\x00"], pa.binary())})
    refused = pytest.raises(LakehouseError, match=r"Invalid unicode \(byte sequence mismatch\).*partition key 'bl'")
    with refused, lake.transaction() as tx:
        tx.append("main.p", data)
    statement = r"INSERT INTO p VALUES (1, '\xAA\x00'::BLOB)"
    with pytest.raises(StatementError, match=r"(?s)Invalid unicode \(byte sequence mismatch\).*INSERT INTO p"):
        run(spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; {statement}")
    con = referee.connect()
    setup.attach(con)
    assert rows(con, "SELECT count(*) AS n FROM lake.p") == [{"n": 0}]
    assert setup.file_uris() == []


@pytest.mark.parametrize("writer", ["python", "spark"])
def test_a_nested_sort_key_sorts_by_the_keys_before_it(
    setup: LakeSetup, writer: str, request: pytest.FixtureRequest
) -> None:
    """``SET SORTED BY (n, s)`` with ``s`` a STRUCT of a list: Arrow orders no nested values, so files are sorted by
    ``n`` (DuckDB's order up to ties on ``n``); ``SET SORTED BY (s)`` leaves arrival order. Neither fails the
    insert (it failed with Arrow's "Unsupported type for RecordBatch sorting"; script fuzzer seed 31122)."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("USE lake")
    for name, keys in (("by_n", "n DESC, s"), ("by_s", "s, n")):
        con.sql(f"CREATE TABLE {name} (id INTEGER, n INTEGER, s STRUCT(l INTEGER[], m VARCHAR))")
        con.sql(f"ALTER TABLE {name} SET SORTED BY ({keys})")
    con.sql(
        "CREATE TABLE src AS SELECT i AS id, (i * 7) % 5 AS n, {'l': [i % 3, i], 'm': 'x' || i} AS s FROM range(40) t(i)"
    )
    lake = setup.open()
    for name in ("by_n", "by_s"):
        if writer == "python":
            with lake.transaction() as tx:
                tx.append(f"main.{name}", lake.read("main.src"))
        else:
            from tests.integration.test_spark_sql import run

            run(
                request.getfixturevalue("spark"),
                setup,
                f"ATTACH 'ducklake' AS dl; INSERT INTO dl.{name} SELECT * FROM dl.src",
            )
    con = referee.connect()
    setup.attach(con)
    for name in ("by_n", "by_s"):
        assert rows(con, f"SELECT * FROM lake.{name} ORDER BY id") == rows(con, "SELECT * FROM lake.src ORDER BY id")
    (piece,) = file_rows(con, setup, setup.open(), "main.by_n", columns="n")
    assert [r["n"] for r in piece] == sorted((r["n"] for r in piece), reverse=True)

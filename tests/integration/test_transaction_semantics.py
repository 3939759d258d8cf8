"""Several changes to one table in one transaction read back exactly as DuckDB's own ``BEGIN ... COMMIT`` of the
same changes, in our reader and in DuckDB's, on SQLite + local files and on PostgreSQL + SeaweedFS S3.

The lake starts from rows DuckDB wrote (some inlined in the catalog, some in Parquet files); then one of our
transactions and one DuckDB transaction apply the same operations to two identical copies, and the results are
compared: ours read by us, ours read by DuckDB, DuckDB's read by DuckDB.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from tests import referee
from tests.referee import LakeSetup, rows

pytestmark = pytest.mark.integration

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int32()), ("s", pa.string())])
_ids = itertools.count(1000)


@dataclass(frozen=True)
class Insert:
    values: tuple[int, ...]

    def table(self, first_id: int) -> pa.Table:
        ids = list(range(first_id, first_id + len(self.values)))
        return pa.table({"id": ids, "v": list(self.values), "s": [f"s{v}" for v in self.values]}, schema=SCHEMA)


@dataclass(frozen=True)
class Delete:
    low: int
    high: int


@dataclass(frozen=True)
class Update:
    low: int
    high: int
    delta: int


Op = Insert | Delete | Update


def _in_range(op: Delete | Update) -> Any:
    return (pc.field("v") >= op.low) & (pc.field("v") < op.high)


def apply_ours(lake: DuckLake, ops: list[Op], first_id: int) -> None:
    next_id = first_id
    with lake.transaction(author="test") as tx:
        for op in ops:
            if isinstance(op, Insert):
                tx.append("main.t", op.table(next_id))
                next_id += len(op.values)
            elif isinstance(op, Delete):
                tx.delete_where("main.t", _in_range(op))
            else:
                delta = op.delta
                tx.update_where(
                    "main.t",
                    _in_range(op),
                    {
                        "v": lambda r, d=delta: pc.add(r.column("v"), pa.scalar(d, pa.int32())),
                        "s": lambda r: pc.binary_join_element_wise(r.column("s"), pa.scalar("u"), ""),
                    },
                )


def apply_duckdb(con: Any, ops: list[Op], first_id: int) -> None:
    next_id = first_id
    con.sql("BEGIN")
    for op in ops:
        if isinstance(op, Insert):
            values = ", ".join(f"({next_id + i}, {v}, 's{v}')" for i, v in enumerate(op.values))
            con.sql(f"INSERT INTO lake.t VALUES {values}")
            next_id += len(op.values)
        elif isinstance(op, Delete):
            con.sql(f"DELETE FROM lake.t WHERE v >= {op.low} AND v < {op.high}")
        else:
            con.sql(f"UPDATE lake.t SET v = v + {op.delta}, s = s || 'u' WHERE v >= {op.low} AND v < {op.high}")
    con.sql("COMMIT")


def seed(setup: LakeSetup, con: Any, alias: str) -> None:
    """The same starting lake every time: rows inlined in the catalog and rows in Parquet files."""
    setup.attach(con, alias)
    con.sql(f"CREATE TABLE {alias}.t (id BIGINT, v INTEGER, s VARCHAR)")
    con.sql(f"INSERT INTO {alias}.t SELECT i, i % 20, 's' || (i % 20) FROM range(0, 30) r(i)")  # a Parquet file
    con.sql(f"INSERT INTO {alias}.t VALUES (100, 3, 's3'), (101, 14, 's14')")  # inlined in the catalog
    con.sql(f"INSERT INTO {alias}.t SELECT i, i % 20, 's' || (i % 20) FROM range(200, 240) r(i)")
    con.sql(f"DELETE FROM {alias}.t WHERE id IN (5, 101, 210)")
    con.sql(f"DETACH {alias}")


def content(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.select(["id", "v", "s"]).to_pylist(), key=lambda r: (r["id"], r["v"], r["s"]))


def check_same_as_duckdb(make_setup: Callable[[], LakeSetup], ops: list[Op]) -> None:
    ours_setup, theirs_setup = make_setup(), make_setup()
    con = referee.connect()
    seed(ours_setup, con, "ours")
    seed(theirs_setup, con, "lake")
    theirs_setup.attach(con, "lake")
    lake = ours_setup.open()
    apply_ours(lake, ops, first_id=10_000)
    apply_duckdb(con, ops, first_id=10_000)
    expected = rows(con, "SELECT id, v, s FROM lake.t ORDER BY id, v, s")
    ours_setup.attach(con, "ours")
    assert content(lake.read("main.t")) == expected, f"our reader differs from DuckDB for {ops}"
    assert rows(con, "SELECT id, v, s FROM ours.t ORDER BY id, v, s") == expected, (
        f"DuckDB reads ours differently: {ops}"
    )
    # count(*) uses the catalog's delete counts: wrong delete files would show here even if the rows looked right
    assert rows(con, "SELECT count(*) AS n FROM ours.t") == [{"n": len(expected)}]
    # every file in the data directory is referenced: nothing superseded or abandoned was left behind
    assert lake.delete_orphaned_files(older_than=_future()).files_deleted == []


def _future() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC) + dt.timedelta(days=1)


# -- the three reported corruptions, as regressions --------------------------------------------------
REGRESSIONS = {
    "delete+delete": [Delete(0, 5), Delete(3, 9)],
    "update+update": [Update(0, 10, 100), Update(100, 105, 1)],
    "delete+update": [Delete(0, 4), Update(2, 12, 50)],
    "update+delete": [Update(0, 10, 30), Delete(30, 35)],
    "insert, update the new rows, delete some": [Insert((1, 2, 3, 40)), Update(0, 5, 7), Delete(8, 9)],
    "delete everything then insert": [Delete(0, 100), Insert((5, 6))],
}


@pytest.mark.parametrize("ops", list(REGRESSIONS.values()), ids=list(REGRESSIONS))
def test_several_changes_to_one_table_in_one_transaction(
    setup: LakeSetup, tmp_path: Path, ops: list[Op], request: pytest.FixtureRequest
) -> None:
    check_same_as_duckdb(_factory(setup, tmp_path, request), ops)


def _factory(setup: LakeSetup, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[], LakeSetup]:
    if setup.pg is None:
        return lambda: _sqlite_lake(tmp_path)
    stack = request.getfixturevalue("stack")
    return lambda: referee.postgres_lake(stack)


def _sqlite_lake(tmp_path: Path) -> LakeSetup:
    folder = tmp_path / uuid.uuid4().hex[:8]
    folder.mkdir()
    return referee.sqlite_lake(folder)


# -- property-style: random sequences -----------------------------------------------------------------
ranges = st.tuples(st.integers(0, 40), st.integers(1, 12)).map(lambda t: (t[0], t[0] + t[1]))
operations = st.one_of(
    st.lists(st.integers(0, 40), min_size=1, max_size=6).map(lambda vs: Insert(tuple(vs))),
    ranges.map(lambda r: Delete(*r)),
    st.tuples(ranges, st.integers(-20, 20)).map(lambda t: Update(t[0][0], t[0][1], t[1])),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(ops=st.lists(operations, min_size=1, max_size=7))
def test_random_sequences_match_duckdb_sqlite(tmp_path: Path, ops: list[Op]) -> None:
    check_same_as_duckdb(lambda: _sqlite_lake(tmp_path), ops)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(ops=st.lists(operations, min_size=1, max_size=6))
def test_random_sequences_match_duckdb_postgres_s3(stack: Any, ops: list[Op]) -> None:
    check_same_as_duckdb(lambda: referee.postgres_lake(stack), ops)

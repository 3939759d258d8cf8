"""Random lakes written by DuckDB 1.5, read back by the provider at every snapshot: the differences, one seed at a time.

    python -m tests.fuzz.duckdb_lakes_read_back 100 50             # our reader and change feed against DuckDB's
    python -m tests.fuzz.duckdb_lakes_read_back 100 50 --odd-types # UUID, JSON, unsigned, HUGEINT, nested ... too
    python -m tests.fuzz.duckdb_lakes_read_back 100 20 --spark     # the Spark engine's reads too (slower)
    python -m tests.fuzz.duckdb_lakes_read_back 100 20 --spark --s3  # on the local stack's Postgres and S3

Each seed attaches a SQLite lake in DuckDB with random writer settings (deletion vectors or not, an inlining limit
of 0, 5 or 50 rows, small row groups now and then) and runs a random sequence of changes, some of them grouped in
transactions that commit or roll back: inserts, deletes, updates, added, dropped and renamed columns, widened
types, partitioning and sort orders set and reset, and the maintenance calls (merging adjacent files, flushing
inlined rows, rewriting files with many deletes). A statement DuckDB refuses is left out (and its transaction
rolled back). Then, at every snapshot where table ``t`` exists, the provider's reader must return DuckDB's rows
with their ``rowid`` and column names; for random pairs of snapshots, ``table_changes`` must return DuckDB's
``ducklake_table_changes``; with ``--spark``, the Spark engine's ``SELECT ... AT (VERSION => n)`` must return
DuckDB's rows at the last snapshot and two random ones. Not part of the test suite: what it finds is kept as tests.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.jsonsafe import to_json_safe
from tests import referee
from tests.fuzz import run_seeds
from tests.fuzz.spark_against_duckdb import GEOMETRY_LITERALS, LITERALS, ODD_LITERALS

#: a type each column type may widen to, as DuckLake allows (``ALTER COLUMN ... TYPE``)
WIDENINGS = {"SMALLINT": "INTEGER", "INTEGER": "BIGINT", "FLOAT": "DOUBLE", "UINTEGER": "UBIGINT"}
#: column types DuckDB partitions by identity without trouble (nested, BLOB and INTERVAL keys are left out)
IDENTITY_KEYS = {"INTEGER", "BIGINT", "SMALLINT", "VARCHAR", "BOOLEAN", "DATE", "UINTEGER", "DECIMAL(10,2)"}
TEMPORAL = {"DATE", "TIMESTAMP", "TIMESTAMPTZ"}
SORTABLE = {"INTEGER", "BIGINT", "SMALLINT", "VARCHAR", "DATE", "TIMESTAMP", "DOUBLE", "DECIMAL(10,2)"}
#: column types the Spark engine refuses with an error naming them (the Python reader reads them)
SPARK_REFUSED_TYPES = {"INTERVAL"}
MAINTENANCE = (
    "CALL ducklake_merge_adjacent_files('lake')",
    "CALL ducklake_flush_inlined_data('lake')",
    "CALL ducklake_rewrite_data_files('lake', delete_threshold => 0.1)",
)


class LakeHistory:
    """A random sequence of changes to table ``t`` of lake ``lake``, as DuckDB statements."""

    def __init__(self, rng: random.Random, types: list[str], expire: bool = False) -> None:
        self.rng = rng
        self.types = types
        self.expire = expire
        self.steps = 0
        self.columns: dict[str, str] = {}
        self.next_id = 0
        self.next_column = 0

    def _new_column(self) -> tuple[str, str]:
        self.next_column += 1
        return f"c{self.next_column}", self.rng.choice(self.types)

    def _literal(self, kind: str) -> str:
        make = LITERALS.get(kind) or ODD_LITERALS.get(kind) or GEOMETRY_LITERALS.get(kind)
        return "NULL" if make is None or self.rng.random() < 0.15 else make(self.rng)

    def sync(self, con: Any) -> None:
        """Take the table's columns from DuckDB (a refused or rolled-back change left them as they were)."""
        described = con.sql("SELECT column_name, column_type FROM (DESCRIBE lake.t)").fetchall()
        self.columns = {name: kind for name, kind in described if name != "id"}

    def create(self) -> str:
        for _ in range(self.rng.randint(1, 4)):
            name, kind = self._new_column()
            self.columns[name] = kind
        defs = ", ".join(f"{name} {kind}" for name, kind in self.columns.items())
        return f"CREATE TABLE lake.t (id BIGINT, {defs})"

    def _condition(self) -> str:
        top = max(self.next_id, 1)
        choice = self.rng.randint(0, 3)
        if choice == 0:
            return f"id % {self.rng.randint(2, 5)} = {self.rng.randint(0, 1)}"
        if choice == 1:
            low = self.rng.randint(0, top)
            return f"id BETWEEN {low} AND {low + self.rng.randint(0, 20)}"
        if choice == 2 and self.columns:
            return f"{self.rng.choice(list(self.columns))} IS NULL"
        return f"id IN ({', '.join(str(self.rng.randint(0, top)) for _ in range(3))})"

    def _insert(self) -> str:
        if self.rng.random() < 0.3:
            count = self.rng.randint(20, 400)
            first, self.next_id = self.next_id, self.next_id + count
            values = ", ".join(
                f"CASE WHEN range % 7 = 0 THEN NULL ELSE {self._literal(kind)} END" for kind in self.columns.values()
            )
            tail = f", {values}" if values else ""
            return f"INSERT INTO lake.t SELECT range + {first}{tail} FROM range({count})"
        rows = []
        for _ in range(self.rng.randint(1, 6)):
            values = [str(self.next_id), *(self._literal(kind) for kind in self.columns.values())]
            self.next_id += 1
            rows.append(f"({', '.join(values)})")
        return f"INSERT INTO lake.t VALUES {', '.join(rows)}"

    def statement(self) -> str:
        rng = self.rng
        self.steps += 1
        if self.expire and rng.random() < 0.15:  # drawn only with --expire, so other runs keep their histories
            return self._expiry()
        choice = rng.random()
        if choice < 0.3 or not self.next_id:
            return self._insert()
        if choice < 0.42:
            return f"DELETE FROM lake.t WHERE {self._condition()}"
        if choice < 0.55 and self.columns:
            name = rng.choice(list(self.columns))
            return f"UPDATE lake.t SET {name} = {self._literal(self.columns[name])} WHERE {self._condition()}"
        if choice < 0.62:
            name, kind = self._new_column()
            default = f" DEFAULT {self._literal(kind)}" if rng.random() < 0.5 else ""
            self.columns[name] = kind
            return f"ALTER TABLE lake.t ADD COLUMN {name} {kind}{default}"
        if choice < 0.67 and self.columns:
            name = rng.choice(list(self.columns))
            del self.columns[name]
            return f"ALTER TABLE lake.t DROP COLUMN {name}"
        if choice < 0.72 and self.columns:
            name = rng.choice(list(self.columns))
            new_name = f"{name}_r"
            self.columns = {new_name if c == name else c: k for c, k in self.columns.items()}
            return f"ALTER TABLE lake.t RENAME COLUMN {name} TO {new_name}"
        widenable = [c for c, k in self.columns.items() if k in WIDENINGS]
        if choice < 0.76 and widenable:
            name = rng.choice(widenable)
            self.columns[name] = WIDENINGS[self.columns[name]]
            return f"ALTER TABLE lake.t ALTER COLUMN {name} TYPE {self.columns[name]}"
        if choice < 0.82:
            return self._partitioning()
        sortable = [c for c, k in self.columns.items() if k in SORTABLE]
        if choice < 0.86 and sortable:
            keys = rng.sample(sortable, min(len(sortable), rng.randint(1, 2)))
            return f"ALTER TABLE lake.t SET SORTED BY ({', '.join(keys)})"
        if choice < 0.9:
            return f"DELETE FROM lake.t WHERE {self._condition()} OR {self._condition()}"
        return rng.choice(MAINTENANCE)

    def _expiry(self) -> str:
        if self.rng.random() < 0.3:
            return "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)"
        return f"CALL ducklake_expire_snapshots('lake', versions => [{self.rng.randint(1, self.steps + 1)}])"

    def _partitioning(self) -> str:
        keys = []
        for name, kind in self.columns.items():
            if kind in IDENTITY_KEYS:
                keys.append(name)
            if kind in TEMPORAL:
                keys.append(f"{self.rng.choice(['year', 'month', 'day'])}({name})")
            if kind in {"INTEGER", "BIGINT", "VARCHAR"}:
                keys.append(f"bucket({self.rng.randint(2, 4)}, {name})")
        if not keys or self.rng.random() < 0.25:
            return "ALTER TABLE lake.t RESET PARTITIONED BY"
        chosen = self.rng.sample(keys, min(len(keys), self.rng.randint(1, 2)))
        return f"ALTER TABLE lake.t SET PARTITIONED BY ({', '.join(chosen)})"


def writer_settings(rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    """Random ATTACH options and ``set_option`` calls for DuckDB's writer."""
    options: dict[str, Any] = {"DATA_INLINING_ROW_LIMIT": rng.choice([0, 5, 50])}
    if rng.random() < 0.6:
        options["WRITE_DELETION_VECTORS"] = "true"
    calls = []
    if rng.random() < 0.4:
        calls.append(f"CALL lake.set_option('parquet_row_group_size', {rng.choice([7, 50, 1000])})")
    if rng.random() < 0.3:
        calls.append(f"CALL lake.set_option('parquet_compression', '{rng.choice(['zstd', 'uncompressed', 'gzip'])}')")
    if rng.random() < 0.2:
        calls.append("CALL lake.set_option('parquet_version', 2)")
    return options, calls


def rollback(con: Any) -> None:
    try:
        con.sql("ROLLBACK")
    except Exception:  # a failed COMMIT has already ended the transaction
        pass


def write_history(con: Any, rng: random.Random, types: list[str], steps: int, expire: bool = False) -> list[str]:
    """Run a random history in DuckDB; returns the statements that ran (rolled-back groups marked)."""
    history = LakeHistory(rng, types, expire)
    ran = []
    create = history.create()
    con.sql(create)
    ran.append(create)
    done = 0
    while done < steps:
        group = [history.statement() for _ in range(rng.randint(1, 4))] if rng.random() < 0.3 else []
        if group:
            ending = "ROLLBACK" if rng.random() < 0.2 else "COMMIT"
            con.sql("BEGIN")
            try:
                for statement in group:
                    con.sql(statement)
                con.sql(ending)
                ran.append(f"BEGIN; {'; '.join(group)}; {ending}")
            except Exception as exc:  # DuckDB refused: the group is rolled back, as a failed task would be
                rollback(con)
                ran.append(f"-- refused ({str(exc)[:60]}): {'; '.join(group)}")
            history.sync(con)
            done += len(group)
            continue
        statement = history.statement()
        try:
            con.sql(statement)
            ran.append(statement)
        except Exception as exc:  # refused by DuckDB: not part of the lake's history
            rollback(con)  # a refused statement can leave DuckDB's transaction aborted
            ran.append(f"-- refused ({str(exc)[:60]}): {statement}")
            history.sync(con)
        done += 1
    return ran


def duckdb_rows(con: Any, sql: str) -> list[dict[str, Any]] | str:
    try:
        return to_json_safe(con.sql(sql).to_arrow_table().to_pylist())  # type: ignore[no-any-return]
    except Exception as exc:  # an answer to compare too
        return f"error: {str(exc)[:200]}"


def difference_of(theirs: list[dict[str, Any]] | str, ours: list[dict[str, Any]] | str) -> str:
    """The rows only one side has (or both answers, when one is an error)."""
    if isinstance(theirs, str) or isinstance(ours, str):
        return f"\n  DuckDB {str(theirs)[:800]}\n  ours   {str(ours)[:800]}"
    their_rows, our_rows = [repr(r) for r in theirs], [repr(r) for r in ours]
    only_theirs = [r for r in their_rows if r not in our_rows]
    only_ours = [r for r in our_rows if r not in their_rows]
    return (
        f" ({len(theirs)} rows against {len(ours)})\n  only DuckDB's {'; '.join(only_theirs)[:800]}"
        f"\n  only ours     {'; '.join(only_ours)[:800]}"
    )


def ordered(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda row: (row[key], repr(row)))


def _two_live_delete_files(lake: Any, snapshot: int) -> bool:
    try:
        return any(f.other_delete_files for f in lake.scan("main.t", version=snapshot).files)
    except LookupError:
        return False


def compare_reads(con: Any, setup: referee.LakeSetup, seed: int) -> str | None:
    """Our reader against DuckDB at every snapshot, with row ids."""
    lake = setup.open()
    compared = 0
    for snapshot in referee.lake_snapshots(lake):
        if _two_live_delete_files(lake, snapshot):
            continue  # DuckDB reads such a file once per delete file (docs/ducklake.md, Known limits)
        theirs = duckdb_rows(con, f"SELECT rowid, * FROM lake.t AT (VERSION => {snapshot})")
        try:
            ours: list[dict[str, Any]] | str = [
                {"rowid": row.pop("rowid"), **row}
                for row in to_json_safe(lake.read("main.t", version=snapshot, virtual=["rowid"]).to_pylist())
            ]
        except LookupError:
            ours = "no table"
        except Exception as exc:  # compared with DuckDB's answer
            ours = f"error: {type(exc).__name__}: {str(exc)[:200]}"
        if isinstance(theirs, str) and isinstance(ours, str):
            continue  # neither has the table at this snapshot
        if isinstance(theirs, list) and isinstance(ours, list):
            theirs, ours = ordered(theirs, "rowid"), ordered(ours, "rowid")
            if ours and theirs and list(ours[0]) != list(theirs[0]):
                return (
                    f"seed {seed}: snapshot {snapshot} columns differ: DuckDB {list(theirs[0])}, ours {list(ours[0])}"
                )
        if theirs != ours:
            return f"seed {seed}: snapshot {snapshot} differs{difference_of(theirs, ours)}"
        compared += 1
    return None if compared else f"seed {seed}: no snapshot compared"


def compare_changes(con: Any, setup: referee.LakeSetup, seed: int, rng: random.Random) -> str | None:
    """``table_changes`` against ``ducklake_table_changes`` for random snapshot ranges."""
    lake = setup.open()
    snapshots = referee.lake_snapshots(lake)
    for _ in range(3):
        start, end = sorted(rng.sample(snapshots, 2)) if len(snapshots) > 1 else (snapshots[0], snapshots[0])
        theirs = duckdb_rows(con, f"SELECT * FROM ducklake_table_changes('lake', 'main', 't', {start}, {end})")
        try:
            ours: list[dict[str, Any]] | str = to_json_safe(lake.table_changes("main.t", start, end).to_pylist())
        except Exception as exc:  # compared with DuckDB's answer
            ours = f"error: {type(exc).__name__}: {str(exc)[:200]}"
        if isinstance(theirs, str) and isinstance(ours, str):
            continue
        key = lambda row: (row["snapshot_id"], row["rowid"], row["change_type"], repr(row))  # noqa: E731
        if isinstance(theirs, list) and isinstance(ours, list):
            theirs, ours = sorted(theirs, key=key), sorted(ours, key=key)
        if theirs != ours:
            return f"seed {seed}: changes {start}..{end} differ{difference_of(theirs, ours)}"
    return None


def compare_spark(spark: Any, con: Any, setup: referee.LakeSetup, seed: int, rng: random.Random) -> str | None:
    """The Spark engine's reads against DuckDB's at the last snapshot and two random ones."""
    from tests.integration.test_spark_sql import run, selected

    lake = setup.open()
    snapshots = referee.lake_snapshots(lake)
    for snapshot in sorted({snapshots[-1], *rng.sample(snapshots, min(2, len(snapshots)))}):
        if _two_live_delete_files(lake, snapshot):
            continue  # DuckDB's answer there is wrong (see compare_reads)
        theirs = duckdb_rows(con, f"SELECT * FROM lake.t AT (VERSION => {snapshot})")
        try:
            response = run(spark, setup, f"ATTACH 'ducklake' AS dl; USE dl; SELECT * FROM t AT (VERSION => {snapshot})")
            ours: list[dict[str, Any]] | str = to_json_safe(selected(response))
        except Exception as exc:  # compared with DuckDB's answer
            ours = f"error: {type(exc).__name__}: {str(exc)[:200]}"
        if isinstance(theirs, str) and isinstance(ours, str):
            continue
        if isinstance(theirs, list) and isinstance(ours, list):
            theirs, ours = ordered(theirs, "id"), ordered(ours, "id")
        if theirs != ours:
            return f"seed {seed}: Spark at {snapshot} differs{difference_of(theirs, ours)}"
    return None


def compare(
    seed: int, types: list[str], steps: int, spark: Any = None, s3: bool = False, expire: bool = False
) -> str | None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        setup = referee.postgres_lake(None) if s3 else referee.sqlite_lake(Path(folder))
        con = referee.connect()
        options, calls = writer_settings(rng)
        setup.attach(con, **options)
        for call in calls:
            con.sql(call)
        history = write_history(con, rng, types, steps, expire)
        difference = compare_reads(con, setup, seed) or compare_changes(con, setup, seed, rng)
        if difference is None and spark is not None:
            difference = compare_spark(spark, con, setup, seed, rng)
        con.close()
    if difference is None:
        return None
    return f"{difference}\n  settings {options} {calls}\n  " + ";\n  ".join(history)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("first_seed", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--types", default="|".join(LITERALS), help="column types, |-separated")
    parser.add_argument("--odd-types", action="store_true", help="the less common types too")
    parser.add_argument("--steps", type=int, default=14, help="changes per seed")
    parser.add_argument("--spark", action="store_true", help="read with the Spark engine too")
    parser.add_argument("--s3", action="store_true", help="the local stack's Postgres catalog and S3 (S3A reads)")
    parser.add_argument("--expire", action="store_true", help="expire snapshots and clean up old files too")
    args = parser.parse_args()
    if args.odd_types:  # with --spark not INTERVAL, which the Spark engine refuses (docs/ducklake.md, Known limits)
        refused = SPARK_REFUSED_TYPES if args.spark else set()
        args.types = "|".join([*args.types.split("|"), *(t for t in ODD_LITERALS if t not in refused)])
    spark = None
    if args.spark:
        from airflow_provider_lakehouse.spark.session import local_session

        spark = local_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    types = args.types.split("|")
    run_seeds(args.first_seed, args.count, lambda seed: compare(seed, types, args.steps, spark, args.s3, args.expire))


if __name__ == "__main__":
    main()

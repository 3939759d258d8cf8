"""Random lake scripts on Spark against DuckDB 1.5: the differences they show, one seed at a time.

    python -m tests.fuzz.spark_against_duckdb 300 40            # seeds 300..339, every column type
    python -m tests.fuzz.spark_against_duckdb 321 1 --types 'INTEGER|TIME|BLOB'
    python -m tests.fuzz.spark_against_duckdb 500 40 --odd-types   # HUGEINT, UUID, INTERVAL, JSON ... too
    python -m tests.fuzz.spark_against_duckdb 700 40 --autocommit  # each statement commits on its own
    python -m tests.fuzz.spark_against_duckdb 900 40 --alter-columns  # ALTER COLUMN TYPE/DEFAULT/NOT NULL too
    python -m tests.fuzz.spark_against_duckdb 1100 40 --filters     # decimal literals in WHERE and arithmetic
    python -m tests.fuzz.spark_against_duckdb 1300 40 --partitions  # partitioned tables, files compared too
    python -m tests.fuzz.spark_against_duckdb 1500 40 --mixed-values  # text and other types' values in inserts

Each seed makes one table of random column types and a script of random changes: inserts of random values (and
``NULL``), deletes, updates with constants and expressions, merges, added, dropped and renamed columns, copies of
the table into itself, ``CREATE OR REPLACE ... AS SELECT`` and, now and then, a statement that must fail. The
script runs as one lake task on local Spark over one SQLite lake and as one DuckDB transaction over another (even
seeds split it after the ``CREATE``); then DuckDB reads table ``t`` of both lakes. A seed is reported when one
side failed and the other did not, or when the column types or rows differ. Not part of the test suite: what it
found is kept as tests (``tests/integration/test_spark_values_as_duckdb.py``). With ``--partitions`` the table is
partitioned (identity, ``year``/``month``/``day``/``hour``, ``bucket``; now and then re-partitioned or reset
mid-script), DuckDB writes files instead of inlining rows, and each side's live files are compared as (hive
directory, partition values) too. DuckDB 1.5.5's ``ducklake`` itself
crashes or fails on some seeds (see docs/ducklake.md, "Known limits"): run those seeds one by one. Where DuckDB
fails the script's transaction but runs its statements one by one, that run is the referee (the seed says so).
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.jsonsafe import to_json_safe
from tests import referee
from tests.fuzz import run_seeds
from tests.integration.test_spark_sql import run

#: column types and a random literal of each
LITERALS: dict[str, Callable[[random.Random], str]] = {
    "INTEGER": lambda r: str(r.randint(-1000, 1000)),
    "BIGINT": lambda r: str(r.randint(-(2**40), 2**40)),
    "SMALLINT": lambda r: str(r.randint(-300, 300)),
    "DOUBLE": lambda r: r.choice(["1.5", "-0.25", "1e10", "3.14159", "0.0", "-0.0"]),
    "FLOAT": lambda r: r.choice(["1.5", "-0.25", "2.5", "0.1"]),
    "DECIMAL(10,2)": lambda r: f"{r.randint(-9999, 9999)}.{r.randint(0, 99):02d}",
    "DECIMAL(38,10)": lambda r: f"{r.randint(-(10**12), 10**12)}.{r.randint(0, 10**10 - 1):010d}",
    "VARCHAR": lambda r: r.choice(["'a'", "''", "'héllo'", "'x''y'", "'long string value'"]),
    "BOOLEAN": lambda r: r.choice(["true", "false"]),
    "DATE": lambda r: f"DATE '{r.randint(1900, 2100)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}'",
    "TIMESTAMP": lambda r: (
        f"TIMESTAMP '{r.randint(1970, 2050)}-0{r.randint(1, 9)}-1{r.randint(0, 9)} "
        f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999999):06d}'"
    ),
    "TIMESTAMPTZ": lambda r: f"TIMESTAMPTZ '2026-0{r.randint(1, 9)}-1{r.randint(0, 9)} 10:00:00+0{r.randint(0, 5)}'",
    "TIME": lambda r: f"TIME '{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:00'",
    "UINTEGER": lambda r: str(r.randint(0, 4_000_000_000)),
    "BLOB": lambda r: r.choice(["'\\xAA\\x00'::BLOB", "'abc'::BLOB"]),
    "INTEGER[]": lambda r: r.choice(["[1, 2]", "[]", "[NULL, 3]"]),
    "VARCHAR[]": lambda r: r.choice(["['a', 'b']", "[]"]),
    "STRUCT(a INTEGER, b VARCHAR)": lambda r: r.choice(["{'a': 1, 'b': 'x'}", "{'a': NULL, 'b': 'y'}"]),
    "MAP(VARCHAR, INTEGER)": lambda r: r.choice(["MAP {'k': 1}", "MAP {}"]),
}
#: less common column types, only with ``--odd-types`` (so that the seeds above keep their scripts)
ODD_LITERALS: dict[str, Callable[[random.Random], str]] = {
    "TINYINT": lambda r: str(r.randint(-128, 127)),
    "UTINYINT": lambda r: str(r.randint(0, 255)),
    "USMALLINT": lambda r: str(r.randint(0, 65535)),
    "UBIGINT": lambda r: str(r.choice([0, 1, 2**63, 2**64 - 1, r.randint(0, 2**40)])),
    "HUGEINT": lambda r: str(r.choice([0, -1, 2**100, -(2**90), r.randint(-(2**70), 2**70)])),
    "UUID": lambda r: f"'{r.getrandbits(128):032x}'::UUID",
    "INTERVAL": lambda r: r.choice(["INTERVAL 1 DAY", "INTERVAL '2 months 3 hours'", "INTERVAL 90 MINUTE"]),
    "TIMESTAMP_MS": lambda r: f"TIMESTAMP '2026-0{r.randint(1, 9)}-1{r.randint(0, 9)} 10:11:12.345'",
    "TIMESTAMP_S": lambda r: f"TIMESTAMP '19{r.randint(10, 99)}-0{r.randint(1, 9)}-1{r.randint(0, 9)} 00:00:01'",
    "JSON": lambda r: r.choice(["'{\"a\": 1}'", "'[1, 2]'", "'null'", "'\"x\"'"]),
    "DOUBLE[]": lambda r: r.choice(["[1.5, NULL]", "[]", "['nan'::DOUBLE]"]),
    "STRUCT(l INTEGER[], m VARCHAR)": lambda r: r.choice(["{'l': [1], 'm': 'x'}", "{'l': NULL, 'm': NULL}"]),
    "INTEGER[][]": lambda r: r.choice(["[[1], [2, 3]]", "[[]]", "[NULL, [NULL]]"]),
}
#: geometry values, as DuckDB parses them from text (``--types 'INTEGER|GEOMETRY'``; not among ``--odd-types``, so
#: that the seeds run with it keep their histories)
GEOMETRY_LITERALS: dict[str, Callable[[random.Random], str]] = {
    "GEOMETRY": lambda r: r.choice(
        [
            f"'POINT({r.randint(-99, 99)} {r.random() * 10:.3f})'",
            "'POINT Z(1 2 3)'",
            "'LINESTRING(0 0, 1.5 -2, 3 4)'",
            "'POLYGON((0 0, 4 0, 4 4, 0 0))'",
            "'MULTIPOINT((1 2), EMPTY)'",
            "'GEOMETRYCOLLECTION M(POINT M(7 8 9), LINESTRING M EMPTY)'",
            "'POINT EMPTY'",
        ]
    )
}
#: with ``--alter-columns``: the types a column's type is changed to (DuckDB refuses the last of each, a narrowing)
RETYPES: dict[str, list[str]] = {
    "INTEGER": ["BIGINT", "DOUBLE", "DECIMAL(38,10)", "SMALLINT"],
    "SMALLINT": ["INTEGER", "BIGINT", "FLOAT", "DECIMAL(10,2)", "TINYINT"],
    "BIGINT": ["DOUBLE", "FLOAT", "DECIMAL(38,10)", "INTEGER"],
    "FLOAT": ["DOUBLE", "INTEGER"],
    "DECIMAL(10,2)": ["DECIMAL(38,10)", "DOUBLE", "FLOAT", "INTEGER"],
    "DATE": ["TIMESTAMP", "TIMESTAMPTZ", "VARCHAR"],
    "TIMESTAMP": ["TIMESTAMPTZ", "DATE"],
    "UINTEGER": ["BIGINT", "DOUBLE", "INTEGER"],
    "VARCHAR": ["INTEGER"],
}
NUMERIC = {"INTEGER", "BIGINT", "SMALLINT", "DOUBLE", "FLOAT", "DECIMAL(10,2)", "DECIMAL(38,10)", "UINTEGER"}
NUMERIC |= {"TINYINT", "UTINYINT", "USMALLINT", "UBIGINT", "HUGEINT"}
TEMPORAL = {"DATE", "TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMP_MS", "TIMESTAMP_S"}
#: partition keys whose files the provider writes unpartitioned (DuckDB's text of their values is not reproduced)
UNPARTITIONED_KEYS = {"INTERVAL", "STRUCT(a INTEGER, b VARCHAR)", "MAP(VARCHAR, INTEGER)"}
UNPARTITIONED_KEYS |= {"STRUCT(l INTEGER[], m VARCHAR)"}
EXPRESSIONS: dict[str, list[str]] = {
    "numeric": ["{c} + 1", "{c} * 2", "{c} / 3", "{c} // 2", "{c} % 7", "-{c}", "abs({c})", "round({c}, 1)"],
    "VARCHAR": ["{c} || 'x'", "upper({c})", "substr({c}, 2)", "length({c})::VARCHAR", "concat({c}, id)"],
    "DATE": ["{c} + 1", "{c} + INTERVAL 1 MONTH", "date_trunc('month', {c})", "{c} - 30"],
    "TIMESTAMP": ["{c} + INTERVAL 1 HOUR", "date_trunc('day', {c})", "{c} - INTERVAL 90 MINUTE"],
}


@dataclass
class ScriptMaker:
    """Random statements over one table ``t`` whose columns it tracks as the script changes them."""

    rng: random.Random
    types: list[str]
    columns: dict[str, str] = field(default_factory=dict)
    rows: int = 0
    alter_columns: bool = False
    filters: bool = False
    partitions: bool = False
    mixed_values: bool = False

    def value(self, kind: str) -> str:
        if self.mixed_values and self.rng.random() < 0.3:
            return self.mixed_value(kind)
        return "NULL" if self.rng.random() < 0.15 else (LITERALS | ODD_LITERALS | GEOMETRY_LITERALS)[kind](self.rng)

    def mixed_value(self, kind: str) -> str:
        """A value of another kind than ``kind``'s literals: its text (``'2020-01-01'`` for a date, ``'5'`` for a
        number), a literal of another numeric type for a number, or a literal of any other type (which DuckDB may
        refuse: then both sides must fail)."""
        literal = (LITERALS | ODD_LITERALS | GEOMETRY_LITERALS)[kind](self.rng)
        roll = self.rng.random()
        typed = re.match(r"^[A-Z_]+ ('.*')$", literal)
        if roll < 0.4 and typed:
            return typed.group(1)  # DATE '2020-01-01' -> '2020-01-01'
        if roll < 0.6 and kind in NUMERIC:
            return LITERALS[self.rng.choice(sorted(NUMERIC & set(LITERALS)))](self.rng)
        if roll < 0.85:
            return "'" + literal.replace("'", "''") + "'"
        return LITERALS[self.rng.choice(sorted(LITERALS))](self.rng)

    def script(self) -> list[str]:
        self.columns = {"id": "INTEGER"} | {f"c{i}": self.rng.choice(self.types) for i in range(self.rng.randint(1, 4))}
        create = f"CREATE TABLE t ({', '.join(f'{name} {kind}' for name, kind in self.columns.items())})"
        if self.partitions:
            return [create, self.partitioning()] + [self.change() for _ in range(self.rng.randint(2, 9))]
        return [create] + [self.change() for _ in range(self.rng.randint(2, 9))]

    def partitioning(self) -> str:
        """``SET PARTITIONED BY`` one to three keys of the current columns (identity, a date part, a bucket), or
        ``RESET``. Nested, blob and interval columns are left out: the provider writes their files unpartitioned
        (docs/ducklake.md), which this comparison would report."""
        if self.rng.random() < 0.1:
            return "ALTER TABLE t RESET PARTITIONED BY"
        keys = []
        scalar = [name for name, kind in self.columns.items() if kind not in UNPARTITIONED_KEYS and "[" not in kind]
        for column in self.rng.sample(scalar, k=min(len(scalar), self.rng.randint(1, 3))):
            kind, roll = self.columns[column], self.rng.random()
            if kind in TEMPORAL and roll < 0.6:
                keys.append(f"{self.rng.choice(['year', 'month', 'day', 'hour'])}({column})")
            elif roll < 0.3:
                keys.append(f"bucket({self.rng.randint(1, 5)}, {column})")
            else:
                keys.append(column)
        return f"ALTER TABLE t SET PARTITIONED BY ({', '.join(keys)})"

    def insert(self) -> str:
        values = []
        for _ in range(self.rng.randint(1, 4)):
            self.rows += 1
            row = [str(self.rows)] + [self.value(kind) for name, kind in self.columns.items() if name != "id"]
            values.append(f"({', '.join(row)})")
        return f"INSERT INTO t ({', '.join(self.columns)}) VALUES {', '.join(values)}"

    def change(self) -> str:  # one branch per kind of statement
        if self.alter_columns and self.rng.random() < 0.3:
            return self.alter_column()
        if self.filters and self.rng.random() < 0.3:
            return self.filtered_change()
        if self.partitions and self.rng.random() < 0.1:
            return self.partitioning()
        roll, others = self.rng.random(), [name for name in self.columns if name != "id"]
        if roll < 0.35 or not others:
            return self.insert()
        column = self.rng.choice(others)
        if roll < 0.5:
            return f"DELETE FROM t WHERE id % {self.rng.randint(2, 5)} = {self.rng.randint(0, 1)}"
        if roll < 0.65:
            return f"UPDATE t SET {column} = {self.value(self.columns[column])} WHERE id > {self.rng.randint(0, self.rows)}"
        if roll < 0.72:
            return self.add_column()
        if roll < 0.78 and len(others) > 1:
            del self.columns[column]
            return f"ALTER TABLE t DROP COLUMN {column}"
        if roll < 0.84:
            return self.rename_column(column)
        if roll < 0.9:
            self.rows += 1
            value = self.value(self.columns[column])
            return (
                f"MERGE INTO t USING (SELECT {self.rng.randint(1, self.rows)} AS id, {value} AS v) s ON t.id = s.id "
                f"WHEN MATCHED THEN UPDATE SET {column} = s.v "
                f"WHEN NOT MATCHED THEN INSERT (id, {column}) VALUES (s.id + 1000, s.v)"
            )
        if roll < 0.93:
            return f"INSERT INTO t SELECT * FROM t WHERE id < {self.rng.randint(1, 4)}"
        if roll < 0.95:
            return "CREATE OR REPLACE TABLE t AS SELECT * FROM t WHERE id % 2 = 0"
        return self.expression_update(column)

    def filtered_change(self) -> str:
        """A delete or update whose condition compares a numeric column with decimal literals or another numeric
        column, or an update by arithmetic with one or by a ``COALESCE``/``CASE`` of two columns (a FLOAT column
        compares and computes as a FLOAT with a DECIMAL or an integer in DuckDB)."""
        numeric = [name for name, kind in self.columns.items() if kind in NUMERIC and name != "id"]
        if not numeric:
            return self.insert()
        column, other = self.rng.choice(numeric), self.rng.choice(numeric)
        literal = lambda: self.rng.choice(["0.1", "0.3", "1.5", "-0.25", "2.5", "1.1", "0"])  # noqa: E731
        comparison = lambda: self.rng.choice(["=", "<>", "<", "<=", ">", ">="])  # noqa: E731
        condition = self.rng.choice(
            [
                f"{column} {comparison()} {literal()}",
                f"{column} BETWEEN {literal()} AND {literal()}",
                f"{column} IN ({literal()}, {literal()})",
                f"{column} * 2 > {literal()}",
                f"{column} {comparison()} {other}",
                f"{column} BETWEEN {other} AND {literal()}",
                f"coalesce({column}, {other}) {comparison()} {literal()}",
            ]
        )
        if self.rng.random() < 0.5:
            return f"DELETE FROM t WHERE {condition}"
        value = self.rng.choice(
            [
                f"{column} {self.rng.choice(['+', '-', '*', '/'])} {literal()}",
                f"coalesce({other}, {column})",
                f"CASE WHEN id % 2 = 0 THEN {column} ELSE {other} END",
                f"greatest({column}, {other})",
            ]
        )
        return f"UPDATE t SET {column} = {value} WHERE NOT ({condition})"

    def alter_column(self) -> str:
        """A new type (a widening, now and then one DuckDB refuses), a default, ``NOT NULL``, ``TRUNCATE``, or a
        sort order (``SET``/``RESET SORTED BY``; later drops of a sort column fail in both)."""
        if self.rng.random() < 0.15:
            return self.sort_order()
        column = self.rng.choice(list(self.columns))
        kind, roll = self.columns[column], self.rng.random()
        if roll < 0.4 and kind in RETYPES:
            new = self.rng.choice(RETYPES[kind])
            if new != RETYPES[kind][-1]:
                self.columns[column] = new
            return f"ALTER TABLE t ALTER COLUMN {column} TYPE {new}"
        if roll < 0.6 and kind in LITERALS:
            return f"ALTER TABLE t ALTER COLUMN {column} SET DEFAULT {LITERALS[kind](self.rng)}"
        if roll < 0.7:
            return f"ALTER TABLE t ALTER COLUMN {column} DROP DEFAULT"
        if roll < 0.82:
            return f"ALTER TABLE t ALTER COLUMN {column} SET NOT NULL"
        if roll < 0.94:
            return f"ALTER TABLE t ALTER COLUMN {column} DROP NOT NULL"
        return "TRUNCATE t"

    def sort_order(self) -> str:
        if self.rng.random() < 0.25:
            return "ALTER TABLE t RESET SORTED BY"
        keys = self.rng.sample(list(self.columns), k=min(len(self.columns), self.rng.randint(1, 2)))
        order = [f"{key}{self.rng.choice(['', ' DESC', ' ASC NULLS FIRST', ' DESC NULLS LAST'])}" for key in keys]
        return f"ALTER TABLE t SET SORTED BY ({', '.join(order)})"

    def add_column(self) -> str:
        name, kind = f"a{self.rng.randint(0, 99)}", self.rng.choice(self.types)
        if name in self.columns:
            return self.insert()
        self.columns[name] = kind
        default = f" DEFAULT {self.value(kind)}" if self.rng.random() < 0.5 else ""
        return f"ALTER TABLE t ADD COLUMN {name} {kind}{default}"

    def rename_column(self, column: str) -> str:
        new = f"r{self.rng.randint(0, 99)}"
        if new in self.columns:
            return self.insert()
        self.columns = {(new if name == column else name): kind for name, kind in self.columns.items()}
        return f"ALTER TABLE t RENAME COLUMN {column} TO {new}"

    def expression_update(self, column: str) -> str:
        kind = self.columns[column]
        if self.rng.random() < 0.1:
            return "INSERT INTO t (id) VALUES ('not a number')"  # fails on both: the script must leave nothing
        family = "numeric" if kind in NUMERIC else "TIMESTAMP" if kind == "TIMESTAMPTZ" else kind
        if family not in EXPRESSIONS:
            return f"DELETE FROM t WHERE {column} IS NULL AND id % 2 = 1"
        expression = self.rng.choice(EXPRESSIONS[family]).format(c=column)
        return f"UPDATE t SET {column} = {expression} WHERE {column} IS NOT NULL AND id % 2 = 0"


def table_contents(con: Any, alias: str) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]] | str:
    """Table ``t``'s columns (name, type, nullable, default) and its sorted rows, or why it cannot be read."""
    try:
        relation = con.sql(f"SELECT * FROM {alias}.t")
        rows = relation.order(", ".join(f'"{c}"' for c in relation.columns)).to_arrow_table().to_pylist()
        described = con.sql(f'SELECT column_name, column_type, "null", "default" FROM (DESCRIBE {alias}.t)')
        return [tuple(str(v) for v in row) for row in described.fetchall()], to_json_safe(rows)
    except Exception as exc:  # a missing table is an answer to compare too
        return f"unreadable: {str(exc)[:100]}"


def file_layout(setup: Any) -> set[tuple[str, tuple[str | None, ...]]] | str:
    """Each live data file of table ``t`` as (its hive directory, its partition values), or why there is none."""
    with setup.store.connection() as conn:
        tables = conn.query(
            "SELECT table_id FROM {M}ducklake_table WHERE table_name = 't' AND end_snapshot IS NULL", ()
        )
        if not tables:
            return "no table t"
        found = conn.query(
            "SELECT data_file_id, path FROM {M}ducklake_data_file WHERE table_id = ? AND end_snapshot IS NULL",
            (tables[0][0],),
        )
        values = conn.query(
            "SELECT data_file_id, partition_value FROM {M}ducklake_file_partition_value WHERE table_id = ? "
            "ORDER BY data_file_id, partition_key_index",
            (tables[0][0],),
        )
    by_file: dict[int, list[str | None]] = {}
    for file_id, value in values:
        by_file.setdefault(int(file_id), []).append(value)
    return {
        (path.rsplit("/", 1)[0] if "/" in path else "", tuple(by_file.get(int(file_id), []))) for file_id, path in found
    }


def compare(
    spark: Any,
    seed: int,
    types: list[str],
    autocommit: bool = False,
    alter_columns: bool = False,
    filters: bool = False,
    partitions: bool = False,
    mixed_values: bool = False,
) -> str | None:
    """The difference seed ``seed`` shows, or None. With ``autocommit``, each statement commits on its own on
    both sides, and a failing one ends the script keeping what ran before it. With ``partitions``, DuckDB writes
    every insert to files and the two tables' files must sit in the same partitions (with a ``HUGEINT`` column too).
    """
    maker = ScriptMaker(
        random.Random(seed),
        types,
        alter_columns=alter_columns,
        filters=filters,
        partitions=partitions,
        mixed_values=mixed_values,
    )
    statements = maker.script()
    parts = [statements[:1], statements[1:]] if seed % 2 == 0 else [statements]
    if autocommit:
        parts = [statements]
    with tempfile.TemporaryDirectory() as folder:
        ours, theirs = (referee.sqlite_lake(Path(folder, side)) for side in ("ours", "theirs"))
        Path(folder, "ours").mkdir()
        Path(folder, "theirs").mkdir()
        con = referee.connect()
        # files, as the Spark engine writes: DuckDB inlines a HUGEINT exactly, and its files hold the doubles Spark's
        # files hold (docs/ducklake.md, Known limits)
        files_only = partitions or any("HUGEINT" in statement for statement in statements)
        theirs.attach(con, "theirs", **({"DATA_INLINING_ROW_LIMIT": 0} if files_only else {}))
        con.sql("USE theirs")
        duckdb_error = None
        for part in parts:
            if not autocommit:
                con.sql("BEGIN")
            try:
                for statement in part:
                    con.sql(statement)
                if not autocommit:
                    con.sql("COMMIT")
            except Exception as exc:  # DuckDB's failure is the referee's answer
                duckdb_error = f"{type(exc).__name__}: {str(exc)[:300]}"
                try:
                    con.sql("ROLLBACK")
                except Exception:  # an autocommit statement that failed may leave no transaction to roll back
                    if not autocommit:
                        raise
                break
        con.sql("USE memory")
        our_error = None
        for part in parts:
            try:
                run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(part), autocommit=autocommit)
            except Exception as exc:  # compared with DuckDB's
                our_error = f"{type(exc).__name__}: {str(exc)[:300]}"
                break
        ours.attach(con, "ours")
        script = ";\n  ".join(statements)
        theirs_alias = "theirs"
        if duckdb_error is not None and our_error is None and not autocommit:
            # DuckDB 1.5's ducklake fails some transactions whose statements all run one by one (transaction-local
            # inlined data after a dropped column): referee with the statements one by one, and say so.
            single = referee.sqlite_lake(Path(folder, "single"))
            Path(folder, "single").mkdir()
            single.attach(con, "single")
            con.sql("USE single")
            try:
                for statement in statements:
                    con.sql(statement)
            except Exception:  # DuckDB fails the script itself: the failure stands
                return f"seed {seed}: DuckDB {duckdb_error}; Spark ran it\n  {script}"
            finally:
                con.sql("USE memory")
            theirs_alias = "single"
            print(f"seed {seed}: DuckDB failed the transaction ({duckdb_error[:80]}...), not the statements one by one")
        elif (duckdb_error is None) != (our_error is None):
            return f"seed {seed}: DuckDB {duckdb_error or 'ran it'}; Spark {our_error or 'ran it'}\n  {script}"
        theirs_table, our_table = table_contents(con, theirs_alias), table_contents(con, "ours")
        if theirs_table != our_table:
            return f"seed {seed}: tables differ\n  DuckDB {theirs_table}\n  Spark  {our_table}\n  {script}"
        if partitions and theirs_alias == "theirs":
            theirs_files, our_files = file_layout(theirs), file_layout(ours)
            if theirs_files != our_files:
                return f"seed {seed}: files differ\n  DuckDB {theirs_files}\n  Spark  {our_files}\n  {script}"
    return None


def main() -> None:
    from airflow_provider_lakehouse.spark.session import local_session

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("first_seed", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--types", default="|".join(LITERALS), help="column types, |-separated")
    parser.add_argument("--odd-types", action="store_true", help="the less common types too (other scripts)")
    parser.add_argument("--autocommit", action="store_true", help="each statement commits on its own")
    parser.add_argument("--alter-columns", action="store_true", help="ALTER COLUMN TYPE/DEFAULT/NOT NULL, TRUNCATE")
    parser.add_argument("--filters", action="store_true", help="decimal literals in conditions and arithmetic")
    parser.add_argument("--partitions", action="store_true", help="partitioned tables, their files compared too")
    parser.add_argument(
        "--mixed-values", action="store_true", help="values of other kinds than their column's: text, other types"
    )
    args = parser.parse_args()
    if args.odd_types:
        args.types = "|".join([*args.types.split("|"), *ODD_LITERALS])
    spark = local_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    types = args.types.split("|")
    modes = (args.autocommit, args.alter_columns, args.filters, args.partitions, args.mixed_values)
    run_seeds(args.first_seed, args.count, lambda seed: compare(spark, seed, types, *modes))


if __name__ == "__main__":
    main()

"""Random DuckDB-dialect expressions on Spark against DuckDB 1.5: the values (or failures) that differ.

    python -m tests.fuzz.expressions_against_duckdb 1 200     # expressions from seeds 1..200

One lake table of typed columns with edge values (zeros, negatives, NULLs, empty and non-ASCII text, month ends)
is written by DuckDB; each seed builds one random expression over its columns and runs
``SELECT id, <expression> AS r FROM vals ORDER BY id`` (or a grouped aggregate) as a lake task on local Spark and
in DuckDB over the same lake. A seed is reported when one side fails and the other does not, or when the values
differ. Not part of the test suite: what it finds is kept as tests (``tests/integration/test_duckdb_semantics.py``).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import traceback
from decimal import Decimal
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_duckdb_semantics import same
from tests.integration.test_spark_sql import spec_of

TABLE = """
CREATE TABLE vals (id INTEGER, i INTEGER, b BIGINT, d DOUBLE, m DECIMAL(10,2), s VARCHAR, o BOOLEAN, dt DATE,
                   ts TIMESTAMP, l INTEGER[]);
INSERT INTO vals VALUES
 (1, 7, 10000000000, 2.5, 12.35, 'Hello', true, DATE '2024-01-31', TIMESTAMP '2024-01-31 23:59:59.5', [1, 2, 3]),
 (2, -7, -3, -2.5, -0.05, 'héllo wörld', false, DATE '2024-02-29', TIMESTAMP '2024-02-29 00:00:00', []),
 (3, 0, 0, 0.0, 0.00, '', NULL, DATE '1999-12-31', TIMESTAMP '1970-01-01 00:00:01', [NULL, 5]),
 (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, 2147483647, 9223372036854775807, 1e300, 99999999.99, '  padded  ', true, DATE '2100-03-01',
  TIMESTAMP '2038-01-19 03:14:07', [7]),
 (6, 3, 3, 0.1, 1.50, 'a,b,,c', false, DATE '2024-12-31', TIMESTAMP '2024-07-04 12:30:45.123456', [3, 2, 1]),
 (7, -1, 1, -0.0, -1.00, 'ABC abc', true, DATE '2023-03-15', TIMESTAMP '2023-03-15 06:07:08', [NULL])
"""

COLUMNS = {
    "i": "int",
    "b": "int",
    "d": "num",
    "m": "num",
    "s": "str",
    "o": "bool",
    "dt": "date",
    "ts": "ts",
    "l": "list",
}

INT_LITERALS = ["0", "1", "2", "-1", "3", "10", "100"]
#: with ``--narrow``: integer columns of DuckDB's narrow and unsigned types, each at its type's edges in some row,
#: drawn as integer operands (``t + 100`` overflows a TINYINT in DuckDB), and literals near those edges
NARROW_TABLE = """
ALTER TABLE vals ADD COLUMN t TINYINT;
ALTER TABLE vals ADD COLUMN sm SMALLINT;
ALTER TABLE vals ADD COLUMN u8 UTINYINT;
ALTER TABLE vals ADD COLUMN u16 USMALLINT;
ALTER TABLE vals ADD COLUMN u32 UINTEGER;
UPDATE vals SET t = [7, -7, 0, NULL, 127, 100, -128][id], sm = [7, -7, 0, NULL, 32767, -32768, 300][id],
  u8 = [7, 0, 1, NULL, 255, 200, 128][id], u16 = [7, 0, 1, NULL, 65535, 40000, 256][id],
  u32 = [7, 0, 1, NULL, 4294967295, 3000000000, 65536][id]
"""
NARROW_COLUMNS = {"t": "int", "sm": "int", "u8": "int", "u16": "int", "u32": "int"}
NARROW_LITERALS = ["127", "-128", "128", "255", "256", "32767", "-100", "200"]
STR_LITERALS = ["'a'", "''", "'é'", "'Hello'", "','", "'%l%'", "' '", "'abc'"]


class Expressions:
    """A random expression of a wanted kind, ``depth`` levels deep at most."""

    def __init__(self, rng: random.Random, more: bool = False, narrow: bool = False) -> None:
        self.rng = rng
        self.more = more
        self.columns = {**COLUMNS, **NARROW_COLUMNS} if narrow else COLUMNS
        self.int_literals = [*INT_LITERALS, *NARROW_LITERALS] if narrow else INT_LITERALS

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    def later(self, kind: str, depth: int) -> list[str]:
        """Options added after the first vocabulary, drawn only with ``--more`` (so that the seeds of a run
        without it keep their expressions)."""
        if not self.more:
            return []
        a, b = self.of("num", depth), self.of("num", depth)
        n, k = self.of("int", depth), self.of("int", depth)
        s, t = self.of("str", depth), self.of("str", depth)
        numbers = self.pick([f"[{a}, {b}]", f"[{a}, NULL, {b}]", f"[{a}]", "[]", "[1.5, 2.25, -0.5]", "[m, m]", "[d]"])
        return {
            "int": [f"list_sum([{n}, {k}])", f"list_aggregate([{n}, {k}, NULL], 'count')", f"list_first([{n}, {k}])"],
            "num": [
                f"list_sum({numbers})",
                f"list_avg({numbers})",
                f"list_product({numbers})",
                f"list_aggregate({numbers}, 'avg')",
                f"list_aggregate({numbers}, 'sum')",
                f"list_min({numbers})",
                f"list_max({numbers})",
                f"list_last({numbers})",
                f"list_any_value({numbers})",
            ],
            "str": [
                f"substring({s}, {n}, {k})",
                f"substr({s}, {n})",
                f"list_string_agg([{s}, {t}])",
                f"list_aggregate([{s}, NULL, {t}], 'string_agg', '-')",
                f"array_to_string([{s}, {t}], '')",
            ],
            "bool": [f"list_bool_and([{self.of('bool', depth)}, {self.of('bool', depth)}])"],
            "list": [f"[{n}, {k}]", "list_sort([])", f"list_concat([], [{n}])"],
        }.get(kind, [])

    def column(self, kind: str) -> str | None:
        names = [name for name, k in self.columns.items() if k == kind or (kind == "num" and k == "int")]
        return self.rng.choice(names) if names else None

    def of(self, kind: str, depth: int = 2) -> str:
        if depth <= 0 or self.rng.random() < 0.35:
            return self.leaf(kind)
        return getattr(self, kind)(depth - 1)

    def leaf(self, kind: str) -> str:
        column = self.column(kind)
        if column and self.rng.random() < 0.75:
            return column
        return {
            "int": lambda: self.pick(self.int_literals),
            "num": lambda: self.pick([*self.int_literals, "2.5", "-0.5", "1e3", "0.1"]),
            "str": lambda: self.pick(STR_LITERALS),
            "bool": lambda: self.pick(["true", "false", "NULL"]),
            "date": lambda: self.pick(["DATE '2024-02-29'", "DATE '2000-01-01'"]),
            "ts": lambda: "TIMESTAMP '2024-03-10 02:30:00'",
            "list": lambda: self.pick(["[1, 2]", "[]"]),
        }[kind]()

    def int(self, depth: int) -> str:
        a, b = self.of("int", depth), self.of("int", depth)
        s, dt, ts, lst = self.of("str", depth), self.of("date", depth), self.of("ts", depth), self.of("list", depth)
        return self.pick(
            [
                f"({a} + {b})",
                f"({a} - {b})",
                f"({a} * {b})",
                f"({a} // {b})",
                f"({a} % {b})",
                f"(-{a})",
                f"abs({a})",
                f"sign({a})",
                f"greatest({a}, {b})",
                f"least({a}, {b})",
                f"coalesce({a}, {b})",
                f"nullif({a}, {b})",
                f"length({s})",
                f"strlen({s})",
                f"strpos({s}, {self.leaf('str')})",
                f"instr({s}, {self.leaf('str')})",
                f"year({dt})",
                f"month({dt})",
                f"day({dt})",
                f"dayofweek({dt})",
                f"dayofyear({dt})",
                f"week({dt})",
                f"quarter({dt})",
                f"extract(dow FROM {dt})",
                f"extract(isodow FROM {dt})",
                f"extract(epoch FROM {ts})",
                f"hour({ts})",
                f"minute({ts})",
                f"second({ts})",
                f"date_diff('day', {dt}, DATE '2024-03-01')",
                f"date_diff('month', {dt}, DATE '2024-03-01')",
                f"datediff('year', {dt}, DATE '2024-03-01')",
                f"date_part('dow', {dt})",
                f"len({lst})",
                f"array_length({lst})",
                f"list_extract({lst}, {a})",
                f"{lst}[{a}]",
                f"CAST({self.of('num', depth)} AS BIGINT)",
                f"bit_length({s})",
                f"ascii({s})",
                f"ord({s})",
                f"CASE WHEN {self.of('bool', depth)} THEN {a} ELSE {b} END",
                f"hash({a}) IS NOT NULL::INTEGER",
                f"list_position({lst}, {a})",
                f"{a} << 2",
                f"{a} >> 1",
                f"{a} & 6",
                f"{a} | 1",
                f"xor({a}, 5)",
                f"factorial(least(abs({a}), 10))",
                f"gcd({a}, 6)",
                f"lcm({a}, 4)",
                f"even({self.of('num', depth)})",
                f"position('l' IN {s})",
                f"list_sum({lst})",
                f"list_min({lst})",
                f"list_max({lst})",
                f"list_aggregate({lst}, 'sum')",
                f"bit_count({a})",
                f"century({dt})",
                f"yearweek({dt})",
                f"epoch_ms({ts})",
                f"array_length({lst}, 1)",
                f"length(string_split({s}, ','))",
                f"list_count({lst})",
                f"list_unique({lst})",
                f"datesub('month', {dt}, DATE '2024-03-31')",
                f"date_sub('day', {dt}, DATE '2024-03-31')",
                *self.later("int", depth),
            ]
        )

    def num(self, depth: int) -> str:
        a, b = self.of("num", depth), self.of("num", depth)
        return self.pick(
            [
                f"({a} + {b})",
                f"({a} * {b})",
                f"({a} / {b})",
                f"({a} % {b})",
                f"round({a})",
                f"round({a}, 1)",
                f"round({a}, -1)",
                f"floor({a})",
                f"ceil({a})",
                f"trunc({a})",
                f"sqrt(abs({a}))",
                f"ln(abs({a}) + 1)",
                f"log10(abs({a}) + 1)",
                f"log2(abs({a}) + 1)",
                f"exp(least({a}, 5))",
                f"power({a}, 2)",
                f"pow({a}, 0.5)",
                f"cbrt({a})",
                f"radians({a})",
                f"degrees({a})",
                f"sin({a})",
                f"atan2({a}, {b})",
                f"CAST({a} AS DOUBLE)",
                f"CAST({a} AS DECIMAL(12,3))",
                f"CAST({a} AS FLOAT)",
                f"TRY_CAST({a} AS INTEGER)",
                f"greatest({a}, {b})",
                f"avg_if_null({a})",
                f"isnan({a})::INTEGER",
                f"isinf({a})::INTEGER",
                f"{a}::VARCHAR::DOUBLE",
                f"round_even({a}, 0)",
                f"sqrt({a})",
                f"ln({a})",
                f"log({a})",
                f"{a} ** 2",
                *self.later("num", depth),
            ]
        ).replace(f"avg_if_null({a})", f"coalesce({a}, 0)")

    def str(self, depth: int) -> str:
        s, t = self.of("str", depth), self.of("str", depth)
        n, k = self.of("int", depth), self.pick(["1", "2", "0", "-2", "3"])
        return self.pick(
            [
                f"upper({s})",
                f"lower({s})",
                f"({s} || {t})",
                f"concat({s}, {t})",
                f"concat_ws('-', {s}, {t})",
                f"substr({s}, {k})",
                f"substr({s}, {k}, 2)",
                f"substring({s}, {k}, {k})",
                f"left({s}, {k})",
                f"right({s}, {k})",
                f"trim({s})",
                f"ltrim({s})",
                f"rtrim({s})",
                f"trim({s}, 'ao')",
                f"replace({s}, 'l', 'L')",
                f"reverse({s})",
                f"lpad({s}, 8, '*')",
                f"rpad({s}, {k}, 'xy')",
                f"repeat({s}, 2)",
                f"split_part({s}, ',', {k})",
                f"regexp_replace({s}, '[aeiou]', '_')",
                f"regexp_replace({s}, 'l', '', 'g')",
                f"regexp_extract({s}, '([a-z]+)', 1)",
                f"CAST({self.of('num', depth)} AS VARCHAR)",
                f"CAST({self.of('int', depth)} AS VARCHAR)",
                f"CAST({self.of('date', depth)} AS VARCHAR)",
                f"CAST({self.of('ts', depth)} AS VARCHAR)",
                f"CAST({self.of('bool', depth)} AS VARCHAR)",
                f"strftime({self.of('date', depth)}, '%Y/%m/%d %a')",
                f"strftime({self.of('ts', depth)}, '%d.%m.%Y %H:%M:%S')",
                f"dayname({self.of('date', depth)})",
                f"monthname({self.of('date', depth)})",
                f"coalesce({s}, 'none')",
                f"initcap({s})",
                f"md5({s})",
                f"format('{{}}-{{}}', {s}, {n})",
                f"printf('%05d', {n})",
                f"chr(65 + abs({n}) % 26)",
                f"translate({s}, 'lo', '01')",
                f"string_split({s}, ',')[1]",
                f"array_to_string([{s}, {t}], '+')",
                f"CASE WHEN {s} LIKE '%l%' THEN 'y' ELSE 'n' END",
                f"{s}[2]",
                f"{s}[1:2]",
                f"CAST({self.of('list', depth)} AS VARCHAR)",
                "CAST(3.0 AS VARCHAR)",
                f"CAST({self.of('num', depth)} * 1.5 AS VARCHAR)",
                f"concat({s}, NULL, 'x')",
                f"left({s}, -2)",
                f"right({s}, -2)",
                f"substr({s}, 0, 2)",
                f"substr({s}, -3)",
                f"repeat({s}, -1)",
                f"trim({s}, 'Hc')",
                f"array_to_string(string_split({s}, ','), '|')",
                f"regexp_extract({s}, '([a-z])([a-z])', 2)",
                f"string_split({s}, ',')[2]",
                f"upper('ß' || {s})",
                f"strftime({self.of('ts', depth)}, '%j %U %w %p %I %y %b %B %A')",
                f"strftime({self.of('date', depth)}, 'Day %-j, week %W (ISO %G-W%V-%u) %x')",
                f"strftime('%c.%g %%', {self.of('ts', depth)})",
                "CAST(o AS VARCHAR)",
                "CAST(m AS VARCHAR)",
                "CAST(l AS VARCHAR)",
                f"CAST({self.of('num', depth)} AS DECIMAL(6, 1))::VARCHAR",
                f"regexp_replace({s}, '(l+)', '[\\1]', 'g')",
                f"lpad({s}, 3, 'ab')",
                "to_json(l)",
                f"list_string_agg(string_split({s}, ','))",
                *self.later("str", depth),
            ]
        )

    def bool(self, depth: int) -> str:
        a, b = self.of("num", depth), self.of("num", depth)
        s = self.of("str", depth)
        return self.pick(
            [
                f"({a} = {b})",
                f"({a} < {b})",
                f"({a} <> {b})",
                f"({a} BETWEEN 0 AND {b})",
                f"({a} IN (0, 1, 7))",
                f"({a} IS DISTINCT FROM {b})",
                f"({s} LIKE '%l%')",
                f"({s} ILIKE 'h%')",
                f"({s} NOT LIKE '_b%')",
                f"starts_with({s}, 'H')",
                f"contains({s}, 'l')",
                f"ends_with({s}, 'c')",
                f"({s} SIMILAR TO '.*b.*')",
                f"regexp_matches({s}, '^[A-Z]')",
                f"({self.of('bool', depth)} AND {self.of('bool', depth)})",
                f"({self.of('bool', depth)} OR NOT {self.of('bool', depth)})",
                f"({s} GLOB 'a*')",
                f"list_contains({self.of('list', depth)}, 2)",
                f"({a} IS NULL)",
                f"({s} = '')",
                f"({self.of('date', depth)} > DATE '2024-01-01')",
                f"({s} < {self.of('str', depth)})",
                *self.later("bool", depth),
            ]
        )

    def date(self, depth: int) -> str:
        d = self.of("date", depth)
        n = self.of("int", depth)
        return self.pick(
            [
                f"({d} + 1)",
                f"({d} - 30)",
                f"({d} + INTERVAL 1 MONTH)::DATE",
                f"date_trunc('month', {d})",
                f"date_trunc('week', {d})",
                f"date_trunc('quarter', {d})",
                f"last_day({d})",
                f"make_date(2024, 2, least(abs({n}) + 1, 28))",
                f"date_add({d}, INTERVAL 2 DAY)",
                f"CAST({self.of('ts', depth)} AS DATE)",
                f"greatest({d}, DATE '2024-02-01')",
                f"({d} - INTERVAL 1 YEAR)::DATE",
                "CAST('2024-02-03' AS DATE)",
                f"date_trunc('year', {d})",
            ]
        )

    def ts(self, depth: int) -> str:
        t = self.of("ts", depth)
        return self.pick(
            [
                f"({t} + INTERVAL 90 MINUTE)",
                f"date_trunc('hour', {t})",
                f"date_trunc('day', {t})",
                f"({t} - INTERVAL 1 DAY)",
                f"CAST({self.of('date', depth)} AS TIMESTAMP)",
                "make_timestamp(2024, 1, 2, 3, 4, 5.5)",
                f"({t} + INTERVAL 1 MONTH)",
                "epoch_ms(1700000000000)",
                "to_timestamp(1700000000)::TIMESTAMP",
                f"date_trunc('minute', {t})",
            ]
        )

    def list(self, depth: int) -> str:
        lst = self.of("list", depth)
        return self.pick(
            [
                f"list_sort({lst})",
                f"list_reverse({lst})",
                f"list_distinct({lst})",
                f"list_concat({lst}, [9])",
                f"{lst}[1:2]",
                f"list_append({lst}, 4)",
                f"list_prepend(0, {lst})",
                f"list_slice({lst}, 2, 3)",
                f"array_sort({lst})",
                f"list_reverse_sort({lst})",
                f"flatten([{lst}, [8]])",
                f"list_transform({lst}, x -> x + 1)",
                f"list_filter({lst}, x -> x > 1)",
                *self.later("list", depth),
            ]
        )

    def aggregate(self) -> str:
        column = self.pick(["i", "b", "d", "m", "s", "dt", "o"])
        numeric = self.pick(["i", "b", "d", "m"])
        return self.pick(
            [
                f"count({column})",
                f"count(DISTINCT {column})",
                f"min({column})",
                f"max({column})",
                f"sum({numeric})",
                f"avg({numeric})",
                f"stddev({numeric})",
                f"var_samp({numeric})",
                f"median({numeric})",
                "string_agg(s, '|' ORDER BY s)",
                "bool_and(o)",
                "bool_or(o)",
                f"count(*) FILTER (WHERE {numeric} > 0)",
                f"sum({numeric}) FILTER (WHERE o)",
                f"arg_max(id, {numeric})",
                f"first({column} ORDER BY id)",
                f"list({column} ORDER BY id)",
                f"quantile_cont({numeric}, 0.5)",
                f"approx_count_distinct({column})",
                f"mode({column})",
                "product(least(abs(i), 3))",
            ]
        )


WINDOWS = [
    "row_number() OVER (ORDER BY {c}, id)",
    "rank() OVER (ORDER BY {c})",
    "dense_rank() OVER (ORDER BY {c})",
    "lag({c}) OVER (ORDER BY id)",
    "lead({c}, 2, {c}) OVER (ORDER BY id)",
    "first_value({c}) OVER (ORDER BY {c})",
    "last_value({c}) OVER (ORDER BY id)",
    "sum(i) OVER (ORDER BY {c})",
    "count({c}) OVER ()",
    "sum(i) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
    "ntile(3) OVER (ORDER BY id)",
    "percent_rank() OVER (ORDER BY {c})",
    "cume_dist() OVER (ORDER BY {c})",
    "nth_value({c}, 2) OVER (ORDER BY id)",
    "avg(d) OVER (PARTITION BY o ORDER BY id)",
    "min({c}) OVER (PARTITION BY o)",
]


def query(rng: random.Random, more: bool = False, narrow: bool = False) -> str:
    expressions = Expressions(rng, more, narrow)
    if rng.random() < 0.12:
        window = rng.choice(WINDOWS).format(c=rng.choice(["i", "d", "s", "dt", "m", "o"]))
        return f"SELECT id, {window} AS r FROM vals ORDER BY id"
    if rng.random() < 0.2:
        key = rng.choice(["o", "id % 2", "dt IS NULL"])
        return f"SELECT {key} AS k, {expressions.aggregate()} AS r FROM vals GROUP BY ALL ORDER BY k NULLS FIRST"
    kind = rng.choice(["int", "num", "str", "bool", "date", "ts", "list", "str", "num", "int"])
    return f"SELECT id, {expressions.of(kind, 3)} AS r FROM vals ORDER BY id"


def ours(spark: Any, lake: referee.LakeSetup, sql: str) -> list[Any] | str:
    try:
        response = PlanRunner(spark, spec_of(lake)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}"))
    except StatementError as exc:
        return f"error: {str(exc)[:300]}"
    return [r["r"] for r in response["result"]["commands"][-1].get("rows", [])]


def duckdb(con: Any, sql: str) -> list[Any] | str:
    try:
        return to_json_safe([row[-1] for row in con.sql(sql).fetchall()])
    except Exception as exc:  # DuckDB's failure is the referee's answer
        return f"error: {str(exc)[:300]}"


def agree(theirs: list[Any] | str, our: list[Any] | str) -> bool:
    if isinstance(theirs, str) or isinstance(our, str):
        return (
            isinstance(theirs, str) and isinstance(our, str) and theirs.startswith("error") == our.startswith("error")
        )
    return len(theirs) == len(our) and all(map(agree_value, theirs, our))


def agree_value(theirs: Any, our: Any) -> bool:
    numbers = (int, float, Decimal)
    if isinstance(theirs, bool) or isinstance(our, bool) or not isinstance(theirs, numbers):
        return type(theirs) is type(our) and theirs == our
    return isinstance(our, numbers) and same([theirs], [our])


def stored_types_differ(spark: Any, con: Any, lake: referee.LakeSetup, seed: int, sql: str) -> str | None:
    """The column types of ``CREATE TABLE ... AS <sql>`` on both sides, when they differ (and both ran)."""
    select = sql.split(" ORDER BY ")[0]
    try:
        con.sql(f"CREATE TABLE d{seed} AS {select}")
    except Exception:  # the value comparison covers failures
        return None
    if isinstance(ours(spark, lake, f"CREATE TABLE s{seed} AS {select}"), str):
        return None
    con.sql("USE memory")
    con.sql("DETACH lake")
    lake.attach(con)
    con.sql("USE lake")
    types = [con.sql(f"SELECT column_type FROM (DESCRIBE {name})").fetchall() for name in (f"d{seed}", f"s{seed}")]
    return None if types[0] == types[1] else f"seed {seed}: {select}\n  DuckDB {types[0]}\n  Spark  {types[1]}"


def main() -> None:
    from airflow_provider_lakehouse.spark.session import local_session

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("first_seed", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--types", action="store_true", help="compare the column types CREATE TABLE AS stores")
    parser.add_argument("--more", action="store_true", help="draw the later vocabulary too (typed lists, substring)")
    parser.add_argument("--narrow", action="store_true", help="TINYINT, SMALLINT and unsigned columns too")
    args = parser.parse_args()
    spark = local_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    differences = 0
    with tempfile.TemporaryDirectory() as folder:
        lake = referee.sqlite_lake(Path(folder))
        con = referee.connect()
        lake.attach(con)
        con.sql("USE lake")
        for statement in (TABLE + (";" + NARROW_TABLE if args.narrow else "")).strip().split(";\n"):
            con.sql(statement)
        for seed in range(args.first_seed, args.first_seed + args.count):
            sql = query(random.Random(seed), args.more, args.narrow)
            try:
                if args.types:
                    difference = stored_types_differ(spark, con, lake, seed, sql)
                else:
                    theirs, our = duckdb(con, sql), ours(spark, lake, sql)
                    ok = agree(theirs, our)
                    difference = None if ok else f"seed {seed}: {sql}\n  DuckDB {theirs}\n  Spark  {our}"
            except Exception:  # a harness failure is reported with its seed, and the run goes on
                difference = f"seed {seed}: the harness failed on {sql}\n{traceback.format_exc()[-1500:]}"
            differences += difference is not None
            print(difference or f"seed {seed}: same", flush=True)
    print(f"{differences} of {args.count} seeds differ")


if __name__ == "__main__":
    main()

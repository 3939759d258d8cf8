"""Lineage extraction speed on large analytical queries (prints a table; not a test).

    python -m tests.benchmarks.bench_lineage [--repeat 5]

The 99 TPC-DS queries of DuckDB's ``tpcds`` extension (loaded offline from its wheel, as ``tests.referee``
loads extensions), each one statement, timed with ``time.perf_counter``: one warm-up pass, then ``--repeat``
passes, best time per query. Reported per variant: median / p95 / max milliseconds per statement,
statements per second (queries / sum of the best times) and the number of queries that yielded errors
(or raised: the caller got no lineage at all).

Variants:
- ours, with the table schemas known (``schemas`` from DuckDB's ``information_schema`` after
  ``CALL dsdgen(sf=0)``, which creates the 24 empty tables) and without;
- each of those on the query as is (a SELECT: reads and column references only) and wrapped in
  ``CREATE TABLE bench.qNN AS ...`` (so column lineage of every output column is computed too);
- ``openlineage_sql.parse`` on the same statements, alone and with Airflow's ``sqlparse`` split in front
  (what ``SQLParser`` does before calling it).
Every pass sends a new text (a trailing comment), so no result cache can answer; one extra row shows our
memoised path (the same text again, no ``schemas``).
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tests.referee import extension_dir


def say(text: str = "") -> None:
    """Print to the real stdout (Airflow's logging setup may replace ``sys.stdout``)."""
    sys.__stdout__.write(text + "\n")
    sys.__stdout__.flush()


def tpcds() -> tuple[list[tuple[int, str]], dict[str, list[str]]]:
    """The 99 queries and the schemas (``main.<table>`` -> columns in order) of an empty TPC-DS database."""
    from airflow_provider_lakehouse.duckdb_engine.extensions import offline_connection

    con = offline_connection(extension_dir(), ["tpcds"], load=True)
    try:
        con.sql("CALL dsdgen(sf=0)")
        rows = con.sql("SELECT query_nr, query FROM tpcds_queries() ORDER BY 1").fetchall()
        queries = [(int(n), str(q)) for n, q in rows]
        schemas: dict[str, list[str]] = {}
        for table, column in con.sql(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
        ).fetchall():
            schemas.setdefault(f"main.{table}", []).append(column)
    finally:
        con.close()
    if len(queries) != 99 or len(schemas) != 24:
        raise RuntimeError(f"unexpected TPC-DS setup: {len(queries)} queries, {len(schemas)} tables")
    return queries, schemas


def as_ctas(nr: int, query: str) -> str:
    return f"CREATE TABLE bench.q{nr:02d} AS\n{query.strip().rstrip(';')}"


@dataclass
class Result:
    name: str
    best_ms: list[float]
    with_errors: int
    raised: int

    def row(self) -> str:
        ms = sorted(self.best_ms)
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        per_s = len(ms) / (sum(ms) / 1000)
        errors = f"{self.with_errors}" + (f" ({self.raised} raised)" if self.raised else "")
        return f"| {self.name} | {statistics.median(ms):.2f} | {p95:.2f} | {ms[-1]:.2f} | {per_s:,.0f} | {errors} |"


def _errors(fn: Callable[[str], int], statement: str) -> tuple[int, bool]:
    """(errors reported, whether ``fn`` raised); a raise counts as one error."""
    try:
        return fn(statement), False
    except Exception:
        return 1, True


def measure(name: str, fn: Callable[[str], int], statements: Sequence[str], repeat: int, fresh: bool = True) -> Result:
    """Warm up once, then best of ``repeat`` per statement; ``fn`` returns its number of errors.

    ``fresh``: every pass gets a new text (a trailing comment naming the pass), so a result cache keyed on
    the text (ours memoises calls without ``schemas``) cannot answer; the extraction itself is timed.
    A statement on which ``fn`` raises is timed up to the raise (that is the work the caller pays for).
    """

    def text(s: str, k: int) -> str:
        return f"{s}\n-- bench pass {k}" if fresh else s

    outcomes = [_errors(fn, text(s, 0)) for s in statements]  # warm-up (imports, caches) and the error count
    best = [float("inf")] * len(statements)
    for k in range(1, repeat + 1):
        for i, s in enumerate(statements):
            sql = text(s, k)
            start = time.perf_counter()
            _errors(fn, sql)
            best[i] = min(best[i], (time.perf_counter() - start) * 1000)
    return Result(name, best, sum(1 for e, _ in outcomes if e), sum(1 for _, r in outcomes if r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="timed passes (best of N per query)")
    args = parser.parse_args()
    logging.getLogger("sqlglot").setLevel(logging.ERROR)

    import openlineage_sql
    import sqlglot

    from airflow_provider_lakehouse.lineage import extract_lineage
    from tests.benchmarks.lineage_report import split_like_airflow

    queries, schemas = tpcds()
    selects = [q for _, q in queries]
    ctas = [as_ctas(n, q) for n, q in queries]

    def ours(known: Mapping[str, Sequence[str]] | None) -> Callable[[str], int]:
        def run(sql: str) -> int:
            return len(extract_lineage(sql, dialect="duckdb", schemas=known).errors)

        return run

    def ol(split: bool) -> Callable[[str], int]:
        def run(sql: str) -> int:
            statements = split_like_airflow(sql) if split else [sql]
            return len(openlineage_sql.parse(statements, "duckdb", "main").errors)

        return run

    results: list[Result] = []
    for label, statements in (("SELECT", selects), ("CTAS", ctas)):
        results.append(measure(f"ours, schemas known, {label}", ours(schemas), statements, args.repeat))
        results.append(measure(f"ours, no schemas, {label}", ours(None), statements, args.repeat))
        results.append(measure(f"openlineage_sql.parse, {label}", ol(False), statements, args.repeat))
        results.append(measure(f"sqlparse split + openlineage_sql.parse, {label}", ol(True), statements, args.repeat))
    # The same text again: what a caller re-parsing one script pays (ours memoises calls without schemas).
    results.append(
        measure("ours, no schemas, CTAS, same text again (memoised)", ours(None), ctas, args.repeat, fresh=False)
    )

    sizes = sorted(len(q) for q in selects)
    say(
        f"\nLineage extraction on the 99 TPC-DS queries (DuckDB tpcds extension; one statement each, "
        f"{statistics.median(sizes):,.0f} chars median, {sizes[-1]:,} max); best of {args.repeat} after a warm-up."
    )
    say(
        f"Machine: {os.cpu_count()} CPUs ({platform.machine()}, {platform.processor() or 'unknown CPU'}), "
        f"{platform.system()} {platform.release()}; Python {platform.python_version()}, sqlglot "
        f"{sqlglot.__version__} ({_sqlglot_build()}), openlineage_sql {_version('openlineage_sql')}. "
        f"Single-threaded.\n"
    )
    say("| variant | median ms/stmt | p95 ms/stmt | max ms/stmt | stmts/s | queries with errors |")
    say("|---|---|---|---|---|---|")
    for result in results:
        say(result.row())

    # What the timed calls produced (CTAS variant), so speed can be read against output.
    say("\nOutput on the 99 CTAS statements (totals):\n")
    say(
        "| variant | tables read | written columns with an edge | column edges (direct + indirect) | dataset-wide edges |"
    )
    say("|---|---|---|---|---|")
    for label, known in (("ours, schemas known", schemas), ("ours, no schemas", None)):
        read = cols = edges = wide = 0
        for sql in ctas:
            for d in extract_lineage(sql, dialect="duckdb", schemas=known).datasets:
                read += d.is_input
                cols += len(d.column_lineage)
                edges += sum(len(e) for e in d.column_lineage.values())
                wide += len(d.dataset_lineage)
        say(f"| {label} | {read} | {cols} | {edges} | {wide} |")
    read = cols = edges = 0
    for sql in ctas:
        meta = openlineage_sql.parse([sql], "duckdb", "main")
        read += len(meta.in_tables)
        cols += len(meta.column_lineage)
        edges += sum(len(c.lineage) for c in meta.column_lineage)
    say(f"| openlineage_sql.parse | {read} | {cols} | {edges} (untyped) | n/a |")


def _sqlglot_build() -> str:
    """``compiled`` when sqlglotc's mypyc build of the parser is in use (the ``sqlglot[c]`` pin), else ``pure
    Python``: parsing is most of the extraction time, and the two differ about fourfold."""
    import sqlglot.parser

    return "compiled" if not str(sqlglot.parser.__file__).endswith(".py") else "pure Python"


def _version(name: str) -> str:
    from importlib.metadata import version

    try:
        return version(name)
    except Exception:
        return "?"


if __name__ == "__main__":
    main()

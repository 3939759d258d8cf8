"""The lineage corpus (``tests/lineage_corpus/*.yaml``) against ``extract_lineage``, plus robustness checks.

Expectations are hand-written from ``docs/lineage-rules.md``; a failure prints a per-dataset diff
(``- missing`` = expected but not reported, ``+ extra`` = reported but not expected).
"""

from __future__ import annotations

import pytest

from tests.lineage_corpus import DEFAULT_SCHEMA, Case, diff, load_cases, normalise

CASES = load_cases()


def _extract(case: Case):  # type: ignore[no-untyped-def]
    from airflow_provider_lakehouse.lineage import extract_lineage

    return extract_lineage(case.sql, dialect=case.dialect, default_schema=case.default_schema, schemas=case.schemas)


def test_corpus_is_well_formed() -> None:
    """Every edge's dataset is a listed, read dataset (an edge names an input, docs/lineage-rules.md) and
    every column_lineage key is a written column."""
    problems: list[str] = []
    for case in CASES:
        for key, ds in case.datasets.items():
            for column in ds.column_lineage:
                if column not in ds.columns_written:
                    problems.append(f"{case.id}: {key}: lineage for unwritten column {column}")
            edges = [e for es in ds.column_lineage.values() for e in es] + sorted(ds.dataset_lineage)
            for edge in edges:
                source = edge.split(" ")[0].rpartition(".")[0]
                if source not in case.datasets:
                    problems.append(f"{case.id}: {key}: edge {edge!r} from an unlisted dataset")
                elif case.datasets[source].access == "write":  # a self edge too: the target is then read
                    problems.append(f"{case.id}: {key}: edge {edge!r} from a dataset never read")
            if (ds.columns_written or ds.column_lineage) and ds.access == "read":
                problems.append(f"{case.id}: {key}: written columns on a read-only dataset")
            if ds.columns_read and ds.access == "write":
                problems.append(f"{case.id}: {key}: read columns on a write-only dataset")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_case(case: Case) -> None:
    lineage = _extract(case)
    problems = diff(case, normalise(lineage), len(lineage.errors))
    if problems:
        detail = "\n".join(f"    error #{e.index}: {e.message}" for e in lineage.errors)
        pytest.fail(
            f"{case.id} ({case.source}, {case.dialect}):\n"
            + "\n".join(problems)
            + (f"\n  reported errors:\n{detail}" if detail else ""),
            pytrace=False,
        )


GARBAGE = [
    "",
    "   ;;  ; -- only a comment\n",
    "SELEC * FORM t",
    "SELECT (((((( FROM",
    "INSERT INTO",
    "'unterminated string",
    '"unterminated identifier',
    "/* unterminated comment",
    "SELECT * FROM t WHERE a = $",
    "MERGE INTO t USING WHEN",
    "\x00\x01\x02 binary \xff",
    "WITH a AS (SELECT 1) , b AS ( SELECT * FROM a",
    "SELECT " + "(" * 2000 + "1" + ")" * 2000,
    "CREATE TABLE t AS " + " UNION ALL ".join(["SELECT 1"] * 500),
    "ATTACH; USE; DETACH;",
    "COPY TO 's3://x';",
    '💥 SELECT \'ünïcødé\' AS "列" FROM "表"',
]


@pytest.mark.parametrize("dialect", sorted(DEFAULT_SCHEMA))
@pytest.mark.parametrize("sql", GARBAGE, ids=[f"garbage{i}" for i in range(len(GARBAGE))])
def test_never_raises_on_garbage(sql: str, dialect: str) -> None:
    from airflow_provider_lakehouse.lineage import extract_lineage

    lineage = extract_lineage(sql, dialect=dialect)
    assert isinstance(lineage.datasets, tuple) and isinstance(lineage.errors, tuple)


@pytest.mark.parametrize("dialect", sorted(DEFAULT_SCHEMA))
def test_unparseable_statements_are_recorded(dialect: str) -> None:
    from airflow_provider_lakehouse.lineage import extract_lineage

    lineage = extract_lineage("SELEC 1; INSERT INTO; SELECT (1 + ;", dialect=dialect)
    assert len(lineage.errors) == 3
    assert all(e.message and e.statement for e in lineage.errors)
    assert len({e.index for e in lineage.errors}) == 3


def test_errors_do_not_hide_good_statements() -> None:
    from airflow_provider_lakehouse.lineage import extract_lineage

    lineage = extract_lineage("SELEC 1; INSERT INTO s.t (a) SELECT x.a FROM s.x AS x; SELECT (", dialect="postgres")
    assert len(lineage.errors) == 2
    assert {d.dataset.key for d in lineage.datasets} == {"s.t", "s.x"}

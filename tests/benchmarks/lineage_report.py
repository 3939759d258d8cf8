"""Lineage quality report (prints Markdown tables; not a test).

    python -m tests.benchmarks.lineage_report [--details]

Scores our ``extract_lineage`` and ``openlineage_sql`` (the Rust parser behind Airflow's ``SQLParser``)
against the hand-written corpus in ``tests/lineage_corpus``. Three fact sets per case, micro-averaged
(true/false positives and false negatives summed over cases) into precision / recall / F1, overall and
per construct tag:

(a) tables: ``(dataset key, role)`` with role ``read`` or ``write``; ``read_write`` counts as both.
(b) direct column edges, type ignored: ``(target key, target column, source key, source column)`` for
    every DIRECT edge of ``column_lineage``.
(b') the same, target column ignored: ``(target key, source key, source column)``; isolates the sources
    found from how the written column is named.
(c) typed edges: ``(target key, target column, edge)`` for every edge of ``column_lineage`` (DIRECT and
    the per-column INDIRECT ones) plus ``(target key, "*", edge)`` for ``dataset_lineage``, where ``edge``
    is ``str(InputColumn)`` (source, type, subtype, masking).

How openlineage_sql's output is mapped onto our keys (each choice documented so the comparison is fair):

- Statements are split as Airflow does before calling the parser (``DbApiHook.split_sql_string``:
  ``sqlparse.split(sqlparse.format(sql, strip_comments=True))``; reimplemented here to avoid importing
  Airflow). Tables and errors come from one ``parse(statements, dialect, default_schema)`` call on the whole
  list, as Airflow makes it.
- Dialect: the case's (``postgres``, ``duckdb``, ``spark``); default schema: the case's effective one (its
  ``default_schema`` or the dialect default), the same we give our extractor.
- Table names: lower-cased; ``database.schema.name`` when it reports a database, else
  ``schema.name`` with the default schema filled in when it reports none. It has no notion of ATTACH, so
  ``alias.schema.table`` stays a three-part name (resolving aliases is part of what is measured).
- Files: a table whose name looks like a path (contains ``/`` or ends in a data-file extension) is the
  file dataset named by that name as written; a schema it reports in front of it (Spark's
  ``parquet.`path```) is dropped. Table functions it reports as tables (``main.read_parquet``) are kept as
  they are: it did not see the file.
- Column lineage: ``column_lineage`` has no target table; each statement is parsed on its own and its
  edges are attributed to that statement's single output table (skipped when it has none or several,
  unless the descendant names its own table). Target column names are taken as reported (it names INSERT
  targets by the SELECT's output names, ``_0`` for an unnamed expression). Sources without a table are
  dropped. Its edges carry no type, so every edge counts as DIRECT for (b) and none can match in (c).
- Errors: the number of ``ExtractionError`` it returns, shown next to ours.
- Tables changed in place: it reports the target of UPDATE / DELETE / MERGE / an upsert as an output
  only; the corpus follows our documented convention (``docs/lineage-rules.md``: an input too), so each
  such target counts as a missed read in (a). That is a difference of convention, not of parsing.
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tests.lineage_corpus import Case, ExpectedDataset, diff, load_cases, normalise, parse_edge

Fact = tuple[str, ...]
_FILE_EXT = re.compile(r"\.(parquet|csv|tsv|json|ndjson|jsonl|avro|orc|txt|gz|zst)$", re.IGNORECASE)


def say(text: str = "") -> None:
    """Print to the real stdout (Airflow's logging setup may replace ``sys.stdout``)."""
    sys.__stdout__.write(text + "\n")
    sys.__stdout__.flush()


@dataclass
class Facts:
    """The three fact sets of one case for one parser."""

    tables: set[Fact] = field(default_factory=set)
    direct: set[Fact] = field(default_factory=set)
    sources: set[Fact] = field(default_factory=set)
    typed: set[Fact] = field(default_factory=set)
    errors: int = 0
    crashed: bool = False


def facts_from_datasets(datasets: dict[str, ExpectedDataset], errors: int = 0) -> Facts:
    """Facts of the corpus's expectation or of our normalised result (same shape)."""
    facts = Facts(errors=errors)
    for key, ds in datasets.items():
        if ds.access in ("read", "read_write"):
            facts.tables.add((key, "read"))
        if ds.access in ("write", "read_write"):
            facts.tables.add((key, "write"))
        for column, edges in ds.column_lineage.items():
            for edge in edges:
                source, source_column, type_, _subtype, _masked = parse_edge(edge)
                facts.typed.add((key, column, edge))
                if type_ == "DIRECT":
                    facts.direct.add((key, column, source, source_column))
                    facts.sources.add((key, source, source_column))
        facts.typed.update((key, "*", edge) for edge in ds.dataset_lineage)
    return facts


def ours(case: Case) -> tuple[Facts, list[str]]:
    """Our extractor's facts and its diff against the case (``["crashed: ..."]`` if it raised)."""
    try:
        from airflow_provider_lakehouse.lineage import extract_lineage

        lineage = extract_lineage(
            case.sql, dialect=case.dialect, default_schema=case.default_schema, schemas=case.schemas
        )
    except Exception as exc:  # a crash scores as an empty answer; the report says so
        return Facts(crashed=True), [f"crashed: {type(exc).__name__}: {exc}"]
    got = normalise(lineage)
    return facts_from_datasets(got, len(lineage.errors)), diff(case, got, len(lineage.errors))


def split_like_airflow(sql: str) -> list[str]:
    """``DbApiHook.split_sql_string`` without importing Airflow."""
    import sqlparse

    return [s for s in sqlparse.split(sqlparse.format(sql, strip_comments=True)) if s]


def _ol_key(meta: Any, default_schema: str) -> str:
    name = (meta.name or "").strip('"`')
    if "/" in name or _FILE_EXT.search(name):
        return name  # a path reported as a table name: the file as written
    parts = [meta.database, meta.schema or default_schema, name]
    return ".".join(p.lower() for p in parts if p)


def openlineage(case: Case) -> Facts:
    """openlineage_sql's facts for a case, mapped as the module docstring says."""
    import openlineage_sql

    schema = case.effective_default_schema
    facts = Facts()
    try:  # sqlparse's split can raise too (it refuses statements of more than 10,000 tokens)
        statements = split_like_airflow(case.sql)
        meta = openlineage_sql.parse(statements, case.dialect, schema)
    except Exception:
        return Facts(crashed=True)
    facts.errors = len(meta.errors)
    facts.tables.update((_ol_key(t, schema), "read") for t in meta.in_tables)
    facts.tables.update((_ol_key(t, schema), "write") for t in meta.out_tables)
    for statement in statements:
        try:
            one = openlineage_sql.parse([statement], case.dialect, schema)
        except Exception:
            continue
        outputs = [_ol_key(t, schema) for t in one.out_tables]
        for lineage in one.column_lineage:
            target = lineage.descendant
            if target.origin is not None:
                target_key = _ol_key(target.origin, schema)
            elif len(outputs) == 1:
                target_key = outputs[0]
            else:
                continue
            for source in lineage.lineage:
                if source.origin is None:
                    continue
                source_key = _ol_key(source.origin, schema)
                facts.direct.add((target_key, target.name.lower(), source_key, source.name.lower()))
                facts.sources.add((target_key, source_key, source.name.lower()))
                # No transformation type: an untyped edge can never equal a typed one.
                facts.typed.add((target_key, target.name.lower(), f"{source_key}.{source.name.lower()} ? ?"))
    return facts


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, truth: set[Fact], predicted: set[Fact]) -> None:
        self.tp += len(truth & predicted)
        self.fp += len(predicted - truth)
        self.fn += len(truth - predicted)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


METRICS = ("tables", "direct", "sources", "typed")
LABELS = {
    "tables": "(a) tables + role",
    "direct": "(b) direct column edges",
    "sources": "(b') direct edges, target column ignored",
    "typed": "(c) typed edges",
}
TAG_METRICS = ("tables", "direct", "typed")


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def _f1(score: Score) -> str:
    """F1, or a dash when there was nothing to find and nothing was found."""
    return _fmt(score.f1) if score.tp + score.fp + score.fn else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--details", action="store_true", help="print the per-case differences")
    args = parser.parse_args()

    import logging

    import openlineage_sql
    import sqlglot

    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to Command" for CALL/LOAD: noise here
    cases = load_cases()
    overall: dict[tuple[str, str], Score] = defaultdict(Score)
    per_tag: dict[tuple[str, str, str], Score] = defaultdict(Score)
    tag_cases: dict[str, int] = defaultdict(int)
    tag_exact: dict[str, int] = defaultdict(int)
    exact = crashed = 0
    errors = {"ours": 0, "openlineage_sql": 0, "expected": 0}
    details: list[str] = []
    for case in cases:
        truth = facts_from_datasets(dict(case.datasets), case.errors)
        our_facts, our_diff = ours(case)
        ol_facts = openlineage(case)
        exact += not our_diff
        crashed += our_facts.crashed
        errors["expected"] += case.errors
        errors["ours"] += our_facts.errors
        errors["openlineage_sql"] += ol_facts.errors
        for tag in case.constructs:
            tag_cases[tag] += 1
            tag_exact[tag] += not our_diff
        for name, facts in (("ours", our_facts), ("openlineage_sql", ol_facts)):
            for metric in METRICS:
                t, p = getattr(truth, metric), getattr(facts, metric)
                overall[(name, metric)].add(t, p)
                for tag in case.constructs:
                    per_tag[(name, metric, tag)].add(t, p)
        if args.details and our_diff:
            details.append(f"### {case.id} ({case.dialect})\n```\n" + "\n".join(our_diff) + "\n```")

    say(
        f"\nLineage quality on the corpus: {len(cases)} cases "
        f"({', '.join(f'{d} {sum(c.dialect == d for c in cases)}' for d in ('postgres', 'duckdb', 'spark'))}); "
        f"Python {platform.python_version()}, sqlglot {sqlglot.__version__}, "
        f"openlineage_sql {getattr(openlineage_sql, '__version__', _dist_version('openlineage_sql'))}\n"
    )
    say(
        f"Our extractor matches {exact}/{len(cases)} cases exactly"
        f"{f' ({crashed} raised)' if crashed else ''}. Errors reported on unparseable statements: "
        f"expected {errors['expected']}, ours {errors['ours']}, openlineage_sql {errors['openlineage_sql']}.\n"
    )
    say("| measure | parser | precision | recall | F1 | TP | FP | FN |")
    say("|---|---|---|---|---|---|---|---|")
    for metric in METRICS:
        for name in ("ours", "openlineage_sql"):
            s = overall[(name, metric)]
            say(
                f"| {LABELS[metric]} | {name} | {_fmt(s.precision)} | {_fmt(s.recall)} | {_fmt(s.f1)} "
                f"| {s.tp} | {s.fp} | {s.fn} |"
            )
    say(
        "\nF1 per construct tag (ours / openlineage_sql); `exact` = cases our extractor matches exactly; "
        "– = nothing expected and nothing reported.\n"
    )
    say("| construct | cases | exact | (a) tables | (b) direct edges | (c) typed edges |")
    say("|---|---|---|---|---|---|")
    for tag in sorted(tag_cases):
        cells = [f"{_f1(per_tag[('ours', m, tag)])} / {_f1(per_tag[('openlineage_sql', m, tag)])}" for m in TAG_METRICS]
        say(f"| {tag} | {tag_cases[tag]} | {tag_exact[tag]} | " + " | ".join(cells) + " |")
    if details:
        say("\n## Cases our extractor does not match\n")
        for block in details:
            say(block + "\n")


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    main()

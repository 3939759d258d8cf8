"""The lineage corpus: hand-written SQL cases with expected lineage (see ``README.md`` here).

Shared by ``tests/unit/test_lineage_corpus.py`` and ``tests/benchmarks/lineage_report.py``: loading and
validating the YAML cases, normalising an extractor result into the same shape as an expectation, and
diffing the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CORPUS_DIR = Path(__file__).resolve().parent
DIALECTS = ("postgres", "duckdb", "spark")
DEFAULT_SCHEMA = {"postgres": "public", "duckdb": "main", "spark": "default"}
ACCESS = ("read", "write", "read_write")
LIFECYCLES = (None, "CREATE", "OVERWRITE", "DROP", "ALTER", "RENAME", "TRUNCATE")
TYPES = {
    "DIRECT": ("IDENTITY", "TRANSFORMATION", "AGGREGATION"),
    "INDIRECT": ("JOIN", "GROUP_BY", "FILTER", "SORT", "WINDOW", "CONDITIONAL"),
}
_CASE_KEYS = {"id", "dialect", "default_schema", "schemas", "constructs", "sql", "expect", "note"}
_DATASET_KEYS = {"kind", "access", "columns_read", "columns_written", "column_lineage", "dataset_lineage", "lifecycle"}


@dataclass(frozen=True)
class ExpectedDataset:
    """One dataset as the corpus spells it: plain strings and sets, easy to compare and print."""

    kind: str
    access: str
    columns_read: frozenset[str] = frozenset()
    columns_written: frozenset[str] = frozenset()
    column_lineage: Mapping[str, frozenset[str]] = field(default_factory=dict)
    dataset_lineage: frozenset[str] = frozenset()
    lifecycle: str | None = None


@dataclass(frozen=True)
class Case:
    """One corpus case."""

    id: str
    dialect: str
    sql: str
    constructs: tuple[str, ...]
    errors: int
    datasets: Mapping[str, ExpectedDataset]
    source: str
    default_schema: str | None = None
    schemas: Mapping[str, tuple[str, ...]] | None = None

    @property
    def effective_default_schema(self) -> str:
        return self.default_schema or DEFAULT_SCHEMA[self.dialect]


def parse_edge(edge: str) -> tuple[str, str, str, str, bool]:
    """``'s.x.a DIRECT IDENTITY masked'`` -> (``s.x``, ``a``, ``DIRECT``, ``IDENTITY``, True).

    The column is the text after the last dot of the first word (dataset keys may contain dots, columns
    in the corpus never do).
    """
    parts = edge.split(" ")
    if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != "masked"):
        raise ValueError(f"malformed edge {edge!r}")
    qualified, type_, subtype = parts[:3]
    dataset, _, column = qualified.rpartition(".")
    if not dataset or not column:
        raise ValueError(f"edge {edge!r} has no dataset.column")
    if subtype not in TYPES.get(type_, ()):
        raise ValueError(f"edge {edge!r}: bad type/subtype")
    return dataset, column, type_, subtype, len(parts) == 4


def _expected_dataset(case_id: str, key: str, raw: Mapping[str, Any]) -> ExpectedDataset:
    unknown = set(raw) - _DATASET_KEYS
    if unknown:
        raise ValueError(f"{case_id}: dataset {key}: unknown keys {sorted(unknown)}")
    if raw.get("access") not in ACCESS:
        raise ValueError(f"{case_id}: dataset {key}: access must be one of {ACCESS}")
    if raw.get("kind", "table") not in ("table", "file"):
        raise ValueError(f"{case_id}: dataset {key}: kind must be table or file")
    if raw.get("lifecycle") not in LIFECYCLES:
        raise ValueError(f"{case_id}: dataset {key}: bad lifecycle {raw.get('lifecycle')!r}")
    column_lineage = {str(c): frozenset(edges or ()) for c, edges in (raw.get("column_lineage") or {}).items()}
    for edges in [*column_lineage.values(), raw.get("dataset_lineage") or ()]:
        for edge in edges:
            parse_edge(edge)
    return ExpectedDataset(
        kind=raw.get("kind", "table"),
        access=raw["access"],
        # str(): YAML reads a column named 2023 (a pivoted year) as a number.
        columns_read=frozenset(str(c) for c in raw.get("columns_read") or ()),
        columns_written=frozenset(str(c) for c in raw.get("columns_written") or ()),
        column_lineage=column_lineage,
        dataset_lineage=frozenset(raw.get("dataset_lineage") or ()),
        lifecycle=raw.get("lifecycle"),
    )


def load_cases(directory: Path = CORPUS_DIR) -> list[Case]:
    """Every case of every ``*.yaml`` file in ``directory`` (sorted by file name), validated."""
    cases: list[Case] = []
    seen: set[str] = set()
    for path in sorted(directory.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text()) or []:
            case_id = raw.get("id")
            unknown = set(raw) - _CASE_KEYS
            if not case_id or unknown:
                raise ValueError(f"{path.name}: case {case_id!r}: missing id or unknown keys {sorted(unknown)}")
            if case_id in seen:
                raise ValueError(f"{path.name}: duplicate case id {case_id}")
            seen.add(case_id)
            if raw.get("dialect") not in DIALECTS:
                raise ValueError(f"{case_id}: dialect must be one of {DIALECTS}")
            expect = raw.get("expect") or {}
            schemas = raw.get("schemas")
            cases.append(
                Case(
                    id=case_id,
                    dialect=raw["dialect"],
                    sql=raw["sql"],
                    constructs=tuple(raw.get("constructs") or ()),
                    errors=int(expect.get("errors", 0)),
                    datasets={
                        str(k): _expected_dataset(case_id, str(k), v or {})
                        for k, v in (expect.get("datasets") or {}).items()
                    },
                    source=path.name,
                    default_schema=raw.get("default_schema"),
                    schemas={str(k): tuple(v) for k, v in schemas.items()} if schemas else None,
                )
            )
    return cases


def normalise(lineage: Any) -> dict[str, ExpectedDataset]:
    """An extractor :class:`~airflow_provider_lakehouse.lineage.model.Lineage` in the corpus's shape."""
    out: dict[str, ExpectedDataset] = {}
    for d in lineage.datasets:
        out[d.dataset.key] = ExpectedDataset(
            kind=d.dataset.kind,
            access=d.access,
            columns_read=frozenset(d.columns_read),
            columns_written=frozenset(d.columns_written),
            # Kept even when empty: the rules say only columns with an edge appear, so an empty entry is a diff.
            column_lineage={c: frozenset(str(e) for e in edges) for c, edges in d.column_lineage.items()},
            dataset_lineage=frozenset(str(e) for e in d.dataset_lineage),
            lifecycle=d.lifecycle,
        )
    return out


def _set_diff(label: str, expected: Iterable[str], got: Iterable[str]) -> list[str]:
    expected, got = set(expected), set(got)
    if expected == got:
        return []
    lines = [f"    {label}:"]
    lines += [f"      - missing: {x}" for x in sorted(expected - got)]
    lines += [f"      + extra:   {x}" for x in sorted(got - expected)]
    return lines


def diff(case: Case, got: Mapping[str, ExpectedDataset], errors: int) -> list[str]:
    """Readable differences between a case's expectation and a normalised result (empty when equal)."""
    lines: list[str] = []
    if errors != case.errors:
        lines.append(f"  errors: expected {case.errors}, got {errors}")
    for key in sorted(set(case.datasets) | set(got)):
        exp, act = case.datasets.get(key), got.get(key)
        if act is None:
            lines.append(f"  - missing dataset {key} ({exp.access})")  # type: ignore[union-attr]
            continue
        if exp is None:
            lines.append(
                f"  + extra dataset {key} ({act.access}, read={sorted(act.columns_read)}, "
                f"written={sorted(act.columns_written)}, lifecycle={act.lifecycle})"
            )
            continue
        sub: list[str] = []
        for attr in ("kind", "access", "lifecycle"):
            if getattr(exp, attr) != getattr(act, attr):
                sub.append(f"    {attr}: expected {getattr(exp, attr)!r}, got {getattr(act, attr)!r}")
        sub += _set_diff("columns_read", exp.columns_read, act.columns_read)
        sub += _set_diff("columns_written", exp.columns_written, act.columns_written)
        for column in sorted(set(exp.column_lineage) | set(act.column_lineage)):
            if column not in act.column_lineage:
                sub.append(f"    column_lineage[{column}]: missing entry {sorted(exp.column_lineage[column])}")
            elif column not in exp.column_lineage:
                sub.append(f"    column_lineage[{column}]: extra entry {sorted(act.column_lineage[column])}")
            else:
                sub += _set_diff(f"column_lineage[{column}]", exp.column_lineage[column], act.column_lineage[column])
        sub += _set_diff("dataset_lineage", exp.dataset_lineage, act.dataset_lineage)
        if sub:
            lines.append(f"  dataset {key}:")
            lines += sub
    return lines

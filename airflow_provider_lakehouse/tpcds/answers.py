"""TPC-DS reference answers as DuckDB's generator ships them, and comparison of results against them.

DuckDB 1.5.5's ``tpcds_answers()`` raises ("Don't have TPC-DS answers for SF 10") before yielding a row, but
the same answers are files of the ``duckdb`` source distribution: ``extension/tpcds/dsdgen/answers/sf<SF>/<NN>.csv``.
They are fetched once with ``pip download duckdb==<version> --no-deps --no-binary duckdb`` into a cache directory.

The answers belong to the generator that made the data: DuckDB 2.0 changed ``dsdgen`` and its answers with it (its
SF 1 answers differ from 1.5's in all ten benchmark queries, and data it generates gives exactly its own). So a
landing area records the DuckDB release that generated it (:func:`generator_version`), and its results are checked
against that release's answers. The 1.5 source distributions hold SF 0.01 and 1; 2.0.1's also SF 10.
"""

from __future__ import annotations

import decimal
import functools
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Row = tuple[Any, ...]

#: written by :func:`~airflow_provider_lakehouse.tpcds.generate.generate` into the landing area
GENERATOR_FILE = "generator.json"


def _sdist(cache_dir: Path, version: str) -> Path:
    archive = cache_dir / f"duckdb-{version}.tar.gz"
    if not archive.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                f"duckdb=={version}",
                "--no-deps",
                "--no-binary",
                "duckdb",
                "-d",
                str(cache_dir),
            ],
            check=True,
        )
    return archive


def generator_version(landing: str | Path) -> str:
    """The DuckDB release whose ``dsdgen`` generated the local landing area ``landing`` (recorded in its
    :data:`GENERATOR_FILE`); the installed DuckDB's for a landing area generated before the file was written."""
    import json

    import duckdb

    try:
        return str(json.loads(Path(landing, GENERATOR_FILE).read_text())["duckdb"])
    except (OSError, ValueError, KeyError):
        return str(duckdb.__version__)


def reference_answer(
    number: int, scale_factor: str, cache_dir: str, version: str | None = None
) -> tuple[list[str], list[list[str]]]:
    """Header and rows (text, ``NULL`` as written) of TPC-DS query ``number`` at ``scale_factor`` (``"0.01"``,
    ``"1"``, ``"10"``), from the DuckDB source distribution of ``version``: the release whose generator made the
    data (see :func:`generator_version`; default: the installed DuckDB's).

    :raises LookupError: that release ships no answer for the query at that scale factor.
    """
    import duckdb

    archive = _sdist(Path(cache_dir), version or duckdb.__version__)
    text = _answer_files(archive).get(f"sf{scale_factor}/{number:02d}.csv")
    if text is None:
        raise LookupError(f"no reference answer for query {number} at SF {scale_factor} in {archive.name}")
    lines = text.splitlines()
    return lines[0].split("|"), [line.split("|") for line in lines[1:] if line]


@functools.lru_cache(maxsize=4)
def _answer_files(archive: Path) -> dict[str, str]:
    """Every TPC-DS answer file of a source distribution, by ``sf<SF>/<NN>.csv``: read in one pass over the
    archive (a 17 MB compressed tar is read whole to find a member), not once per query."""
    marker = "/extension/tpcds/dsdgen/answers/"
    files = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            if marker in member.name and member.isfile():
                files[member.name.split(marker, 1)[1]] = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
    return files


def matches_reference(
    rows: Sequence[Sequence[Any]], reference: Sequence[Sequence[Any]], tolerance: float = 0.011
) -> str | None:
    """``None`` if ``rows`` (any order) equal the reference rows; numbers within ``tolerance`` (the reference
    rounds to two places, or prints 16-20 digits); otherwise a description of the first difference.

    :param reference: rows as the answer files hold them (text, ``NULL``), or values (another engine's rows).
    """
    if len(rows) != len(reference):
        return f"{len(rows)} rows, reference has {len(reference)}"
    ours = sorted((_normal(r) for r in rows), key=repr)
    theirs = sorted((_normal(r) for r in reference), key=repr)
    for a, b in zip(ours, theirs, strict=False):
        if len(a) != len(b) or not all(_same(x, y, tolerance) for x, y in zip(a, b, strict=False)):
            return f"row {a} differs from reference {b}"
    return None


def _normal(row: Any) -> tuple[Any, ...]:
    out: list[float | str | None] = []
    for value in row:
        if value is None or value == "NULL":
            out.append(None)
            continue
        if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
            out.append(round(float(value), 2))
            continue
        try:
            out.append(round(float(value), 2) if _numeric(value) else str(value))
        except ValueError:
            out.append(str(value))
    return tuple(out)


def _numeric(text: str) -> bool:
    return bool(text) and text.lstrip("-").replace(".", "", 1).isdigit()


def _same(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= tolerance
    return a == b

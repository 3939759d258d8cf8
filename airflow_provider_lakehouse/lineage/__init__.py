"""Column-level lineage of SQL scripts (sqlglot only; imports neither Airflow nor a database driver)."""

from __future__ import annotations

from airflow_provider_lakehouse.lineage.extract import extract_lineage
from airflow_provider_lakehouse.lineage.model import (
    Dataset,
    DatasetLineage,
    InputColumn,
    Lineage,
    LineageError,
    Transformation,
)

__all__ = ["Dataset", "DatasetLineage", "InputColumn", "Lineage", "LineageError", "Transformation", "extract_lineage"]

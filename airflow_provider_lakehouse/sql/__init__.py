"""SQL text handling that every engine shares: splitting scripts, finding and binding ``$`` parameters."""

from __future__ import annotations

from airflow_provider_lakehouse.sql.params import bind_pyformat, placeholders_in, validate_parameters
from airflow_provider_lakehouse.sql.split import Statement, split_statements

__all__ = ["Statement", "bind_pyformat", "placeholders_in", "split_statements", "validate_parameters"]

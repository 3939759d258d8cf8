"""DucklakeHook: resolves lake ``NAME`` (connection ``ducklake_<NAME>``) to a :class:`DuckLakeSpec`."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from airflow.sdk import BaseHook

from airflow_provider_lakehouse.connections.lake import (
    DuckLakeSpec,
    ducklake_conn_id,
    ducklake_spec_from_connection,
    s3_spec_from_aws_connection,
)
from airflow_provider_lakehouse.connections.names import parse_datatable_name
from airflow_provider_lakehouse.hooks._connections import get_connection, mask


class DucklakeHook(BaseHook):
    """Resolve a named DuckLake lake.

    :param ducklake: the lake's name (default ``main``).
    """

    conn_name_attr = "ducklake_conn_id"
    default_conn_name = ducklake_conn_id("main")
    conn_type = "ducklake"
    hook_name = "Ducklake (DuckLake lakehouse)"

    def __init__(self, ducklake: str = "main", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = parse_datatable_name(ducklake).name  # same naming rules as data tables
        self.ducklake_conn_id = ducklake_conn_id(self.name)

    def __repr__(self) -> str:
        return f"DucklakeHook(ducklake={self.name!r})"

    @cached_property
    def spec(self) -> DuckLakeSpec:
        """The resolved lake; every secret in it is registered with the secrets masker."""
        conn = get_connection(self.ducklake_conn_id, kind="ducklake", name=self.name)
        extra = conn.extra_dejson or {}
        catalog_conn = None
        if extra.get("catalog_postgres_conn_id"):
            ref = str(extra["catalog_postgres_conn_id"])
            catalog_conn = get_connection(ref, kind="postgres connection", name=ref)
        s3 = None
        if extra.get("aws_conn_id"):
            ref = str(extra["aws_conn_id"])
            s3 = s3_spec_from_aws_connection(get_connection(ref, kind="aws connection", name=ref))
        spec = ducklake_spec_from_connection(self.name, conn, catalog_conn=catalog_conn, s3=s3)
        for secret in spec.secrets:
            mask(secret)
        return spec

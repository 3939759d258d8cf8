"""Names and connection specs (pure): parsing, validation, redaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from airflow_provider_lakehouse.connections import (
    DataTableName,
    PostgresSpec,
    Redactor,
    parse_datatable_name,
    postgres_spec_from_connection,
)
from airflow_provider_lakehouse.connections.lake import ducklake_spec_from_connection, s3_spec_from_aws_connection
from airflow_provider_lakehouse.exceptions import InvalidConnectionError

PASSWORD = "a b'c\"d@e%f"


@dataclass
class FakeConnection:  # the structural shape of an Airflow Connection; no Airflow needed here
    conn_id: str | None = "datatable_main"
    conn_type: str | None = "datatable"
    host: str | None = "db.internal"
    port: int | None = 5433
    login: str | None = "app"
    password: str | None = PASSWORD
    schema: str | None = "warehouse"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def extra_dejson(self) -> dict[str, Any]:
        return self.extra


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (None, DataTableName("main")),
        ("", DataTableName("main")),
        ("main", DataTableName("main")),
        ("sales", DataTableName("sales")),
        ("main:analytics", DataTableName("main", "analytics")),
        (":analytics", DataTableName("main", "analytics")),
        ("sales:Mixed Case", DataTableName("sales", "Mixed Case")),
    ],
)
def test_parse_datatable_name(ref: str | None, expected: DataTableName) -> None:
    assert parse_datatable_name(ref) == expected


@pytest.mark.parametrize("ref", ["bad-name", "a b", "main:", "x/y"])
def test_parse_datatable_name_rejects(ref: str) -> None:
    with pytest.raises(ValueError, match="Invalid data table"):
        parse_datatable_name(ref)


def test_postgres_spec_keeps_password_out_of_repr_and_passes_it_unescaped() -> None:
    spec = postgres_spec_from_connection(FakeConnection(extra={"sslmode": "require", "unrelated": "x"}))
    assert PASSWORD not in repr(spec) and PASSWORD not in str(spec)
    assert spec.connect_kwargs() == {
        "host": "db.internal",
        "port": 5433,
        "user": "app",
        "dbname": "warehouse",
        "password": PASSWORD,
        "sslmode": "require",
    }


def test_postgres_spec_requires_host_user_and_database() -> None:
    with pytest.raises(InvalidConnectionError, match="host, login, database"):
        postgres_spec_from_connection(FakeConnection(host=None, login=None, schema=None))


def test_redactor_masks_plain_and_url_encoded_forms() -> None:
    redactor = Redactor([PASSWORD, None, ""])
    text = f"dsn=postgresql://app:{PASSWORD}@h/db or a%20b%27c%22d%40e%25f"
    assert PASSWORD not in redactor.redact(text)
    assert "a%20b" not in redactor.redact(text)


def test_ducklake_spec_from_connections() -> None:
    lake = FakeConnection(
        conn_id="ducklake_main",
        conn_type="ducklake",
        extra={"data_path": "s3://bucket/lake", "metadata_schema": "meta", "commit_max_retries": 3},
    )
    aws = FakeConnection(
        conn_id="aws",
        conn_type="aws",
        login="AK",
        password="SECRET/KEY",
        extra={"endpoint_url": "http://127.0.0.1:1", "region_name": "eu-west-1"},
    )
    spec = ducklake_spec_from_connection("main", lake, s3=s3_spec_from_aws_connection(aws))
    assert spec.data_path == "s3://bucket/lake/"
    assert isinstance(spec.catalog, PostgresSpec) and spec.metadata_schema == "meta"
    assert spec.retry.max_retries == 3
    assert spec.s3 is not None and spec.s3.endpoint_url == "http://127.0.0.1:1" and spec.s3.region == "eu-west-1"
    assert set(spec.secrets) == {PASSWORD, "SECRET/KEY"}
    assert "SECRET/KEY" not in repr(spec) and PASSWORD not in repr(spec)


def test_ducklake_spec_requires_data_path() -> None:
    with pytest.raises(InvalidConnectionError, match="data_path"):
        ducklake_spec_from_connection("main", FakeConnection(conn_id="ducklake_main"))


def test_the_lake_connection_names_its_default_engine() -> None:
    def spec(**extra: Any) -> Any:
        conn = FakeConnection(conn_id="ducklake_main", conn_type="ducklake", extra={"data_path": "/lake", **extra})
        return ducklake_spec_from_connection("main", conn)

    assert (spec().engine, spec().duckdb_max_scan_bytes) == ("spark", None)
    assert spec(engine="DuckDB").engine == "duckdb"
    assert (spec(engine="auto", duckdb_max_scan_bytes="1048576").duckdb_max_scan_bytes) == 1048576
    assert spec(engine="", duckdb_max_scan_bytes="").engine == "spark"  # the form's empty fields
    with pytest.raises(InvalidConnectionError, match="'ducklake_main': engine 'presto' is not one of spark"):
        spec(engine="presto")
    with pytest.raises(InvalidConnectionError, match="duckdb_max_scan_bytes"):
        spec(duckdb_max_scan_bytes="a lot")

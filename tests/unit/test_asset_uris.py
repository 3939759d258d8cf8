"""Table asset URIs (pure): building, parsing, case folding, and every rejection."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from airflow_provider_lakehouse.assets.uris import (
    TableAsset,
    ducklake_openlineage_name,
    parse_table_asset_uri,
    postgres_openlineage_name,
    sanitize_table_uri,
    table_asset_uri,
)
from airflow_provider_lakehouse.connections.names import parse_datatable_name


@pytest.mark.parametrize("scheme", ["datatable", "ducklake"])
def test_round_trip(scheme: str) -> None:
    uri = table_asset_uri(scheme, "main", "sales", "orders")
    assert uri == f"{scheme}://main/sales.orders"
    asset = parse_table_asset_uri(uri)
    assert asset == TableAsset(scheme, "main", "sales", "orders")
    assert asset.uri == uri
    assert sanitize_table_uri(urlsplit(uri)).geturl() == uri


@pytest.mark.parametrize(
    "uri",
    [
        "ducklake://Main/Sales.Orders",
        "DuckLake://MAIN/sales.ORDERS",
        "ducklake://main/sales.orders",
    ],
)
def test_every_spelling_has_one_identity(uri: str) -> None:
    assert parse_table_asset_uri(uri).uri == "ducklake://main/sales.orders"
    assert sanitize_table_uri(urlsplit(uri)) == urlsplit("ducklake://main/sales.orders")


def test_parts_are_folded_however_the_asset_is_built() -> None:
    built = TableAsset("DuckLake", "Main", "Sales", "Orders")
    assert built == parse_table_asset_uri("ducklake://main/sales.orders")
    assert (built.scheme, built.name, built.schema, built.table) == ("ducklake", "main", "sales", "orders")
    assert table_asset_uri("datatable", "Main", "Sales", "Orders") == "datatable://main/sales.orders"


def test_identifiers_may_carry_digits_underscores_and_dollars() -> None:
    asset = parse_table_asset_uri("datatable://data_2024/s$1._t$x")
    assert (asset.name, asset.schema, asset.table) == ("data_2024", "s$1", "_t$x")


def test_name_rule_matches_the_connection_names() -> None:
    # NAME becomes a connection id: the URI must accept exactly the names parse_datatable_name accepts.
    for name in ["main", "Sales_2", "x" * 200, "x" * 201, "bad-name", "a b", "café"]:
        try:
            parse_datatable_name(name)
            valid = True
        except ValueError:
            valid = False
        try:
            parse_table_asset_uri(f"datatable://{name}/s.t")
            parsed = True
        except ValueError:
            parsed = False
        assert parsed == valid, name


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("", "scheme ''"),
        ("ducklake://main", "path must be /schema.table"),
        ("ducklake://main/", "path must be /schema.table"),
        ("ducklake://main/onlyone", "path must be /schema.table"),
        ("ducklake://main/sales.", "path must be /schema.table"),
        ("ducklake://main/.orders", "path must be /schema.table"),
        ("ducklake://main/db.sales.orders", "path must be /schema.table"),
        ("ducklake://main/sales/orders", "path must be /schema.table"),
        ("ducklake://main/sales.orders/", "path must be /schema.table"),
        ("ducklake://main/a/b.c", "path must be /schema.table"),
        ("ducklake:///sales.orders", "NAME is missing"),
        ("ducklake://main/sales.orders?snapshot=3", "query string"),
        ("ducklake://main/sales.orders#x", "fragment"),
        ("ducklake://main:5432/sales.orders", "port"),
        ("ducklake://main:/sales.orders", "port"),
        ("ducklake://u@main/sales.orders", "user or password"),
        ("ducklake://u:pw@main/sales.orders", "user or password"),
        ("ducklake://bad-name/sales.orders", "NAME 'bad-name'"),
        ("ducklake://caf%C3%A9/sales.orders", "NAME"),
        ("ducklake://main/sales.ord-ers", "table 'ord-ers'"),
        ("ducklake://main/sa%20les.orders", "schema 'sa%20les'"),
        ("ducklake://[main/sales.orders", "Invalid IPv6"),
    ],
)
def test_rejects(uri: str, reason: str) -> None:
    with pytest.raises(ValueError, match=r"NAME/schema\.table") as caught:
        parse_table_asset_uri(uri)
    assert reason in str(caught.value)


def test_rejection_shows_the_expected_form_of_the_scheme() -> None:
    with pytest.raises(ValueError) as caught:
        parse_table_asset_uri("datatable://main/onlyone")
    assert str(caught.value).endswith("expected datatable://NAME/schema.table.")
    with pytest.raises(ValueError) as caught:
        parse_table_asset_uri("s3://bucket/key.csv")
    assert "expected datatable://NAME/schema.table or ducklake://NAME/schema.table" in str(caught.value)


def test_rejection_never_shows_a_password() -> None:
    with pytest.raises(ValueError) as caught:
        parse_table_asset_uri("ducklake://u:s3cret@main/sales.orders")
    assert "s3cret" not in str(caught.value)
    assert "***@main" in str(caught.value)


def test_scheme_mismatch() -> None:
    with pytest.raises(ValueError, match=r"the scheme is 'ducklake', not 'datatable'.*expected datatable://"):
        parse_table_asset_uri("ducklake://main/sales.orders", scheme="datatable")
    with pytest.raises(ValueError, match="not 'ducklake'"):
        sanitize_table_uri(urlsplit("datatable://main/sales.orders"), scheme="ducklake")
    with pytest.raises(ValueError, match="scheme 'postgres' is not one of datatable, ducklake"):
        sanitize_table_uri(urlsplit("postgres://main/sales.orders"))


@pytest.mark.parametrize(
    ("parts", "reason"),
    [
        (("iceberg", "main", "s", "t"), "scheme 'iceberg'"),
        (("ducklake", "", "s", "t"), "NAME ''"),
        (("ducklake", "main", "", "t"), "schema ''"),
        (("ducklake", "main", "s", ""), "table ''"),
        (("ducklake", "main", "a.b", "t"), "schema 'a.b'"),
        (("ducklake", "main", "s", "t?x=1"), "table 't?x=1'"),
        (("ducklake", "main", "\u212aey", "t"), "schema"),  # Kelvin sign: lower() would make it ASCII 'key'
    ],
)
def test_parts_are_validated(parts: tuple[str, str, str, str], reason: str) -> None:
    with pytest.raises(ValueError, match=r"NAME/schema\.table") as caught:
        table_asset_uri(*parts)
    assert reason in str(caught.value)


def test_parts_must_be_strings() -> None:
    with pytest.raises(TypeError):
        TableAsset("ducklake", None, "s", "t")  # type: ignore[arg-type]


def test_openlineage_names() -> None:
    lake_table = parse_table_asset_uri("ducklake://Main/Sales.Orders")
    assert ducklake_openlineage_name(lake_table) == ("ducklake://main", "sales.orders")
    assert postgres_openlineage_name("db.internal", 5433, "warehouse", "sales", "orders") == (
        "postgres://db.internal:5433",
        "warehouse.sales.orders",
    )


def test_uris_module_imports_no_airflow() -> None:
    # The asset handlers run inside Airflow, but the URI rules are pure and must stay importable without it.
    code = (
        "import sys\n"
        "sys.modules['airflow'] = None\n"
        "sys.modules['pyspark'] = None\n"
        "import airflow_provider_lakehouse.assets.uris\n"
        "print(','.join(m for m in ('psycopg', 'pyarrow', 'duckdb', 'openlineage') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""

"""The provider metadata: valid against Airflow's schema, every class it names imports, and Airflow uses it."""

from __future__ import annotations

import importlib
import json
import logging
from pathlib import Path
from typing import Any

import airflow
import jsonschema
import pytest

from airflow_provider_lakehouse.get_provider_info import get_provider_info


def _import(path: str) -> object:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_provider_info_validates_against_airflow_schemas() -> None:
    info = get_provider_info()
    root = Path(airflow.__file__).parent
    jsonschema.validate(info, json.loads((root / "provider_info.schema.json").read_text()))
    # conn-fields and ui-field-behaviour are defined by the provider.yaml schema
    yaml_schema = json.loads((root / "provider.yaml.schema.json").read_text())
    item_schema = yaml_schema["properties"]["connection-types"]["items"]
    for connection_type in info["connection-types"]:
        jsonschema.validate(connection_type, item_schema)


def test_hooks_declare_the_connection_types_they_are_registered_for() -> None:
    for connection_type in get_provider_info()["connection-types"]:
        hook = _import(connection_type["hook-class-name"])
        assert hook.conn_type == connection_type["connection-type"]  # type: ignore[attr-defined]
        assert hook.hook_name == connection_type["hook-name"]  # type: ignore[attr-defined]
        # the declarative form replaces the deprecated widget methods
        assert "get_connection_form_widgets" not in vars(hook)
        assert "get_ui_field_behaviour" not in vars(hook)


def test_listed_modules_import() -> None:
    info = get_provider_info()
    for section in ("hooks", "operators"):
        for entry in info[section]:
            for module in entry["python-modules"]:
                importlib.import_module(module)


def test_airflow_discovers_the_provider_and_its_connection_forms() -> None:
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert "airflow-provider-lakehouse" in manager.providers
    widgets = manager.connection_form_widgets
    assert "extra__datatable__postgres_conn_id" in widgets
    assert "extra__ducklake__data_path" in widgets
    assert manager.field_behaviours["datatable"]["relabeling"]["schema"] == "Database"


ASSETTEST_CONNECTION = {
    "conn_type": "datatable",
    "host": "db.internal",
    "port": 5433,
    "login": "u",
    "password": "s3cret",
    "schema": "warehouse",
}


def _asset_runtime() -> Any:
    # Airflow 3.3 serves asset handlers from the task-SDK manager; ProvidersManager().asset_factories
    # still works but only as a deprecated alias of this one (it warns, and warnings fail the suite).
    # Both are per-process singletons that read every provider's get_provider_info() on first use, so
    # whichever test touches them first, our static entries are there.
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    return ProvidersManagerTaskRuntime()


@pytest.mark.parametrize("scheme", ["datatable", "ducklake"])
def test_asset_uris_resolve_to_callables(scheme: str) -> None:
    (entry,) = [e for e in get_provider_info()["asset-uris"] if scheme in e["schemes"]]
    assert entry["schemes"] == [scheme]
    module = f"airflow_provider_lakehouse.assets.{scheme}"
    assert entry == {
        "schemes": [scheme],
        "handler": f"{module}.sanitize_uri",
        "factory": f"{module}.create_asset",
        "to_openlineage_converter": f"{module}.convert_asset_to_openlineage",
    }
    for key in ("handler", "factory", "to_openlineage_converter"):
        assert callable(_import(entry[key])), entry[key]


@pytest.mark.parametrize("scheme", ["datatable", "ducklake"])
def test_airflow_sanitizes_asset_uris_through_our_handler(scheme: str) -> None:
    from airflow.sdk import Asset

    assert Asset(f"{scheme}://Main/Sales.Orders").uri == f"{scheme}://main/sales.orders"
    with pytest.raises(ValueError, match=f"expected {scheme}://NAME/schema.table"):
        Asset(f"{scheme}://main/onlyone")
    with pytest.raises(ValueError, match="port"):
        Asset(f"{scheme}://main:5432/sales.orders")


@pytest.mark.parametrize("scheme", ["datatable", "ducklake"])
def test_airflow_asset_factory_builds_the_same_asset(scheme: str) -> None:
    from airflow.sdk import Asset

    factory = _asset_runtime().asset_factories[scheme]
    asset = factory(name="Main", schema="Sales", table="Orders", extra={"rows": 3})
    uri = f"{scheme}://main/sales.orders"
    assert asset == Asset(uri=uri, name=uri, extra={"rows": 3})
    assert asset.uri == Asset(f"{scheme}://Main/Sales.Orders").uri
    assert asset.group == "asset"


def test_ducklake_openlineage_converter() -> None:
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset
    from airflow.sdk import Asset

    asset = Asset("ducklake://Main/Sales.Orders")
    dataset = _asset_runtime().asset_to_openlineage_converters["ducklake"](asset, None)
    assert (dataset.namespace, dataset.name) == ("ducklake://main", "sales.orders")
    # the OpenLineage provider finds the converter by itself (it swallows errors, so compare the result)
    assert translate_airflow_asset(asset, None) == dataset


def test_datatable_openlineage_converter_names_the_postgres_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.providers.openlineage.utils.utils import translate_airflow_asset
    from airflow.sdk import Asset

    monkeypatch.setenv("AIRFLOW_CONN_DATATABLE_ASSETTEST", json.dumps(ASSETTEST_CONNECTION))
    asset = Asset("datatable://AssetTest/Sales.Orders")
    dataset = _asset_runtime().asset_to_openlineage_converters["datatable"](asset, None)
    assert (dataset.namespace, dataset.name) == ("postgres://db.internal:5433", "warehouse.sales.orders")
    assert "s3cret" not in repr(dataset)
    assert translate_airflow_asset(asset, None) == dataset


def test_datatable_openlineage_converter_falls_back_without_a_connection(caplog: pytest.LogCaptureFixture) -> None:
    from airflow.sdk import Asset

    asset = Asset("datatable://NoSuchTable/Sales.Orders")
    with caplog.at_level(logging.WARNING, logger="airflow_provider_lakehouse.assets.datatable"):
        dataset = _asset_runtime().asset_to_openlineage_converters["datatable"](asset, None)
    assert (dataset.namespace, dataset.name) == ("datatable://nosuchtable", "sales.orders")
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "datatable_nosuchtable" in caplog.text

"""The provider metadata: valid against Airflow's schema, and every class it names imports."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import airflow
import jsonschema

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

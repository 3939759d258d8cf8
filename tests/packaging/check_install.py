"""Run by tests/packaging/test_airflow_versions.py with the Python of a venv the provider was installed into
(not by the suite's own interpreter): what an installed provider must do in any supported Airflow.

Prints one JSON line: the versions found and what was checked. Importing this file does nothing.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys


def main() -> None:
    sys.argv = ["airflow", "api-server"]  # the plugin builds its FastAPI app and React views only there
    from importlib.metadata import version

    import airflow_provider_lakehouse

    skip = ("airflow_provider_lakehouse.devstack", "airflow_provider_lakehouse.tpcds")  # dev tools, extras
    modules = [
        m.name
        for m in pkgutil.walk_packages(airflow_provider_lakehouse.__path__, "airflow_provider_lakehouse.")
        if not m.name.startswith(skip)
    ]
    for name in modules:
        importlib.import_module(name)

    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert "airflow-provider-lakehouse" in manager.providers, sorted(manager.providers)
    assert "extra__ducklake__data_path" in manager.connection_form_widgets
    assert manager.field_behaviours["datatable"]["relabeling"]["schema"] == "Database"

    from airflow import plugins_manager

    plugins_manager.ensure_plugins_loaded()
    errors = plugins_manager.get_import_errors()
    assert not errors, errors
    plugins, _ = plugins_manager._get_plugins()
    (lakehouse,) = [p for p in plugins if p.name == "lakehouse"]
    fastapi_apps, _ = plugins_manager.get_fastapi_plugins()
    assert any(app["url_prefix"] == "/lakehouse" for app in fastapi_apps), fastapi_apps
    views = [view["name"] for view in lakehouse.react_apps]

    # only pyspark-client here: local Spark must refuse with the extra's name, not exit the process
    from airflow_provider_lakehouse.exceptions import SPARK_EXTRA_INSTALL, SparkNotInstalledError
    from airflow_provider_lakehouse.spark.session import local_session, spark_home

    assert spark_home() is None
    try:
        local_session()
    except SparkNotInstalledError as exc:
        assert SPARK_EXTRA_INSTALL in str(exc)
    else:
        raise AssertionError("local_session() started without the full pyspark")

    dists = ("apache-airflow", "apache-airflow-task-sdk", "pyspark-client", "sqlglot", "openlineage-python")
    print(
        json.dumps(
            {
                "versions": {d: version(d) for d in dists},
                "providers": {
                    name: info.version for name, info in manager.providers.items() if "lakehouse" not in name
                },
                "modules_imported": len(modules),
                "react_views": views,
            }
        )
    )


if __name__ == "__main__":
    main()

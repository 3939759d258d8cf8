"""The one convention for statements that change rows in place (docs/lineage-rules.md, "The target of
UPDATE, DELETE, MERGE"): the target is an input as well as an output, a DELETE's WHERE columns are
dataset-wide INDIRECT FILTER edges, and the extractor, the OpenLineage datasets, the assets (inlets /
outlets) and the hook-lineage reports all say the same."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_lakehouse.hooks._lineage import SqlTarget, report_hook_lineage, table_assets
from airflow_provider_lakehouse.hooks._openlineage import ducklake_naming
from airflow_provider_lakehouse.lineage import Dataset, extract_lineage
from airflow_provider_lakehouse.lineage.openlineage import DatasetFacts, openlineage_datasets
from tests.lineage_corpus import load_cases

TARGET = "s.t"
IN_PLACE = {
    "update": "UPDATE s.t SET a = a + 1 WHERE k = 1",
    "update_constant": "UPDATE s.t SET a = 0",
    "update_from": "UPDATE s.t SET a = u.a FROM s.u AS u WHERE u.k = t.k",
    "delete": "DELETE FROM s.t WHERE k < 10",
    "delete_all": "DELETE FROM s.t",
    "merge": "MERGE INTO s.t USING s.u ON t.k = u.k WHEN MATCHED THEN UPDATE SET a = u.a "
    "WHEN NOT MATCHED THEN INSERT (k, a) VALUES (u.k, u.a)",
    "upsert": "INSERT INTO s.t (k, a) SELECT k, a FROM s.u ON CONFLICT (k) DO UPDATE SET a = EXCLUDED.a",
}


# Spark has no INSERT ... ON CONFLICT.
DIALECT_CASES = [
    (name, d)
    for name in sorted(IN_PLACE)
    for d in ("postgres", "duckdb", "spark")
    if not (name == "upsert" and d == "spark")
]


@pytest.mark.parametrize(("name", "dialect"), DIALECT_CASES)
def test_in_place_targets_are_read_and_written(name: str, dialect: str) -> None:
    lineage = extract_lineage(IN_PLACE[name], dialect)
    target = lineage.get(TARGET)
    assert target is not None and target.access == "read_write"
    assert target.is_input and target.is_output
    assert target in lineage.inputs and target in lineage.outputs


@pytest.mark.parametrize("dialect", ["postgres", "duckdb", "spark"])
def test_delete_where_columns_are_dataset_wide_filters(dialect: str) -> None:
    target = extract_lineage("DELETE FROM s.t WHERE k < 10 AND flag", dialect).get(TARGET)
    assert target is not None
    assert [str(e) for e in target.dataset_lineage] == ["s.t.flag INDIRECT FILTER", "s.t.k INDIRECT FILTER"]
    assert target.columns_written == () and dict(target.column_lineage) == {}


def _input_names(inputs: list[Any]) -> set[tuple[str, str]]:
    return {(d.namespace, d.name) for d in inputs}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_openlineage_target_is_an_input_and_an_output(name: str) -> None:
    target = SqlTarget("ducklake", "main", "main", "postgres")
    inputs, outputs = openlineage_datasets(extract_lineage(IN_PLACE[name], "postgres"), ducklake_naming(target))
    assert ("ducklake://main", TARGET) in _input_names(inputs)
    assert ("ducklake://main", TARGET) in {(d.namespace, d.name) for d in outputs}


def test_openlineage_self_edge_and_delete_filter_name_an_input() -> None:
    target = SqlTarget("ducklake", "main", "main", "duckdb")
    inputs, outputs = openlineage_datasets(extract_lineage(IN_PLACE["update"], "duckdb"), ducklake_naming(target))
    facet = outputs[0].facets["columnLineage"]
    (field,) = facet.fields["a"].inputFields
    assert (field.namespace, field.name, field.field) == ("ducklake://main", TARGET, "a")
    assert (field.namespace, field.name) in _input_names(inputs)
    inputs, outputs = openlineage_datasets(extract_lineage(IN_PLACE["delete"], "duckdb"), ducklake_naming(target))
    (wide,) = outputs[0].facets["columnLineage"].dataset
    assert (wide.name, wide.field, wide.transformations[0].type, wide.transformations[0].subtype) == (
        TARGET,
        "k",
        "INDIRECT",
        "FILTER",
    )
    assert (wide.namespace, wide.name) in _input_names(inputs)


CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_openlineage_input_field_names_an_input(case: Any) -> None:
    """Over the whole corpus: an edge's source dataset is always among the event's inputs."""
    target = SqlTarget("ducklake", "main", case.effective_default_schema, case.dialect)
    lineage = extract_lineage(case.sql, case.dialect, case.default_schema, case.schemas)
    inputs, outputs = openlineage_datasets(lineage, ducklake_naming(target))
    named_inputs = _input_names(inputs)
    for output in outputs:
        facet = output.facets.get("columnLineage")
        fields = [f for column in (facet.fields.values() if facet else ()) for f in column.inputFields]
        for field in [*fields, *(facet.dataset if facet else ())]:
            assert (field.namespace, field.name) in named_inputs, (output.name, field)


def test_openlineage_input_entry_carries_the_version_read() -> None:
    target = SqlTarget("ducklake", "main", "main", "duckdb")
    lineage = extract_lineage(IN_PLACE["update"], "duckdb")
    facts = {Dataset("table", TARGET): DatasetFacts(version="8", version_read="7")}
    inputs, outputs = openlineage_datasets(lineage, ducklake_naming(target), facts)
    assert inputs[0].facets["version"].datasetVersion == "7"
    assert outputs[0].facets["version"].datasetVersion == "8"


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_assets_target_is_inlet_and_outlet(name: str) -> None:
    target = SqlTarget("ducklake", "main", "main", "postgres")
    inlets, outlets = table_assets(extract_lineage(IN_PLACE[name], "postgres"), target)
    assert "ducklake://main/s.t" in {a.uri for a in inlets}
    assert "ducklake://main/s.t" in {a.uri for a in outlets}


class _Collector:
    def __init__(self) -> None:
        self.inputs: list[str] = []
        self.outputs: list[str] = []

    def add_input_asset(self, *, context: Any, uri: str) -> None:
        self.inputs.append(uri)

    def add_output_asset(self, *, context: Any, uri: str) -> None:
        self.outputs.append(uri)


def test_hook_lineage_reports_the_target_as_input_and_output(monkeypatch: pytest.MonkeyPatch) -> None:
    import airflow.providers.common.compat.lineage.hook as hook_lineage

    from airflow_provider_lakehouse.hooks import _lineage

    collector = _Collector()
    monkeypatch.setattr(_lineage, "hook_lineage_listens", lambda: True)  # as with OpenLineage enabled
    monkeypatch.setattr(hook_lineage, "get_hook_lineage_collector", lambda: collector)
    report_hook_lineage(object(), IN_PLACE["delete"], SqlTarget("datatable", "ops", "public", "postgres"))
    assert collector.inputs == collector.outputs == ["datatable://ops/s.t"]


def test_without_a_hook_lineage_reader_no_collector_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """Airflow's own answer decides: with no plugin reading hook lineage, the hook neither makes the collector
    (which would import every provider's asset factories) nor analyses its SQL."""
    import airflow.providers.common.compat.lineage.hook as hook_lineage
    import airflow.sdk.plugins_manager as plugins_manager

    from airflow_provider_lakehouse.hooks import _lineage

    monkeypatch.setattr(plugins_manager, "get_hook_lineage_readers_plugins", list)
    assert _lineage.hook_lineage_listens() is False

    made: list[_Collector] = []
    monkeypatch.setattr(hook_lineage, "get_hook_lineage_collector", lambda: made.append(_Collector()) or made[-1])
    report_hook_lineage(object(), IN_PLACE["delete"], SqlTarget("datatable", "ops", "public", "postgres"))
    assert made == [], "a collector was made although nothing reads hook lineage"

    monkeypatch.setattr(plugins_manager, "get_hook_lineage_readers_plugins", lambda: [object])
    assert _lineage.hook_lineage_listens() is True


WHOLE_SOURCE = "CREATE TABLE t (i INT, j INT); CREATE TABLE s (j INT, i INT); MERGE INTO t USING s ON t.i = s.i "


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        ("WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT", {"i": ["j"], "j": ["i"]}),
        ("WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *", {"i": ["j"], "j": ["i"]}),
        ("WHEN MATCHED THEN UPDATE BY POSITION", {"i": ["j"], "j": ["i"]}),
        ("WHEN MATCHED THEN UPDATE BY NAME", {"i": ["i"], "j": ["j"]}),
        ("WHEN NOT MATCHED THEN INSERT BY NAME", {"i": ["i"], "j": ["j"]}),
    ],
)
def test_a_merge_taking_the_sources_own_columns_maps_them_as_duckdb_does(
    actions: str, expected: dict[str, list[str]]
) -> None:
    """``SET *``, ``INSERT *`` and the bare actions map the source's columns by position, ``BY NAME`` by name (the
    extractor recorded no column lineage for them, and dropped a ``BY NAME`` MERGE it could not parse)."""
    target = extract_lineage(WHOLE_SOURCE + actions).get("main.t")
    assert target is not None
    assert {k: sorted(e.column for e in v) for k, v in target.column_lineage.items()} == expected

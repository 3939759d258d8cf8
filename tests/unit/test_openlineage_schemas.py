"""The vendored OpenLineage spec schemas are intact, and ``validate_event`` accepts real events and names bad fields."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from airflow.providers.openlineage.plugins.facets import AirflowDebugRunFacet, AirflowStateRunFacet
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    catalog_dataset,
    column_lineage_dataset,
    dataset_version_dataset,
    job_type_job,
    lifecycle_state_change_dataset,
    nominal_time_run,
    output_statistics_output_dataset,
    schema_dataset,
    sql_job,
    symlinks_dataset,
)
from openlineage.client.serde import Serde

from tests.support.openlineage_schemas import SPEC_DIR, validate_event
from tests.support.vendored import actual_sha256, listed_sha256

RUN_ID = "01912a3f-6a3b-7c2d-9e4f-0123456789ab"


def test_vendored_files_match_readme_sha256() -> None:
    listed = listed_sha256(SPEC_DIR)
    actual = actual_sha256(SPEC_DIR)
    assert "OpenLineage.json" in listed and "LICENSE" in listed
    # Every vendored file is listed and every listed file is there: nothing added or lost silently.
    assert set(actual) == set(listed)
    assert actual == listed


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_vendored_schemas_are_valid_and_resolve_locally() -> None:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    documents = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in SPEC_DIR.glob("*.json")}
    registry: Registry[Any] = Registry().with_resources(
        (document["$id"], Resource.from_contents(document)) for document in documents.values()
    )
    for name, document in documents.items():
        Draft202012Validator.check_schema(document)
        # A registry without a retriever raises on anything not vendored, so this proves no $ref needs the network.
        resolver = registry.resolver(base_uri=document["$id"])
        for ref in _refs(document):
            assert resolver.lookup(ref).contents is not None, f"{name}: {ref}"


def _event() -> dict[str, Any]:
    """A COMPLETE run event built with openlineage-python and serialized like its file transport."""
    columns = schema_dataset.SchemaDatasetFacet(
        fields=[
            schema_dataset.SchemaDatasetFacetFields(name="region", type="VARCHAR", ordinal_position=1),
            schema_dataset.SchemaDatasetFacetFields(name="amount", type="DECIMAL(18,2)", ordinal_position=2),
        ]
    )
    source = InputDataset(
        namespace="postgres://db:5432",
        name="shop.public.orders",
        facets={
            "schema": columns,
            "catalog": catalog_dataset.CatalogDatasetFacet(framework="postgres", type="jdbc", name="shop"),
            "symlinks": symlinks_dataset.SymlinksDatasetFacet(
                identifiers=[symlinks_dataset.Identifier(namespace="s3://lake", name="orders", type="TABLE")]
            ),
        },
    )
    lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            "total": column_lineage_dataset.Fields(
                inputFields=[
                    column_lineage_dataset.InputField(
                        namespace="postgres://db:5432",
                        name="shop.public.orders",
                        field="amount",
                        transformations=[
                            column_lineage_dataset.Transformation(type="DIRECT", subtype="AGGREGATION", masking=True)
                        ],
                    )
                ]
            )
        },
        dataset=[
            column_lineage_dataset.InputField(
                namespace="postgres://db:5432",
                name="shop.public.orders",
                field="region",
                transformations=[column_lineage_dataset.Transformation(type="INDIRECT", subtype="GROUP_BY")],
            )
        ],
    )
    target = OutputDataset(
        namespace="s3://lake",
        name="sales.totals",
        facets={
            "schema": schema_dataset.SchemaDatasetFacet(
                fields=[schema_dataset.SchemaDatasetFacetFields(name="total", type="DECIMAL(38,2)")]
            ),
            "columnLineage": lineage,
            "version": dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion="42"),
            "lifecycleStateChange": lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
                lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange.OVERWRITE
            ),
        },
        outputFacets={
            "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=7, size=2048, fileCount=1
            )
        },
    )
    event = RunEvent(
        eventType=RunState.COMPLETE,
        eventTime="2024-05-06T07:08:09.123456+00:00",
        run=Run(
            runId=RUN_ID,
            facets={"nominalTime": nominal_time_run.NominalTimeRunFacet(nominalStartTime="2024-05-06T07:00:00Z")},
        ),
        job=Job(
            namespace="airflow",
            name="sales.totals_task",
            facets={
                "sql": sql_job.SQLJobFacet(query="SELECT region, SUM(amount) AS total FROM orders GROUP BY region"),
                "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="AIRFLOW", jobType="TASK"),
            },
        ),
        inputs=[source],
        outputs=[target],
    )
    return json.loads(Serde.to_json(event))


def test_client_built_event_validates() -> None:
    event = _event()
    # Guard against a vacuous pass: the event really carries every facet kind the helper must reach.
    assert set(event["outputs"][0]["facets"]) == {"schema", "columnLineage", "version", "lifecycleStateChange"}
    assert event["outputs"][0]["facets"]["columnLineage"]["fields"]["total"]["inputFields"][0]["transformations"] == [
        {"type": "DIRECT", "subtype": "AGGREGATION", "masking": True}
    ]
    assert validate_event(event) == []


def _violations(event: dict[str, Any]) -> str:
    with pytest.raises(AssertionError) as raised:
        validate_event(event)
    return str(raised.value)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A breaker that sets ``a.b.0.c``-style ``path`` to ``value``."""

    def apply(event: dict[str, Any]) -> None:
        *parents, last = (int(part) if part.isdigit() else part for part in path.split("."))
        node: Any = event
        for part in parents:
            node = node[part]
        node[last] = value

    return apply


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    """A breaker that removes the field at ``a.b.0.c``-style ``path``."""

    def apply(event: dict[str, Any]) -> None:
        *parents, last = (int(part) if part.isdigit() else part for part in path.split("."))
        node: Any = event
        for part in parents:
            node = node[part]
        del node[last]

    return apply


BROKEN = {
    "dataset without name": (_delete("inputs.0.name"), "$.inputs[0]: 'name' is a required property"),
    "bad eventType": (_set("eventType", "DONE"), "$.eventType: 'DONE' is not one of"),
    "facet without _producer": (
        _delete("outputs.0.facets.version._producer"),
        "$.outputs[0].facets.version: '_producer' is a required property",
    ),
    "facet without _schemaURL": (
        _delete("run.facets.nominalTime._schemaURL"),
        "$.run.facets.nominalTime: '_schemaURL' is a required property",
    ),
    "rowCount as string": (
        _set("outputs.0.outputFacets.outputStatistics.rowCount", "7"),
        "$.outputs[0].outputFacets.outputStatistics.rowCount: '7' is not of type 'integer'",
    ),
    "rowCount as float": (
        _set("outputs.0.outputFacets.outputStatistics.rowCount", 7.5),
        "$.outputs[0].outputFacets.outputStatistics.rowCount: 7.5 is not of type 'integer'",
    ),
    "lifecycle state outside the enum": (
        _set("outputs.0.facets.lifecycleStateChange.lifecycleStateChange", "MOVE"),
        "$.outputs[0].facets.lifecycleStateChange.lifecycleStateChange: 'MOVE' is not one of",
    ),
    "masking not boolean": (
        _set("outputs.0.facets.columnLineage.fields.total.inputFields.0.transformations.0.masking", "yes"),
        "$.outputs[0].facets.columnLineage.fields.total.inputFields[0].transformations[0].masking: "
        "'yes' is not of type 'boolean'",
    ),
    "transformation without type": (
        _delete("outputs.0.facets.columnLineage.dataset.0.transformations.0.type"),
        "$.outputs[0].facets.columnLineage.dataset[0].transformations[0]: 'type' is a required property",
    ),
    "symlink without type": (
        _delete("inputs.0.facets.symlinks.identifiers.0.type"),
        "$.inputs[0].facets.symlinks.identifiers[0]: 'type' is a required property",
    ),
    "sql query not a string": (_set("job.facets.sql.query", 1), "$.job.facets.sql.query: 1 is not of type 'string'"),
    "runId not a uuid": (_set("run.runId", "run-1"), "$.run.runId: 'run-1' is not a 'uuid'"),
    "eventTime not RFC 3339": (_set("eventTime", "2024-05-06 07:08"), "$.eventTime: '2024-05-06 07:08' is not a"),
}


@pytest.mark.parametrize(("breaker", "expected"), BROKEN.values(), ids=BROKEN.keys())
def test_broken_copy_fails_naming_the_path(breaker: Callable[[dict[str, Any]], None], expected: str) -> None:
    event = _event()
    broken = copy.deepcopy(event)
    breaker(broken)
    assert expected in _violations(broken)
    assert validate_event(event) == []  # the breaker worked on a copy; the original is still valid


def test_every_violation_is_listed() -> None:
    # Both rowCount breakers write the same field; the later one (float) wins, so leave the string one out.
    together = [case for name, case in BROKEN.items() if name != "rowCount as string"]
    broken = _event()
    for breaker, _expected in together:
        breaker(broken)
    report = _violations(broken)
    assert report.startswith(f"{len(together)} OpenLineage schema violation(s)")
    for _breaker, expected in together:
        assert expected in report


def test_spec_facet_under_other_key_is_still_checked() -> None:
    # ``{key: facet}`` against the file schema would match no property and pass vacuously for an unusual key.
    event = _event()
    renamed = copy.deepcopy(event["outputs"][0]["outputFacets"]["outputStatistics"])
    renamed["rowCount"] = "7"
    event["outputs"][0]["outputFacets"]["stats"] = renamed
    assert "$.outputs[0].outputFacets.stats.rowCount: '7' is not of type 'integer'" in _violations(event)


def test_custom_facets_are_reported_not_failed() -> None:
    event = _event()
    state = AirflowStateRunFacet(dagRunState="success", tasksState={"t": "success"}, tasksDuration={"t": 1.5})
    event["run"]["facets"]["airflowState"] = json.loads(Serde.to_json(state))
    event["run"]["facets"]["debug"] = json.loads(Serde.to_json(AirflowDebugRunFacet(packages={"duckdb": "1.5.5"})))
    event["inputs"][0]["facets"]["vendor.custom"] = {
        "_producer": "https://example.com/producer",
        "_schemaURL": "https://example.com/schemas/VendorFacet.json#/$defs/VendorFacet",
        "anything": [1, "two"],
    }

    unvalidated = validate_event(event)

    assert unvalidated == [
        "$.run.facets.airflowState: https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
        "$.run.facets.debug: https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
        "$.inputs[0].facets['vendor.custom']: https://example.com/schemas/VendorFacet.json#/$defs/VendorFacet",
    ]


def test_custom_facet_still_needs_base_facet_fields() -> None:
    event = _event()
    event["run"]["facets"]["airflowState"] = {"_schemaURL": "https://example.com/AirflowStateRunFacet.json"}
    assert "$.run.facets.airflowState: '_producer' is a required property" in _violations(event)


def test_custom_facet_base_fields_are_checked_by_the_core_schema() -> None:
    # Only the core schema judges these; its facet maps sit inside an ``anyOf`` the report must see through.
    event = _event()
    event["inputs"][0]["facets"]["vendor"] = {
        "_producer": "not a uri",
        "_schemaURL": "https://example.com/schemas/VendorFacet.json",
        "_deleted": "yes",
    }
    report = _violations(event)
    assert "$.inputs[0].facets.vendor._producer: 'not a uri' is not a 'uri'" in report
    assert "$.inputs[0].facets.vendor._deleted: 'yes' is not of type 'boolean'" in report

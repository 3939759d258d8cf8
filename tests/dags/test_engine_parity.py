"""Engine parity through Airflow: the lake example DAGs give the same OpenLineage events and the same snapshots
on the Spark and DuckDB engines (``airflow dags test`` with OpenLineage's file transport)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.dags.runs import DagTestRun, DagTestRuns
from tests.dags.test_example_ducklake import check_operations_run, check_sentiment_run
from tests.dags.test_lineage_events import complete_events

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def task_lineage(run: DagTestRun) -> dict[str, dict[str, Any]]:
    """Per task, what its COMPLETE event says about each dataset: columns, column lineage, version, rows
    written (not bytes or file counts: the engines' writers size files differently)."""

    def describe(d: dict[str, Any]) -> tuple[Any, ...]:
        facets = d.get("facets") or {}
        stats = (d.get("outputFacets") or {}).get("outputStatistics") or {}
        return (
            d["namespace"],
            d["name"],
            [f["name"] for f in (facets.get("schema") or {}).get("fields", [])],
            json.dumps(facets.get("columnLineage"), sort_keys=True),
            (facets.get("version") or {}).get("datasetVersion"),
            stats.get("rowCount"),
        )

    return {
        task: {side: sorted(map(describe, event[side])) for side in ("inputs", "outputs")}
        for task, event in complete_events(run.events(), run.dag_id).items()
    }


#: per example, what one run must have done on the engine it ran on
CHECKS = {"example_ducklake_sentiment": check_sentiment_run, "example_ducklake_operations": check_operations_run}


@pytest.mark.parametrize("dag_id", sorted(CHECKS))
def test_every_lake_example_has_the_same_lineage_and_snapshots_on_spark_and_duckdb(
    dag_id: str, dag_runs: DagTestRuns
) -> None:
    """The engine is an implementation detail of a task: the OpenLineage events of the lake examples (datasets,
    columns, column lineage, the snapshot each task read or wrote, rows written) are the same on both, and so are
    the snapshots each task committed. Maintenance is the exception: which files it merges depends on how the
    engine wrote them. Each run must also have done what its example promises on that engine (``CHECKS``)."""
    seen = {}
    for engine in ("local", "duckdb"):
        run = dag_runs.get(dag_id, engine)
        CHECKS[dag_id](run)
        snapshots = {
            task: (x["catalog_info"]["snapshot_before"], x["catalog_info"]["snapshots_created"])
            for task, x in run.xcoms.items()
            if isinstance(x, dict) and "catalog_info" in x and task != "maintain"
        }
        lineage = task_lineage(run)
        lineage.pop("maintain", None)
        assert lineage, "no OpenLineage event was written"
        seen[engine] = (snapshots, lineage)
    assert seen["duckdb"][0] == seen["local"][0]
    assert seen["duckdb"][1] == seen["local"][1]

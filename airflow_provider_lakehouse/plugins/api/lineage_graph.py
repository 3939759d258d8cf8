"""The column lineage graph around one table: upstream and downstream tables and their typed column edges."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from airflow_provider_lakehouse.plugins.api.lineage_index import TaskLineage
from airflow_provider_lakehouse.plugins.api.models import LineageEdge, LineageGraph, LineageNode

MAX_DEPTH = 4


def page_link(dataset: str) -> str | None:
    """The Lakehouse page of a table, as query parameters of the plugin's page (``None`` for files).

    >>> page_link("ducklake://main/sales.orders")
    '?lake=main&table=sales.orders'
    >>> page_link("datatable://main/public.events")
    '?datatable=main&table=public.events'
    >>> page_link("s3://bucket/key.csv") is None
    True
    """
    for scheme, param in (("ducklake://", "lake"), ("datatable://", "datatable")):
        if dataset.startswith(scheme):
            store, _, table = dataset[len(scheme) :].partition("/")
            return f"?{param}={store}&table={table}" if table else None
    return None


def label(dataset: str) -> str:
    """``lake main: sales.orders`` style labels; files keep their URI.

    >>> label("ducklake://main/sales.orders")
    'main.sales.orders'
    """
    for scheme in ("ducklake://", "datatable://"):
        if dataset.startswith(scheme):
            return dataset[len(scheme) :].replace("/", ".")
    return dataset


def build_graph(
    focus: str, records: Iterable[TaskLineage], asset_ids: Mapping[str, int] | None = None, max_depth: int = MAX_DEPTH
) -> LineageGraph:
    """Walk producers upstream of ``focus`` and consumers downstream of it, ``max_depth`` hops each way."""
    records = list(records)
    producers: dict[str, list[TaskLineage]] = defaultdict(list)
    consumers: dict[str, list[TaskLineage]] = defaultdict(list)
    for r in records:
        producers[r.output].append(r)
        for source in r.inputs:
            consumers[source].append(r)
    depth: dict[str, int] = {focus: 0}
    columns: dict[str, set[str]] = defaultdict(set)
    edges: dict[tuple[object, ...], LineageEdge] = {}

    def add(r: TaskLineage, only_source: str | None) -> None:
        columns[r.output].update(r.columns_written)
        for edge, column in r.edges():
            if only_source is not None and edge.source != only_source:
                continue
            columns[edge.source].add(edge.column)
            if column is not None:
                columns[r.output].add(column)
            item = LineageEdge(
                source=edge.source,
                source_column=edge.column,
                target=r.output,
                target_column=column,
                type=edge.type,
                subtype=edge.subtype,
                masking=edge.masking,
                dag_id=r.dag_id,
                task_id=r.task_id,
                origin=r.origin,
            )
            edges[
                (
                    item.source,
                    item.source_column,
                    item.target,
                    item.target_column,
                    item.type,
                    item.subtype,
                    item.dag_id,
                    item.task_id,
                )
            ] = item
        for source, read in r.record.reads.items():
            if only_source is None or source == only_source:
                columns[source].update(read)

    frontier = [focus]
    for level in range(1, max_depth + 1):  # upstream: who wrote what we read
        nxt = []
        for node in frontier:
            for r in producers.get(node, ()):
                add(r, None)
                for source in r.inputs:
                    if source not in depth:
                        depth[source] = -level
                        nxt.append(source)
        frontier = nxt
    frontier = [focus]
    for level in range(1, max_depth + 1):  # downstream: who read us, and what they wrote
        nxt = []
        for node in frontier:
            for r in consumers.get(node, ()):
                add(r, node)
                if r.output not in depth:
                    depth[r.output] = level
                    nxt.append(r.output)
        frontier = nxt
    ids = asset_ids or {}
    nodes = [
        LineageNode(
            id=d,
            label=label(d),
            kind="file" if page_link(d) is None else "table",
            columns=sorted(columns.get(d, ())),
            link=page_link(d),
            asset_uri=d if d in ids else None,
            asset_id=ids.get(d),
            depth=level,
        )
        for d, level in sorted(depth.items(), key=lambda item: (item[1], item[0]))
    ]
    return LineageGraph(
        focus=focus,
        nodes=nodes,
        edges=sorted(edges.values(), key=lambda e: (e.target, e.target_column or "", e.source, e.source_column)),
    )

"""Airflow assets for tables: ``datatable://NAME/schema.table`` and ``ducklake://NAME/schema.table``.

:mod:`.uris` parses and builds the URIs and imports no Airflow; :mod:`.datatable` and :mod:`.ducklake`
are the handlers, factories and OpenLineage converters registered under ``asset-uris``.
"""

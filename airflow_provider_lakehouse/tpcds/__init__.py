"""TPC-DS for the benchmark pipeline: the source tables, data and query generation (DuckDB's ``tpcds``
extension is the generator; its query text is used as generated, never pasted into this repository)."""

"""DuckLake spec 1.0 in pure Python (no Airflow, no PySpark)."""

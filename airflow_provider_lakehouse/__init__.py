"""Apache Airflow provider for Data Tables (Postgres), DuckLake lakehouses on Spark, and lineage.

Importing the package imports nothing heavy: Airflow, PySpark and the database drivers are
loaded only by the modules that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

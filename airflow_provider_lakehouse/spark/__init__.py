"""SQL on Spark against a lake.

Pure (neither PySpark nor Airflow): the planner (``plan``, ``semantics``, ``merge``) and what executors run
(``tasks``, ``parquet_copy``). Importing PySpark: the driver application (``driver``, ``job``), sessions
(``session``), and the readers it builds on (``native``, ``scans``, ``files``)."""

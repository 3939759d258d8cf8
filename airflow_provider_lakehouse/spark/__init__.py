"""SQL on Spark against a lake.

Pure (neither PySpark nor Airflow): the planner (``plan``, its typed steps ``steps``, ``semantics``, ``merge``),
lake maintenance calls (``maintenance``), what executors run (``tasks``, ``parquet_copy``), and what task
processes share (``s3a``, ``progress``, and the logging of the JVM's
output and Py4J's notices: ``jvm_output``, ``py4j_logging``, ``thread_logging``); ``tests/unit/test_boundaries.py``
checks them. Importing PySpark: the driver application (``driver``, ``job``), sessions (``session``), and the
readers it builds on (``native``, ``scans``, ``files``)."""

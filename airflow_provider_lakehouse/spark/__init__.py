"""SQL on Spark against a lake: the pure planner (``plan``) and the driver application (``driver``,
the only module importing PySpark, with its Python data source)."""

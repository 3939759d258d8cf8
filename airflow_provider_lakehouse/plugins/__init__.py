"""The Lakehouse views in the Airflow UI: an Airflow 3 plugin (a FastAPI app and a React app)."""

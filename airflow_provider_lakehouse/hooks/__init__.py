"""Airflow hooks: resolve names to connections, register secrets with the masker, call the core."""

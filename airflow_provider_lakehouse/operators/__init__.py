"""Airflow operators: templating and orchestration over the hooks."""

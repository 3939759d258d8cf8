"""The embedded local stack: PostgreSQL and SeaweedFS S3 on loopback, plus the Airflow environment.

Everything lives under a project-local state folder (``.lakehouse/`` by default, or
``$LAKEHOUSE_STATE_DIR``). ``python3 -m airflow_provider_lakehouse.devstack --help`` lists the
commands; ``demo`` and ``test`` are the README's two commands.

Only :mod:`~airflow_provider_lakehouse.devstack.bootstrap` and ``__main__`` may be imported by a
bare ``python3`` (they create the virtual environment); the other modules run inside it.
"""

from __future__ import annotations

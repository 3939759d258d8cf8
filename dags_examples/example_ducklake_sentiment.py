"""The sentiment pipeline: messages from an upstream task land in a lake table, on Spark.

An upstream task returns messages (as a review-scoring step would); ``DucklakeOperator`` inserts them with
``json_each`` exactly as DuckDB users write it, then a second task reads the table back at the new snapshot.
Run it with ``python -m airflow_provider_lakehouse.devstack demo``.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag, task

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

INSERT_MESSAGES = """
ATTACH 'ducklake://main' AS dl;
USE dl;

CREATE TABLE IF NOT EXISTS messages (
  content STRING NOT NULL,
  author STRING NOT NULL,
  date STRING NOT NULL,
  sentiment STRING
);

CREATE TEMP TABLE new_messages AS
  SELECT
    value->>'content' AS content,
    value->>'author' AS author,
    value->>'date' AS date,
    value->>'sentiment' AS sentiment
  FROM json_each($messages);

INSERT INTO messages
  SELECT * FROM new_messages;
"""


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, tags=["ducklake", "example"])
def example_ducklake_sentiment() -> None:
    @task
    def score_reviews() -> list[dict[str, str]]:
        """Stands in for a step that fetches reviews and has a model label their sentiment."""
        return [
            {
                "content": "Great service, will come back",
                "author": "ana",
                "date": "2026-01-02",
                "sentiment": "positive",
            },
            {"content": "It was fine", "author": "ben", "date": "2026-01-02", "sentiment": "neutral"},
            {"content": "Cold food, slow waiter", "author": "cy", "date": "2026-01-03", "sentiment": "negative"},
        ]

    insert = DucklakeOperator(task_id="insert_messages", sql=INSERT_MESSAGES, parameters={"messages": score_reviews()})

    summary = DucklakeOperator(
        task_id="sentiment_summary",
        sql="ATTACH 'ducklake' AS dl; USE dl; "
        "SELECT sentiment, count(*) AS messages FROM messages GROUP BY sentiment ORDER BY sentiment;",
    )
    insert >> summary


example_ducklake_sentiment()

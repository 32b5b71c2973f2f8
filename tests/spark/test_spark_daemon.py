"""Spark's Python workers fork from kyma's daemon, with the task modules already imported."""

from __future__ import annotations

from kyma.ingest.load.spark_daemon import TASK_MODULES


def test_workers_fork_from_kymas_daemon_with_task_modules_loaded(spark) -> None:
    def worker_state(_: int) -> tuple[str | None, list[str]]:  # pickled by value: a closure
        import sys

        spec = getattr(sys.modules["__main__"], "__spec__", None)
        return (spec.name if spec else None, [m for m in TASK_MODULES if m in sys.modules])

    [(daemon, loaded)] = spark.sparkContext.parallelize([0], 1).map(worker_state).collect()
    assert daemon == "kyma.ingest.load.spark_daemon"
    assert loaded == list(TASK_MODULES)

"""Spark's Python daemon for kyma's jobs: the task modules imported once, before it forks.

PySpark forks every Python worker from one daemon process; a fresh worker otherwise pays
about a CPU second of imports (pyarrow's pandas shim, psycopg, ADBC, kyma's writer) before
its first task, and again whenever Spark's idle workers time out. Set as
``spark.python.daemon.module`` by ``spark_session``. Modules are only imported here:
nothing is started (no Arrow allocation, no thread) before the fork, and a module that
does not import is left to the task that needs it, which reports why.
"""

from __future__ import annotations

import contextlib
import importlib

TASK_MODULES = (
    "pandas",
    "pyarrow",
    "psycopg",
    "adbc_driver_postgresql.dbapi",
    "kyma.ingest.load._tasks",
    "kyma.engine.spark.compaction",
    "kyma.connectors.postgres.cdc._spark_snapshot",
)


def preload() -> None:
    for name in TASK_MODULES:
        with contextlib.suppress(ImportError):  # the task importing it says what is missing
            importlib.import_module(name)


if __name__ == "__main__":
    preload()
    from pyspark import daemon

    daemon.manager()

"""The Spark session kyma's jobs run on: ``local[*]`` unless KYMA_SPARK_MASTER says otherwise.

Spark speaks for itself in a log file, never on kyma's terminal or in the server log: its
JVM is started with stdout and stderr on ``log_path`` (log4j's console, Java stack traces,
the Python workers it forks), without console progress bars, at log level WARN.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from kyma.engine.errors import NotInstalledError, RuntimeStartError

_starting = threading.Lock()


def default_log_path() -> Path:
    return Path(tempfile.gettempdir()) / f"kyma-spark-{os.getuid()}.log"


def spark_session(master: str | None = None, log_path: Path | None = None) -> Any:
    """Get or create the session; workers run this same Python interpreter."""
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise NotInstalledError("Spark jobs", "spark") from e
    logging.getLogger("py4j").setLevel(logging.WARNING)  # not a line per gateway call
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    master = master or os.environ.get("KYMA_SPARK_MASTER", "local[*]")
    with _starting:
        if SparkContext._active_spark_context is None:  # noqa: SLF001 - pyspark's own flag
            conf, gateway = _conf(SparkConf(), master), None
            path = log_path or default_log_path()
            try:
                if SparkContext._gateway is None:  # noqa: SLF001 - no JVM yet: start it
                    path.parent.mkdir(parents=True, exist_ok=True)
                    with path.open("ab") as log:  # the JVM keeps its own descriptors
                        gateway = launch_gateway(conf, {"stdout": log, "stderr": log})
                SparkContext(conf=conf, gateway=gateway).setLogLevel("WARN")
            except Exception as e:  # Java missing, a bad master, ...: one line, and where to look
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise RuntimeStartError(
                    f"Spark did not start on {master}: {first} (see {path})"
                ) from None
        return SparkSession.builder.getOrCreate()


def _conf(conf: Any, master: str) -> Any:
    conf.setMaster(master).setAppName("kyma")
    if master.startswith("local"):  # nothing leaves the machine: stay on loopback
        conf.set("spark.driver.bindAddress", "127.0.0.1").set("spark.driver.host", "127.0.0.1")
    for key, value in (
        ("spark.ui.enabled", "false"),
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.sql.execution.arrow.pyspark.enabled", "true"),
        ("spark.sql.shuffle.partitions", "4"),
        ("spark.python.daemon.module", "kyma.ingest.load.spark_daemon"),
    ):
        conf.set(key, value)
    return conf

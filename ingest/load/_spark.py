"""The Spark session kyma's jobs run on: ``local[*]`` unless KYMA_SPARK_MASTER says otherwise."""

from __future__ import annotations

import os
import sys
from typing import Any

from kyma.engine.errors import NotInstalledError


def spark_session(master: str | None = None) -> Any:
    """Get or create the session; workers run this same Python interpreter."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise NotInstalledError("Spark jobs", "spark") from e
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    master = master or os.environ.get("KYMA_SPARK_MASTER", "local[*]")
    builder = SparkSession.builder.master(master)
    if master.startswith("local"):  # nothing leaves the machine: stay on loopback
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.driver.host", "127.0.0.1"
        )
    return (
        builder.appName("kyma")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )

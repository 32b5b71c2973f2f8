"""Spark reads kyma tables: ``spark.read.format("kyma").option("table", "logs").load()``.

Needs the ``spark`` extra (pyspark 4.1+, for Python data sources with filter pushdown).
"""

from __future__ import annotations

from typing import Any

from kyma.engine.errors import NotInstalledError

try:
    from kyma.engine.spark._source import (
        ExtentPartition,
        KymaDataSource,
        KymaReader,
        read_extent,
    )
except ModuleNotFoundError as e:  # pragma: no cover - depends on the installed extras
    if e.name is None or not e.name.startswith("pyspark"):
        raise
    raise NotInstalledError("the Spark data source", "spark") from e

__all__ = ["ExtentPartition", "KymaDataSource", "KymaReader", "read_extent", "register"]

FILTER_PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


def register(spark: Any) -> None:
    """Register ``kyma`` as a data source of ``spark`` and enable Python filter pushdown.

    Spark refuses to plan a Python source that takes pushed filters while pushdown is off.
    """
    spark.conf.set(FILTER_PUSHDOWN, "true")
    spark.dataSource.register(KymaDataSource)

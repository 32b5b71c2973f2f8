"""Native reads: a kyma table's live Parquet extents scanned by Spark's own Parquet reader.

``read_table(spark, "logs", columns=[...], filters=[...])`` resolves the snapshot's extents
through the catalog (stage 1 of the pruning cascade, with ``filters``), and hands the
Parquet ones to ``spark.read.parquet``: Spark's vectorized reader then prunes columns and
pushes filters into the files itself, with no row crossing a Python worker. Extents it
cannot read that way -- tlm extents, and any extent of an S3 store (Spark would need the
hadoop-aws jars, which pyspark does not ship) -- are read through the ``kyma`` Python data
source, restricted to those extents, and union'd in. Either way the columns look as
``spark.read.format("kyma")`` shows them (``_schema.py``):

- timestamps are stored in nanoseconds, which Spark's reader only takes as longs
  (``spark.sql.legacy.parquet.nanosAsLong``, set here): they become microsecond timestamps,
  truncated as the data source truncates them;
- dynamic values are CBOR in the file: they become JSON text through an Arrow UDF, the
  one Python step left, and only for dynamic columns the read asks for;
- the hidden shredded sub-columns of dynamic paths are never read; an extent that stores a
  dynamic column the read asks for without its shredded leaves (``_residual.py``) is read
  through the data source, which rebuilds the values.

Spark cannot push a filter on a converted timestamp into the Parquet reader; the catalog's
stage 1 (``filters``) prunes whole extents by time instead.
"""

from __future__ import annotations

import functools
import json
import operator
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 - pyspark's idiom
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

from kyma.engine.catalog import ExtentRef
from kyma.engine.errors import ConfigError, SchemaError
from kyma.engine.format._residual import stripped_columns
from kyma.engine.spark._filters import to_predicate
from kyma.engine.spark._options import KymaOptions
from kyma.engine.spark._schema import dynamic_as_json, spark_schema, spark_type
from kyma.engine.storage.local import LocalStore
from kyma.engine.types import Column

NANOS_AS_LONG = "spark.sql.legacy.parquet.nanosAsLong"
EXTENTS_OPTION = "extents"  # the data source's: only these object paths (JSON list)


def read_table(
    spark: Any,
    table: str,
    columns: Sequence[str] | None = None,
    filters: Iterable[Filter] = (),
    **options: str,
) -> DataFrame:
    """``table`` (or its ``columns``) as a DataFrame, rows matching every one of ``filters``.

    ``filters`` are pyspark's data source filters (``GreaterThanOrEqual(("_timestamp",), t)``):
    they prune extents in the catalog and are applied to the rows. ``options`` are the
    ``kyma`` data source's (``catalog_url``, ``object_store``, ``snapshot``, ...).
    """
    filters = list(filters)
    kyma = KymaOptions.resolve({"table": table, **options}, os.environ)
    with kyma.catalog() as catalog:
        info = catalog.get_table(table)
        snapshot = info.current_snapshot_id if kyma.snapshot is None else kyma.snapshot
        predicate = to_predicate(filters, {c.name: c.type for c in info.columns})
        _, extents = catalog.prune_extents(table, snapshot, predicate)
    chosen = _columns(info.columns, columns, table)
    filtered = _columns(info.columns, [n for f in filters for n in _names(f)], table)
    wanted = {c.name for c in chosen + filtered}
    read = [c for c in info.columns if c.name in wanted]  # the filters' columns too
    store = kyma.store()
    # An extent with deleted rows goes through the data source, which drops them.
    # So does an extent whose dynamic columns read are stored stripped (rebuilt in Python).
    dynamic = [c.name for c in read if c.type.name == "dynamic"]
    native = [
        e
        for e in extents
        if isinstance(store, LocalStore)
        and _is_parquet(e)
        and e.deletes is None
        and not _stripped(store, e, dynamic)
    ]
    others = [e for e in extents if e not in native]
    if snapshot is not None:  # the fallback reads the same snapshot, whatever commits meanwhile
        options = {**options, "snapshot": str(snapshot)}
    frames = []
    if native:
        paths = [str(store.local_path(e.object_path)) for e in native]
        frames.append(_parquet(spark, paths, read))
    if others or not native:  # nothing survived: the data source's empty read has the schema
        frames.append(_data_source(spark, kyma, options, others, read))
    frame = frames[0] if len(frames) == 1 else frames[0].unionByName(frames[1])
    if filters:  # one condition: each DataFrame step is an analysis on the driver
        frame = frame.where(functools.reduce(operator.and_, map(as_column, filters)))
    if [c.name for c in read] != [c.name for c in chosen]:
        frame = frame.select([c.name for c in chosen])
    return frame


def _names(each: Filter) -> list[str]:
    """The columns a filter reads."""
    return _names(each.child) if isinstance(each, Not) else [_path(each)[0]]


def _is_parquet(extent: ExtentRef) -> bool:
    return extent.object_path.endswith(".parquet")


def _stripped(store: LocalStore, extent: ExtentRef, dynamic: list[str]) -> bool:
    """Whether the extent stores one of ``dynamic`` without its shredded leaves."""
    if not dynamic:
        return False
    names = pq.read_schema(store.local_path(extent.object_path)).names
    return bool(stripped_columns(names, dynamic))


def _columns(
    all_columns: Sequence[Column], names: Sequence[str] | None, table: str
) -> list[Column]:
    by_name = {c.name: c for c in all_columns}
    if names is None:
        return list(all_columns)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SchemaError(f"table {table!r} has no columns {unknown}")
    return [by_name[n] for n in names]


def _file_type(column: Column) -> Any:
    """How Spark's Parquet reader sees the column in the file."""
    if column.type.name == "timestamp":
        return LongType()
    if column.type.name == "dynamic":
        return BinaryType()
    return spark_type(column)


def _parquet(spark: Any, paths: list[str], columns: list[Column]) -> DataFrame:
    spark.conf.set(NANOS_AS_LONG, "true")
    schema = StructType([StructField(c.name, _file_type(c), nullable=True) for c in columns])
    raw = spark.read.schema(schema).parquet(*paths)  # a column an extent lacks reads as null
    return raw.select([_as_spark(c) for c in columns])


def _as_spark(column: Column) -> SparkColumn:
    name = column.name
    if column.type.name == "timestamp":
        return F.expr(f"timestamp_micros(`{name}` div 1000)").alias(name)
    if column.type.name == "dynamic":
        return _cbor_to_json(F.col(name)).alias(name)
    return F.col(name)


@F.arrow_udf(StringType())  # type: ignore[call-overload,untyped-decorator]
def _cbor_to_json(values: pa.Array) -> pa.Array:
    """CBOR values to JSON text, on Arrow arrays (each distinct value decoded once)."""
    return dynamic_as_json(values)


def _data_source(
    spark: Any,
    kyma: KymaOptions,
    options: dict[str, str],
    extents: list[ExtentRef],
    columns: list[Column],
) -> DataFrame:
    """The ``kyma`` Python data source over only ``extents``, projected to ``columns``."""
    from kyma.engine.spark import register

    register(spark)
    reader = spark.read.format("kyma").options(table=kyma.table, **options)
    reader = reader.option("catalog_url", kyma.catalog_url).option(
        "object_store", kyma.object_store
    )
    reader = reader.option(EXTENTS_OPTION, json.dumps([e.object_path for e in extents]))
    return reader.schema(spark_schema(columns)).load()


_COMPARE: dict[type, Callable[[SparkColumn, Any], SparkColumn]] = {
    EqualTo: operator.eq,
    EqualNullSafe: lambda c, v: c.eqNullSafe(v),
    GreaterThan: operator.gt,
    GreaterThanOrEqual: operator.ge,
    LessThan: operator.lt,
    LessThanOrEqual: operator.le,
    In: lambda c, v: c.isin(list(v)),
    StringStartsWith: lambda c, v: c.startswith(v),
    StringEndsWith: lambda c, v: c.endswith(v),
    StringContains: lambda c, v: c.contains(v),
}
"""Capabilities as data: each data source filter as a Spark column expression."""


def _path(each: Filter) -> tuple[str, ...]:
    return each.attribute  # type: ignore[attr-defined, no-any-return]  # every leaf filter's


def as_column(each: Filter) -> SparkColumn:
    """A data source filter as the Spark condition it means."""
    if isinstance(each, Not):
        return ~as_column(each.child)
    path = ".".join(_path(each))
    if isinstance(each, IsNull):
        return F.col(path).isNull()
    if isinstance(each, IsNotNull):
        return F.col(path).isNotNull()
    rule = _COMPARE.get(type(each))
    if rule is None:
        raise ConfigError(f"filters: {type(each).__name__} is not a filter kyma reads with")
    return rule(F.col(path), each.value)  # type: ignore[attr-defined]

"""kyma types as Spark types, and kyma blocks as the Arrow batches Spark expects.

==============  ==========================================================
kyma type       Spark type
==============  ==========================================================
bool            BooleanType
int             IntegerType
long            LongType
real            DoubleType
string          StringType
timestamp       TimestampType (microseconds: nanoseconds are truncated)
vector(N)       ArrayType(FloatType) with N elements
dynamic         StringType holding the value's compact JSON text
==============  ==========================================================

Dynamic values become JSON text rather than CBOR bytes so Spark's own ``get_json_object``
and ``from_json`` read them; each distinct value is decoded once per block.
"""

from __future__ import annotations

import json

import cbor2
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kyma.engine.types import Column

_SCALARS: dict[str, DataType] = {
    "bool": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "real": DoubleType(),
    "float4": FloatType(),
    "string": StringType(),
    "timestamp": TimestampType(),
    "dynamic": StringType(),
}


def spark_type(column: Column) -> DataType:
    if column.type.vector_dim is not None:
        return ArrayType(FloatType(), containsNull=False)
    return _SCALARS[column.type.name]


def spark_schema(columns: tuple[Column, ...] | list[Column]) -> StructType:
    """The Spark schema of kyma columns; every field is nullable (schema only widens)."""
    return StructType([StructField(c.name, spark_type(c), nullable=True) for c in columns])


def arrow_target(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark checks each returned batch against."""
    return to_arrow_schema(schema, timezone="UTC")


def _json_text(raw: bytes) -> str:
    return json.dumps(cbor2.loads(raw), separators=(",", ":"), ensure_ascii=False)


def dynamic_as_json(values: pa.Array) -> pa.Array:
    """CBOR values as JSON text, decoding each distinct value once."""
    distinct = pc.unique(values)
    texts = pa.array(
        [None if raw is None else _json_text(raw) for raw in distinct.to_pylist()], pa.string()
    )
    return texts.take(pc.index_in(values, distinct))


def to_spark_batch(
    batch: pa.RecordBatch, dynamic: frozenset[str], target: pa.Schema
) -> pa.RecordBatch:
    """A conformed kyma block as ``target``: dynamic columns to JSON, then Arrow casts.

    Timestamps lose their sub-microsecond digits (truncated); vectors become variable lists.
    """
    columns = [
        dynamic_as_json(batch.column(f.name)) if f.name in dynamic else batch.column(f.name)
        for f in target
    ]
    return pa.RecordBatch.from_arrays(
        [col.cast(f.type, safe=False) for col, f in zip(columns, target, strict=True)],
        schema=target,
    )

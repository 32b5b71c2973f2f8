"""The SQL types the planner's rewrites see for kyma columns and for fetched Arrow columns."""

from __future__ import annotations

import pyarrow as pa

_SQL_TYPES = {
    "bool": "BOOLEAN",
    "int": "INT",
    "long": "BIGINT",
    "real": "DOUBLE",
    "float4": "REAL",  # in the postgres dialect FLOAT is double precision
    "vector": "ARRAY",
    "dynamic": "BLOB",
    "timestamp": "TIMESTAMPTZ",
}


def sql_type(kyma: str) -> str:
    """The SQL type sqlglot annotates a kyma column with (``long`` → ``BIGINT``)."""
    return _SQL_TYPES.get(kyma.split("(")[0], "TEXT")


def arrow_sql_type(dtype: pa.DataType) -> str:
    """The SQL type sqlglot annotates a fetched column with (decimals keep p and s)."""
    if pa.types.is_decimal(dtype):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if pa.types.is_integer(dtype):
        return "BIGINT"
    if pa.types.is_floating(dtype):
        return "REAL" if pa.types.is_float32(dtype) else "DOUBLE"
    if pa.types.is_boolean(dtype):
        return "BOOLEAN"
    if pa.types.is_timestamp(dtype):
        return "TIMESTAMPTZ"
    return "TEXT"

"""Every kyma type reaches Spark as the type docs/guide/spark-reads.md documents."""

from __future__ import annotations

import datetime
import json

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kyma.engine.spark import register
from kyma.engine.types import Column, KymaType

COLUMNS = {
    "b": ("bool", BooleanType()),
    "i": ("int", IntegerType()),
    "l": ("long", LongType()),
    "r": ("real", DoubleType()),
    "f": ("float4", FloatType()),
    "s": ("string", StringType()),
    "t": ("timestamp", TimestampType()),
    "v": ("vector(3)", ArrayType(FloatType(), containsNull=False)),
    "d": ("dynamic", StringType()),
}
ROWS = [
    {
        "_timestamp": 1_767_225_600_123_456_789,  # ns: Spark keeps the microseconds
        "b": True,
        "i": -2_147_483_648,
        "l": 9_007_199_254_740_993,
        "r": 0.1,
        "f": 0.1,
        "s": "ünïcode ✓",
        "t": "2026-03-01T12:00:00.000001999Z",
        "v": [0.5, -1.25, 3.0],
        "d": {"k": [1, "two", None, {"x": False}], "e": "ü"},
        "extra": "to props",
    },
    {"_timestamp": 0, "b": False, "d": "just a string"},
]


def test_every_type_round_trips(spark, services) -> None:
    services.catalog.create_table(
        "typed", [Column(n, KymaType(t)) for n, (t, _) in COLUMNS.items()]
    )
    body = "\n".join(json.dumps(r) for r in ROWS).encode()
    services.write_path.ingest_ndjson("typed", body, schema_evolve=False)
    register(spark)
    df = (
        spark.read.format("kyma")
        .option("table", "typed")
        .option("catalog_url", services.catalog.url)
        .option("object_store", services.store.url)
        .load()
    )
    expected = [StructField("_timestamp", TimestampType()), StructField("props", StringType())]
    expected += [StructField(name, spark_type) for name, (_, spark_type) in COLUMNS.items()]
    assert df.schema == StructType(expected)

    first, second = df.orderBy("l").toArrow().to_pylist()  # nulls first
    utc = datetime.UTC
    assert first["_timestamp"] == datetime.datetime(1970, 1, 1, tzinfo=utc)
    assert {k: v for k, v in first.items() if k not in ("_timestamp", "d", "b")} == dict.fromkeys(
        ["props", "i", "l", "r", "f", "s", "t", "v"]
    )
    assert (first["b"], json.loads(first["d"])) == (False, "just a string")
    assert second["_timestamp"] == datetime.datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=utc)
    assert second["t"] == datetime.datetime(2026, 3, 1, 12, 0, 0, 1, tzinfo=utc)
    assert (second["b"], second["i"], second["l"]) == (True, -2_147_483_648, 9_007_199_254_740_993)
    assert (second["r"], second["s"], second["v"]) == (0.1, "ünïcode ✓", [0.5, -1.25, 3.0])
    assert second["f"] == 0.10000000149011612  # float4's 0.1
    assert json.loads(second["d"]) == ROWS[0]["d"]
    assert second["d"] == '{"k":[1,"two",null,{"x":false}],"e":"ü"}'  # compact JSON text
    assert second["props"] is None  # schema_evolve=False drops unknown fields

    # Spark's JSON functions read dynamic columns.
    got = df.selectExpr("get_json_object(d, '$.k[3].x') AS x").where("x IS NOT NULL").collect()
    assert [r.x for r in got] == ["false"]

"""Native reads: ``read_table`` hands a table's live Parquet extents to Spark's own Parquet
reader and answers what ``spark.read.format("kyma")`` answers; tlm extents join through the
Python data source."""

from __future__ import annotations

import datetime
import json

import pytest
from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In, LessThan
from test_spark_source import BATCHES, MINUTE, T0, _col, _load, _options, logs  # noqa: F401

from kyma.engine.errors import SchemaError
from kyma.engine.format.choice import segment_format
from kyma.engine.spark.native import read_table
from kyma.ingest.write_path import WritePath


def _at(ns: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ns / 1e9, datetime.UTC)


def _options_of(services) -> dict[str, str]:  # type: ignore[no-untyped-def]
    options = _options(services)
    del options["table"]
    return options


def _sorted(df) -> list:  # type: ignore[no-untyped-def]
    return sorted((tuple(r) for r in df.collect()), key=repr)


def test_a_native_read_equals_the_data_source_and_runs_no_python(spark, logs) -> None:  # noqa: F811
    native = read_table(spark, "logs", **_options_of(logs))
    source = _load(spark, logs)
    assert native.schema == source.schema
    assert _sorted(native) == _sorted(source)  # timestamps truncated, dynamic as JSON alike
    projected = read_table(spark, "logs", ["seq", "_timestamp"], **_options_of(logs))
    plan = projected._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in plan and "Python" not in plan, plan
    assert "ReadSchema: struct<_timestamp:bigint,seq:bigint>" in plan, plan  # columns pruned
    assert projected.columns == ["seq", "_timestamp"]
    assert len(projected.inputFiles()) == BATCHES


def test_filters_prune_extents_in_the_catalog_and_push_into_parquet(spark, logs) -> None:  # noqa: F811
    filters = [
        GreaterThanOrEqual(("_timestamp",), _at(T0 + 120 * MINUTE)),
        LessThan(("_timestamp",), _at(T0 + 150 * MINUTE)),
        In(("level",), ("warn", "error")),
    ]
    native = read_table(spark, "logs", ["seq", "level"], filters, **_options_of(logs))
    assert len(native.inputFiles()) == 1  # stage 1: one extent of four holds that half hour
    want = logs.query.execute(
        "SELECT seq, level FROM logs WHERE _timestamp >= TIMESTAMP '2026-01-01T02:00:00Z'"
        " AND _timestamp < TIMESTAMP '2026-01-01T02:30:00Z' AND level IN ('warn', 'error')"
    )
    assert _sorted(native) == sorted(tuple(r.values()) for r in want.table.to_pylist())
    assert native.count() > 0
    by_service = read_table(
        spark, "logs", ["seq"], [EqualTo(("service",), "svc-2-1")], **_options_of(logs)
    )
    plan = by_service._jdf.queryExecution().executedPlan().toString()
    assert "PushedFilters: [IsNotNull(service), EqualTo(service,svc-2-1)]" in plan, plan
    assert len(by_service.inputFiles()) == 1  # the catalog's string stats kept one extent
    with pytest.raises(SchemaError, match=r"table 'logs' has no columns \['nope'\]"):
        read_table(spark, "logs", ["seq", "nope"], **_options_of(logs))


def test_tlm_extents_and_older_extents_join_the_native_read(spark, services) -> None:
    services.catalog.create_table("t", [_col("n", "long"), _col("tag", "string")])
    rows = lambda start: "\n".join(  # noqa: E731
        json.dumps({"_timestamp": T0 + n * 10**9, "n": n, "tag": f"t{n % 3}"})
        for n in range(start, start + 100)
    )
    services.write_path.ingest_ndjson("t", rows(0).encode())
    tlm = WritePath(
        services.catalog, services.write_path.ledger, services.store, segment_format("tlm")
    )
    tlm.ingest_ndjson("t", rows(100).encode())
    services.catalog.add_column("t", _col("extra", "long"))
    services.write_path.ingest_ndjson(
        "t", json.dumps({"_timestamp": T0, "n": 999, "extra": 5}).encode()
    )
    formats = sorted(e.format for e in services.catalog.live_extents("t"))
    assert formats == ["parquet", "parquet", "tlm"]
    native = read_table(spark, "t", **_options_of(services))
    assert len(native.inputFiles()) == 2  # the Parquet extents; the tlm one is Python's
    assert _sorted(native) == _sorted(_load(spark, services, "t"))
    assert native.where("extra IS NOT NULL").count() == 1  # older extents lack it: nulls
    assert native.count() == 201


def test_deleted_rows_are_not_read_natively_or_through_the_data_source(spark, logs) -> None:  # noqa: F811
    deleted = logs.query.execute("DELETE FROM logs WHERE seq % 3 = 0 AND level <> 'info'")
    assert deleted.rowcount > 0
    rows = logs.query.execute("SELECT seq FROM logs").table.to_pylist()
    want = sorted((tuple(r.values()) for r in rows), key=repr)
    native = read_table(spark, "logs", ["seq"], **_options_of(logs))
    assert _sorted(native) == want
    assert _sorted(_load(spark, logs).select("seq")) == want
    assert len(native.inputFiles()) < BATCHES  # extents with deleted rows: the data source's

"""Stage 3: tlm hands DataFusion zero-copy views of memory-mapped extents; Parquet streams
its row groups in bounded memory."""

from __future__ import annotations

import pyarrow as pa

from kyma.engine.catalog import ExtentRef
from kyma.engine.format.choice import segment_format
from kyma.engine.format.predicate import TimeRange
from kyma.engine.query._scan import TableScan, conform, scan_blocks

SCHEMA = pa.schema([("_timestamp", pa.timestamp("ns", tz="UTC")), ("n", pa.int64())])


def _entry(result) -> ExtentRef:
    return ExtentRef(
        result.extent_id,
        result.object_path,
        result.byte_size,
        result.row_count,
        result.block_count,
    )


def _write_rows(store, fmt, rows: int) -> ExtentRef:  # type: ignore[no-untyped-def]
    writer = fmt.start_extent(store, SCHEMA, "tables/1")
    writer.append(
        pa.record_batch(
            {
                "_timestamp": pa.array(range(rows), SCHEMA[0].type),
                "n": pa.array(range(rows), pa.int64()),
            },
            schema=SCHEMA,
        )
    )
    return _entry(writer.finish())


def test_tlm_full_scan_allocates_no_copy_of_the_data(local_store) -> None:
    rows = 2_000_000
    fmt = segment_format("tlm", block_rows=8192)
    entry = _write_rows(local_store, fmt, rows)
    before = pa.total_allocated_bytes()
    scan = TableScan(pa.schema([SCHEMA.field("n")]), None)
    batches = list(scan_blocks(scan, [entry], local_store, fmt))
    assert sum(b.num_rows for b in batches) == rows
    assert scan.stats.bytes_read >= rows * 8
    assert pa.total_allocated_bytes() - before < 1_000_000, "blocks were copied, not mapped"


def test_parquet_full_scan_holds_a_few_row_groups_at_a_time(local_store) -> None:
    rows, block_rows = 2_000_000, 8192
    fmt = segment_format("parquet", block_rows=block_rows)
    entry = _write_rows(local_store, fmt, rows)
    assert entry.object_path.endswith(".parquet")
    scan = TableScan(pa.schema([SCHEMA.field("n")]), None)
    before, peak, seen = pa.total_allocated_bytes(), 0, 0
    for batch in scan_blocks(scan, [entry], local_store, fmt):
        seen += batch.num_rows
        peak = max(peak, pa.total_allocated_bytes() - before)
        del batch
    assert seen == rows and scan.stats.rows_scanned == rows
    assert peak < rows * 8 // 2  # runs of row groups, never the whole column


def test_scan_prunes_blocks_and_counts(local_store) -> None:
    fmt = segment_format(block_rows=10)
    writer = fmt.start_extent(local_store, SCHEMA, "tables/1")
    writer.append(
        pa.record_batch(
            {
                "_timestamp": pa.array(range(100), SCHEMA[0].type),
                "n": pa.array(range(100), pa.int64()),
            },
            schema=SCHEMA,
        )
    )
    entry = _entry(writer.finish())
    scan = TableScan(SCHEMA, TimeRange("_timestamp", 35, 52))
    batches = list(scan_blocks(scan, [entry], local_store, fmt))
    assert [b.column("n")[0].as_py() for b in batches] == [30, 40, 50]
    assert (scan.stats.blocks_total, scan.stats.blocks_after_stats) == (10, 3)
    assert scan.stats.rows_scanned == 30


def test_conform_fills_columns_added_later_with_nulls() -> None:
    old = pa.record_batch({"n": [1, 2]})
    wider = pa.schema([("n", pa.int64()), ("later", pa.string())])
    out = conform(old, wider)
    assert out.schema.equals(wider)
    assert out.column("later").to_pylist() == [None, None]

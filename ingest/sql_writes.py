"""INSERT statements through the one write path: the engine's ``InsertWriter``.

VALUES rows arrive as JSON values and are ingested as an NDJSON body, so coercion, schema
evolution (per the table's options), limits and errors are those of REST ingest. A SELECT's
Arrow answer streams in, batch by batch, matched to the table's columns as file drops
match Parquet. Either commits one snapshot; neither takes an idempotency key (as REST
without one).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import DeletionVector, Payload, TableInfo
from kyma.engine.errors import SchemaError
from kyma.ingest.tabular import parquet_columns
from kyma.ingest.write_path import WritePath

SOURCE = "sql"


class SqlWriter:
    def __init__(self, write_path: WritePath) -> None:
        self.write_path = write_path

    def insert_rows(self, table: str, rows: list[dict[str, Any]]) -> int:
        body = "\n".join(json.dumps(row, allow_nan=False) for row in rows).encode()
        return self.write_path.ingest_ndjson(table, body, source=SOURCE).rows

    def insert_batches(
        self,
        table: str,
        schema: pa.Schema,
        batches: Iterator[pa.RecordBatch],
        *,
        replace: bool = False,
        payload: Payload | None = None,
    ) -> int:
        """A query's answer, batch by batch, as one snapshot: small batches are joined up to
        ``EXTENT_ROWS`` rows, so memory holds about that many (and the extents are not tiny).
        ``replace``: the snapshot retires the table's other extents; ``payload`` runs in its
        commit."""
        info = self.write_path.catalog.get_table(table)
        _check_columns(table, info, schema.names)
        chunks = _chunks(b for b in batches if b.num_rows)
        first = next(chunks, None)
        if first is None:
            return 0
        conformed = (parquet_columns(b, info, False) for b in itertools.chain([first], chunks))
        write = self.write_path.ingest_batches
        return write(table, conformed, source=SOURCE, replace=replace, payload=payload).rows

    def update_arrow(
        self,
        table: str,
        data: pa.Table,
        vectors: list[DeletionVector],
        *,
        payload: Payload | None = None,
    ) -> int:
        """``data`` inserted, and the rows ``vectors`` mark deleted, in one snapshot."""
        info = self.write_path.catalog.get_table(table)
        _check_columns(table, info, data.column_names)
        if data.num_rows == 0 and not vectors:
            return 0
        batches = (parquet_columns(b, info, False) for b in data.to_batches())
        write = self.write_path.ingest_batches
        return write(table, batches, source=SOURCE, deletes=vectors, payload=payload).rows


def _check_columns(table: str, info: TableInfo, names: list[str]) -> None:
    for name in names:
        if info.column(name) is None:
            raise SchemaError(
                f"column {name!r} is not in table {table!r}"
                " (INSERT … SELECT writes existing columns; ingest JSON to add some)"
            )


EXTENT_ROWS = 65_536
"""Rows an INSERT … SELECT gathers into one extent (fewer at the end of the answer)."""


def _chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``batches`` joined into batches of at least ``EXTENT_ROWS`` rows (the last may be fewer)."""
    held: list[pa.RecordBatch] = []
    rows = 0
    for batch in batches:
        held.append(batch)
        rows += batch.num_rows
        if rows >= EXTENT_ROWS:
            yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]
            held, rows = [], 0
    if held:
        yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]

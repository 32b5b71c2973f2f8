"""INSERT statements through the one write path: the engine's ``InsertWriter``.

VALUES rows arrive as JSON values and are ingested as an NDJSON body, so coercion, schema
evolution (per the table's options), limits and errors are those of REST ingest. A SELECT's
Arrow result is matched to the table's columns as file drops match Parquet. Either commits
one snapshot; neither takes an idempotency key (as REST without one).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from kyma.engine.catalog import DeletionVector
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

    def insert_arrow(self, table: str, data: pa.Table) -> int:
        return self.update_arrow(table, data, [])

    def update_arrow(self, table: str, data: pa.Table, vectors: list[DeletionVector]) -> int:
        """``data`` inserted, and the rows ``vectors`` mark deleted, in one snapshot."""
        info = self.write_path.catalog.get_table(table)
        for name in data.column_names:
            if info.column(name) is None:
                raise SchemaError(
                    f"column {name!r} is not in table {table!r}"
                    " (INSERT … SELECT writes existing columns; ingest JSON to add some)"
                )
        if data.num_rows == 0 and not vectors:
            return 0
        batches = (parquet_columns(b, info, False) for b in data.to_batches())
        write = self.write_path.ingest_batches
        return write(table, batches, source=SOURCE, deletes=vectors).rows

"""The tlm v2 writer: streams blocks to a staging file, then stores the sealed object."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from kyma.engine.errors import SchemaError
from kyma.engine.format import ExtentWriter, ExtentWriteResult
from kyma.engine.format.tlm._envelope import MAGIC_V2, trailer
from kyma.engine.format.tlm._stats import ExtentStats, PathMemo, block_stats
from kyma.engine.storage import ObjectStore


class TlmWriter(ExtentWriter):
    def __init__(
        self,
        store: ObjectStore,
        schema: pa.Schema,
        path_prefix: str,
        block_rows: int,
        compression: str | None,
    ) -> None:
        self._store = store
        self._schema = schema
        self._block_rows = block_rows
        self.extent_id = str(uuid.uuid4())
        self.object_path = f"{path_prefix.rstrip('/')}/{self.extent_id}.tlm"
        scratch = store.scratch_dir() or Path(tempfile.gettempdir())
        self._staging = scratch / f"{self.extent_id}.part"
        self._file = self._staging.open("wb")
        self._file.write(MAGIC_V2)
        options = pa.ipc.IpcWriteOptions(compression=compression)
        body = pa.PythonFile(_BodySink(self._file), mode="w")
        self._ipc = pa.ipc.new_file(body, schema, options=options)
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._blocks: list[dict] = []
        self._extent_stats = ExtentStats(schema)
        self._path_memos: dict[str, PathMemo] = {}
        self._rows = 0

    def append(self, batch: pa.RecordBatch) -> None:
        if not batch.schema.equals(self._schema):
            raise SchemaError(
                f"batch schema does not match the extent's:\n{batch.schema}\nexpected:\n"
                f"{self._schema}"
            )
        if batch.num_rows == 0:
            return
        self._pending.append(batch)
        self._pending_rows += batch.num_rows
        while self._pending_rows >= self._block_rows:
            self._flush(self._block_rows)

    def _flush(self, rows: int) -> None:
        table = pa.Table.from_batches(self._pending, self._schema)
        block = table.slice(0, rows).combine_chunks().to_batches()
        rest = table.slice(rows)
        self._pending = rest.to_batches()
        self._pending_rows = rest.num_rows
        (batch,) = block or [pa.RecordBatch.from_pylist([], self._schema)]
        stats = block_stats(batch, self._path_memos)
        self._ipc.write_batch(batch)
        self._extent_stats.update(batch, stats)
        self._blocks.append(stats.to_json())
        self._rows += batch.num_rows

    def finish(self) -> ExtentWriteResult:
        if self._pending_rows:
            self._flush(self._pending_rows)
        self._ipc.close()
        footer = json.dumps(self._blocks, separators=(",", ":")).encode()
        self._file.write(trailer(footer))
        byte_size = self._file.tell()
        self._file.close()
        self._store.put_file(self.object_path, self._staging)
        stats = self._extent_stats
        return ExtentWriteResult(
            extent_id=self.extent_id,
            object_path=self.object_path,
            byte_size=byte_size,
            row_count=self._rows,
            block_count=len(self._blocks),
            min_timestamp_nanos=stats.min_ts,
            max_timestamp_nanos=stats.max_ts,
            present_paths=stats.present_paths(),
            column_stats=stats.column_stats(),
        )

    def abort(self) -> None:
        if not self._file.closed:
            self._file.close()
        self._staging.unlink(missing_ok=True)


class _BodySink:
    """The Arrow IPC body's view of the staging file: positions count from the body start.

    The IPC footer records block offsets as the writer's ``tell()``; counting them from the
    body (not the file, which starts with the magic) lets readers open the body slice as a
    standalone Arrow IPC file.
    """

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self._written = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        n = self._file.write(data)
        self._written += n
        return n

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self.closed = True

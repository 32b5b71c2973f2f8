"""The tlm v2 writer: streams blocks to a staging file, then stores the sealed object."""

from __future__ import annotations

import json
from typing import BinaryIO

import pyarrow as pa

from kyma.engine.format._blocked import BlockedWriter
from kyma.engine.format.tlm._envelope import MAGIC_V2, trailer
from kyma.engine.storage import ObjectStore


class TlmWriter(BlockedWriter):
    format_name = "tlm"

    def __init__(
        self,
        store: ObjectStore,
        schema: pa.Schema,
        path_prefix: str,
        block_rows: int,
        compression: str | None,
    ) -> None:
        super().__init__(store, schema, path_prefix, block_rows)
        self._file = self._staging.open("wb")
        self._file.write(MAGIC_V2)
        options = pa.ipc.IpcWriteOptions(compression=compression)
        body = pa.PythonFile(_BodySink(self._file), mode="w")
        self._ipc = pa.ipc.new_file(body, schema, options=options)

    def _write_block(self, batch: pa.RecordBatch) -> None:
        self._ipc.write_batch(batch)

    def _seal(self) -> None:
        self._ipc.close()
        footer = json.dumps(self._blocks, separators=(",", ":")).encode()
        self._file.write(trailer(footer))
        self._file.close()

    def _close(self) -> None:
        if not self._file.closed:
            self._file.close()


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

"""The tlm reader: range-reads the footer, memory-maps the body only when blocks are read."""

from __future__ import annotations

import json

import pyarrow as pa

from kyma.engine.errors import FormatError
from kyma.engine.format import ExtentMetadata, ExtentReader
from kyma.engine.format.predicate import BlockPredicate, BlockStats, block_evaluator
from kyma.engine.format.tlm._envelope import (
    MAGIC_LEN,
    MAGIC_V1,
    MAGIC_V2,
    STATS_LEN,
    TRAILER_LEN,
)
from kyma.engine.storage import ObjectStore


class TlmReader(ExtentReader):
    def __init__(self, store: ObjectStore, object_path: str) -> None:
        self._store = store
        self.object_path = object_path
        self.byte_size = store.size(object_path)
        if self.byte_size < MAGIC_LEN:
            raise self._error(f"object is {self.byte_size} bytes, shorter than the magic")
        head = store.get_range(object_path, 0, MAGIC_LEN)
        if head == MAGIC_V2:
            self.version = 2
            self._block_stats: list[BlockStats] | None = self._read_footer()
        elif head == MAGIC_V1:
            self.version = 1
            self._body_end = self.byte_size
            self._block_stats = None
        else:
            raise self._error(f"bad magic {head!r}, expected {MAGIC_V2!r} or {MAGIC_V1!r}")
        self._ipc: pa.ipc.RecordBatchFileReader | None = None

    def _error(self, why: str) -> FormatError:
        return FormatError(f"extent {self.object_path!r}: {why}")

    def _read_footer(self) -> list[BlockStats]:
        if self.byte_size < 2 * MAGIC_LEN + STATS_LEN.size:
            raise self._error(f"object is {self.byte_size} bytes, too short for a v2 footer")
        tail = self._store.get_range(self.object_path, self.byte_size - TRAILER_LEN, TRAILER_LEN)
        if tail[STATS_LEN.size :] != MAGIC_V2:
            raise self._error(f"bad trailing magic {tail[STATS_LEN.size :]!r} (truncated?)")
        (stats_len,) = STATS_LEN.unpack(tail[: STATS_LEN.size])
        self._body_end = self.byte_size - TRAILER_LEN - stats_len
        if self._body_end < MAGIC_LEN:
            raise self._error(f"stats_len {stats_len} exceeds the object size {self.byte_size}")
        raw = self._store.get_range(self.object_path, self._body_end, stats_len)
        try:
            return [BlockStats.from_json(b) for b in json.loads(raw)]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise self._error(f"block stats footer does not parse: {e}") from e

    def _body(self) -> pa.ipc.RecordBatchFileReader:
        if self._ipc is None:
            path = self._store.local_path(self.object_path)
            mapped = pa.memory_map(str(path)).read_buffer()
            body = mapped.slice(MAGIC_LEN, self._body_end - MAGIC_LEN)
            try:
                self._ipc = pa.ipc.open_file(body)
            except (ValueError, OSError) as e:  # ArrowInvalid; a name that is not UTF-8
                raise self._error(f"Arrow IPC body does not parse: {e}") from e
            if (
                self._block_stats is not None
                and len(self._block_stats) != self._ipc.num_record_batches
            ):
                raise self._error(
                    f"footer has stats for {len(self._block_stats)} blocks, "
                    f"body has {self._ipc.num_record_batches}"
                )
        return self._ipc

    def metadata(self) -> ExtentMetadata:
        body = self._body()
        if self._block_stats is not None:
            rows = sum(b.row_count for b in self._block_stats)
        else:
            rows = sum(body.get_batch(i).num_rows for i in range(body.num_record_batches))
        return ExtentMetadata(
            object_path=self.object_path,
            version=self.version,
            byte_size=self.byte_size,
            schema=body.schema,
            block_count=body.num_record_batches,
            row_count=rows,
            block_stats=self._block_stats,
        )

    def pruned_blocks(self, predicate: BlockPredicate | None) -> list[int]:
        if self._block_stats is None:
            return list(range(self._body().num_record_batches))
        keep = block_evaluator(predicate)
        return [i for i, stats in enumerate(self._block_stats) if keep(stats)]

    def read_block(self, block: int, projection: list[str] | None = None) -> pa.RecordBatch:
        body = self._body()
        if not 0 <= block < body.num_record_batches:
            raise self._error(f"block {block} out of range 0..{body.num_record_batches - 1}")
        try:
            batch = body.get_batch(block)
            if projection is not None:
                names = set(batch.schema.names)
                batch = batch.select([c for c in projection if c in names])
            # Offsets and lengths that point outside their buffers would be read out of
            # bounds later (a crash, not an error). Fixed-width columns cost next to nothing.
            batch.validate(full=True)
        except (ValueError, OSError) as e:  # ArrowInvalid; a name that is not UTF-8
            raise self._error(f"block {block} does not decode: {e}") from e
        return batch

    def close(self) -> None:
        self._ipc = None

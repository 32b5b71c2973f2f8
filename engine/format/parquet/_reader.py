"""The Parquet reader: the footer once, then projected column chunks of the chosen row groups.

Any Parquet file opens; one without kyma's block statistics keeps every block.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kyma.engine.errors import FormatError
from kyma.engine.format import ExtentMetadata, ExtentReader, _gram_bloom, _residual, _token_bloom
from kyma.engine.format._shred import Shred
from kyma.engine.format.parquet._layout import (
    BLOCK_STATS_KEY,
    CHECKSUM_KEY,
    GRAM_FILTERS_KEY,
    SHREDDED_KEY,
    TOKEN_FILTERS_KEY,
    VERSION_KEY,
    crc32_of,
    leaf_paths,
    written_schema,
)
from kyma.engine.format.predicate import BlockPredicate, BlockStats, block_evaluator
from kyma.engine.storage import ObjectStore

READ_GROUPS = 24
READ_BYTES = 24 << 20
"""``read_blocks`` decodes runs of row groups together (threads over columns and row
groups): at most READ_GROUPS of them, and at most about READ_BYTES uncompressed."""
READ_AHEAD = 2
"""Runs decoding at once (each on a thread of its own); with the one handed out, at most
READ_AHEAD + 1 runs are in memory (as many row groups as one run of 64 before read-ahead)."""


class ParquetExtentReader(ExtentReader):
    def __init__(self, store: ObjectStore, object_path: str) -> None:
        self.object_path = object_path
        self._input = store.open_input(object_path)
        try:
            self._file = pq.ParquetFile(self._input, pre_buffer=True)
            meta = self._file.metadata
            kv = meta.metadata or {}
            self._schema = written_schema(self._file.schema_arrow, kv)
        except (ValueError, OSError) as e:  # ArrowInvalid, ArrowIOError
            self._input.close()
            raise self._error(f"not a readable Parquet file: {e}") from e
        self.byte_size = self._input.size()
        self._blocks = meta.num_row_groups
        self._rows = meta.num_rows
        self.version = int(kv.get(VERSION_KEY, b"0"))
        self._block_stats = self._parse_stats(kv.get(BLOCK_STATS_KEY))
        self._shredded = self._parse_shredded(kv.get(SHREDDED_KEY))
        self._checksum = kv.get(CHECKSUM_KEY)
        self._token_columns = self._parse_token_filters(kv.get(TOKEN_FILTERS_KEY))
        self._gram_columns = self._parse_gram_filters(kv.get(GRAM_FILTERS_KEY))

    def _error(self, why: str) -> FormatError:
        return FormatError(f"extent {self.object_path!r}: {why}")

    def _parse_stats(self, raw: bytes | None) -> list[BlockStats] | None:
        if raw is None:
            return None
        try:
            stats = [BlockStats.from_json(b) for b in json.loads(raw)]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise self._error(f"block stats in the footer do not parse: {e}") from e
        if len(stats) != self._blocks:
            raise self._error(
                f"footer has stats for {len(stats)} blocks, the file has {self._blocks} row groups"
            )
        return stats

    def verify(self) -> None:
        """Check the footer's checksum over the bytes of every row group (FormatError when
        they differ). Extents written before checksums, and foreign Parquet files, pass."""
        if self._checksum is None:
            return
        try:
            expected = json.loads(self._checksum)
            crc, length = int(expected["crc32"]), int(expected["bytes"])
        except (ValueError, KeyError, TypeError) as e:
            raise self._error(f"checksum in the footer does not parse: {e}") from e
        footer = int.from_bytes(self._input.read_at(4, self.byte_size - 8), "little")
        chunks = self._chunks_end()
        if not chunks <= length <= self.byte_size - 8 - footer:
            raise self._error(
                f"damaged: the footer's checksum covers {length} bytes, its column chunks end "
                f"at byte {chunks} and its footer starts at {self.byte_size - 8 - footer}"
            )
        if crc32_of(self._input, length) != crc:
            raise self._error("damaged: its bytes do not match the checksum in its footer")

    def _chunks_end(self) -> int:
        """Where the last column chunk ends (the page index and the footer follow)."""
        meta = self._file.metadata
        end = 4  # the magic
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                start = chunk.dictionary_page_offset or chunk.data_page_offset
                end = max(end, start + chunk.total_compressed_size)
        return end

    def _parse_shredded(self, raw: bytes | None) -> list[Shred]:
        if raw is None:
            return []
        try:
            shreds = [Shred.from_json(entry) for entry in json.loads(raw)]
        except (ValueError, KeyError, TypeError) as e:
            raise self._error(f"shredded paths in the footer do not parse: {e}") from e
        names = set(self._file.schema_arrow.names)
        missing = [s.name for s in shreds if s.name not in names]
        if missing:
            raise self._error(f"footer names sub-columns the file lacks: {missing[:3]}")
        return shreds

    def shredded(self) -> list[Shred]:
        return self._shredded

    def _parse_token_filters(self, raw: bytes | None) -> dict[str, str]:
        """Text column -> its token filters' hidden column; empty when the extent has none
        or they were hashed otherwise than this reader probes."""
        if raw is None:
            return {}
        try:
            entry = json.loads(raw)
            columns = {str(k): str(v) for k, v in entry["columns"].items()}
            hashes = int(entry["hashes"])
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise self._error(f"token filters in the footer do not parse: {e}") from e
        names = set(self._file.schema_arrow.names)
        if hashes != _token_bloom.HASHES or not set(columns.values()) <= names:
            return {}
        return columns

    def _parse_gram_filters(self, raw: bytes | None) -> dict[str, str]:
        """Text column -> its trigram filters' hidden column; empty when the extent has none
        (written before them) or they were built otherwise than this reader probes."""
        if raw is None:
            return {}
        try:
            entry = json.loads(raw)
            columns = {str(k): str(v) for k, v in entry["columns"].items()}
            shape = (int(entry["hashes"]), int(entry["rows"]))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise self._error(f"trigram filters in the footer do not parse: {e}") from e
        names = set(self._file.schema_arrow.names)
        if shape != (_gram_bloom.HASHES, _gram_bloom.ROWS) or not set(columns.values()) <= names:
            return {}
        return columns

    def gram_filters(self) -> dict[str, list[list[bytes | None]]]:
        """Per text column, per block, each page's trigram filter (``_gram_bloom``; None:
        none)."""
        if not self._gram_columns or not self._blocks:
            return {column: [] for column in self._gram_columns}
        hidden = list(self._gram_columns.values())
        try:
            table = self._file.read(columns=hidden)
        except (ValueError, OSError) as e:  # ArrowInvalid, ArrowIOError
            raise self._error(f"trigram filters do not decode: {e}") from e
        rows = self.block_rows()
        starts = np.cumsum([0, *rows[:-1]])
        pages = [np.arange(s, s + n, _gram_bloom.ROWS) for s, n in zip(starts, rows, strict=True)]
        bounds = np.cumsum([0, *(len(p) for p in pages)])
        where = pa.array(np.concatenate(pages) if pages else [], pa.int64())
        out = {}
        for column, name in self._gram_columns.items():
            found = table.column(name).take(where).to_pylist()
            out[column] = [found[bounds[b] : bounds[b + 1]] for b in range(len(rows))]
        return out

    def token_filters(self) -> dict[str, list[bytes | None]]:
        """Per text column, each block's token filter (``_token_bloom``; None: none)."""
        if not self._token_columns:
            return {}
        hidden = list(self._token_columns.values())
        if not self._blocks:
            return {column: [] for column in self._token_columns}
        try:
            table = self._file.read(columns=hidden)
        except (ValueError, OSError) as e:  # ArrowInvalid, ArrowIOError
            raise self._error(f"token filters do not decode: {e}") from e
        starts = pa.array(np.cumsum([0, *self.block_rows()[:-1]]), pa.int64())
        return {
            column: table.column(name).take(starts).to_pylist()
            for column, name in self._token_columns.items()
        }

    @property
    def file_schema(self) -> pa.Schema:
        """The Arrow schema of the file as a Parquet reader sees it, sub-columns included."""
        return self._file.schema_arrow

    def column_bytes(self) -> list[dict[str, int]]:
        """Per row group, the decoded (uncompressed) bytes of each top-level column."""
        owners = [
            field.name
            for field in self._file.schema_arrow
            for _ in leaf_paths(field.name, field.type)
        ]
        meta = self._file.metadata
        out = []
        for g in range(self._blocks):
            group = meta.row_group(g)
            sizes: dict[str, int] = {}
            for c, owner in enumerate(owners[: group.num_columns]):
                sizes[owner] = sizes.get(owner, 0) + group.column(c).total_uncompressed_size
            out.append(sizes)
        return out

    def block_rows(self) -> list[int]:
        return [self._row_count(b) for b in range(self._blocks)]

    def metadata(self) -> ExtentMetadata:
        return ExtentMetadata(
            object_path=self.object_path,
            version=self.version,
            byte_size=self.byte_size,
            schema=self._schema,
            block_count=self._blocks,
            row_count=self._rows,
            block_stats=self._block_stats,
        )

    def pruned_blocks(self, predicate: BlockPredicate | None) -> list[int]:
        if self._block_stats is None:
            return list(range(self._blocks))
        keep = block_evaluator(predicate)
        return [i for i, stats in enumerate(self._block_stats) if keep(stats)]

    def _projected(self, projection: list[str] | None) -> pa.Schema:
        if projection is None:
            return self._schema
        names = set(self._schema.names)
        file = self._file.schema_arrow
        hidden = {s.name for s in self._shredded}
        return pa.schema(
            [
                file.field(c) if c in hidden else self._schema.field(c)
                for c in projection
                if c in names or c in hidden
            ]
        )

    def read_block(self, block: int, projection: list[str] | None = None) -> pa.RecordBatch:
        if not 0 <= block < self._blocks:
            raise self._error(f"block {block} out of range 0..{self._blocks - 1}")
        (batch,) = self.read_blocks([block], projection)
        return batch

    def read_blocks(
        self, blocks: list[int], projection: list[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        schema = self._projected(projection)
        runs = list(self._runs(blocks))
        for groups in runs:
            if any(not 0 <= b < self._blocks for b in groups):
                raise self._error(f"blocks {groups} not all in range 0..{self._blocks - 1}")
        if len(runs) == 1:
            yield from self._decode(self._file, runs[0], schema)
            return
        # Runs decode READ_AHEAD at a time, each over a handle of its own: one run's slowest
        # column no longer leaves the other cores idle until the next run starts.
        files = [self._file] + [
            pq.ParquetFile(self._input, metadata=self._file.metadata, pre_buffer=True)
            for _ in range(READ_AHEAD - 1)
        ]
        pool = ThreadPoolExecutor(READ_AHEAD, thread_name_prefix="kyma-read")
        decoding: deque[Future[list[pa.RecordBatch]]] = deque()
        try:
            for i, groups in enumerate(runs):
                decoding.append(pool.submit(self._decode, files[i % READ_AHEAD], groups, schema))
                if len(decoding) == READ_AHEAD:
                    yield from decoding.popleft().result()
            while decoding:
                yield from decoding.popleft().result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _decode(
        self, file: pq.ParquetFile, groups: list[int], schema: pa.Schema
    ) -> list[pa.RecordBatch]:
        """Row groups ``groups``, checked, as one batch each."""
        stripped = _residual.stripped_columns(self._file.schema_arrow.names, schema.names)
        names = schema.names + [c for c in self._rebuild_reads(stripped) if c not in schema.names]
        try:
            table = file.read_row_groups(groups, columns=names)
            # Damaged pages can decode into values that break Arrow's invariants
            # (strings that are not UTF-8): refused here, not crashed on later.
            _validate(table)
            if stripped:
                table = _residual.rebuilt(table, stripped, self._shredded).select(schema.names)
        except (ValueError, OSError, IndexError) as e:  # ArrowInvalid, ArrowIOError
            raise self._error(f"blocks {groups} do not decode: {e}") from e
        if table.schema.equals(schema):  # names and types; metadata aside
            table = table.replace_schema_metadata(schema.metadata)
        else:  # list fields named ``element``, or a foreign file's types
            table = self._cast(table, schema, groups)
        return list(_split(table, [self._row_count(b) for b in groups]))

    def _rebuild_reads(self, stripped: list[str]) -> list[str]:
        """The hidden columns that rebuild ``stripped`` dynamic columns (``_residual.py``)."""
        out = []
        for name in stripped:
            out += [_residual.skeleton_column(name), _residual.holes_column(name)]
            out += [s.name for s in self._shredded if s.column == name]
        return out

    def _runs(self, blocks: list[int]) -> Iterator[list[int]]:
        run: list[int] = []
        size = 0
        for block in blocks:
            run.append(block)
            if 0 <= block < self._blocks:
                size += self._file.metadata.row_group(block).total_byte_size
            if len(run) >= READ_GROUPS or size >= READ_BYTES:
                yield run
                run, size = [], 0
        if run:
            yield run

    def _cast(self, table: pa.Table, schema: pa.Schema, groups: list[int]) -> pa.Table:
        try:
            return table.cast(schema)
        except (ValueError, TypeError, NotImplementedError) as e:  # ArrowInvalid and kin
            raise self._error(f"blocks {groups} do not match the extent's schema: {e}") from e

    def _row_count(self, block: int) -> int:
        return self._file.metadata.row_group(block).num_rows

    def close(self) -> None:
        self._input.close()


def _validate(table: pa.Table) -> None:
    """Arrow's full validation (ArrowInvalid, a ValueError, when it fails), except that a
    string chunk whose offsets are in order and whose bytes are all ASCII -- valid UTF-8
    whatever the cuts -- skips the per-value UTF-8 check, a tenth of a full read's time."""
    table.validate()
    for column in table.columns:
        if not pa.types.is_string(column.type):
            column.validate(full=True)
            continue
        for chunk in column.chunks:
            if not _ascii_strings(chunk):
                chunk.validate(full=True)


def _ascii_strings(chunk: pa.Array) -> bool:
    """Whether a (structurally valid) string array's offsets ascend within its data and the
    bytes they span are ASCII."""
    offsets_buffer, data_buffer = chunk.buffers()[1:3]
    if offsets_buffer is None or data_buffer is None:
        return len(chunk) == 0
    offsets = np.frombuffer(offsets_buffer, np.int32, len(chunk) + 1, chunk.offset * 4)
    start, end = int(offsets[0]), int(offsets[-1])
    if start < 0 or end > data_buffer.size or bool((np.diff(offsets) < 0).any()):
        return False
    data = np.frombuffer(data_buffer, np.uint8, end - start, start)
    return data.size == 0 or int(data.max()) < 0x80


def _split(table: pa.Table, sizes: list[int]) -> Iterator[pa.RecordBatch]:
    """One record batch per row group of ``table`` (``sizes``: their row counts)."""
    offset = 0
    for rows in sizes:
        pieces = table.slice(offset, rows).to_batches()
        offset += rows
        if len(pieces) != 1:  # a slice across chunks (zero-column tables have one)
            pieces = table.slice(offset - rows, rows).combine_chunks().to_batches()
        yield pieces[0]

"""The Parquet writer: one row group per block, kyma's statistics in the footer's metadata.

Blocks are held until the extent is sealed: the shredded sub-columns of dynamic paths
(``_shred.py``) are known only once every value of the extent has been seen, and they are
part of the file's schema. Blocks are then encoded on a worker thread (pyarrow releases the
GIL), all in one call, while the main thread finds each block's paths; their statistics
run on a third thread from the start of ``finish`` (``BlockedWriter._write_held``). A small
extent (``OVERLAP_BYTES``) is written on the calling thread alone.
"""

from __future__ import annotations

import json
import os
import zlib
from concurrent.futures import Future, ThreadPoolExecutor, wait

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from kyma.engine.format import _residual
from kyma.engine.format._blocked import OVERLAP_BYTES, BlockedWriter
from kyma.engine.format._shred import SHRED_PATHS, TYPES
from kyma.engine.format.parquet import _grams, _tokens
from kyma.engine.format.parquet._layout import (
    BLOCK_STATS_KEY,
    CHECKSUM_CHUNK,
    CHECKSUM_KEY,
    COLUMN_STATS_KEY,
    FORMAT_VERSION,
    GRAM_FILTERS_KEY,
    PRESENT_PATHS_KEY,
    SHREDDED_KEY,
    TOKEN_FILTERS_KEY,
    VERSION_KEY,
    writer_options,
)
from kyma.engine.storage import ObjectStore


class ParquetExtentWriter(BlockedWriter):
    format_name = "parquet"
    hold_blocks = True
    residual = True

    def __init__(
        self,
        store: ObjectStore,
        schema: pa.Schema,
        path_prefix: str,
        block_rows: int,
        shred_paths: int | None = None,
    ) -> None:
        super().__init__(store, schema, path_prefix, block_rows)
        self.shred_paths = SHRED_PATHS if shred_paths is None else shred_paths
        self._written_blocks = 0
        self._schema_with_shreds: pa.Schema | None = None
        self._file: pq.ParquetWriter | None = None
        self._encoder: ThreadPoolExecutor | None = None  # started by the first large call
        self._written: Future[None] | None = None
        self._closed = False
        self._skeletons: dict[str, tuple[pa.Array, pa.Array]] = {}
        self._parsed_skeletons: dict[str, tuple[pa.Array, pa.Array]] = {}
        self._token_filters: dict[str, list[pa.Array]] = {}
        """Per text column, its blocks' token filter columns (``_tokens.py``)."""
        self._gram_filters: dict[str, list[pa.Array]] = {}
        """Per text column, its blocks' trigram filter columns (``_grams.py``)."""

    def _prepare_blocks(self, batches: list[pa.RecordBatch]) -> None:
        if batches:
            for name in _tokens.text_columns(batches[0]):
                built = [_tokens.block_filter(b.column(name)) for b in batches]
                self._token_filters[name] = [column for column, _ in built]
                self._extent_stats.given_words(name, [words for _, words in built])
                self._gram_filters[name] = [_grams.block_filter(b, name) for b in batches]

    def _write_block(self, batch: pa.RecordBatch) -> None:
        self._write_blocks([batch])

    def _write_blocks(self, batches: list[pa.RecordBatch]) -> None:
        """Join the blocks' shredded sub-columns and hand them to the encoding thread in one
        call, one row group per block."""
        if not batches:
            return
        first = self._written_blocks
        self._written_blocks += len(batches)
        columns = pa.Table.from_batches(batches, self._schema).columns
        stripped = self._stored_dynamic(batches, first)
        for name, (whole, _, _) in stripped.items():
            columns[self._schema.get_field_index(name)] = whole
        for shredded in self._shredded.values():
            for column in shredded.columns:
                chunks = column.chunks[first : first + len(batches)]
                columns.append(pa.chunked_array(chunks, column.type))
        for filters in [*self._token_filters.values(), *self._gram_filters.values()]:
            columns.append(pa.chunked_array(filters[first : first + len(batches)], pa.binary()))
        for _, skeleton, holes in stripped.values():
            if skeleton is not None and holes is not None:
                columns += [skeleton, holes]
        schema = self._file_schema()
        table = pa.Table.from_arrays(columns, schema=schema)
        if self._file is None:  # the first block is the sample for the encodings
            self._open(schema, table.slice(0, batches[0].num_rows))
        self._wait()  # one call in flight
        assert self._file is not None
        sizes = [b.num_rows for b in batches]
        if table.nbytes < OVERLAP_BYTES:
            _write_groups(self._file, table, sizes)
            return
        if self._encoder is None:
            self._encoder = ThreadPoolExecutor(1, thread_name_prefix="kyma-parquet")
        self._written = self._encoder.submit(_write_groups, self._file, table, sizes)

    def _stripped_columns(self) -> list[str]:
        """The dynamic columns stored without their shredded leaves (``_residual.py``)."""
        return [n for n, c in self._shredded.items() if c.shreds and n in self._walked]

    def _stored_dynamic(
        self, batches: list[pa.RecordBatch], first: int
    ) -> dict[str, tuple[pa.ChunkedArray, pa.ChunkedArray | None, pa.ChunkedArray | None]]:
        """Per dynamic column with parsed rows or stored stripped, its (whole, skeleton,
        holes) over ``batches`` (skeleton and holes None: not stripped)."""
        out = {}
        stripped = self._stripped_columns()
        for name in self._dynamic:
            whole = self._parsed_whole(name)
            if name not in stripped:
                if whole is not None and self._encodes_parsed:  # encoded from the parse
                    starts = np.cumsum([0, *(len(b) for b in self._dynamic[name])])
                    filled = [
                        whole.slice(int(starts[first + i]), b.num_rows).filled(b.column(name))
                        for i, b in enumerate(batches)
                    ]
                    out[name] = (pa.chunked_array(filled, pa.binary()), None, None)
                continue
            distinct, found, sizes = self._walked[name]
            shredded = self._shredded[name]
            if name not in self._skeletons:  # each distinct value walked once
                self._skeletons[name] = _residual.skeletons(distinct, shredded)
                if whole is not None and found is not None:
                    self._parsed_skeletons[name] = _residual.parsed_skeletons(
                        found, whole.exact, shredded
                    )
            layouts = self._parsed_skeletons.get(name)
            starts = np.cumsum([0, *sizes])
            parts = []
            for i, batch in enumerate(batches):
                start, rows = int(starts[first + i]), batch.num_rows
                parts.append(
                    _residual.written(
                        batch.column(name),
                        distinct.encoded.chunk(first + i).indices,
                        self._skeletons[name],
                        None if whole is None else whole.slice(start, rows),
                        None if layouts is None else _sliced(layouts, start, rows),
                        shredded,
                        first + i,
                    )
                )
            out[name] = tuple(  # type: ignore[assignment]
                pa.chunked_array([p[k] for p in parts], pa.binary()) for k in range(3)
            )
        return out

    def _file_schema(self) -> pa.Schema:
        if self._schema_with_shreds is None:
            schema = self._schema
            for shredded in self._shredded.values():
                for s in shredded.shreds:
                    schema = schema.append(pa.field(s.name, TYPES[s.type]))
            for name in self._token_filters:
                schema = schema.append(pa.field(_tokens.filter_column(name), pa.binary()))
            for name in self._gram_filters:
                schema = schema.append(pa.field(_grams.filter_column(name), pa.binary()))
            for name in self._stripped_columns():
                schema = schema.append(pa.field(_residual.skeleton_column(name), pa.binary()))
                schema = schema.append(pa.field(_residual.holes_column(name), pa.binary()))
            self._schema_with_shreds = schema
        return self._schema_with_shreds

    def _open(self, schema: pa.Schema, sample: pa.Table | None) -> None:
        text = list(self._token_filters)
        options = writer_options(schema, sample, min(self._block_rows, self._rows), text)
        self._file = pq.ParquetWriter(str(self._staging), schema, **options)

    def _wait(self) -> None:
        if self._written is not None:
            written, self._written = self._written, None
            written.result()

    def _seal(self) -> None:
        if self._file is None:  # no rows
            self._open(self._file_schema(), None)
        stats = self._extent_stats
        compact = {"separators": (",", ":")}
        shredded = [s.to_json() for c in self._shredded.values() for s in c.shreds]
        metadata = {
            VERSION_KEY: FORMAT_VERSION,
            BLOCK_STATS_KEY: json.dumps(self._blocks, **compact),
            COLUMN_STATS_KEY: json.dumps(self._column_stats(), default=str, **compact),
            PRESENT_PATHS_KEY: json.dumps(stats.present_paths(), **compact),
            SHREDDED_KEY: json.dumps(shredded, **compact),
            TOKEN_FILTERS_KEY: json.dumps(_tokens.footer_entry(list(self._token_filters))),
            GRAM_FILTERS_KEY: json.dumps(_grams.footer_entry(list(self._gram_filters))),
        }
        crc, written = self._checksum()  # the row groups; the page index comes next
        metadata[CHECKSUM_KEY] = json.dumps({"crc32": crc, "bytes": written}, **compact)
        assert self._file is not None
        self._file.add_key_value_metadata(metadata)
        self._close()

    def _checksum(self) -> tuple[int, int]:
        """The CRC-32 and length of the staged row groups, summed while the encoding thread
        still writes them: the file only grows, and bytes once written stay as they are."""
        crc, done = 0, 0
        with open(self._staging, "rb") as data:
            while self._written is not None and not self._written.done():
                if os.fstat(data.fileno()).st_size - done < CHECKSUM_CHUNK:
                    wait([self._written], timeout=0.005)
                    continue
                chunk = data.read(CHECKSUM_CHUNK)
                crc, done = zlib.crc32(chunk, crc), done + len(chunk)
            self._wait()
            written = os.fstat(data.fileno()).st_size
            while done < written:
                chunk = data.read(min(CHECKSUM_CHUNK, written - done))
                if not chunk:
                    break
                crc, done = zlib.crc32(chunk, crc), done + len(chunk)
        return crc, written

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._wait()
            finally:
                if self._encoder is not None:
                    self._encoder.shutdown()
                if self._file is not None:
                    self._file.close()


def _sliced(pair: tuple[pa.Array, pa.Array], start: int, rows: int) -> tuple[pa.Array, pa.Array]:
    return pair[0].slice(start, rows), pair[1].slice(start, rows)


def _write_groups(file: pq.ParquetWriter, table: pa.Table, sizes: list[int]) -> None:
    """``table`` as one row group per block (``sizes``: their rows); consecutive blocks of
    the same size go in one call."""
    start = 0
    while start < len(sizes):
        end = start
        while end < len(sizes) and sizes[end] == sizes[start]:
            end += 1
        offset = sum(sizes[:start])
        file.write_table(table.slice(offset, sizes[start] * (end - start)), sizes[start])
        start = end

"""Decoded columns of Parquet extents, kept in memory up to a size, for scans that fit.

Extents are immutable, so a column decoded once serves every later statement that reads it:
the key is the store, the object path and the column, and nothing kept can go stale (a new
snapshot brings new extents, which are new keys). An extent with deleted rows is kept
without them, keyed also by the id of its manifest row (a new id for each new deletion
vector), so no deleted row is ever served. A scan that fits reads its kept blocks as
zero-copy slices of the kept arrays into a DataFusion memory table instead of decoding
Parquet again; a larger one streams through DataFusion's Parquet reader (``_native``).
The least recently used columns go first. Text is kept as plain strings: as string views
(which DataFusion groups and joins faster) a window over 5 M synced rows outgrew a 2 GiB
memory pool that the Parquet scan stays within, and the suite was no faster with them. An
answer that DataFusion gives with views is turned into plain strings (``plain``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from kyma.engine import deletes
from kyma.engine.format import SegmentFormat
from kyma.engine.query._limits import checkpoint
from kyma.engine.storage import ObjectStore

_Key = tuple[str, str, str, str]  # store URL, object path, column, deletion version


class DecodedColumns:
    """Up to ``max_bytes`` of decoded columns (0: keep none), one array per block; a scan
    of more than ``largest_scan`` bytes (default: ``max_bytes``) is not served from here
    (the statement's memory pool: a scan through here holds its columns at once)."""

    def __init__(self, max_bytes: int, largest_scan: int = 0) -> None:
        self.max_bytes = max_bytes
        self.largest_scan = min(largest_scan or max_bytes, max_bytes)
        self.bytes = 0
        self._items: OrderedDict[_Key, list[pa.Array]] = OrderedDict()
        self._sizes: dict[_Key, int] = {}
        self._lock = threading.Lock()

    def admits(self, size: int) -> bool:
        """Whether a scan of ``size`` decoded bytes is served from here."""
        return 0 < size <= self.largest_scan

    def batches(
        self,
        store: ObjectStore,
        fmt: SegmentFormat,
        path: str,
        file_names: list[str],
        schema: pa.Schema,
        blocks: list[int],
        block_rows: list[int],
        deleted: tuple[str, np.ndarray] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The ``blocks`` of extent ``path`` with ``schema``'s columns: those of the file
        (``file_names``) decoded once for all its blocks, the others null. ``deleted``:
        the extent's manifest row id and deleted positions, whose rows are left out
        (``block_rows`` then counts the rows left)."""
        version = deleted[0] if deleted is not None else ""
        present = set(file_names)
        names, types = schema.names, schema.types
        columns: dict[str, list[pa.Array]] = {}
        missing = []
        for name in names:
            if name not in present:
                continue
            found = self._get((store.url, path, name, version))
            if found is None:
                missing.append(name)
            else:
                columns[name] = found
        if missing:
            columns.update(self._decode(store, fmt, path, missing, len(block_rows), deleted))
        # Per column: its arrays by block, or None (a column added after the extent was
        # written: nulls); types checked once per extent, not per block.
        kept = [columns.get(name) for name in names]
        exact = [c is None or not c or c[0].type == t for c, t in zip(kept, types, strict=True)]
        for block in blocks:
            checkpoint()
            arrays = [
                pa.nulls(block_rows[block], t)
                if c is None
                else (c[block] if same else c[block].cast(t))
                for c, t, same in zip(kept, types, exact, strict=True)
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _decode(
        self,
        store: ObjectStore,
        fmt: SegmentFormat,
        path: str,
        names: list[str],
        blocks: int,
        deleted: tuple[str, np.ndarray] | None = None,
    ) -> dict[str, list[pa.Array]]:
        whole = {n: found for n in names if (found := self._get((store.url, path, n, "")))}
        unread = [n for n in names if n not in whole]
        if unread:
            reader = fmt.open_extent(store, path)
            try:
                read = list(reader.read_blocks(list(range(blocks)), unread))
            finally:
                reader.close()
            for name in unread:
                whole[name] = [batch.column(name) for batch in read]
                if deleted is None:
                    self._put((store.url, path, name, ""), whole[name])
        if deleted is None:
            return whole
        version, positions = deleted
        kept = {}
        for name, arrays in whole.items():
            starts = deletes.block_starts([len(a) for a in arrays])
            kept[name] = [
                deletes.keep_array(a, positions, s) for a, s in zip(arrays, starts, strict=True)
            ]
            self._put((store.url, path, name, version), kept[name])
        return kept

    def _get(self, key: _Key) -> list[pa.Array] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def _put(self, key: _Key, arrays: list[pa.Array]) -> None:
        size = sum(a.nbytes for a in arrays)
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = arrays
            self._sizes[key] = size
            self.bytes += size
            while self.bytes > self.max_bytes:
                old, _ = self._items.popitem(last=False)
                self.bytes -= self._sizes.pop(old)


def plain(table: pa.Table) -> pa.Table:
    """An answer with string and binary views (at any depth) as plain strings and binary."""
    schema = pa.schema([f.with_type(_plain(f.type)) for f in table.schema], table.schema.metadata)
    return table if schema.equals(table.schema) else table.cast(schema)


def _plain(dtype: pa.DataType) -> pa.DataType:
    if pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_binary_view(dtype):
        return pa.binary()
    if pa.types.is_list(dtype):
        return pa.list_(dtype.value_field.with_type(_plain(dtype.value_type)))
    if pa.types.is_large_list(dtype):
        return pa.large_list(dtype.value_field.with_type(_plain(dtype.value_type)))
    if pa.types.is_fixed_size_list(dtype):
        item = dtype.value_field.with_type(_plain(dtype.value_type))
        return pa.list_(item, dtype.list_size)
    if pa.types.is_struct(dtype):
        return pa.struct([f.with_type(_plain(f.type)) for f in dtype])
    return dtype

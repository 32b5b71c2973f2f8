"""How kyma lays out a Parquet extent: writer properties per column, and its metadata keys.

Encodings were picked by measurement (``bench/format.py``, BENCHMARKS.md): delta for
timestamps and integers, byte-stream-split for floats, plain for dynamic (CBOR) values --
their dictionaries were larger than zstd over plain values. Strings, integers, floats and
timestamps are dictionary-encoded when a sample block (a row group) repeats its values:
strings whose distinct values are at most half the block's, the others at most a quarter. A
block of mostly distinct strings (ids, messages) costs more as a dictionary plus its indices
than as zstd over plain values (trace ids: +16 %), and few distinct integers (status codes)
cost less as a dictionary than as deltas (-60 %). Repeated floats and timestamps (prices,
discounts, dates) are smaller as a dictionary too, and decode 2-3x faster than zstd over
byte-stream-split values or deltas (the cold path: BENCHMARKS.md, ``scan36``).
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Collection, Iterator
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._shred import is_hidden
from kyma.engine.native import strings

FORMAT_VERSION = "2"
"""2: dynamic columns stripped of their shredded leaves (``_residual.py``); 1 reads as is."""
VERSION_KEY = b"kyma.format_version"
BLOCK_STATS_KEY = b"kyma.block_stats"
COLUMN_STATS_KEY = b"kyma.column_stats"
PRESENT_PATHS_KEY = b"kyma.present_paths"
SHREDDED_KEY = b"kyma.shredded"
"""``[[column, path, type], ...]``: the hidden sub-columns of shredded dynamic paths."""
TOKEN_FILTERS_KEY = b"kyma.token_filters"
"""``{"columns": {column: hidden column}, "hashes": k}``: the token filters (``_tokens.py``)."""
GRAM_FILTERS_KEY = b"kyma.gram_filters"
"""``{"columns": {column: hidden column}, "hashes": k, "rows": n}``: the trigram filters of
each page of n rows (``_grams.py``); extents written before them have none."""
CHECKSUM_KEY = b"kyma.checksum"
"""``{"crc32": n, "bytes": k}``: the CRC-32 of the file's first k bytes, the magic and every
row group (the page index and the footer follow), checked once on an extent's first read."""
KYMA_KEYS = (
    VERSION_KEY,
    BLOCK_STATS_KEY,
    COLUMN_STATS_KEY,
    PRESENT_PATHS_KEY,
    SHREDDED_KEY,
    TOKEN_FILTERS_KEY,
    GRAM_FILTERS_KEY,
    CHECKSUM_KEY,
)
ARROW_SCHEMA_KEY = b"ARROW:schema"
RAW_PREFIX = "__kyma/~"
"""Hidden columns of bytes, not values: token filters, skeletons and holes."""
TOKEN_FILTERS_PREFIX = "__kyma/~tokens/"
"""The hidden columns of the token filters (``_tokens.py``)."""
GRAM_FILTERS_PREFIX = "__kyma/~grams/"
"""The hidden columns of the trigram filters (``_grams.py``)."""
RESIDUAL_PREFIXES = ("__kyma/~skeleton/", "__kyma/~holes/")
"""The skeletons and holes of stripped dynamic columns (``_residual.py``)."""
COMPRESSION = "zstd"


def leaf_paths(name: str, dtype: pa.DataType) -> Iterator[tuple[str, pa.DataType]]:
    """Parquet leaf column paths of an Arrow field (lists are ``name.list.element``)."""
    if (
        pa.types.is_list(dtype)
        or pa.types.is_large_list(dtype)
        or pa.types.is_fixed_size_list(dtype)
    ):
        yield from leaf_paths(f"{name}.list.element", dtype.value_type)
    else:
        yield name, dtype


STRING_REPEATS = 2
INTEGER_REPEATS = 4
"""A sampled column is dictionary-encoded when its values repeat this often on average."""


def _encoding(dtype: pa.DataType) -> str | None:
    if pa.types.is_timestamp(dtype) or pa.types.is_int32(dtype) or pa.types.is_int64(dtype):
        return "DELTA_BINARY_PACKED"
    if pa.types.is_floating(dtype):
        return "BYTE_STREAM_SPLIT"
    return None


def _repeats(values: pa.Array | pa.ChunkedArray | None, times: int) -> bool:
    """Whether ``values`` (a sample; None: no sample) hold each distinct value ``times``
    times on average. Strings, integers and timestamps are counted by one compiled pass
    that stops once past the bound (ids, messages, keys: ``native.strings``)."""
    if values is None:
        return True
    present = len(values) - values.null_count
    bound = present // times
    if pa.types.is_timestamp(values.type):
        values = values.cast(pa.int64())
    if not pa.types.is_floating(values.type):
        return strings.count_distinct(values, bound) <= bound
    # When the sample's first part alone holds too many distinct values, so does the
    # whole: the rest is not hashed.
    head = values.slice(0, bound + 1)
    if len(head) < len(values) and _count_distinct(head) > bound:
        return False
    return _count_distinct(values) <= bound


def _count_distinct(values: pa.Array | pa.ChunkedArray) -> int:
    """Distinct non-null values: the length of ``unique``, about twice as fast as the
    ``count_distinct`` aggregate on strings."""
    return len(pc.unique(values)) - (1 if values.null_count else 0)


def _dictionary(dtype: pa.DataType, values: pa.Array | pa.ChunkedArray | None) -> bool:
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _repeats(values, STRING_REPEATS)
    if _encoding(dtype) is not None:  # integers, floats and timestamps
        return values is not None and _repeats(values, INTEGER_REPEATS)
    return False


PAGE_ROWS = 8_192
"""Rows per page at most: the page index then bounds every 8 192 rows, as the 8 192-row
blocks before did, so DataFusion prunes pages inside a large row group."""
BLOOM_FPP = 0.05
"""Parquet bloom filters (false-positive rate) on plain string columns: ids, for ``=``."""


def _bloomed(path: str, dtype: pa.DataType, text: Collection[str]) -> bool:
    return pa.types.is_string(dtype) and not is_hidden(path) and path not in text


def writer_options(
    schema: pa.Schema,
    sample: pa.RecordBatch | pa.Table | None = None,
    block_rows: int = 0,
    text: Collection[str] = (),
) -> dict[str, Any]:
    """Keyword arguments of ``pq.ParquetWriter`` for an extent of ``schema``; ``sample``, a
    block of it, chooses which columns get dictionaries (without: every string column).
    String columns without one, other than ``text`` (whose words have token filters) and
    hidden ones, get a bloom filter sized for ``block_rows`` distinct values (0: none)."""
    dictionary: list[str] = []
    encodings: dict[str, str] = {}
    statistics: list[str] = []
    blooms: dict[str, dict[str, Any]] = {}
    for field in schema:
        values = sample.column(field.name) if sample is not None else None
        for path, dtype in leaf_paths(field.name, field.type):
            if not path.startswith(RAW_PREFIX):  # bloom bits and skeletons: no min/max
                statistics.append(path)
            if path.startswith(RESIDUAL_PREFIXES):  # a few key layouts, repeated
                dictionary.append(path)
                continue
            flat = values if path == field.name else None  # list elements: not sampled
            if _dictionary(dtype, flat):
                dictionary.append(path)
            elif (encoding := _encoding(dtype)) is not None:
                encodings[path] = encoding
            elif block_rows and _bloomed(path, dtype, text):
                blooms[path] = {"ndv": block_rows, "fpp": BLOOM_FPP}
    return {
        "compression": COMPRESSION,
        "use_dictionary": dictionary,
        "column_encoding": encodings,
        "write_statistics": statistics,
        "write_page_index": True,
        "max_rows_per_page": PAGE_ROWS,
        "bloom_filter_options": blooms or None,
        "store_schema": True,
    }


def written_schema(file_schema: pa.Schema, footer: dict[bytes, bytes]) -> pa.Schema:
    """The Arrow schema the extent was written with, without the footer's own keys and
    without the hidden sub-columns of shredded dynamic paths.

    Parquet names list elements ``element`` where kyma's Arrow types say ``item``; the
    schema pyarrow stored (``ARROW:schema``) keeps the writer's names and field metadata.
    """
    stored = footer.get(ARROW_SCHEMA_KEY)
    schema = file_schema
    if stored is not None:
        try:
            schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored)))
        except (ValueError, OSError):  # binascii.Error is a ValueError; ArrowInvalid
            schema = file_schema
    hidden = [i for i, name in enumerate(schema.names) if is_hidden(name)]
    for i in reversed(hidden):
        schema = schema.remove(i)
    skip = (*KYMA_KEYS, ARROW_SCHEMA_KEY)
    meta = {k: v for k, v in (schema.metadata or {}).items() if k not in skip}
    return schema.with_metadata(meta) if meta else schema.remove_metadata()


CHECKSUM_CHUNK = 4 << 20


def crc32_of(source: pa.NativeFile | BinaryIO, length: int) -> int:
    """The CRC-32 of the first ``length`` bytes of ``source``, read from its start in chunks."""
    source.seek(0)
    crc = 0
    left = length
    while left > 0:
        chunk = source.read(min(CHECKSUM_CHUNK, left))
        if not chunk:
            break
        crc = zlib.crc32(chunk, crc)
        left -= len(chunk)
    return crc

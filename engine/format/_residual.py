"""Dynamic values stored once: the shredded leaves cut out of each CBOR value, put back on read.

A row whose value holds shredded leaves (``_shred.py``) is stored as its **skeleton** -- the
value's CBOR bytes without those leaves' bytes: map headers, keys, and every leaf that is not
shredded, in their order -- plus its **holes**: per cut leaf, where in the skeleton its bytes
go and which sub-column holds it (little-endian u32 pairs). Key order and original types are
the skeleton's and the sub-column's; rows of one key layout share one skeleton, which a
dictionary stores once. ``rebuild`` re-encodes the sub-columns' values as CBOR and splices
them in with numpy: the original bytes, exactly -- the writer checks every row and keeps a
row whole (its CBOR in the column itself, as before) when they would differ (a number encoded
wider than needed, a half-precision float, duplicate keys...). Values are walked once per
distinct value at write (as ``_walk.py`` does); reads are vectorized, no per-row Python.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Collection
from typing import Any

import cbor2
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.engine.format._parsed import Leaf, ParsedDynamic
from kyma.engine.format._shred import HIDDEN_PREFIX, Shred, ShreddedColumn
from kyma.engine.format._walk import DistinctValues, _scalar_type
from kyma.engine.format.predicate import MAX_PATH_DEPTH

HOLE = np.dtype("<u4")
Path = tuple[str, ...]


_WIDTHS = np.array([0, 1, 2, 4, 8], np.int64)
"""Bytes of a CBOR head's argument after its first byte, by how many of 24, 2**8, 2**16
and 2**32 the argument reaches."""


def _head(major: int, arg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CBOR heads of ``major`` type with ``arg`` (uint64) per row: an (n, 9) byte matrix and
    each head's length."""
    n = len(arg)
    heads = np.zeros((n, 9), np.uint8)
    if not n or int(arg.max()) < 24:  # short strings, small numbers: one byte
        heads[:, 0] = major | arg.astype(np.uint8)
        return heads, np.ones(n, np.int64)
    steps = (arg >= 24).astype(np.int8)
    for bound in (256, 65536, 2**32):
        steps += arg >= bound
    heads[:, 0] = major | (np.minimum(arg, 23).astype(np.uint8) + steps.astype(np.uint8))
    width = _WIDTHS[steps]
    big_endian = arg.astype(">u8").view(np.uint8).reshape(n, 8)
    for step in np.unique(steps).tolist():  # each width present: the argument's last bytes
        if step:
            rows, w = steps == step, int(_WIDTHS[step])
            heads[rows, 1 : 1 + w] = big_endian[rows, 8 - w :]
    return heads, width + 1


def _binary(data: np.ndarray, offsets: np.ndarray, valid: np.ndarray | None) -> pa.Array:
    mask = None if valid is None or valid.all() else pa.array(~valid)
    array = pa.Array.from_buffers(
        pa.large_binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    if mask is not None:
        array = pc.if_else(mask, pa.scalar(None, pa.large_binary()), array)
    return array


def _gather(source: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes of ``source`` at each (start, length) piece, pieces in order."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.uint8)
    before = np.cumsum(lengths) - lengths
    index = np.repeat(starts - before, lengths) + np.arange(total, dtype=np.int64)
    return source[index]


def _joined(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Every value's bytes in row order (``_flat``'s output): one slice, as the values of an
    Arrow array lie one after the other."""
    if not len(starts):
        return np.zeros(0, np.uint8)
    return data[int(starts[0]) : int(starts[-1] + lengths[-1])]


def _rows_of(heads: np.ndarray, head_lengths: np.ndarray, body: pa.Array | None) -> pa.Array:
    """Per row, its head's bytes then (strings) its body's bytes, as large_binary: the head
    bytes picked out of the head matrix, the bodies' bytes (in row order already) written
    around them with one mask."""
    in_head = np.arange(9) < head_lengths[:, None]
    if body is None:
        offsets = np.concatenate([[0], np.cumsum(head_lengths)])
        return _binary(heads[in_head], offsets, None)
    buffer, starts, lengths = _flat(body)
    offsets = np.concatenate([[0], np.cumsum(head_lengths + lengths)])
    data = np.empty(int(offsets[-1]), np.uint8)
    at = (offsets[:-1, None] + np.arange(9))[in_head]
    data[at] = heads[in_head]
    bodies = np.ones(len(data), np.bool_)
    bodies[at] = False
    data[bodies] = _joined(buffer, starts, lengths)
    return _binary(data, offsets, None)


_OFFSET_TYPES = (pa.binary(), pa.string(), pa.large_binary(), pa.large_string())


def _flat(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A (large) binary or string array's data bytes, and each value's start and length
    (other types, such as views or dictionaries, cast to large binary first)."""
    if values.type not in _OFFSET_TYPES:
        values = values.cast(pa.large_binary())
    wide = pa.types.is_large_binary(values.type) or pa.types.is_large_string(values.type)
    width = np.dtype(np.int64 if wide else np.int32)
    _, offsets_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(
        offsets_buffer, width, len(values) + 1, values.offset * width.itemsize
    ).astype(np.int64)
    data = (
        np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    )
    return data, offsets[:-1], np.diff(offsets)


def encoded(kind: str, values: pa.Array) -> pa.Array:
    """Each value of a sub-column as CBOR, the bytes cbor2 writes (nulls: empty)."""
    n = len(values)
    if kind == "string":
        text = pc.fill_null(values, "") if values.null_count else values
        lengths = pc.binary_length(text).to_numpy(zero_copy_only=False).astype(np.uint64)
        heads, head_lengths = _head(0x60, lengths)
        return _rows_of(heads, head_lengths, text)
    if kind == "long":
        v = _numbers(values, 0).astype(np.int64, copy=False)
        negative = v < 0
        arg = np.where(negative, ~v, v).astype(np.uint64)
        heads, lengths = _head(0, arg)
        heads[negative, 0] |= 0x20
        return _rows_of(heads, lengths, None)
    if kind == "bool":
        truth = _numbers(values, False)
        heads = np.zeros((n, 9), np.uint8)
        heads[:, 0] = np.where(truth, 0xF5, 0xF4)
        return _rows_of(heads, np.ones(n, np.int64), None)
    v = _numbers(values, 0.0).astype(np.float64, copy=False)
    heads = np.zeros((n, 9), np.uint8)
    heads[:, 0] = 0xFB
    heads[:, 1:] = v.astype(">f8").view(np.uint8).reshape(n, 8)
    lengths = np.full(n, 9, np.int64)
    special = ~np.isfinite(v)  # cbor2 writes NaN and the infinities as half floats
    half = np.where(np.isnan(v), 0x7E00, np.where(v > 0, 0x7C00, 0xFC00))[special]
    heads[special, 0] = 0xF9
    heads[special, 1] = half >> 8
    heads[special, 2] = half & 0xFF
    lengths[special] = 3
    return _rows_of(heads, lengths, None)


_EMPTY = {
    pa.binary(): pa.scalar(b"", pa.binary()),
    pa.large_binary(): pa.scalar(b"", pa.large_binary()),
}


def _no_nulls(values: pa.Array) -> pa.Array:
    """A binary array with its nulls as empty values (they then hold no bytes)."""
    if not values.null_count:
        return values
    return pc.fill_null(values, _EMPTY.get(values.type, b""))


def encoded_columns(kinds: list[str], columns: list[pa.Array]) -> list[pa.Array]:
    """``encoded`` of each sub-column (``kinds[i]``: its type), the columns of one type
    encoded together (slices of one array): a few numpy passes per type, not per column."""
    out: list[pa.Array | None] = [None] * len(columns)
    for kind in dict.fromkeys(kinds):
        mine = [i for i, k in enumerate(kinds) if k == kind]
        if len(mine) == 1:
            out[mine[0]] = encoded(kind, columns[mine[0]])
            continue
        parts = [columns[i] for i in mine]
        joined = encoded(kind, pa.concat_arrays([p.cast(parts[0].type) for p in parts]))
        start = 0
        for i, part in zip(mine, parts, strict=True):
            out[i] = joined.slice(start, len(part))
            start += len(part)
    return out  # type: ignore[return-value]


def _numbers(values: pa.Array, fill: object) -> np.ndarray:
    """``values`` as numpy, nulls as ``fill``."""
    if values.null_count:
        values = pc.fill_null(values, fill)
    return values.to_numpy(zero_copy_only=False)


def _map_head(n: int) -> bytes:
    if n < 24:
        return bytes([0xA0 | n])
    for code, width in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * width):
            return bytes([0xA0 | code]) + n.to_bytes(width, "big")
    raise ValueError(f"a map of {n} entries")


def skeleton_of(value: Any, shreds: dict[tuple[Path, str], int]) -> tuple[bytes, bytes] | None:
    """The skeleton and holes of one decoded value; None unless it is an object whose every
    leaf is shredded (a row holding anything else is stored whole: what Arrow's parse gives,
    ``_layout_skeleton``, must be the same bytes)."""
    out = bytearray()
    holes: list[int] = []
    if type(value) is not dict or not _encode(value, (), shreds, out, holes) or not holes:
        return None
    return bytes(out), struct.pack(f"<{len(holes)}I", *holes)


@functools.lru_cache(maxsize=4096)
def _key(key: str) -> bytes:
    """A key's CBOR (keys repeat across an extent's values)."""
    return cbor2.dumps(key)


def _encode(
    value: dict, prefix: Path, shreds: dict[tuple[Path, str], int], out: bytearray, holes: list
) -> bool:
    out += _map_head(len(value))
    for key, child in value.items():
        if type(key) is not str:
            return False
        out += _key(key)
        path = (*prefix, key)
        if type(child) is dict:
            if len(path) >= MAX_PATH_DEPTH or not _encode(child, path, shreds, out, holes):
                return False
            continue
        kind = _scalar_type(child)
        found = None if kind is None else shreds.get((path, kind))
        if found is None:
            return False
        holes += [len(out), found]
    return True


def rebuild(
    whole: pa.Array, skeleton: pa.Array, holes: pa.Array, values: list[pa.Array]
) -> pa.Array:
    """The original CBOR of each row: ``whole`` where the skeleton is null, else the
    skeleton with the encoded ``values`` (one array per sub-column, ``encoded``) spliced in
    at its holes. binary in, binary out."""
    n = len(whole)
    stripped = pc.is_valid(skeleton).to_numpy(zero_copy_only=False)
    kept = pc.is_valid(whole).to_numpy(zero_copy_only=False)
    # the bytes of a null skeleton or whole value are never read; holes are read as one run
    skel_data, skel_starts, skel_lengths = _flat(skeleton)
    hole_data, hole_starts, hole_lengths = _flat(_no_nulls(holes))
    whole_data, whole_starts, whole_lengths = _flat(whole)
    pairs = np.frombuffer(_joined(hole_data, hole_starts, hole_lengths).tobytes(), HOLE)
    hole_offsets, hole_columns = pairs[0::2].astype(np.int64), pairs[1::2].astype(np.int64)
    k = np.where(stripped, hole_lengths // 8, 0)
    first_hole = np.cumsum(k) - k
    pieces = np.where(stripped, 2 * k + 1, np.where(kept, 1, 0))
    first_piece = np.cumsum(pieces) - pieces
    total = int(pieces.sum())
    starts = np.zeros(total, np.int64)
    lengths = np.zeros(total, np.int64)
    # sources, one after the other: skeletons, whole values, each sub-column's encodings
    # (sub-columns encoded together, ``encoded_columns``, share one buffer: added once)
    sources = [skel_data, whole_data]
    bases = [0, len(skel_data)]
    value_starts, value_lengths = [], []
    shared: dict[tuple[int, int], int] = {}
    for array in values:
        data, s, ln = _flat(array)
        key = (data.ctypes.data, len(data))
        if key not in shared:
            shared[key] = bases[-1] + len(sources[-1])
            bases.append(shared[key])
            sources.append(data)
        value_starts.append(s + shared[key])
        value_lengths.append(ln)
    source = np.concatenate(sources) if sources else np.zeros(0, np.uint8)
    # whole rows: one piece
    rows = np.flatnonzero(kept & ~stripped)
    starts[first_piece[rows]] = whole_starts[rows] + bases[1]
    lengths[first_piece[rows]] = whole_lengths[rows]
    # the holes' values
    hole_rows = np.repeat(np.arange(n), k)
    index = np.arange(len(hole_rows)) - first_hole[hole_rows]
    at = first_piece[hole_rows] + 2 * index + 1
    if len(values):
        all_starts = np.stack(value_starts)  # (sub-columns, n)
        all_lengths = np.stack(value_lengths)
        starts[at] = all_starts[hole_columns, hole_rows]
        lengths[at] = all_lengths[hole_columns, hole_rows]
    # the skeletons' pieces between the holes
    rows = np.flatnonzero(stripped)
    count = k[rows] + 1
    piece_rows = np.repeat(rows, count)
    i = np.arange(len(piece_rows)) - np.repeat(np.cumsum(count) - count, count)
    last = i == k[piece_rows]
    h = first_hole[piece_rows] + i
    # a stripped row has a hole at least: these indexes exist
    begin = np.where(i == 0, 0, hole_offsets[np.maximum(h - 1, 0)])
    end = np.where(last, skel_lengths[piece_rows], hole_offsets[np.minimum(h, len(pairs) // 2 - 1)])
    at = first_piece[piece_rows] + 2 * i
    starts[at] = skel_starts[piece_rows] + begin
    lengths[at] = end - begin
    data = _gather(source, starts, lengths)
    cumulative = np.concatenate([[0], np.cumsum(lengths)])
    offsets = cumulative[np.concatenate([first_piece, [total]])]
    return _binary(data, offsets, stripped | kept).cast(whole.type)


def strip(
    whole: pa.Array,
    skeleton: pa.Array,
    holes: pa.Array,
    values: list[pa.Array],
) -> tuple[pa.Array, pa.Array, pa.Array]:
    """One block's dynamic column as written: (whole, skeleton, holes), each row either
    whole or stripped -- stripped only where ``rebuild`` gives its bytes back exactly."""
    back = rebuild(pa.nulls(len(whole), whole.type), skeleton, holes, values)
    exact = pc.fill_null(pc.equal(back, whole), False)
    none = pa.scalar(None, pa.binary())
    return (
        pc.if_else(exact, pa.scalar(None, whole.type), whole),
        pc.if_else(exact, skeleton, none),
        pc.if_else(exact, holes, none),
    )


def skeleton_column(column: str) -> str:
    """``__kyma/~skeleton/attributes`` (``~`` starts no path: JSON-pointer escaping)."""
    return f"{HIDDEN_PREFIX}~skeleton/{column}"


def holes_column(column: str) -> str:
    return f"{HIDDEN_PREFIX}~holes/{column}"


def stripped_columns(file_columns: Collection[str], read: Collection[str]) -> list[str]:
    """The columns of ``read`` that the file stores stripped (to rebuild when read)."""
    return [c for c in read if skeleton_column(c) in file_columns]


def skeletons(distinct: DistinctValues, shredded: ShreddedColumn) -> tuple[pa.Array, pa.Array]:
    """Each distinct value's skeleton and holes (null: no shredded leaf): one walk per group
    of alike values (``DistinctValues.alike``: theirs are the same bytes), and per value of
    the others."""
    index = {(s.path, s.type): i for i, s in enumerate(shredded.shreds)}
    values = distinct.values
    found: list[tuple[bytes, bytes] | None] = []
    which = np.full(len(values), -1, np.int64)
    for members in distinct.alike:
        which[members] = len(found)
        found.append(skeleton_of(values[members[0]], index))
    for i in np.flatnonzero(which < 0).tolist():
        which[i] = len(found)
        found.append(skeleton_of(values[i], index))
    taken = pa.array(which)
    return (
        pa.array([None if f is None else f[0] for f in found], pa.binary()).take(taken),
        pa.array([None if f is None else f[1] for f in found], pa.binary()).take(taken),
    )


def parsed_skeletons(
    found: list[Leaf], exact: pa.Array, shredded: ShreddedColumn
) -> tuple[pa.Array, pa.Array]:
    """The skeletons and holes of the rows Arrow's parse vouches for (``_parsed.py``), over
    the extent's rows (null elsewhere): their CBOR is the struct's present keys in field
    order, so a row's skeleton follows from which leaves it holds -- one per distinct
    pattern of presence, built once."""
    n = len(exact)
    none = pa.nulls(n, pa.binary())
    if not found or not n:
        return none, none
    index = {(s.path, s.type): i for i, s in enumerate(shredded.shreds)}
    present = np.stack([pc.is_valid(f.array).to_numpy(zero_copy_only=False) for f in found], 1)
    packed = np.packbits(present, axis=1)
    width = packed.shape[1]
    keys = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), n, [None, pa.py_buffer(np.ascontiguousarray(packed).tobytes())]
    )
    layouts = pc.dictionary_encode(keys)
    built = [
        _layout_skeleton(found, np.unpackbits(np.frombuffer(k, np.uint8))[: len(found)], index)
        for k in layouts.dictionary.to_pylist()
    ]
    rows = pc.and_(exact, pc.is_valid(layouts.indices))
    skeleton = pa.array([None if b is None else b[0] for b in built], pa.binary())
    holes = pa.array([None if b is None else b[1] for b in built], pa.binary())
    return (
        pc.if_else(rows, skeleton.take(layouts.indices), none),
        pc.if_else(rows, holes.take(layouts.indices), none),
    )


def _layout_skeleton(
    found: list[Leaf], bits: np.ndarray, index: dict[tuple[Path, str], int]
) -> tuple[bytes, bytes] | None:
    """The skeleton of a struct row holding the leaves of ``found`` whose ``bits`` are set
    (None: a present leaf is not shredded, or its object is too deep to know)."""
    children: dict[Path, list[Leaf]] = {}
    for leaf, bit in zip(found, bits, strict=True):
        if bit:
            children.setdefault(leaf.path[:-1], []).append(leaf)
    out = bytearray()
    holes: list[int] = []

    def encode(prefix: Path) -> bool:
        mine = children.get(prefix, [])
        out.extend(_map_head(len(mine)))
        for leaf in mine:
            out.extend(cbor2.dumps(leaf.path[-1]))
            if leaf.kind is None:
                if len(leaf.path) >= MAX_PATH_DEPTH or not encode(leaf.path):
                    return False
                continue
            column = index.get((leaf.path, leaf.kind))
            if column is None:
                return False
            holes.extend([len(out), column])
        return True

    if not encode(()) or not holes:
        return None
    return bytes(out), struct.pack(f"<{len(holes)}I", *holes)


def written(
    block: pa.Array,
    indices: pa.Array,
    found: tuple[pa.Array, pa.Array],
    parsed: ParsedDynamic | None,
    layouts: tuple[pa.Array, pa.Array] | None,
    shredded: ShreddedColumn,
    b: int,
) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Block ``b`` of a dynamic column as stored: (whole, skeleton, holes). Rows of CBOR
    (``indices``: their distinct values, null where not walked) are stripped where ``strip``
    finds their bytes given back. Rows Arrow's parse vouches for (``parsed``, the block's
    rows) hold no bytes in ``block``: they are stripped where their layout has a skeleton
    (``layouts``, the block's rows of ``parsed_skeletons``: the CBOR that rebuilds from it
    is the parse's by construction), and the others' CBOR is encoded from the parse."""
    skeleton, holes = found[0].take(indices), found[1].take(indices)
    whole = block
    if skeleton.null_count < len(skeleton):
        values = encoded_columns([s.type for s in shredded.shreds], shredded.block(b))
        whole, skeleton, holes = strip(block, skeleton, holes, values)
    if parsed is None:
        return whole, skeleton, holes
    if layouts is None:
        return parsed.filled(whole), skeleton, holes
    stripped = pc.is_valid(layouts[0])
    whole = parsed.filled(whole, pc.invert(stripped))
    whole = pc.if_else(stripped, pa.scalar(None, whole.type), whole)
    return whole, pc.coalesce(skeleton, layouts[0]), pc.coalesce(holes, layouts[1])


def rebuilt(table: pa.Table, columns: list[str], shreds: list[Shred]) -> pa.Table:
    """``table`` with each of ``columns`` (stored stripped) rebuilt from its skeleton, holes
    and sub-columns, which ``table`` holds too."""
    for name in columns:
        mine = [s for s in shreds if s.column == name]
        values = [encoded(s.type, table.column(s.name).combine_chunks()) for s in mine]
        whole = rebuild(
            table.column(name).combine_chunks(),
            table.column(skeleton_column(name)).combine_chunks(),
            table.column(holes_column(name)).combine_chunks(),
            values,
        )
        table = table.set_column(table.schema.get_field_index(name), name, whole)
    return table

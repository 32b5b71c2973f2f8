"""pgoutput data messages of one peek, decoded column by column: no Python object per value.

The messages are concatenated into one buffer; each tuple's columns are walked with numpy
across every message of a table at once (one step per column, not per value), and each
column's text values become one Arrow string array, converted to its kyma type by Arrow
casts (``from_text``) where they read exactly as the snapshot's fetch path reads them.
Anything else (unchanged TOASTed values, a key an UPDATE changed, binary values, a column
count that differs from the relation's) is left to the row-wise decoder: ``tuples`` and
``texts`` return None for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kyma.connectors.postgres._types import PgType, _instant, kyma_type
from kyma.connectors.postgres.cdc._changes import (
    DELETE,
    INSERT,
    UPDATE,
    Convert,
    assemble,
    conversion_sql,
)
from kyma.connectors.postgres.cdc.pgoutput import Relation
from kyma.engine.errors import FormatError

INSERT_TAG, UPDATE_TAG, DELETE_TAG = b"IUD"
DATA_TAGS = np.frombuffer(b"IUD", np.uint8)
_KIND_NULL, _KIND_UNCHANGED, _KIND_TEXT, _KIND_BINARY = b"nutb"
_PAD = 16  # zero bytes after the last message, so a truncated one reads zeros, not past the end


@dataclass(frozen=True)
class Messages:
    """One peek's messages, back to back: message i is ``buf[starts[i]:ends[i]]``."""

    buf: np.ndarray  # uint8
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64

    @classmethod
    def of(cls, datas: Sequence[bytes]) -> Messages:
        return cls.joined(b"".join(datas), np.fromiter(map(len, datas), np.int64, len(datas)))

    @classmethod
    def joined(cls, data: bytes, lengths: np.ndarray) -> Messages:
        """Messages back to back in ``data``, message i ``lengths[i]`` bytes long.

        >>> m = Messages.joined(b"BxC", np.array([2, 1]))
        >>> [m.message(i) for i in range(len(m))]
        [b'Bx', b'C']
        """
        lengths = lengths.astype(np.int64)
        if len(lengths) and lengths.min() <= 0:
            raise FormatError("pgoutput: an empty message")
        ends = np.cumsum(lengths)
        total = int(ends[-1]) if len(ends) else 0
        if total != len(data):
            raise FormatError(f"pgoutput: {len(data)} bytes of messages, lengths add to {total}")
        buf = np.frombuffer(data + bytes(_PAD), np.uint8)
        return cls(buf, ends - lengths, ends)

    def __len__(self) -> int:
        return len(self.starts)

    def message(self, i: int) -> bytes:
        return self.buf[self.starts[i] : self.ends[i]].tobytes()

    def messages(self) -> list[bytes]:
        """Every message as bytes (for the row-wise decoder)."""
        view, ends = self.buf.data, self.ends.tolist()
        return [view[s:e].tobytes() for s, e in zip(self.starts.tolist(), ends, strict=True)]

    @property
    def tags(self) -> np.ndarray:
        return self.buf[self.starts]

    def byte(self, pos: np.ndarray) -> np.ndarray:
        return self.buf[self._clamp(pos, 1)]

    def int16(self, pos: np.ndarray) -> np.ndarray:
        return self._view(pos, 2, ">i2")

    def int32(self, pos: np.ndarray) -> np.ndarray:
        return self._view(pos, 4, ">i4")

    def uint32(self, pos: np.ndarray) -> np.ndarray:
        return self._view(pos, 4, ">u4")

    def _clamp(self, pos: np.ndarray, width: int) -> np.ndarray:
        return np.clip(pos, 0, len(self.buf) - width)

    def _view(self, pos: np.ndarray, width: int, dtype: str) -> np.ndarray:
        """The big-endian integers at ``pos``: their bytes gathered in one step, then read
        as ``dtype``."""
        pos = self._clamp(pos, width)
        gathered = self.buf[pos[:, None] + np.arange(width)]
        return gathered.view(dtype).reshape(len(pos)).astype(np.int64)


@dataclass(frozen=True)
class Tuples:
    """TupleData of n messages with the same column count, column-major."""

    kinds: np.ndarray  # (columns, n) uint8: n, u, t or b
    starts: np.ndarray  # (columns, n) where each value starts (where its kind is, if none)
    ends: np.ndarray  # (columns, n) where each value ends
    end: np.ndarray  # (n,) the position after the tuple

    def unchanged(self) -> bool:
        return bool((self.kinds == _KIND_UNCHANGED).any())


def tuples(m: Messages, pos: np.ndarray, columns: int) -> Tuples | None:
    """The TupleData at ``pos`` of each message; None if one has not ``columns`` columns."""
    if (m.int16(pos) != columns).any():
        return None
    pos = pos + 2
    kinds = np.empty((columns, len(pos)), np.uint8)
    starts = np.empty((columns, len(pos)), np.int64)
    ends = np.empty((columns, len(pos)), np.int64)
    for j in range(columns):
        kind = m.byte(pos)
        valued = (kind == _KIND_TEXT) | (kind == _KIND_BINARY)
        known = valued | (kind == _KIND_NULL) | (kind == _KIND_UNCHANGED)
        if not known.all():
            raise FormatError(f"pgoutput tuple: unknown column kind {bytes(kind[~known][:1])!r}")
        length = np.where(valued, m.int32(pos + 1), 0)
        if (length < 0).any():
            raise FormatError("pgoutput tuple: a negative value length")
        kinds[j] = kind
        starts[j] = np.where(valued, pos + 5, pos)
        ends[j] = starts[j] + length
        pos = np.where(valued, ends[j], pos + 1)
    return Tuples(kinds, starts, ends, pos)


def texts(m: Messages, t: Tuples, column: int) -> pa.Array | None:
    """One column's values as UTF-8 text (null for NULL); None if one arrived in binary."""
    kinds = t.kinds[column]
    if (kinds == _KIND_BINARY).any():
        return None
    n = len(kinds)
    if not n:
        return pa.array([], pa.string())
    # Value i is segment 2i of one array over the whole buffer (segment 2i + 1 is the bytes
    # between it and the next value): a take copies the values out in C.
    small = len(m.buf) < 2**31
    bounds = np.empty(2 * n, np.int32 if small else np.int64)
    bounds[0::2], bounds[1::2] = t.starts[column], t.ends[column]
    if (np.diff(bounds) < 0).any():
        raise FormatError("pgoutput tuple: a value runs past the next message")
    kind = pa.binary() if small else pa.large_binary()
    segments = pa.Array.from_buffers(
        kind, 2 * n - 1, [None, pa.py_buffer(bounds), pa.py_buffer(m.buf)]
    )
    index = pa.array(np.arange(0, 2 * n, 2), mask=kinds != _KIND_TEXT)
    try:
        values = segments.take(index)
        if small:  # the cast checks UTF-8
            return values.cast(pa.string())
        return values.cast(pa.large_string()).cast(pa.string())
    except pa.ArrowInvalid as e:
        raise FormatError(f"pgoutput tuple: a text value is not UTF-8: {e}") from e


_NUMBER_TYPES = {"int2": pa.int32(), "int4": pa.int32(), "int8": pa.int64(), "oid": pa.int64()}
_TEXT_TYPES = frozenset({"text", "varchar", "name", "uuid"})
_INSTANT_TYPES = {
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "date": pa.date32(),
}


def from_text(text: pa.Array, pg: PgType, numeric_mode: str) -> pa.Array | None:
    """Output text of a column of type ``pg`` (the session's DateStyle ISO, TimeZone UTC,
    floats exact) in kyma's Arrow type, as the snapshot reads it; None where only the
    source's own cast is exact (or the text is out of Arrow's range: the source then says
    what is wrong with it).

    >>> from_text(pa.array(["t", None]), PgType("boolean", "bool", "B"), "real").to_pylist()
    [True, None]
    """
    kind, warning = kyma_type(pg, numeric_mode=numeric_mode)
    name = pg.typname
    if warning is not None or pg.category in ("A", "R", "C"):
        return None
    try:
        if pg.category == "E" or name in _TEXT_TYPES:
            return text
        if name == "bpchar":
            return pc.utf8_rtrim(text, characters=" ")
        if name in _NUMBER_TYPES:
            return text.cast(_NUMBER_TYPES[name])
        if name == "float8" or (name == "numeric" and kind.name == "real"):
            return text.cast(pa.float64())
        if name == "float4":
            return text.cast(pa.float32())
        if name == "numeric":  # as text
            return text
        if name == "bool":
            return pc.equal(text, "t")
        if name in _INSTANT_TYPES:
            if pc.any(pc.match_substring(text, "infinity")).as_py():
                return None
            return _instant(text.cast(_INSTANT_TYPES[name]))
    except (pa.ArrowInvalid, ValueError):
        return None
    return None


@dataclass(frozen=True)
class Commits:
    """The complete transactions of a peek, by index: commit LSN text and time, end LSN."""

    lsn: pa.Array  # string, lsn_key of each transaction's commit LSN
    ts_us: np.ndarray  # int64
    end_lsn: np.ndarray  # uint64


_OPS = pa.array([INSERT, UPDATE, DELETE], pa.string())
_NEW, _KEY, _OLD = b"NKO"


def table_batch(
    m: Messages,
    index: np.ndarray,
    txn: np.ndarray,
    relation: Relation,
    types: Sequence[PgType],
    primary_key: Sequence[str],
    commits: Commits,
    convert: Convert,
    numeric_mode: str,
) -> pa.Table | None:
    """The kyma batch of one table's Insert/Update/Delete messages ``index`` (in commit
    order; ``txn``: each one's transaction), each key's changes in a transaction collapsed
    to its final version as ``TableChanges`` does; None if the row-wise path must decode."""
    names = [c.name for c in relation.columns]
    key_at = [names.index(k) for k in primary_key]
    starts, tags = m.starts[index], m.buf[m.starts[index]]
    kind = m.byte(starts + 5)
    keyed = (kind == _KEY) | (kind == _OLD)
    old = (tags == UPDATE_TAG) & keyed
    if (((tags == DELETE_TAG) & ~keyed) | ((tags != DELETE_TAG) & ~keyed & (kind != _NEW))).any():
        raise FormatError("pgoutput: a change's tuple is not marked 'N', 'K' or 'O'")
    if ((tags == INSERT_TAG) & keyed).any():
        raise FormatError("pgoutput Insert: expected 'N'")
    pos = starts + 6
    old_key = None
    if old.any():
        before = tuples(m, pos[old], len(names))
        if before is None or before.unchanged():
            return None
        if (m.byte(before.end) != _NEW).any():
            raise FormatError("pgoutput Update: expected 'N' after the old tuple")
        pos[old] = before.end + 1
        old_keys = [texts(m, before, j) for j in key_at]
        if any(k is None for k in old_keys):
            return None
        old_key = _join(old_keys)  # type: ignore[arg-type]
    row = tuples(m, pos, len(names))
    if row is None or row.unchanged():
        return None
    if (row.end != m.ends[index]).any():
        raise FormatError("pgoutput: a message's last tuple does not end where the message does")
    values = [texts(m, row, j) for j in range(len(names))]
    if any(v is None for v in values):
        return None
    key = _join([values[j] for j in key_at])  # type: ignore[misc]
    if old_key is not None and not pc.all(pc.equal(old_key, key.filter(old))).as_py():
        return None  # a key changed: the old one needs a tombstone
    op = np.where(tags == INSERT_TAG, 0, np.where(tags == UPDATE_TAG, 1, 2))
    keep, op = _final_versions(txn, key, op)
    every = len(keep) == len(key)  # nothing collapsed: ``keep`` takes every row, in order
    deleted = pa.array(op == 2) if (op == 2).any() else None
    arrays, fallback = {}, {}
    types_of = dict(zip(names, types, strict=True))
    for j, (name, pg) in enumerate(types_of.items()):
        text: pa.Array = values[j] if every else values[j].take(keep)  # type: ignore[union-attr,assignment]
        if deleted is not None and j not in key_at:  # a deleted row keeps only its key
            text = pc.if_else(deleted, pa.scalar(None, pa.string()), text)
        converted = from_text(text, pg, numeric_mode)
        if converted is None:
            fallback[name] = text.to_pylist()
        else:
            arrays[name] = converted
    if fallback:
        table = convert(conversion_sql(fallback, types_of, numeric_mode), {})
        arrays.update({name: table.column(name) for name in fallback})
    t = txn[keep]
    return assemble(
        arrays,
        types_of,
        numeric_mode,
        key=key if every else key.take(keep),
        op=_OPS.take(op),
        lsn=commits.lsn.take(t),
        event_us=pa.array(commits.ts_us[t]),
    )


def _join(keys: list[pa.Array]) -> pa.Array:
    """The key columns' text joined by ':', as the snapshot's ``concat_ws``."""
    if len(keys) == 1:
        return keys[0]
    return pc.binary_join_element_wise(*keys, ":")


def _final_versions(
    txn: np.ndarray, key: pa.Array, op: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each (transaction, key)'s last change, in order, and its op: an update of a key the
    same transaction inserted stays an insert."""
    encoded = pc.dictionary_encode(key)
    if len(encoded.dictionary) == len(key):  # every key once: nothing to collapse
        return np.arange(len(key)), op
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    group = txn.astype(np.int64) * (int(codes.max(initial=0)) + 1) + codes
    unique, inverse = np.unique(group, return_inverse=True)
    if len(unique) == len(group):
        return np.arange(len(group)), op
    last = np.zeros(len(unique), np.int64)
    np.maximum.at(last, inverse, np.arange(len(group)))
    inserted = np.bincount(inverse, weights=op == 0, minlength=len(unique)) > 0
    keep = np.sort(last)
    final = op[keep]
    return keep, np.where((final == 1) & inserted[inverse[keep]], 0, final)

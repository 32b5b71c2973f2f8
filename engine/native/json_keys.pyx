# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Whether each NDJSON line writes the keys of a set that its row has, once each, in order.

Ingest's fast path stores a dynamic column's CBOR built from pyarrow's parse only for
lines whose keys it has checked this way (``ingest/coerce/_cbor.py``): CBOR keeps a line's
key order, a parsed struct its own. One pass a line, without the GIL, from colon to colon:
a key is the string before one (JSON blanks between). Every key of a line without ``\\"``
is found so; a colon inside a string may pass for a key too, which only ever fails a line
(a key more than its row has). Lines with ``\\"`` the caller leaves to Python anyway.

>>> lines = b'{"a":1,"b":{"c":2}}{"b" :{},"a":1}{"a":"b:","b":{}}'
>>> offsets = np.array([0, 19, 34, 52])
>>> present = np.array([[1, 1, 1], [1, 1, 0], [1, 1, 0]], np.uint8)
>>> in_order(lines, offsets, [b'"a"', b'"b"', b'"c"'], present).tolist()
[True, False, True]
"""

from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memchr, memcmp

import numpy as np


def in_order(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    list texts,
    const uint8_t[:, ::1] present,
):
    """Per line (``data[offsets[i]:offsets[i + 1]]``), whether the keys it writes (a string
    followed by JSON blanks and ``:``, at any depth) that are among ``texts`` (each key's
    JSON text, quotes included) are exactly the texts of the keys ``present`` in its row
    (lines × texts), in the order of ``texts``: bool array."""
    cdef Py_ssize_t rows = offsets.shape[0] - 1, count = len(texts)
    joined = b"".join(texts)
    cdef const uint8_t[::1] text_bytes = joined if joined else b"\0"
    text_starts = np.zeros(count + 1, np.int64)
    text_starts[1:] = np.cumsum([len(t) for t in texts])
    # texts that are the same key at two levels share an id: lines are compared by text
    ids = np.array([texts.index(t) for t in texts], np.int64)
    cdef const int64_t[::1] starts = text_starts
    cdef const int64_t[::1] id_of = ids
    out = np.zeros(rows, np.bool_)
    cdef uint8_t[::1] ok = out.view(np.uint8)
    cdef const uint8_t* base = &data[0] if data.shape[0] else <const uint8_t*>b""
    cdef const uint8_t* start
    cdef const uint8_t* at
    cdef const uint8_t* opening
    cdef const uint8_t* stop
    cdef const uint8_t* close
    cdef Py_ssize_t row, j, next_j, length, found
    cdef bint good
    with nogil:
        for row in range(rows):
            start = base + offsets[row]
            at = start
            stop = base + offsets[row + 1]
            next_j = 0  # the next present key expected
            while next_j < count and not present[row, next_j]:
                next_j += 1
            good = True
            while good:
                at = <const uint8_t*>memchr(at, 58, stop - at)  # ':'
                if at == NULL:
                    break
                close = at - 1  # a key's closing quote, blanks between
                while close >= start and (close[0] == 32 or close[0] == 9 or close[0] == 13):
                    close -= 1
                at += 1
                if close < start or close[0] != 34:
                    continue  # no key: a colon in a value, or after a number
                opening = close - 1
                while opening >= start and opening[0] != 34:
                    opening -= 1
                if opening < start:
                    continue
                length = close + 1 - opening
                found = -1
                for j in range(count):
                    if (
                        starts[j + 1] - starts[j] == length
                        and memcmp(opening, &text_bytes[starts[j]], length) == 0
                    ):
                        found = id_of[j]
                        break
                if found >= 0:
                    if next_j >= count or id_of[next_j] != found:
                        good = False
                    else:
                        next_j += 1
                        while next_j < count and not present[row, next_j]:
                            next_j += 1
            ok[row] = good and next_j >= count
    return out

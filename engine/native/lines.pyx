# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""One pass over an NDJSON body, without the GIL: where each line ends, and how many ``:``
and how many ``{`` or ``[`` it holds (bounds of its keys and of its nesting depth).

The request limits (lines, line length, keys, depth) and the fast reader's layout read
these instead of each scanning the body (``ingest/coerce/_lines.py``). numpy and Arrow take
a pass per byte they look for, and hold a mask as large as the body (BENCHMARKS.md, "REST
ingest of hits: one native pass before the parse").

>>> ends, colons, openers = marks(b'{"a":[1]}\\n\\n{"b":{"c":2}}', -1)
>>> ends.tolist(), colons.tolist(), openers.tolist()
([9, 10, 24], [1, 0, 2], [2, 0, 2])
>>> marks(b"{}\\n{}\\n", 1) is None
True
"""

from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memchr

import numpy as np


def marks(const uint8_t[::1] body, int64_t max_newlines):
    """(ends, colons, openers), int64 arrays with one entry per line (``body.split(b"\\n")``):
    the offset of its newline (of the body's end, for the last), its ``:`` and its ``{``
    and ``[``; None when the body has more than ``max_newlines`` newlines (-1: any)."""
    cdef Py_ssize_t size = body.shape[0]
    cdef const uint8_t* data = &body[0] if size else NULL
    cdef int64_t newlines = 0
    cdef const uint8_t* at = data
    cdef const uint8_t* found
    with nogil:
        while size and at < data + size:
            found = <const uint8_t*>memchr(at, 10, data + size - at)
            if found == NULL:
                break
            newlines += 1
            at = found + 1
    if 0 <= max_newlines < newlines:
        return None
    ends = np.empty(newlines + 1, np.int64)
    colons = np.empty(newlines + 1, np.int64)
    openers = np.empty(newlines + 1, np.int64)
    cdef int64_t[::1] end_at = ends
    cdef int64_t[::1] colons_at = colons
    cdef int64_t[::1] openers_at = openers
    cdef int64_t line, start = 0, stop, i, run, colon, opener
    cdef uint8_t byte, run_colons, run_openers
    with nogil:
        for line in range(newlines + 1):
            if line < newlines:
                stop = <const uint8_t*>memchr(data + start, 10, size - start) - data
            else:
                stop = size
            colon = 0
            opener = 0
            while start < stop:  # runs of 255 bytes: byte-wide counters (vectorized)
                run = min(stop - start, 255)
                run_colons = 0
                run_openers = 0
                for i in range(start, start + run):
                    byte = data[i]
                    run_colons += byte == 58  # ':'
                    run_openers += (byte == 123) | (byte == 91)  # '{' '['
                colon += run_colons
                opener += run_openers
                start += run
            end_at[line] = stop
            colons_at[line] = colon
            openers_at[line] = opener
            start += 1
    return ends, colons, openers

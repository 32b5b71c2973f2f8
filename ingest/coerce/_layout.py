"""Where a body's objects are, found with vectorized Arrow kernels before pyarrow parses it.

pyarrow's JSON reader is not an NDJSON validator: it reads two objects on one line as two
rows, one object over two lines as one row, a ``null`` line as an all-null row (and crashes
the process when ``null`` is the first line), and overflows the C stack on deep nesting. So
the fast path only hands pyarrow a body whose every non-blank line is valid UTF-8, starts
with ``{``, ends with ``}`` and cannot nest deeper than ``MAX_DEPTH``; the caller then checks
that pyarrow saw exactly one row per such line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._lines import Lines, scan

# Deep enough for any real document, shallow enough for a small thread stack in pyarrow
# (about 0.5 KiB per level) and for Python's recursion limit in the slow path.
MAX_DEPTH = 256
_WHITESPACE = " \t\r"


@dataclass(frozen=True)
class Layout:
    body: bytes
    numbers: pa.Array
    """The 1-based numbers of the non-blank lines (int64)."""
    first: str
    """The first non-blank line, trimmed of JSON whitespace."""
    bounds: np.ndarray | None
    """Where each non-blank line starts and ends, interleaved, when no line has whitespace
    around it (its text is then the body's bytes between them); else None."""

    @property
    def rows(self) -> int:
        return len(self.numbers)

    @functools.cached_property
    def lines(self) -> pa.Array:
        """The non-blank lines, trimmed of JSON whitespace (large_string), cut out when a
        reader first needs them (a body of scalar columns never does)."""
        if self.bounds is not None:  # cut straight out of the body, checked UTF-8 already
            count = len(self.bounds) - 1  # every other piece is a line's, then a gap
            pieces = pa.Array.from_buffers(
                pa.large_string(),
                count,
                [None, pa.py_buffer(self.bounds), pa.py_buffer(self.body)],
            )
            return pieces.take(pa.array(np.arange(0, count, 2)))
        trimmed = _trimmed(self.body)
        kept = pc.subtract(self.numbers, 1)
        contiguous = kept[-1].as_py() == len(kept) - 1  # blank lines at the end at most
        return trimmed.slice(0, len(kept)) if contiguous else trimmed.take(kept)


def layout(body: bytes, lines: Lines | None = None) -> Layout | None:
    """The body's object lines, or None when only the slow reader may read it; ``lines``,
    the body's lines if the caller scanned them."""
    whole = pa.Array.from_buffers(
        pa.large_binary(), 1, [None, pa.py_buffer(np.array([0, len(body)])), pa.py_buffer(body)]
    )
    try:
        whole.cast(pa.large_string())  # UTF-8, checked in one call
    except pa.ArrowInvalid:
        return None
    if lines is None:
        lines = scan(body)
        assert lines is not None
    data = np.frombuffer(body, np.uint8)
    starts, stops = lines.starts, lines.ends
    kept = np.flatnonzero(stops > starts)
    # Most bodies have no whitespace around their lines: their first and last bytes say
    # all; any other body is trimmed first.
    bare = len(kept) and (
        (data[starts[kept]] == ord("{")).all() and (data[stops[kept] - 1] == ord("}")).all()
    )
    bounds = None
    if bare:
        first = body[starts[kept[0]] : stops[kept[0]]].decode()
        bounds = np.column_stack([starts[kept], stops[kept]]).ravel()
    else:
        trimmed = _trimmed(body)
        lengths = pc.binary_length(trimmed)
        kept = np.flatnonzero(lengths.to_numpy(zero_copy_only=False))
        if not len(kept):
            return None
        chosen = trimmed.take(pa.array(kept))
        if not _all(pc.starts_with(chosen, "{")) or not _all(pc.ends_with(chosen, "}")):
            return None
        first = chosen[0].as_py()
    if int(lines.openers.max()) > MAX_DEPTH:
        return None
    return Layout(body, pa.array(kept + 1, pa.int64()), first, bounds)


def _trimmed(body: bytes) -> pa.Array:
    """Every line of ``body`` (UTF-8), trimmed of JSON whitespace (large_string)."""
    pieces = pc.split_pattern(pa.array([body], pa.large_binary()), b"\n").flatten()
    return pc.utf8_trim(pieces.cast(pa.large_string()), _WHITESPACE)


def _all(mask: pa.Array) -> bool:
    return bool(pc.all(mask).as_py())

"""Where a body's objects are, found with vectorized Arrow kernels before pyarrow parses it.

pyarrow's JSON reader is not an NDJSON validator: it reads two objects on one line as two
rows, one object over two lines as one row, a ``null`` line as an all-null row (and crashes
the process when ``null`` is the first line), and overflows the C stack on deep nesting. So
the fast path only hands pyarrow a body whose every non-blank line is valid UTF-8, starts
with ``{``, ends with ``}`` and cannot nest deeper than ``MAX_DEPTH``; the caller then checks
that pyarrow saw exactly one row per such line.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

# Deep enough for any real document, shallow enough for a small thread stack in pyarrow
# (about 0.5 KiB per level) and for Python's recursion limit in the slow path.
MAX_DEPTH = 256
_WHITESPACE = " \t\r"
_NOT_OPENING = bytes(b for b in range(256) if b not in b"{[\n")


@dataclass(frozen=True)
class Layout:
    lines: pa.Array
    """The non-blank lines, trimmed of JSON whitespace (large_string)."""
    numbers: pa.Array
    """Their 1-based line numbers (int64)."""

    @property
    def rows(self) -> int:
        return len(self.lines)


def layout(body: bytes) -> Layout | None:
    """The body's object lines, or None when only the slow reader may read it."""
    pieces = pc.split_pattern(pa.array([body], pa.large_binary()), b"\n").flatten()
    try:
        text = pieces.cast(pa.large_string())
    except pa.ArrowInvalid:  # not UTF-8
        return None
    trimmed = pc.utf8_trim(text, _WHITESPACE)
    lengths = pc.binary_length(trimmed)
    kept = pc.indices_nonzero(lengths)
    if not len(kept):
        return None
    contiguous = kept[-1].as_py() == len(kept) - 1  # blank lines at the end at most
    lines = trimmed.slice(0, len(kept)) if contiguous else trimmed.take(kept)
    if not _all(pc.starts_with(lines, "{")) or not _all(pc.ends_with(lines, "}")):
        return None
    if pc.max(lengths).as_py() > 2 * MAX_DEPTH and _max_brackets(body) > MAX_DEPTH:
        return None
    return Layout(lines, pc.add(kept, 1))


def _max_brackets(body: bytes) -> int:
    """The most ``{`` and ``[`` on one line: a bound of its nesting depth."""
    brackets = body.translate(None, _NOT_OPENING)
    pieces = pc.split_pattern(pa.array([brackets], pa.large_binary()), b"\n").flatten()
    return pc.max(pc.binary_length(pieces)).as_py()


def _all(mask: pa.Array) -> bool:
    return bool(pc.all(mask).as_py())

"""Row shape limits, checked on the raw NDJSON body before any reader runs.

Keys per row and nesting depth cost every later step (columns of the fast path, schema
evolution, the typed planner's recursion, CBOR's own depth limit), so a body past them is
refused first, naming its line. Cheap in the common case: a body with fewer ``:`` (or
brackets) than the limit cannot pass it; otherwise only the lines that hold that many are
looked at closely.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import numpy as np

from kyma.engine.errors import IngestError, LimitExceededError

_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_INNERMOST = re.compile(rb"\[\]|\{\}")


def _all_but(keep: bytes) -> bytes:
    return bytes(b for b in range(256) if b not in keep)


_NOT_STRUCTURAL = _all_but(b":[]{}\n")
_BRACKETS = b"[]{}"
_NOT_BRACKET = _all_but(b"[]{}\n")


def check_shape(body: bytes, max_keys: int, max_depth: int) -> int | None:
    """LimitExceededError for a row with more than ``max_keys`` top-level keys; IngestError
    for a value nested deeper than ``max_depth``; 0 turns a limit off. Returns the most
    ``{`` and ``[`` on one line (the fast reader's own guard: ``coerce_ndjson``'s
    ``max_openers``), None when both limits are off and the body was not read."""
    if not (max_keys or max_depth):
        return None
    structural = body.translate(None, _NOT_STRUCTURAL)  # one pass; the rest is ~1/30 of it
    if max_keys and structural.count(b":") > max_keys:
        colons = structural.translate(None, _BRACKETS)
        for line, text in _lines_holding(body, colons, max_keys):
            keys = _top_level_keys(text)
            if keys > max_keys:
                raise LimitExceededError(
                    f"line {line} has {keys} keys, over max_keys_per_row={max_keys}",
                    "max_keys_per_row",
                )
    if max_depth and structural.count(b"[") + structural.count(b"{") > max_depth:
        brackets = structural.translate(None, b":")
        for line, text in _lines_holding(body, brackets, max_depth):
            if nesting_depth(text, max_depth) > max_depth:
                raise IngestError(
                    f"line {line}: JSON nested deeper than max_nesting_depth={max_depth}", line
                )
    return _longest_line(structural.translate(None, b":]}"))


def _longest_line(kept: bytes) -> int:
    """The length of the longest line of ``kept`` (a body with some bytes removed)."""
    newlines = np.flatnonzero(np.frombuffer(kept, np.uint8) == ord("\n"))
    return int(np.diff(newlines, prepend=-1, append=len(kept)).max()) - 1


def _lines_holding(body: bytes, kept: bytes, count: int) -> Iterator[tuple[int, bytes]]:
    """(line number, text) of each line of ``body`` whose line of ``kept`` (``body`` with
    some bytes removed, newlines kept) is longer than ``count``."""
    newlines = np.flatnonzero(np.frombuffer(kept, np.uint8) == ord("\n"))
    lengths = np.diff(newlines, prepend=-1, append=len(kept)) - 1  # of kept.split(b"\n")
    flagged = np.flatnonzero(lengths > count)
    if len(flagged):
        lines = body.split(b"\n")
        for i in flagged.tolist():
            yield i + 1, lines[i]


def _top_level_keys(text: bytes) -> int:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # the readers word what is wrong with the line
        return 0
    return len(value) if isinstance(value, dict) else 0


def nesting_depth(text: bytes, stop_past: int = 0) -> int:
    """How deep arrays and objects nest in one line of JSON (strings do not count), counted
    by removing the innermost ``[]`` and ``{}`` pairs a round at a time; with ``stop_past``,
    counting stops one level past it. Unbalanced brackets stop it (the readers word them)."""
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKET)
    depth = 0
    while brackets and not (stop_past and depth > stop_past):
        inner = _INNERMOST.sub(b"", brackets)
        if len(inner) == len(brackets):
            break
        brackets, depth = inner, depth + 1
    return depth

"""Row shape limits, checked on the raw NDJSON body before any reader runs.

Keys per row and nesting depth cost every later step (columns of the fast path, schema
evolution, the typed planner's recursion, CBOR's own depth limit), so a body past them is
refused first, naming its line. Cheap in the common case: a line with fewer ``:`` (or
``{`` and ``[``) than the limit cannot pass it, and the body's :class:`Lines` count them for
every line in one pass; only the lines that hold that many are looked at closely.
"""

from __future__ import annotations

import json
import re

from kyma.engine.errors import IngestError, LimitExceededError

from ._lines import Lines, scan

_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_INNERMOST = re.compile(rb"\[\]|\{\}")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}\n")


def check_shape(body: bytes, max_keys: int, max_depth: int, lines: Lines | None = None) -> Lines:
    """LimitExceededError for a row with more than ``max_keys`` top-level keys; IngestError
    for a value nested deeper than ``max_depth``; 0 turns a limit off. Returns the body's
    lines (``lines``, when the caller scanned them already) for ``coerce_ndjson``."""
    if lines is None:
        lines = scan(body)
        assert lines is not None
    starts = lines.starts
    if max_keys:
        for i in (lines.colons > max_keys).nonzero()[0].tolist():
            keys = _top_level_keys(body[starts[i] : lines.ends[i]])
            if keys > max_keys:
                raise LimitExceededError(
                    f"line {i + 1} has {keys} keys, over max_keys_per_row={max_keys}",
                    "max_keys_per_row",
                )
    if max_depth:
        for i in (lines.openers > max_depth).nonzero()[0].tolist():
            if nesting_depth(body[starts[i] : lines.ends[i]], max_depth) > max_depth:
                raise IngestError(
                    f"line {i + 1}: JSON nested deeper than max_nesting_depth={max_depth}", i + 1
                )
    return lines


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

"""The tests' reference reading of a LIKE pattern: a Python regular expression matching what
``LIKE`` (or ``ILIKE``) matches, for property tests of the filters that prune by patterns."""

from __future__ import annotations

import re


def like_regex(pattern: str, insensitive: bool) -> re.Pattern[str] | None:
    """``pattern`` (``%``, ``_``, backslash escapes) as a regular expression; None for a
    pattern ending in a lone backslash (an error in Postgres)."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
    if escaped:
        return None
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if insensitive else 0))

"""SQL text as the protocol sees it: statements split at ``;`` and ``$n`` bound to literals.

Both walk the text once, skipping quoted strings, quoted names and comments, so a ``;`` or
``$1`` inside them is left alone. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

_TOKEN = re.compile(
    r"""
      '(?:[^']|'')*'            # a string literal
    | "(?:[^"]|"")*"            # a quoted name
    | --[^\n]*                  # a line comment
    | /\*.*?\*/                 # a block comment
    | \$(?P<param>\d+)          # a parameter
    | (?P<semi>;)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(sql: str) -> Iterator[re.Match[str]]:
    return _TOKEN.finditer(sql)


def split_statements(sql: str) -> list[str]:
    """The non-empty statements of a simple Query message.

    >>> split_statements("SELECT ';' AS a; ; SELECT 2 -- x;y")
    ["SELECT ';' AS a", 'SELECT 2 -- x;y']
    """
    parts, start = [], 0
    for token in _tokens(sql):
        if token.group("semi"):
            parts.append(sql[start : token.start()])
            start = token.end()
    parts.append(sql[start:])
    return [p.strip() for p in parts if _has_code(p)]


def _has_code(text: str) -> bool:
    """Whether ``text`` holds more than comments and white space."""
    start = 0
    for token in _tokens(text):
        if text[start : token.start()].strip() or token.group()[:2] not in ("--", "/*"):
            return True
        start = token.end()
    return bool(text[start:].strip())


def parameter_count(sql: str) -> int:
    """The highest ``$n`` of a statement.

    >>> parameter_count("SELECT $2, '$3', $1")
    2
    """
    numbers = [int(t.group("param")) for t in _tokens(sql) if t.group("param")]
    return max(numbers, default=0)


def bind(sql: str, literals: Sequence[str]) -> str:
    """``sql`` with each ``$n`` replaced by ``literals[n-1]``.

    >>> bind("SELECT $1, '$1' WHERE x = $2", ["'a'", "2"])
    "SELECT 'a', '$1' WHERE x = 2"
    """
    return _replace(sql, lambda n: literals[n - 1])


def _replace(sql: str, literal: Callable[[int], str]) -> str:
    out, start = [], 0
    for token in _tokens(sql):
        if token.group("param"):
            out.append(sql[start : token.start()])
            out.append(literal(int(token.group("param"))))
            start = token.end()
    out.append(sql[start:])
    return "".join(out)


def quote(text: str) -> str:
    """A SQL string literal.

    >>> quote("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"

"""``COPY (query) TO STDOUT`` and ``COPY table TO STDOUT``: the statement read, and the rows
in COPY's text or CSV format. Pure: the connection runs the query and sends the bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot.tokens import Token, TokenType

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.pgwire._session_sql import tokens

_VALUED = ("delimiter", "null", "quote")  # the options that take a string


@dataclass(frozen=True)
class Copy:
    query: str
    csv: bool = False
    header: bool = False
    delimiter: str = "\t"
    null: str = "\\N"
    quote: str = '"'

    def header_line(self, names: Sequence[str]) -> pa.Array | None:
        """The header's line, if asked for (names are written as values are)."""
        if not self.header:
            return None
        return self.lines([pa.array([n.encode()], pa.large_binary()) for n in names])

    def lines(self, columns: Sequence[pa.Array], plain: Sequence[bool] = ()) -> pa.Array:
        """One line a row of ``columns`` (text-format values, large_binary, null for NULL),
        each ending in a newline: built by Arrow's string kernels, column by column.
        ``plain[i]``: column i's texts hold no newline, quote, backslash or delimiter
        (numbers, booleans, timestamps), so nothing in them is escaped or quoted.

        >>> column = pa.array([b"a\\tb", None, b""], pa.large_binary())
        >>> Copy("q").lines([column, column]).to_pylist()
        [b'a\\\\tb\\ta\\\\tb\\n', b'\\\\N\\t\\\\N\\n', b'\\t\\n']
        >>> Copy("q", csv=True, delimiter=",", null="").lines([column]).to_pylist()
        [b'a\\tb\\n', b'\\n', b'""\\n']
        """
        plain = list(plain) or [False] * len(columns)
        cells = [self._cells(c, p) for c, p in zip(columns, plain, strict=True)]
        joined = pc.binary_join_element_wise(*cells, _bytes(self.delimiter))
        return pc.binary_join_element_wise(joined, _bytes(""), _bytes("\n"))

    def _cells(self, column: pa.Array, plain: bool) -> pa.Array:
        if plain and self.delimiter not in _PLAIN_TEXT:
            return self._plain(column)
        if not self.csv:
            escapes: tuple[tuple[str, str], ...] = _TEXT_ESCAPES
            if self.delimiter not in "\t\n\r\\":
                escapes += ((self.delimiter, "\\" + self.delimiter),)
            held = _bytes_held(column)
            for raw, escaped in escapes:
                if (held == ord(raw)).any():  # a scan of the bytes; a replace copies them
                    column = pc.replace_substring(column, raw, escaped)
            return pc.fill_null(column, _bytes(self.null))
        quote = self.quote
        special = pc.equal(column, _bytes(self.null))
        held = _bytes_held(column)
        for char in {self.delimiter, quote, "\n", "\r"}:
            if (held == ord(char)).any():
                special = pc.or_(special, pc.match_substring(column, char))
        doubled = pc.replace_substring(column, quote, quote + quote)
        quoted = pc.binary_join_element_wise(_bytes(quote), doubled, _bytes(quote), _bytes(""))
        return pc.fill_null(pc.if_else(special, quoted, column), _bytes(self.null))

    def _plain(self, column: pa.Array) -> pa.Array:
        """A value that is the NULL string is quoted in CSV, so it reads back as a value."""
        if self.csv:
            quoted = _bytes(self.quote + self.null + self.quote)
            column = pc.if_else(pc.equal(column, _bytes(self.null)), quoted, column)
        return pc.fill_null(column, _bytes(self.null))


_PLAIN_TEXT = "0123456789.-+:eE ainfINFtf"  # what numbers, booleans and timestamps are made of
_TEXT_ESCAPES = (("\\", "\\\\"), ("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))


def _bytes_held(column: pa.Array) -> np.ndarray:
    """The bytes of a large_binary column's values (and any its slice leaves out)."""
    data = column.buffers()[2]
    return np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)


def _bytes(text: str) -> pa.Scalar:
    return pa.scalar(text.encode(), pa.large_binary())


def parse(sql: str) -> Copy | None:
    """The COPY statement ``sql`` is, or None for any other statement.

    >>> parse("COPY (SELECT 1) TO STDOUT WITH (FORMAT csv, HEADER)")
    Copy(query='SELECT 1', csv=True, header=True, delimiter=',', null='', quote='"')
    >>> parse("copy logs (a, b) to stdout").query
    'SELECT a, b FROM logs'
    """
    text = sql.strip()
    if text[:4].lower() != "copy":
        return None
    found = tokens(text)
    read = _source(text, found)
    if read is None:
        return None
    query, at = read
    if at + 1 >= len(found) or found[at].text.lower() not in ("to", "from"):
        return None
    if found[at].text.lower() == "from":
        raise UnsupportedStatementError(
            "COPY FROM is not supported: load rows with POST /v1/ingest/<table>"
        )
    if found[at + 1].text.lower() != "stdout":
        raise SqlError("COPY TO a file is not supported: COPY … TO STDOUT (psql: \\copy)")
    words, found_values = _options(found[at + 2 :])
    if "binary" in words:
        raise UnsupportedStatementError("COPY … (FORMAT binary) is not supported: use text or csv")
    csv = "csv" in words
    header = (
        "header" in words
        and "false" not in words[words.index("header") + 1 : words.index("header") + 2]
    )
    copy = Copy(
        query,
        csv=csv,
        header=header,
        delimiter=found_values.get("delimiter", "," if csv else "\t"),
        null=found_values.get("null", "" if csv else "\\N"),
        quote=found_values.get("quote", '"'),
    )
    for name, char in (("delimiter", copy.delimiter), ("quote", copy.quote)):
        if len(char.encode()) != 1:
            raise SqlError(f"COPY {name} must be a single one-byte character")
    return copy


def _source(text: str, found: list[Token]) -> tuple[str, int] | None:
    """The query COPY reads (``(query)``, or ``table [(columns)]`` as a SELECT) and the index
    of the token after it."""
    if len(found) < 2 or found[0].text.lower() != "copy":
        return None
    if found[1].token_type == TokenType.L_PAREN:
        close = _closing(found, 1)
        if close is None:
            return None
        return text[found[1].end + 1 : found[close].start].strip(), close + 1
    if found[1].token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        return None
    at = 2  # a name, then ``.name`` as many times as it has parts
    while at + 1 < len(found) and found[at].token_type == TokenType.DOT:
        at += 2
    table = text[found[1].start : found[at - 1].end + 1]
    columns = "*"
    if at < len(found) and found[at].token_type == TokenType.L_PAREN:
        close = _closing(found, at)
        if close is None:
            return None
        columns = text[found[at].end + 1 : found[close].start].strip() or "*"
        at = close + 1
    return f"SELECT {columns} FROM {table}", at


def _closing(found: list[Token], at: int) -> int | None:
    """The index of the parenthesis closing the one at ``at``."""
    depth = 0
    for index in range(at, len(found)):
        kind = found[index].token_type
        depth += (kind == TokenType.L_PAREN) - (kind == TokenType.R_PAREN)
        if depth == 0:
            return index
    return None


def _options(found: list[Token]) -> tuple[list[str], dict[str, str]]:
    """The option words (lower-case) and the string options' values."""
    words: list[str] = []
    values: dict[str, str] = {}
    at = 0
    while at < len(found):
        word = found[at].text.lower()
        following = found[at + 1 : at + 3]
        if word in _VALUED and following and following[0].text.lower() == "as":
            following = following[1:]
        if word in _VALUED and following and following[0].token_type == TokenType.STRING:
            values[word] = following[0].text
            at = found.index(following[0]) + 1
            continue
        if found[at].token_type != TokenType.STRING and word.isalpha():
            words.append(word)
        at += 1
    return words, values

"""``COPY (query) TO STDOUT`` and ``COPY table TO STDOUT``: the statement read, and the rows
in COPY's text or CSV format. Pure: the connection runs the query and sends the bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

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

    def header_line(self, names: Sequence[str]) -> bytes | None:
        """The header's CopyData payload, if asked for."""
        return self._line([n.encode() for n in names]) if self.header else None

    def lines(self, rows: Iterator[Sequence[bytes | None]]) -> Iterator[bytes]:
        """One CopyData payload per row."""
        for row in rows:
            yield self._line(row)

    def _line(self, values: Sequence[bytes | None]) -> bytes:
        cells = [self._cell(v) for v in values]
        return self.delimiter.encode().join(cells) + b"\n"

    def _cell(self, value: bytes | None) -> bytes:
        if value is None:
            return self.null.encode()
        if not self.csv:
            for raw, escaped in (
                (b"\\", b"\\\\"),
                (b"\t", b"\\t"),
                (b"\n", b"\\n"),
                (b"\r", b"\\r"),
            ):
                value = value.replace(raw, escaped)
            return value.replace(self.delimiter.encode(), b"\\" + self.delimiter.encode())
        quote = self.quote.encode()
        special = (self.delimiter.encode(), quote, b"\n", b"\r")
        if value == self.null.encode() or any(s in value for s in special):
            return quote + value.replace(quote, quote + quote) + quote
        return value


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
    return Copy(
        query,
        csv=csv,
        header=header,
        delimiter=found_values.get("delimiter", "," if csv else "\t"),
        null=found_values.get("null", "" if csv else "\\N"),
        quote=found_values.get("quote", '"'),
    )


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

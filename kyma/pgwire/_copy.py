"""``COPY (query) TO STDOUT`` and ``COPY table TO STDOUT``: the statement read, and the rows
in COPY's text or CSV format. Pure: the connection runs the query and sends the bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kyma.engine.errors import SqlError, UnsupportedStatementError

_COPY = re.compile(
    r"copy\s+(?P<source>\(.*\)|[\w.\"]+(?:\s*\([^)]*\))?)\s+(?P<dir>to|from)\s+(?P<target>\w+)"
    r"(?P<options>.*)",
    re.I | re.S,
)
_OPTION = re.compile(r"(?P<name>delimiter|null|quote)\s+(?:as\s+)?'(?P<value>(?:[^']|'')*)'", re.I)


@dataclass(frozen=True)
class Copy:
    query: str
    csv: bool = False
    header: bool = False
    delimiter: str = "\t"
    null: str = "\\N"
    quote: str = '"'

    def lines(
        self, names: Sequence[str], rows: Iterator[Sequence[bytes | None]]
    ) -> Iterator[bytes]:
        """One CopyData payload per row (the header first, if asked)."""
        if self.header:
            yield self._line([n.encode() for n in names])
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
    match = _COPY.fullmatch(sql.strip().rstrip(";").strip())
    if match is None:
        return None
    if match.group("dir").lower() == "from":
        raise UnsupportedStatementError(
            "COPY FROM is not supported: load rows with POST /v1/ingest/<table>"
        )
    if match.group("target").lower() != "stdout":
        raise SqlError("COPY TO a file is not supported: COPY … TO STDOUT (psql: \\copy)")
    source = match.group("source").strip()
    if source.startswith("("):
        query = source[1:-1].strip()
    else:
        table, _, columns = source.partition("(")
        query = f"SELECT {columns.rstrip(')').strip() or '*'} FROM {table.strip()}"
    options = match.group("options")
    words = re.findall(r"[a-z]+", re.sub(_OPTION, " ", options).lower())
    if "binary" in words:
        raise UnsupportedStatementError("COPY … (FORMAT binary) is not supported: use text or csv")
    csv = "csv" in words
    header = (
        "header" in words
        and "false" not in words[words.index("header") + 1 : words.index("header") + 2]
    )
    found = {
        m.group("name").lower(): m.group("value").replace("''", "'")
        for m in _OPTION.finditer(options)
    }
    return Copy(
        query,
        csv=csv,
        header=header,
        delimiter=found.get("delimiter", "," if csv else "\t"),
        null=found.get("null", "" if csv else "\\N"),
        quote=found.get("quote", '"'),
    )

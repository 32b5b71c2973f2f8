"""SQLite's sqllogictest format, read into records: what to run, not what SQLite answered.

A file is records separated by blank lines: ``statement ok|error`` or
``query <types> [nosort|rowsort|valuesort] [label]``, the SQL, and for a query ``----`` and
SQLite's answer (ignored: Postgres is the oracle here). ``skipif <db>`` / ``onlyif <db>``
lines before a record say which engines run it; ``hash-threshold`` and ``halt`` are
directives. A record is run when Postgres is among its engines (``postgresql``, as the
format names it).

>>> text = "hash-threshold 8\\n\\nstatement ok\\nCREATE TABLE t(a INTEGER)\\n\\n"
>>> text += "onlyif mysql\\nquery I\\nSELECT 1 DIV 2\\n----\\n0\\n\\n"
>>> text += "query II rowsort\\nSELECT a,\\n a FROM t\\n----\\n"
>>> [(r.kind, r.sql, r.runs) for r in records(text)]
[('statement', 'CREATE TABLE t(a INTEGER)', True), ('query', 'SELECT 1 DIV 2', False), \
('query', 'SELECT a,\\n a FROM t', True)]
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENGINE = "postgresql"


@dataclass(frozen=True)
class Record:
    kind: str  # "statement" or "query"
    sql: str
    line: int  # where the record starts in its file (1-based)
    runs: bool  # Postgres is among the engines the record is meant for
    expect_error: bool = False  # ``statement error``
    sort: str = "nosort"


def records(text: str) -> Iterator[Record]:
    """The statements and queries of a sqllogictest file, in order."""
    for line, block in _blocks(text):
        runs = True
        head = 0
        while head < len(block) and block[head].split()[0] in ("skipif", "onlyif"):
            word, engine = block[head].split()[:2]
            if (word == "skipif") == (engine == ENGINE):
                runs = False
            head += 1
        if head == len(block):
            continue
        words = block[head].split()
        if words[0] == "halt":
            return
        if words[0] not in ("statement", "query"):
            continue  # hash-threshold and other directives
        body = block[head + 1 :]
        if "----" in body:
            body = body[: body.index("----")]
        sql = "\n".join(body).strip()
        if words[0] == "statement":
            yield Record("statement", sql, line, runs, expect_error=words[1:2] == ["error"])
        else:
            sort = words[2] if len(words) > 2 and words[2].endswith("sort") else "nosort"
            yield Record("query", sql, line, runs, sort=sort)


def read(path: Path) -> str:
    """A corpus file's text (``.gz`` files decompressed)."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode()


def _blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) of each blank-line-separated block, comments dropped."""
    block: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if block:
                yield start, block
            block = []
            continue
        if not block:
            start = number
        block.append(raw.rstrip())
    if block:
        yield start, block

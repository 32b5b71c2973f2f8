"""Results as psql draws them: aligned, unaligned (``|``) or CSV, rows or expanded records,
and error markers.

In the aligned format NULL is drawn as ``(null)`` (psql's common ``\\pset null '(null)'``),
dimmed on a terminal so it differs from the string ``'(null)'``; unaligned and CSV output,
meant for scripts, leave NULL empty.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kyma.dynamic import is_dynamic, json_texts

NULL = "(null)"
DIM, RESET = "\x1b[2m", "\x1b[0m"


FORMATS = ("aligned", "unaligned", "csv")


def cells(table: pa.Table) -> list[list[str | None]]:
    """Each column's values as display text, None for NULL."""
    return [texts(field, table.column(i)) for i, field in enumerate(table.schema)]


def texts(field: pa.Field, column: pa.ChunkedArray) -> list[str | None]:
    dtype = field.type
    if is_dynamic(field):
        return json_texts(column).to_pylist()
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return [None if v is None else "\\x" + v.hex() for v in column.to_pylist()]
    if pa.types.is_timestamp(dtype):
        suffix = "Z" if dtype.tz else ""
        texts = pc.strftime(column, format="%Y-%m-%d %H:%M:%S").to_pylist()
        return [None if t is None else t + suffix for t in texts]
    if pa.types.is_boolean(dtype):
        return [None if v is None else ("t" if v else "f") for v in column.to_pylist()]
    if pa.types.is_nested(dtype):
        return [None if v is None else json.dumps(v, default=str) for v in column.to_pylist()]
    return [None if v is None else str(v) for v in column.to_pylist()]


def width(text: str) -> int:
    """Terminal columns ``text`` takes: wide (east Asian) characters count twice."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _pad(text: str, size: int, right: bool) -> str:
    gap = " " * (size - width(text))
    return gap + text if right else text + gap


def _show(text: str | None, size: int, right: bool, dim: bool) -> str:
    if text is None:
        padded = _pad(NULL, size, right)
        return padded.replace(NULL, f"{DIM}{NULL}{RESET}") if dim else padded
    return _pad(text, size, right)


def _is_number(dtype: pa.DataType) -> bool:
    return pa.types.is_integer(dtype) or pa.types.is_floating(dtype) or pa.types.is_decimal(dtype)


def footer(rows: int) -> str:
    return f"({rows} row)" if rows == 1 else f"({rows} rows)"


def lines(
    table: pa.Table, fmt: str, *, expand: bool = False, tuples_only: bool = False, dim: bool = False
) -> list[str]:
    """``table`` in one of FORMATS; ``tuples_only`` drops the header and the footer (psql -t)."""
    if fmt == "csv":
        return csv_lines(table, tuples_only)
    if fmt == "unaligned":
        return unaligned(table, expand, tuples_only)
    if expand:
        return expanded(table, dim, tuples_only)
    return aligned(table, dim, tuples_only)


def csv_lines(table: pa.Table, tuples_only: bool = False) -> list[str]:
    """A header line (unless ``tuples_only``), then one CSV line per row; NULL is empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if not tuples_only:
        writer.writerow(table.column_names)
    writer.writerows(_plain_rows(table))
    return out.getvalue().splitlines() if table.num_columns else []


def _plain_rows(table: pa.Table) -> list[list[str]]:
    """Each row's display texts, NULL empty (the scripting formats)."""
    columns = [["" if c is None else c for c in col] for col in cells(table)]
    return [[col[r] for col in columns] for r in range(table.num_rows)]


def unaligned(table: pa.Table, expand: bool = False, tuples_only: bool = False) -> list[str]:
    """psql's unaligned format: ``a|b`` lines (``name|value`` when expanded); NULL is empty."""
    names = table.column_names
    rows = _plain_rows(table)
    if expand:
        records = ["\n".join(f"{n}|{v}" for n, v in zip(names, row, strict=True)) for row in rows]
        return "\n\n".join(records).split("\n") if records else []
    out = [] if tuples_only else ["|".join(names)]
    out += ["|".join(row) for row in rows]
    return out if tuples_only else [*out, footer(table.num_rows)]


def aligned(table: pa.Table, dim: bool = False, tuples_only: bool = False) -> list[str]:
    """The table in psql's aligned format, footer included unless ``tuples_only``."""
    names = table.column_names
    columns = [[c.replace("\n", "\\n") if c else c for c in col] for col in cells(table)]
    sizes = [
        max([width(name)] + [width(NULL if c is None else c) for c in col])
        for name, col in zip(names, columns, strict=True)
    ]
    right = [_is_number(f.type) for f in table.schema]
    out = [
        " " + " | ".join(n.center(s) for n, s in zip(names, sizes, strict=True)).rstrip(),
        "-" + "-+-".join("-" * s for s in sizes) + "-",
    ]
    if tuples_only:
        out = []
    for r in range(table.num_rows):
        row = [_show(col[r], s, a, dim) for col, s, a in zip(columns, sizes, right, strict=True)]
        out.append(" " + " | ".join(row).rstrip())
    return out if tuples_only else [*out, footer(table.num_rows)]


def expanded(table: pa.Table, dim: bool = False, tuples_only: bool = False) -> list[str]:
    """One ``-[ RECORD n ]`` block per row, a ``name | value`` line per column."""
    if table.num_rows == 0:
        return [] if tuples_only else ["(0 rows)"]
    names = table.column_names
    columns = cells(table)
    size = max(width(n) for n in names)
    out = []
    for r in range(table.num_rows):
        if tuples_only and r:
            out.append("")
        elif not tuples_only:
            out.append(f"-[ RECORD {r + 1} ]" + "-" * max(0, size - 10 - len(str(r + 1))))
        for name, col in zip(names, columns, strict=True):
            out.append(f"{_pad(name, size, False)} | {_show(col[r], 0, False, dim)}")
    return out


def error(message: str, sql: str | None, line: int | None, column: int | None) -> list[str]:
    """``ERROR: message``, then the statement's line with a ``^`` under the column."""
    lines = [f"ERROR: {message}"]
    texts = sql.split("\n") if sql else []
    if line is not None and column is not None and 1 <= line <= len(texts):
        prefix = f"LINE {line}: "
        lines.append(prefix + texts[line - 1])
        lines.append(" " * (len(prefix) + max(column - 1, 0)) + "^")
    return lines


def progress(entry: dict[str, Any]) -> str:
    """A running statement's one-line progress, from its ``GET /v1/queries`` entry.

    >>> progress({"elapsed_ms": 3210.0, "progress": {"extents_total": 40,
    ...     "extents_after_catalog": 3, "rows_scanned": 98304, "bytes_read": 786432,
    ...     "rows_returned": 0}})
    'running 3.2 s · 3/40 extents · 98 304 rows, 768.0 KiB to scan · 0 rows out · Ctrl-C cancels'
    """
    done = entry.get("progress") or {}
    parts = [f"running {entry['elapsed_ms'] / 1000:.1f} s"]
    if "extents_total" in done:
        parts.append(f"{done['extents_after_catalog']}/{done['extents_total']} extents")
        size = _size(done.get("bytes_read", 0))
        parts.append(f"{_count(done.get('rows_scanned', 0))} rows, {size} to scan")
    if "rows_returned" in done:
        parts.append(f"{_count(done['rows_returned'])} rows out")
    return " · ".join([*parts, "Ctrl-C cancels"])


def _count(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"

"""``COPY t [(columns)] FROM STDIN`` in Postgres's text or CSV format: the statement read
(by the parser), and the rows read from a byte stream by pyarrow's CSV reader, batch by
batch, cast to the table's column types and handed to the write path as one snapshot.

Nothing is committed unless every row converts: a value that does not is reported with its
line (counted as Postgres counts them, the header included) and column, as Postgres's
``COPY t, line 3, column n: "x"``. Text format's backslash escapes (``\\t``, ``\\n``,
``\\\\``…) are decoded with Arrow's string kernels, never row by row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from kyma.engine.catalog import Catalog, TableInfo
from kyma.engine.catalog._views import pg_type_name
from kyma.engine.errors import (
    BadCopyDataError,
    InvalidTextError,
    NotFoundError,
    OutOfRangeError,
    SqlError,
    UnsupportedStatementError,
)
from kyma.engine.float4 import narrowed
from kyma.engine.query._insert import InsertWriter
from kyma.engine.query._parse import identifier, parse_statement, table_name
from kyma.engine.query._writable import refuse_storage, refuse_view
from kyma.engine.query.dialect import Kyma
from kyma.engine.types import DEFAULT_COLUMN_NAMES

BLOCK_BYTES = 1 << 20
"""Bytes the CSV reader parses at a time: a batch of about that much text."""
_STORED = {"long", "int", "double", "real", "float4", "string", "bool", "timestamp"}
_TRUE = ["t", "true", "y", "yes", "on", "1"]
_FALSE = ["f", "false", "n", "no", "off", "0"]
_ESCAPES = [("\\t", "\t"), ("\\n", "\n"), ("\\r", "\r"), ("\\b", "\b"), ("\\f", "\f")]
_ESCAPES += [("\\v", "\v")]


@dataclass(frozen=True)
class CopyFrom:
    table: str
    columns: list[str] | None
    csv: bool = False
    header: bool = False
    delimiter: str = "\t"
    null: str = "\\N"
    quote: str = '"'


def statement(sql: str) -> CopyFrom | None:
    """The ``COPY … FROM STDIN`` that ``sql`` is, or None for any other statement.

    >>> copy = statement("COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER, DELIMITER ';')")
    >>> copy.columns, copy.csv, copy.header, copy.delimiter, copy.null
    (['a', 'b'], True, True, ';', '')
    >>> statement("COPY t FROM STDIN").delimiter
    '\\t'
    >>> statement("COPY t TO STDOUT") is None
    True
    >>> statement("COPY t FROM STDIN (FORMAT csv)")
    Traceback (most recent call last):
    kyma.engine.errors.SqlError: COPY … FROM STDIN: write its options as WITH (FORMAT csv, …)
    """
    if sql.lstrip()[:4].upper() != "COPY":  # the first word: most statements parse once
        return None
    try:
        stmt = parse_statement(sql)
    except SqlError:
        if _copies_from(sql):
            raise SqlError("COPY … FROM STDIN: write its options as WITH (FORMAT csv, …)") from None
        return None  # COPY … TO: read by the protocol's own COPY
    if not isinstance(stmt, exp.Copy) or not stmt.args.get("kind"):
        return None
    files = stmt.args.get("files") or []
    if len(files) != 1 or files[0].name.upper() != "STDIN":
        raise UnsupportedStatementError(
            "COPY FROM a file is not supported: COPY … FROM STDIN (psql: \\copy)"
        )
    target = stmt.this
    table = target.this if isinstance(target, exp.Schema) else target
    columns = [identifier(c) for c in target.expressions] if table is not target else None
    return _options(table_name(table), columns, stmt.args.get("params") or [])


def _copies_from(sql: str) -> bool:
    """Whether the tokens of a COPY are ``COPY <table> [(<columns>)] FROM …``."""
    try:
        tokens = Kyma().tokenize(sql)
    except TokenError:
        return False
    depth = 0
    for token in tokens[1:]:
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth == 0 and token.token_type == TokenType.FROM:
            return tokens[1].token_type != TokenType.L_PAREN
    return False


def _options(table: str, columns: list[str] | None, params: list[exp.Expression]) -> CopyFrom:
    """Both spellings: ``WITH (FORMAT csv, HEADER, …)`` and the old ``CSV HEADER``."""
    found: dict[str, str | bool] = {}
    for param in params:
        name = param.name.upper()
        value = param.args.get("expression")
        if name == "CSV":  # the old spelling; sqlglot reads ``CSV HEADER`` as one pair
            found["FORMAT"] = "csv"
            if value is not None and value.name.upper() == "HEADER":
                found["HEADER"] = True
            continue
        if value is None:
            found[name] = True
        elif isinstance(value, exp.Boolean):
            found[name] = bool(value.this)
        else:
            found[name] = value.name
    form = str(found.pop("FORMAT", "text")).lower()
    if form not in ("text", "csv"):
        raise UnsupportedStatementError(f"COPY FROM: format {form!r} is not supported: text or csv")
    csv = form == "csv"
    header = found.pop("HEADER", False)
    if isinstance(header, str):
        if header.lower() == "match":
            raise UnsupportedStatementError("COPY FROM: HEADER MATCH is not supported")
        header = header.lower() in ("true", "on", "1")
    options = CopyFrom(
        table,
        columns,
        csv=csv,
        header=bool(header),
        delimiter=str(found.pop("DELIMITER", "," if csv else "\t")),
        null=str(found.pop("NULL", "" if csv else "\\N")),
        quote=str(found.pop("QUOTE", '"')),
    )
    if found:
        raise UnsupportedStatementError(f"COPY FROM: option {sorted(found)[0]} is not supported")
    if len(options.delimiter) != 1 or len(options.quote) != 1:
        raise SqlError("COPY delimiter must be a single one-byte character")
    return options


def target(copy: CopyFrom, catalog: Catalog) -> pa.Schema:
    """The columns ``copy`` fills, typed as the table's (checked before any data is read)."""
    try:
        info = catalog.get_table(copy.table)
    except NotFoundError:
        refuse_view(catalog, copy.table)
        raise
    refuse_storage(catalog, copy.table)
    declared = [c.name for c in info.columns if c.name not in DEFAULT_COLUMN_NAMES]
    names = copy.columns if copy.columns is not None else declared
    if len(set(names)) != len(names):
        raise SqlError(f"COPY: a column is named twice in {names}")
    return pa.schema([_field(info, name) for name in names])


def load(copy: CopyFrom, schema: pa.Schema, data: IO[bytes], writer: InsertWriter) -> int:
    """Read every row of ``data`` into ``copy.table`` as one snapshot; how many there were."""
    batches = (b for b in _batches(copy, data, schema) if b.num_rows)
    return writer.insert_batches(copy.table, schema, batches)


def _field(info: TableInfo, name: str) -> pa.Field:
    column = info.column(name)
    if column is None:
        raise SqlError(f'column "{name}" of relation "{info.name}" does not exist')
    if column.type.name not in _STORED:
        raise UnsupportedStatementError(
            f"COPY FROM into column {name!r} of type {column.type.name} is not supported:"
            " load it with INSERT or POST /v1/ingest"
        )
    return column.to_arrow()


def _batches(copy: CopyFrom, data: IO[bytes], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    bad: list[tuple[int | None, int]] = []

    def invalid(row: pacsv.InvalidRow) -> str:
        bad.append((row.number, row.actual_columns))
        return "error"

    first = 1 + int(copy.header)  # Postgres's line number of the first row
    try:
        reader = pacsv.open_csv(
            data,
            read_options=pacsv.ReadOptions(
                column_names=[f"c{i}" for i in range(len(schema))],
                skip_rows=1 if copy.header else 0,
                use_threads=False,
                block_size=BLOCK_BYTES,
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=copy.delimiter,
                quote_char=copy.quote if copy.csv else False,
                double_quote=copy.csv,
                escape_char=False,
                newlines_in_values=copy.csv,
                ignore_empty_lines=False,
                invalid_row_handler=invalid,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={f"c{i}": pa.string() for i in range(len(schema))},
                null_values=[copy.null],
                strings_can_be_null=True,
                quoted_strings_can_be_null=False,
            ),
        )
        for batch in reader:
            yield _converted(copy, batch, schema, first)
            first += batch.num_rows
    except pa.ArrowInvalid as e:
        if bad:
            number, got = bad[0]
            where = f"COPY {copy.table}, line {number}" if number is not None else ""
            what = "missing data for column" if got < len(schema) else "extra data after"
            detail = f'"{schema.names[got]}"' if got < len(schema) else "last expected column"
            raise BadCopyDataError(f"{what} {detail} ({where})") from None
        raise BadCopyDataError(f"COPY {copy.table}: {e}") from None


def _converted(
    copy: CopyFrom, batch: pa.RecordBatch, schema: pa.Schema, first: int
) -> pa.RecordBatch:
    columns = []
    for text, field in zip(batch.columns, schema, strict=True):
        if not copy.csv:
            text = _unescaped(text)
        columns.append(_cast(copy, text, field, first))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _unescaped(text: pa.Array) -> pa.Array:
    """Text format's backslash escapes decoded (only where a value holds a backslash)."""
    if not pc.any(pc.match_substring(text, "\\")).as_py():
        return text
    text = pc.replace_substring(text, "\\\\", "\x00")
    for escaped, char in _ESCAPES:
        text = pc.replace_substring(text, escaped, char)
    text = pc.replace_substring_regex(text, r"\\(.)", r"\1")  # any other: the character
    return pc.replace_substring(text, "\x00", "\\")


def _cast(copy: CopyFrom, text: pa.Array, field: pa.Field, first: int) -> pa.Array:
    """``text`` as ``field``'s type; InvalidTextError (22P02) naming the first bad value,
    OutOfRangeError (22003) the first beyond a real's range."""
    try:
        return _as(text, field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OutOfRangeError):
        pass
    low, high = 0, len(text)  # bisect to the first value that does not convert
    while high - low > 1:
        middle = (low + high) // 2
        try:
            _as(text.slice(low, middle - low), field.type)
            low = middle
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OutOfRangeError):
            high = middle
    value, where = (
        text[low].as_py(),
        f"(COPY {copy.table}, line {first + low}, column {field.name})",
    )
    try:
        _as(text.slice(low, 1), field.type)
    except OutOfRangeError:
        raise OutOfRangeError(f"{value!r} is out of range for type real {where}") from None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    raise InvalidTextError(
        f"invalid input syntax for type {pg_type_name(field)}: {value!r} {where}"
    )


def _as(text: pa.Array, dtype: pa.DataType) -> pa.Array:
    if pa.types.is_string(dtype):
        return text
    if pa.types.is_boolean(dtype):
        words = pc.utf8_lower(pc.utf8_trim_whitespace(text))
        known = pc.or_kleene(pc.is_in(words, pa.array(_TRUE)), pc.is_in(words, pa.array(_FALSE)))
        if not pc.all(pc.or_kleene(known, pc.is_null(words))).as_py():
            raise pa.ArrowInvalid("not a boolean")
        return pc.if_else(pc.is_null(words), None, pc.is_in(words, pa.array(_TRUE)))
    if pa.types.is_timestamp(dtype) and dtype.tz is not None:
        try:
            return pc.cast(text, dtype)
        except pa.ArrowInvalid:  # no zone given: UTC, as kyma's session is
            return pc.cast(pc.cast(text, pa.timestamp(dtype.unit)), dtype)
    if pa.types.is_float32(dtype):
        return narrowed(pc.utf8_trim_whitespace(text))
    return pc.cast(pc.utf8_trim_whitespace(text), dtype)

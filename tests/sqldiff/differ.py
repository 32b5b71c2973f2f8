"""Run a sqllogictest file on kyma and on Postgres, and classify each query's two answers.

The file's statements load the same tables and rows into both: Postgres runs them as
written; kyma gets each table's consecutive INSERTs as one multi-row INSERT (one commit, not
hundreds) and skips CREATE INDEX (kyma has no indexes; answers do not depend on them).
Each query then runs on both and is one of ``CLASSES``. Answers are compared as multisets of
rows, and also in order where an outer ORDER BY names output columns; numbers compare by
value (an integral numeric is the integer) within ``REL_TOL``; kyma's default columns
``_timestamp`` and ``props`` are left out when a ``*`` brought them and Postgres has no such
column.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import psycopg
import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqllogic import Record

from kyma.engine.error_statuses import status

AGREE, WRONG, KYMA_ERROR, PG_ERROR, BOTH_ERROR, INTERNAL = (
    "agree",
    "wrong",
    "kyma-only error",
    "postgres-only error",
    "both error",
    "kyma internal error",
)
CLASSES = (AGREE, WRONG, KYMA_ERROR, PG_ERROR, BOTH_ERROR, INTERNAL)
DEFAULT_COLUMNS = ("_timestamp", "props")
REL_TOL = 1e-9
PG_TIMEOUT_MS = 20_000

Row = tuple[object, ...]
Kyma = Callable[[str], tuple[list[str], list[Row]]]
"""Runs one statement on kyma: (column names, rows)."""


@dataclass(frozen=True)
class Outcome:
    file: str
    line: int
    sql: str
    kind: str  # one of CLASSES
    reason: str = ""  # the error (or the difference) when not AGREE


def run_file(name: str, records: Iterable[Record], kyma: Kyma, pg_url: str) -> list[Outcome]:
    """Every query of one corpus file that Postgres is meant to run, classified. A setup
    statement that fails on either side raises (the file cannot be compared)."""
    outcomes = []
    with psycopg.connect(pg_url, autocommit=True) as pg:
        pg.execute(f"SET statement_timeout = {PG_TIMEOUT_MS}")
        pg.execute("SET TimeZone = 'UTC'")
        loader = _Loader(kyma)
        for record in records:
            if not record.runs:
                continue
            if record.kind == "statement":
                _statement(pg, loader, record)
                continue
            loader.flush()
            outcomes.append(_query(name, record, kyma, pg))
        loader.flush()
    return outcomes


def compare(sql: str, pg: tuple[list[str], list[Row]], kyma: tuple[list[str], list[Row]]) -> str:
    """Why two answers to ``sql`` differ ("" when they agree)."""
    pg_names, pg_rows = pg
    names, rows = _without_default_columns(*kyma, pg_names)
    if len(names) != len(pg_names):
        return f"{len(names)} columns, postgres {len(pg_names)}"
    if len(rows) != len(pg_rows):
        return f"{len(rows)} rows, postgres {len(pg_rows)}"
    ours = sorted((_canonical(r) for r in rows), key=_sort_key)
    theirs = sorted((_canonical(r) for r in pg_rows), key=_sort_key)
    for mine, oracle in zip(ours, theirs, strict=True):
        if not _same_row(mine, oracle):
            return f"row {mine!r}, postgres {oracle!r}"
    keys = _order_positions(sql, len(pg_names))
    if keys:
        for mine, oracle in zip(rows, pg_rows, strict=True):
            a = _canonical(tuple(mine[k] for k in keys))
            b = _canonical(tuple(oracle[k] for k in keys))
            if not _same_row(a, b):
                return f"order: {a!r} where postgres has {b!r}"
    return ""


def reason(error: BaseException) -> str:
    """An error's message on one line, numbers folded, for grouping."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text.translate(_DIGITS)[:160]


def is_internal(error: BaseException) -> bool:
    """Whether kyma answers ``error`` as an internal error (HTTP 500, SQLSTATE XX000)."""
    return status(error, "http") == 500


class _Loader:
    """kyma's side of the setup: consecutive INSERTs into one table become one INSERT."""

    def __init__(self, kyma: Kyma) -> None:
        self.kyma = kyma
        self.columns: dict[str, list[str]] = {}
        self.table: str | None = None
        self.rows: list[list[str]] = []

    def run(self, sql: str) -> None:
        stmt = sqlglot.parse_one(sql, dialect="postgres")
        if isinstance(stmt, exp.Insert) and isinstance(stmt.expression, exp.Values):
            self._insert(stmt)
            return
        self.flush()
        if isinstance(stmt, exp.Create) and str(stmt.args.get("kind")).upper() == "INDEX":
            return
        if isinstance(stmt, exp.Create) and isinstance(stmt.this, exp.Schema):
            table = stmt.this.this.name.lower()
            self.columns[table] = [c.name.lower() for c in stmt.this.expressions]
        self.kyma(sql)

    def _insert(self, stmt: exp.Insert) -> None:
        target = stmt.this
        if isinstance(target, exp.Schema):
            table = target.this.name.lower()
            named = [c.name.lower() for c in target.expressions]
        else:
            table = target.name.lower()
            named = self.columns[table]
        if table != self.table:
            self.flush()
            self.table = table
        order = self.columns[table]
        for values in stmt.expression.expressions:
            given = dict(zip(named, (v.sql("postgres") for v in values.expressions), strict=True))
            self.rows.append([given.get(column, "NULL") for column in order])

    def flush(self) -> None:
        if self.table is None or not self.rows:
            self.table = None
            return
        columns = ", ".join(self.columns[self.table])
        values = ", ".join(f"({', '.join(row)})" for row in self.rows)
        self.kyma(f"INSERT INTO {self.table} ({columns}) VALUES {values}")
        self.table, self.rows = None, []


def _statement(pg: psycopg.Connection, loader: _Loader, record: Record) -> None:
    if record.expect_error:
        return  # the corpus's error statements are about SQLite's own rules
    pg.execute(record.sql)  # type: ignore[arg-type]
    loader.run(record.sql)


def _query(name: str, record: Record, kyma: Kyma, pg: psycopg.Connection) -> Outcome:
    pg_answer: tuple[list[str], list[Row]] | None = None
    pg_error = kyma_error = None
    try:
        with pg.cursor() as cur:
            cur.execute(record.sql)  # type: ignore[arg-type]
            names = [d.name for d in cur.description or ()]
            pg_answer = (names, list(cur.fetchall()))
    except psycopg.Error as e:
        pg_error = e
    try:
        answer = kyma(record.sql)
    except Exception as e:  # noqa: BLE001 - every failure is classified, none may escape
        kyma_error = e
    where = (name, record.line, record.sql)
    if kyma_error is not None and is_internal(kyma_error):
        text = f"{type(kyma_error).__name__}: {reason(kyma_error)}"
        return Outcome(*where, INTERNAL, text)
    if pg_error is not None and kyma_error is not None:
        return Outcome(*where, BOTH_ERROR, reason(kyma_error))
    if pg_error is not None:
        return Outcome(*where, PG_ERROR, f"{pg_error.sqlstate}: {reason(pg_error)}")
    if kyma_error is not None:
        return Outcome(*where, KYMA_ERROR, reason(kyma_error))
    assert pg_answer is not None
    difference = compare(record.sql, pg_answer, answer)
    return Outcome(*where, WRONG if difference else AGREE, difference)


def _without_default_columns(
    names: list[str], rows: list[Row], pg_names: list[str]
) -> tuple[list[str], list[Row]]:
    keep = [i for i, n in enumerate(names) if n not in DEFAULT_COLUMNS or n in pg_names]
    if len(keep) == len(names):
        return names, rows
    return [names[i] for i in keep], [tuple(r[i] for i in keep) for r in rows]


def _order_positions(sql: str, width: int) -> list[int]:
    """The output positions an outer ORDER BY sorts by, when each of its keys is one (an
    ordinal, an output alias or a selected expression); [] otherwise."""
    try:
        stmt = sqlglot.parse_one(sql, dialect="postgres")
    except sqlglot.errors.ParseError:
        return []
    order = stmt.args.get("order")
    if not isinstance(stmt, exp.Select) or order is None:
        return []
    selected = [p.sql() for p in stmt.expressions]
    aliases = [p.alias_or_name for p in stmt.expressions]
    unaliased = [p.unalias().sql() for p in stmt.expressions]
    positions = []
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.this) <= width:
            positions.append(int(key.this) - 1)
        elif key.sql() in unaliased:
            positions.append(unaliased.index(key.sql()))
        elif key.sql() in selected:
            positions.append(selected.index(key.sql()))
        elif isinstance(key, exp.Column) and key.name in aliases:
            positions.append(aliases.index(key.name))
        else:
            return []
    return positions


def _canonical(row: Sequence[object]) -> Row:
    return tuple(_value(v) for v in row)


def _value(value: object) -> object:
    """Numbers by value (an integral one as an int), timestamps in UTC, intervals as
    psycopg reads them, lists as tuples."""
    if value is None or isinstance(value, bool | str | bytes):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, decimal.Decimal | float):
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if math.isfinite(value) and value == int(value) and abs(value) < 2**53:
            return int(value)
        return float(value)
    if isinstance(value, datetime.datetime):  # without a zone: UTC, kyma's only zone
        if value.tzinfo is None:
            return value.replace(tzinfo=datetime.UTC)
        return value.astimezone(datetime.UTC)
    if isinstance(value, pa.MonthDayNano):  # psycopg reads a month as 30 days
        months, days, nanoseconds = value
        return datetime.timedelta(days=30 * months + days, microseconds=nanoseconds // 1000)
    if isinstance(value, list | tuple):
        return tuple(_value(v) for v in value)
    return value


def _sort_key(row: Row) -> tuple[object, ...]:
    key: list[object] = []
    for value in row:
        if isinstance(value, int | float):
            key.append((1, "n", float(f"{value:.6g}")))
        elif value is None:
            key.append((2, "", ""))
        else:
            key.append((0, type(value).__name__, str(value)))
    return tuple(key)


def _same_row(a: Row, b: Row) -> bool:
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))


def _same(a: object, b: object) -> bool:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=REL_TOL)
    return a == b


_DIGITS = str.maketrans("0123456789", "##########")

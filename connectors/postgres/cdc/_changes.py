"""Decoded source transactions → Arrow batches of one synced table, with system columns.

Within a transaction, the changes to one key collapse into its final version (an insert
that was then updated stays an insert), so ``(_kyma_pk, _kyma_lsn)`` is unique. An UPDATE's
unchanged TOASTed value is taken from the key's previous version: earlier in the batch, else
the latest version kyma holds (``lookup``). Values are converted to kyma types at the source
with the same fetch expressions the snapshot and federation use, so a value reads the same
whichever path brought it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from psycopg import sql as psql
from sqlglot import exp

from kyma.connectors.base import SourceColumn
from kyma.connectors.postgres._types import PgType, fetch_expression, kyma_type
from kyma.connectors.postgres.cdc.pgoutput import UNCHANGED, Relation, Value
from kyma.engine.types import Column

INSERT, UPDATE, DELETE = "insert", "update", "delete"
TRUNCATE = "truncate"


def lsn_key(lsn: int) -> str:
    """An LSN as ``XXXXXXXX/XXXXXXXX``: Postgres reads it, and text order is LSN order.

    >>> lsn_key(0x1_0000BEEF)
    '00000001/0000BEEF'
    """
    return f"{lsn >> 32:08X}/{lsn & 0xFFFFFFFF:08X}"


@dataclass
class Change:
    op: str  # insert, update, delete, truncate
    relation: Relation | None
    new: tuple[Value, ...] | None = None
    old: tuple[Value, ...] | None = None
    types: tuple[PgType, ...] = ()  # of the relation's columns


@dataclass
class Transaction:
    commit_lsn: int
    commit_ts_us: int
    end_lsn: int = 0
    changes: list[tuple[int, Change]] = field(default_factory=list)  # (relid, change)


@dataclass
class _Row:
    key: str
    op: str
    values: dict[str, Any]  # column → text, None, or UNCHANGED
    lsn: int
    ts_us: int


Lookup = Callable[[str, Sequence[str], Sequence[str]], dict[str, dict[str, Any]]]
"""(kyma table, keys, columns) → {key: {column: value}} of each key's current version."""

Convert = Callable[[str, Mapping[str, SourceColumn]], pa.Table]
"""Run a conversion SELECT at the source; the answer in kyma's Arrow types."""


class TableChanges:
    """The changes of one table in one batch, in commit order."""

    def __init__(self, kyma_table: str, primary_key: Sequence[str]) -> None:
        self.kyma_table = kyma_table
        self.primary_key = tuple(primary_key)
        self.rows: list[_Row] = []
        self.types: dict[str, PgType] = {}
        self.changes = 0

    def add(self, txn: Transaction, changes: Sequence[Change], live_keys: Callable[[], set[str]]):  # type: ignore[no-untyped-def]
        """Collapse one transaction's changes to this table by key, then keep them."""
        final: dict[str, _Row] = {}
        for change in changes:
            self.changes += 1
            if change.relation is not None:
                names = [c.name for c in change.relation.columns]
                for column, type_ in zip(names, change.types, strict=True):
                    self.types.setdefault(column, type_)
            if change.op == TRUNCATE:
                latest = self._latest()
                for key in live_keys() | set(latest) | set(final):
                    state = final.get(key) or latest.get(key)
                    if state is None or state.op != DELETE:
                        final[key] = _Row(key, DELETE, {}, txn.commit_lsn, txn.commit_ts_us)
                continue
            if change.op == DELETE:
                values = dict(zip(names, change.old or (), strict=True))
                key = self.key(values)
                keep = {c: values[c] for c in self.primary_key}
                final[key] = _Row(key, DELETE, keep, txn.commit_lsn, txn.commit_ts_us)
                continue
            values = dict(zip(names, change.new or (), strict=True))
            key = self.key(values)
            if change.op == UPDATE and change.old is not None:
                old_values = dict(zip(names, change.old, strict=True))
                old_key = self.key(old_values)
                if old_key != key:  # the key itself changed: a tombstone for the old one
                    keep = {c: old_values[c] for c in self.primary_key}
                    previous = final.get(old_key) or self._latest().get(old_key)
                    final[old_key] = _Row(old_key, DELETE, keep, txn.commit_lsn, txn.commit_ts_us)
                    self._fill(values, previous)
            previous = final.get(key) or self._latest().get(key)
            self._fill(values, previous)
            op = change.op
            if key in final and final[key].op == INSERT:
                op = INSERT
            final[key] = _Row(key, op, values, txn.commit_lsn, txn.commit_ts_us)
        self.rows.extend(final.values())
        self._latest_cache = None

    _latest_cache: dict[str, _Row] | None = None

    def _latest(self) -> dict[str, _Row]:
        if self._latest_cache is None:
            self._latest_cache = {row.key: row for row in self.rows}
        return self._latest_cache

    @staticmethod
    def _fill(values: dict[str, Any], previous: _Row | None) -> None:
        if previous is None or previous.op == DELETE:
            return
        for column, value in values.items():
            if value is UNCHANGED:
                values[column] = previous.values.get(column, UNCHANGED)

    def key(self, values: Mapping[str, Any]) -> str:
        missing = [c for c in self.primary_key if c not in values]
        if missing:
            from kyma.connectors.base import SyncDisabled
            from kyma.connectors.postgres.cdc._tables import PK_CHANGED

            raise SyncDisabled(PK_CHANGED, f"{self.kyma_table}: key column {missing[0]!r} is gone")
        return ":".join(str(values[c]) for c in self.primary_key)

    def batch(self, convert: Convert, lookup: Lookup, numeric_mode: str) -> pa.Table:
        """The rows as a table of the kyma table's columns plus the system columns."""
        columns = list(self.types)
        values = {c: [_text(row.values.get(c)) for row in self.rows] for c in columns}
        table = convert(conversion_sql(values, self.types, numeric_mode), {})
        arrays = {name: table.column(name) for name in columns}
        unresolved = {
            (i, c)
            for i, row in enumerate(self.rows)
            for c, v in row.values.items()
            if v is UNCHANGED
        }
        if unresolved:
            arrays = self._resolve(arrays, unresolved, lookup)
        return assemble(
            arrays,
            self.types,
            numeric_mode,
            key=pa.array([r.key for r in self.rows], pa.string()),
            op=pa.array([r.op for r in self.rows], pa.string()),
            lsn=pa.array([lsn_key(r.lsn) for r in self.rows], pa.string()),
            event_us=pa.array([r.ts_us for r in self.rows], pa.int64()),
        )

    def _resolve(
        self,
        arrays: dict[str, pa.ChunkedArray],
        cells: set[tuple[int, str]],
        lookup: Lookup,
    ) -> dict[str, pa.ChunkedArray]:
        keys = sorted({self.rows[i].key for i, _ in cells})
        wanted = sorted({c for _, c in cells})
        current = lookup(self.kyma_table, keys, wanted)
        for column in wanted:
            values = arrays[column].to_pylist()
            for i, c in cells:
                if c == column:
                    values[i] = current.get(self.rows[i].key, {}).get(column)
            arrays[column] = pa.chunked_array([pa.array(values, arrays[column].type)])
        return arrays


def assemble(
    arrays: Mapping[str, pa.Array | pa.ChunkedArray],
    types: Mapping[str, PgType],
    numeric_mode: str,
    *,
    key: pa.Array,
    op: pa.Array,
    lsn: pa.Array,
    event_us: pa.Array,
) -> pa.Table:
    """Converted columns (in ``types``' order) and the system columns as one kyma batch."""
    event_ns = pc.multiply(event_us, 1000).cast(pa.timestamp("ns", tz="UTC"))
    fields = [
        Column(n, kyma_type(t, numeric_mode=numeric_mode)[0]).to_arrow() for n, t in types.items()
    ]
    data = [_chunked(arrays[f.name], f.type) for f in fields]
    out = pa.Table.from_arrays(data, schema=pa.schema(fields))
    system = {"_kyma_pk": key, "_kyma_op": op, "_kyma_lsn": lsn}
    for name, values in {**system, "_kyma_event_at": event_ns, "_timestamp": event_ns}.items():
        out = out.append_column(name, values)
    return out


def _chunked(values: pa.Array | pa.ChunkedArray, type_: pa.DataType) -> pa.ChunkedArray:
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    return pa.chunked_array(chunks, type_)


def conversion_sql(
    values: Mapping[str, Sequence[str | None]], types: Mapping[str, PgType], numeric_mode: str
) -> str:
    """A SELECT that casts each column's text values to its source type and fetches them
    as the snapshot does, in the given order."""
    arrays, inner, outer = [], [], []
    for i, (name, texts) in enumerate(values.items()):
        arrays.append(psql.Literal(list(texts)).as_string(None) + "::text[]")
        inner.append(f"u.c{i}::{types[name].name} AS c{i}")
        item = fetch_expression(exp.column(f"c{i}"), types[name], name, numeric_mode=numeric_mode)
        outer.append(item.sql("postgres"))
    names = ", ".join(f"c{i}" for i in range(len(values)))
    return (
        f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)}, u.n"
        f" FROM unnest({', '.join(arrays)}) WITH ORDINALITY AS u({names}, n)) AS s ORDER BY s.n"
    )


def _text(value: Any) -> str | None:
    if value is None or value is UNCHANGED:
        return None
    if isinstance(value, bytes):
        raise ValueError("binary pgoutput values are not requested")
    return str(value)

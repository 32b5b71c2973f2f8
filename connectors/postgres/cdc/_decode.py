"""A peek's pgoutput messages decoded into complete transactions and each synced table's
batch: column-wise where it can be (``_columnar.py``: only transaction and relation messages
become Python objects), row by row otherwise. The decoder keeps the table shapes (relations)
and types the source sent; a changed key disables the sync, new columns widen kyma's table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa

from kyma.connectors.base import SyncDisabled
from kyma.connectors.postgres.cdc import _tables
from kyma.connectors.postgres.cdc._changes import (
    DELETE,
    INSERT,
    TRUNCATE,
    UPDATE,
    Change,
    TableChanges,
    Transaction,
    lsn_key,
)
from kyma.connectors.postgres.cdc._columnar import DATA_TAGS, Commits, Messages, table_batch
from kyma.connectors.postgres.cdc._tables import PK_CHANGED, SyncTable
from kyma.connectors.postgres.cdc.pgoutput import (
    Begin,
    Commit,
    Decoder,
    Delete,
    Insert,
    Message,
    Origin,
    Relation,
    Truncate,
    Type,
    Update,
)
from kyma.engine.catalog import Catalog

Decoded = tuple[list[Transaction], dict[str, tuple[pa.Table, int]]]
"""A peek's complete transactions, and each touched table's batch with its change count."""
Convert = Callable[[str, Any], pa.Table]
"""Runs a conversion query at the source (values Arrow cannot cast)."""
Lookup = Callable[[str, Sequence[str], Sequence[str]], dict[str, dict[str, Any]]]
"""Each key's current version in kyma (for unchanged TOAST values)."""


class PeekDecoder:
    """Decodes the peeks of one worker run; ``tables`` are the synced ones by source name."""

    def __init__(
        self,
        tables: dict[str, SyncTable],
        catalog: Catalog,
        numeric_mode: Any,
        convert: Convert,
        lookup: Lookup,
        live_keys: Callable[[str], set[str]],
        on_warnings: Callable[[list[str]], None],
    ) -> None:
        self.tables = tables
        self.catalog = catalog
        self.numeric_mode = numeric_mode
        self.convert = convert
        self.lookup = lookup
        self.live_keys = live_keys
        self.on_warnings = on_warnings
        self._relations: dict[int, tuple[Relation, tuple[Any, ...]]] = {}
        self._types: dict[tuple[int, int], Any] = {}

    def decode(self, conn: psycopg.Connection, m: Messages, floors: dict[str, int]) -> Decoded:
        """The peek's messages; changes at or below a table's floor are skipped."""
        return self.columnar(conn, m, floors) or self.rowwise(conn, m, floors)

    def rowwise(self, conn: psycopg.Connection, m: Messages, floors: dict[str, int]) -> Decoded:
        """Every message decoded to Python values, each key's changes collapsed row by row
        (the path for what ``columnar`` leaves: TRUNCATE, unchanged TOAST, changed keys)."""
        txns = self._transactions(conn, m.messages())
        changes: dict[str, TableChanges] = {}
        for txn in txns:
            by_table: dict[str, list[Change]] = {}
            for relid, change in txn.changes:
                name = self._table_of(relid)
                if name is not None and txn.end_lsn > floors.get(name, 0):
                    by_table.setdefault(name, []).append(change)
            for name, table_changes in by_table.items():
                table = self.tables[name]
                tc = changes.setdefault(name, TableChanges(table.kyma_table, table.primary_key))
                tc.add(txn, table_changes, functools.partial(self.live_keys, table.kyma_table))
        batches = {
            name: (tc.batch(self.convert, self.lookup, self.numeric_mode), tc.changes)
            for name, tc in changes.items()
            if tc.rows
        }
        return txns, batches

    def columnar(
        self, conn: psycopg.Connection, m: Messages, floors: dict[str, int]
    ) -> Decoded | None:
        """The peek decoded column-wise (``_columnar.py``): only transaction and relation
        messages become Python objects. None where the row-wise path must decode."""
        tags = m.tags
        data = np.isin(tags, DATA_TAGS)
        decoder = Decoder()
        txns: list[Transaction] = []
        spans: list[tuple[int, int]] = []
        txn, begun = None, 0
        seen: dict[int, tuple[int, Relation]] = {}  # relid: (its first message, shape)
        for i in np.flatnonzero(~data).tolist():
            msg = decoder.decode(m.message(i))
            if isinstance(msg, Begin):
                txn, begun = Transaction(msg.final_lsn, msg.commit_ts_us), i
            elif isinstance(msg, Commit):
                if txn is not None:
                    txn.end_lsn = msg.end_lsn
                    txns.append(txn)
                    spans.append((begun, i))
                txn = None
            elif isinstance(msg, Relation):
                if msg.relid in seen and seen[msg.relid][1] != msg:
                    return None  # the table's shape changed within the peek
                known = self._relations.get(msg.relid)
                if msg.relid not in seen and (known is None or known[0] != msg):
                    seen[msg.relid] = (i, msg)  # a shape new to the worker from here on
                self.relation(conn, msg)
            elif not isinstance(msg, Type | Origin | Message):
                return None  # TRUNCATE (or a streamed block)
        if not txns:
            return txns, {}
        begins, ends = (np.array(s, np.int64) for s in zip(*spans, strict=True))
        index = np.flatnonzero(data)
        txn_of = np.searchsorted(begins, index, side="right") - 1
        inside = (txn_of >= 0) & (index < ends[np.maximum(txn_of, 0)])
        index, txn_of = index[inside], txn_of[inside]
        relids = m.uint32(m.starts[index] + 1)
        for relid, (first, _) in seen.items():
            if ((relids == relid) & (index < first)).any():
                return None  # changes in the table's previous shape, then a new one
        commits = Commits(
            pa.array([lsn_key(t.commit_lsn) for t in txns], pa.string()),
            np.array([t.commit_ts_us for t in txns], np.int64),
            np.array([t.end_lsn for t in txns], np.uint64),
        )
        batches: dict[str, tuple[pa.Table, int]] = {}
        for relid in np.unique(relids).tolist():
            name = self._table_of(relid)
            if name is None:
                continue
            if name in batches:
                return None  # two relations of one name (dropped and created again)
            mine = (relids == relid) & (commits.end_lsn[txn_of] > np.uint64(floors.get(name, 0)))
            if not mine.any():
                continue
            rel, types = self._relations[relid]
            batch = table_batch(
                m,
                index[mine],
                txn_of[mine],
                rel,
                types,
                self.tables[name].primary_key,
                commits,
                self.convert,
                self.numeric_mode,
            )
            if batch is None:
                return None
            batches[name] = (batch, int(mine.sum()))
        return txns, batches

    def _transactions(self, conn: psycopg.Connection, messages: list[bytes]) -> list[Transaction]:
        """Complete transactions, in commit order (a trailing partial one is left for later)."""
        decoder = Decoder()
        done: list[Transaction] = []
        txn: Transaction | None = None
        for data in messages:
            msg = decoder.decode(data)
            if isinstance(msg, Begin):
                txn = Transaction(msg.final_lsn, msg.commit_ts_us)
            elif isinstance(msg, Commit):
                if txn is not None:
                    txn.end_lsn = msg.end_lsn
                    done.append(txn)
                txn = None
            elif isinstance(msg, Relation):
                self.relation(conn, msg)
            elif txn is not None and isinstance(msg, Insert | Update | Delete):
                rel, types = self._relations[msg.relid]
                if isinstance(msg, Insert):
                    change = Change(INSERT, rel, new=msg.new, types=types)
                elif isinstance(msg, Update):
                    change = Change(UPDATE, rel, new=msg.new, old=msg.old, types=types)
                else:
                    change = Change(DELETE, rel, old=msg.old, types=types)
                txn.changes.append((msg.relid, change))
            elif txn is not None and isinstance(msg, Truncate):
                for relid in msg.relids:  # with its relation (sent before it): a batch
                    known = self._relations.get(relid)  # of only its deletes
                    truncated = (
                        Change(TRUNCATE, None)
                        if known is None
                        else Change(TRUNCATE, known[0], types=known[1])
                    )
                    txn.changes.append((relid, truncated))
        return done

    def relation(self, conn: psycopg.Connection, rel: Relation) -> None:
        """A table's shape: a changed key disables the sync; new columns widen kyma's table.
        Every peek sends each relation again: one the worker already holds is done."""
        known = self._relations.get(rel.relid)
        if known is not None and known[0] == rel:
            return
        types = tuple(self._type(conn, c.type_oid, c.typmod) for c in rel.columns)
        self._relations[rel.relid] = (rel, types)
        table = self.tables.get(f"{rel.namespace}.{rel.name}")
        if table is None:
            return
        if set(rel.key_columns) != set(table.primary_key):
            raise SyncDisabled(
                PK_CHANGED, f"{table.qualified}: {table.primary_key} → {rel.key_columns}"
            )
        columns = {c.name: t for c, t in zip(rel.columns, types, strict=True)}
        warnings = _tables.widen(self.catalog, table.kyma_table, columns, self.numeric_mode)
        if warnings:  # a new column of a type kyma does not map: it reads as dynamic
            self.on_warnings([f"{table.qualified}.{w}" for w in warnings])

    def _type(self, conn: psycopg.Connection, oid: int, typmod: int) -> Any:
        if (oid, typmod) not in self._types:
            self._types[oid, typmod] = _tables.pg_type(conn, oid, typmod)
        return self._types[oid, typmod]

    def _table_of(self, relid: int) -> str | None:
        entry = self._relations.get(relid)
        if entry is None:
            return None
        name = f"{entry[0].namespace}.{entry[0].name}"
        return name if name in self.tables else None

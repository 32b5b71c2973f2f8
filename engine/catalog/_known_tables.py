"""Tables as last read, kept by their catalog rows' version, so that a statement learns its
tables' current snapshots with one small indexed query while nothing about them changed.

A table's row changes only by UPDATE (a commit's new snapshot, new options, new columns:
``add_columns`` updates the row too), which gives it a new ``xmin``; its columns only widen
(never updated, nor deleted but with the table). So (id, ``xmin``) names one state of a
table's row and columns: a drop and re-create has a new id, a commit or an ALTER a new
``xmin``. Freezing may rewrite an ``xmin``: the table is then read again, nothing worse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from kyma.engine.catalog._model import TableInfo

KNOWN = 1024
"""Table states kept (least recently used out)."""

VERSION = (
    "t.table_id, t.xmin::text, (SELECT count(*) FROM kyma.columns c WHERE c.table_id = t.table_id)"
)
"""The columns of a ``kyma.tables t`` row that name its version."""


_READS: ContextVar[list[int] | None] = ContextVar("kyma_catalog_reads", default=None)


@contextmanager
def counting_reads() -> Iterator[list[int]]:
    """Counts (in ``[0]``) the times the statement run inside asked the catalog for its
    tables' versions (0: trusted as read, ``_presence``); an enclosing count goes on."""
    counter = _READS.get()
    if counter is not None:
        yield counter
        return
    counter = [0]
    token = _READS.set(counter)
    try:
        yield counter
    finally:
        _READS.reset(token)


def asked() -> None:
    counter = _READS.get()
    if counter is not None:
        counter[0] += 1


class KnownTables:
    def __init__(self, size: int = KNOWN) -> None:
        self.size = size
        self._kept: OrderedDict[Hashable, TableInfo] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, version: Hashable) -> TableInfo | None:
        with self._lock:
            found = self._kept.get(version)
            if found is not None:
                self._kept.move_to_end(version)
            return found

    def put(self, version: Hashable, info: TableInfo) -> None:
        with self._lock:
            self._kept[version] = info
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)


class TrustedTables:
    """Tables as read while the catalog was sole (``_presence``), under the token of that
    time: (the presence's generation, the catalog's count of its own writes). A lookup
    under another token finds nothing, so a write or a lapse of trust ends them all."""

    def __init__(self) -> None:
        self._token: Hashable = None
        self._tables: dict[str, TableInfo | None] = {}
        self._lock = threading.Lock()

    def get(self, token: Hashable, names: list[str]) -> dict[str, TableInfo] | None:
        """The tables of ``names`` that exist; None unless every name was read under ``token``."""
        with self._lock:
            if token != self._token or any(n not in self._tables for n in names):
                return None
            found = {n: self._tables[n] for n in names}
        return {n: info for n, info in found.items() if info is not None}

    def put(self, token: Hashable, names: list[str], found: dict[str, TableInfo]) -> None:
        """``found`` of ``names`` (the others do not exist), as read under ``token``."""
        with self._lock:
            if token != self._token:
                self._token, self._tables = token, {}
            if len(self._tables) >= KNOWN:
                self._tables.clear()
            self._tables.update({n: found.get(n) for n in names})

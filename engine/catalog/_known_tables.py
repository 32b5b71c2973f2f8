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
from collections.abc import Hashable

from kyma.engine.catalog._model import TableInfo

KNOWN = 1024
"""Table states kept (least recently used out)."""

VERSION = (
    "t.table_id, t.xmin::text, (SELECT count(*) FROM kyma.columns c WHERE c.table_id = t.table_id)"
)
"""The columns of a ``kyma.tables t`` row that name its version."""


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

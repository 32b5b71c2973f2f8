"""Prepared sessions: a planned statement's DataFusion session kept with its tables
registered, so that running the statement again costs DataFusion's execution only.

A fresh session, its functions and its tables cost 2–4 ms a statement before anything is
read, most of a point query on a small table. A session is kept only for a plan whose
tables were read into memory (the decoded columns or blocks: no listing of Parquet files,
whose folders of links come and go) and small (``MAX_BYTES``), keyed by the plan's key and
its tables as the catalog held them (ids, snapshots, columns): a new snapshot registers
anew. Each is used by one statement at a time (taken, then kept again when its answer is
whole), so its memory pool stays the statement's. Statements of one shape (``_templates``)
share a session only with the same pruning predicates: the same extents registered.
DataFusion fixes ``now()`` when it plans a statement, so a statement that reads the clock
(``steady`` is false) is planned again in its kept session every run.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from datafusion import DataFrame, ExecutionPlan, SessionContext
from sqlglot import exp

from kyma.engine.query._scan import ScanStats

SESSIONS = 128
"""Sessions kept (least recently used out)."""
MAX_BYTES = 1 << 20
"""The most decoded bytes a kept session's tables may hold: 128 MiB in all at most."""


_CLOCKS = (
    exp.CurrentTimestamp,
    exp.CurrentDate,
    exp.CurrentTime,
    exp.Localtimestamp,
    exp.Localtime,
)
_CLOCK_NAMES = {
    "now",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
}


def steady(stmt: exp.Expression) -> bool:
    """Whether ``stmt`` (as handed to DataFusion) reads no clock: planned once, it runs again.

    >>> steady(exp.maybe_parse("SELECT a FROM t WHERE a = 1")), steady(exp.maybe_parse("SELECT now()"))
    (True, False)
    """  # noqa: E501
    for node in stmt.walk():
        if isinstance(node, _CLOCKS):
            return False
        if isinstance(node, exp.Anonymous) and node.name.lower() in _CLOCK_NAMES:
            return False
    return True


@dataclass(frozen=True)
class Prepared:
    """``ctx``: the session, its tables registered; ``frame``: the statement planned in it
    (None: planned each run), from ``sql`` (statements of one shape share a session: another
    literal is planned anew in it); ``stats``: what its scans read."""

    tables: tuple[tuple[str, Any], ...]
    ctx: SessionContext
    frame: DataFrame | None
    stats: dict[str, ScanStats]
    sql: str = ""
    physical: ExecutionPlan | None = None
    """The frame's physical plan, when it runs again as it is (``rerunnable``)."""

    def frame_of(self, sql: str) -> DataFrame | None:
        """The kept frame when it is ``sql``'s."""
        return self.frame if self.sql == sql else None

    def physical_of(self, sql: str) -> ExecutionPlan | None:
        return self.physical if self.sql == sql else None


RERUNNABLE = {
    "DataSourceExec",
    "FilterExec",
    "ProjectionExec",
    "CoalesceBatchesExec",
    "CoalescePartitionsExec",
    "AggregateExec",
    "SortExec",
    "SortPreservingMergeExec",
    "GlobalLimitExec",
    "LocalLimitExec",
    "EmptyExec",
    "PlaceholderRowExec",
    "UnionExec",
}
"""DataFusion's operators whose plan runs again from the start, each run on its own: not
a repartition (its channels are made once per plan) nor a join (it builds one side once)."""


def rerunnable(frame: DataFrame) -> ExecutionPlan | None:
    """``frame``'s physical plan if every operator in it is ``RERUNNABLE``: run again with
    ``SessionContext.execute`` per partition, it skips DataFusion's optimizer and physical
    planner, most of a point query's time in DataFusion (0.8 ms against 3–4 ms measured)."""
    plan = frame.execution_plan()
    nodes = [plan]
    while nodes:
        node = nodes.pop()
        name = node.display().split(":", 1)[0].split(",", 1)[0].strip()
        if name not in RERUNNABLE:
            return None
        nodes += node.children()
    return plan


class Sessions:
    def __init__(self, size: int = SESSIONS) -> None:
        self.size = size
        self._kept: OrderedDict[Hashable, Prepared] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: Hashable, tables: tuple[tuple[str, Any], ...]) -> Prepared | None:
        """The session kept for ``key`` over exactly ``tables``, now this caller's alone."""
        with self._lock:
            found = self._kept.pop(key, None)
        return found if found is not None and found.tables == tables else None

    def keep(self, key: Hashable, prepared: Prepared) -> None:
        with self._lock:
            self._kept[key] = prepared
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)

"""Compaction soon after ingest, inside ``kyma serve``.

Each ingest request commits an extent of its own, so a table fed by many small requests is
many small extents until the hourly maintenance round merges them, and every query pays per
extent meanwhile. This compactor hears the server's commits (the catalog's listeners): a
table that received rows is checked at its next round (one every ``interval`` seconds),
and its groups of small extents that grow their largest extent by half
(``compaction.grows``) are merged, one commit each. The rest waits for more rows or for
the maintenance round, which merges every group. A crash loses nothing: each group's commit
is the catalog's atomic compare-and-swap, and an extent written but not committed is an
orphan for GC.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kyma.engine.catalog import CommitEvent
from kyma.engine.compaction import CompactionResult
from kyma.engine.errors import KymaError

log = logging.getLogger("kyma.compaction")


class Compactor:
    """Tables with new rows, compacted by ``compact(table)`` on a thread of their own."""

    def __init__(self, compact: Callable[[str], CompactionResult], interval: float) -> None:
        self.compact = compact
        self.interval = interval
        self._touched: set[str] = set()
        self._pending = 0  # tables heard of and not yet checked, the one being checked included
        self._lock = threading.Lock()

    def observe(self, event: CommitEvent) -> None:
        """A commit listener: a table that received rows is checked at the next round."""
        if event.appends and event.added:
            with self._lock:
                if event.table not in self._touched:
                    self._touched.add(event.table)
                    self._pending += 1

    @property
    def pending(self) -> int:
        """Tables that received rows and have not been checked since."""
        with self._lock:
            return self._pending

    def run_once(self) -> list[CompactionResult]:
        """Check every table heard of since the last round; what each check merged."""
        with self._lock:
            tables, self._touched = sorted(self._touched), set()
        results = []
        for table in tables:
            try:
                results.append(self.compact(table))
            except KymaError as e:  # dropped meanwhile, or the catalog is away: next time
                log.warning("compaction of %r failed: %s", table, e)
            except Exception:  # a bug or the store: logged, and the thread goes on
                log.exception("compaction of %r failed", table)
            finally:
                with self._lock:
                    self._pending -= 1
        return results

    def run(self, stopping: threading.Event) -> None:
        """Rounds every ``interval`` seconds until ``stopping`` is set."""
        while not stopping.wait(self.interval):
            for result in self.run_once():
                if result.groups:
                    log.info("compacted: %s", result.to_json())

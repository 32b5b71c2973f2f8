"""Named crash points, for kill tests that must hit the one moment a crash hurts most.

``KYMA_CRASH_AT="kafka.catalog_committed:3"`` makes the process kill itself with SIGKILL the
third time it reaches ``crash_point("kafka.catalog_committed")``; several points are
separated by commas. Random external kills rarely land in a window a few microseconds
wide; these do, every time. Without the variable, ``crash_point`` is a dictionary lookup.

The points:

- ``write.extents_written``: an ingest's extents are in the object store, not yet committed;
- ``kafka.catalog_committed``: a Kafka batch is committed to the catalog, and its offsets
  not yet to Kafka;
- ``query.running``: a statement is in the quarantine journal, about to run (as if it
  crashed the server).
"""

from __future__ import annotations

import os
import signal
import threading

from kyma.engine.errors import ConfigError


def _plan(text: str) -> dict[str, int]:
    plan = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, count = item.partition(":")
        if not count.isdigit() or int(count) < 1:
            raise ConfigError(f"KYMA_CRASH_AT: {item!r} is not name:count (count 1 or more)")
        plan[name] = int(count)
    return plan


_PLAN = _plan(os.environ.get("KYMA_CRASH_AT", ""))
_reached: dict[str, int] = {}
_lock = threading.Lock()


def crash_point(name: str) -> None:
    """SIGKILL this process if KYMA_CRASH_AT says this is the time to die at ``name``."""
    if name not in _PLAN:
        return
    with _lock:
        _reached[name] = _reached.get(name, 0) + 1
        if _reached[name] == _PLAN[name]:
            os.kill(os.getpid(), signal.SIGKILL)

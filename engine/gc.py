"""Orphan GC: delete objects that no manifest row references, after a grace period.

The grace period protects extents written but not yet committed. Objects are listed
before the catalog is read, so an extent committed in between counts as referenced.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kyma.engine.catalog import Catalog
from kyma.engine.storage import ObjectStore

EXTENT_PREFIX = "tables/"


def collect_orphans(
    catalog: Catalog, store: ObjectStore, grace: timedelta, prefix: str = EXTENT_PREFIX
) -> list[str]:
    """Delete unreferenced extent objects (under ``prefix``) older than ``grace``; return
    their keys."""
    cutoff = datetime.now(UTC) - grace
    candidates = [o.key for o in store.list(prefix) if o.modified < cutoff]
    referenced = catalog.referenced_objects()
    orphans = [key for key in candidates if key not in referenced]
    for key in orphans:
        store.delete(key)
    return orphans

"""A bounded map, least recently used out, safe across threads: for what never changes
once written (parsed footers, a snapshot's extents)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")
_MISSING = object()


class Recent(Generic[T]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: object = None) -> T | None:
        """The value, or ``default`` when it is not (or no longer) kept."""
        with self._lock:
            found = self._items.get(key, _MISSING)  # type: ignore[arg-type]
            if found is _MISSING:
                return default  # type: ignore[return-value]
            self._items.move_to_end(key)
            return found  # type: ignore[return-value]

    def put(self, key: Hashable, value: T) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)

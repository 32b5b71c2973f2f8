"""Plan caches: a repeated statement text skips parsing, qualification and kyma's rewrites.

Two bounded maps, least recently used out:

- ``Parsed`` by statement text: the parsed and rewritten query, never changed once kept (the
  planner plans a copy), and what running it needs (``Access``); and by shape (``_shapes``:
  the statement with its comparison literals lifted out), so a statement of a known shape
  is not parsed at all when its shape's template (``_templates``) plans it. Authorization is not
  cached: every statement's caller is checked against these needs, so a plan one token ran
  never answers another token that may not read its tables.
- ``Plan`` by (text, switches): the tables as the catalog held them when the statement was
  planned (read together, one catalog statement), what each scan reads and prunes with, and
  the SQL handed to DataFusion. A plan is used only while a fresh read of the same names
  finds exactly the same tables: same ids, current snapshots, columns and options. A new
  snapshot, a new column, a dropped or recreated table, or a new table under a name the plan
  resolved elsewhere makes it plan again. Stage 1 and the scans run for every statement.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from kyma.engine.catalog import TableInfo
from kyma.engine.query._access import Access
from kyma.engine.query._shapes import Shape
from kyma.engine.query._statistics import Statistics
from kyma.engine.query._time_order import TimeOrder

STATEMENTS = 512
"""Statement texts kept (parsed, and planned): a few tens of KB each."""

MAX_KEPT_TEXT = 16 * 1024
"""A longer statement is parsed and planned anew each time: the caches stay bounded in bytes
(512 statements of at most 16 KiB), not only in count."""


@dataclass(frozen=True)
class Parsed:
    """``shape``: the text's shape (``_shapes``), when it has one; ``statement`` may then be
    another text's of the same shape (the planner plans by the shape, or parses the text)."""

    statement: exp.Query
    needs: tuple[Access, ...]
    shape: Shape | None = None


@dataclass(frozen=True)
class Plan:
    """``tables``: every name looked up in the catalog (None: not found) when planned."""

    tables: tuple[tuple[str, Any], ...]
    sources: dict[str, Any]  # session name → _Source (see _select)
    sql: str
    names: list[str] | None
    relations: tuple[str, ...] = ()  # catalog relations read, built per statement
    functions: frozenset[str] | None = None  # the names the SQL calls (None: every function)
    statistics: Statistics | None = None  # what statistics may answer instead (``_statistics``)
    time_order: TimeOrder | None = None  # a top-k by time (``_time_order``)
    late: bool = False  # filters pushed into the Parquet decoder (``LATE_MATERIALIZATION``)
    steady: bool = False  # reads no clock: planned once in a kept session (``_prepared``)

    def holds(self, found: Mapping[str, TableInfo]) -> bool:
        """Whether the catalog's tables (``found``, read by ``lookups``) are the planned ones."""
        return self.tables == fingerprint(self.lookups, found)

    @property
    def lookups(self) -> list[str]:
        return [name for name, _ in self.tables]


def fingerprint(names: list[str], found: Mapping[str, TableInfo]) -> tuple[tuple[str, Any], ...]:
    """What a plan depends on of each named table (None for a name with no table)."""
    return tuple((name, _table_key(found.get(name))) for name in sorted(set(names)))


def _table_key(info: TableInfo | None) -> Any:
    if info is None:
        return None
    columns = tuple((c.name, c.type, c.nullable, c.evolved_from) for c in info.columns)
    return (info.table_id, info.current_snapshot_id, columns, info.options, info.origins)

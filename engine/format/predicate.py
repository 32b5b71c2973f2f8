"""BlockPredicate, the lowered predicate language, and its evaluation over block stats.

Evaluation is conservative and pure (no I/O): a block is dropped only when its stats
prove that no row can make the predicate TRUE under SQL's three-valued logic. Anything the
stats cannot decide -- a missing column, a type mismatch, a capped string -- keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Value = int | str

# ---------------------------------------------------------------- block statistics


@dataclass(frozen=True)
class ColStat:
    """Stats of one column in one block.

    ``kind`` is ``Ts`` (ns since epoch), ``Int64``, ``Str`` or ``Dyn``. ``min``/``max`` are
    None when every value is null or (for strings) a value exceeded the 256-byte cap.
    ``paths`` (Dyn only) lists the dynamic paths present, None past the path cap.
    """

    kind: Literal["Ts", "Int64", "Str", "Dyn"]
    nulls: int
    min: Value | None = None
    max: Value | None = None
    paths: frozenset[str] | None = None

    def to_json(self) -> dict[str, Any]:
        if self.kind == "Dyn":
            paths = None if self.paths is None else sorted(self.paths)
            return {"Dyn": {"paths": paths, "nulls": self.nulls}}
        return {self.kind: {"min": self.min, "max": self.max, "nulls": self.nulls}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ColStat:
        ((kind, body),) = data.items()
        if kind == "Dyn":
            paths = body["paths"]
            return cls("Dyn", int(body["nulls"]), paths=None if paths is None else frozenset(paths))
        if kind not in ("Ts", "Int64", "Str"):
            raise ValueError(f"unknown column stat kind {kind!r}")
        return cls(kind, int(body["nulls"]), body["min"], body["max"])


@dataclass(frozen=True)
class BlockStats:
    """Stats of one block, keyed by column name (not index)."""

    row_count: int
    columns: dict[str, ColStat]

    def to_json(self) -> dict[str, Any]:
        return {
            "row_count": self.row_count,
            "columns": {name: stat.to_json() for name, stat in self.columns.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BlockStats:
        columns = {name: ColStat.from_json(stat) for name, stat in data["columns"].items()}
        return cls(int(data["row_count"]), columns)


# ---------------------------------------------------------------- dynamic paths

MAX_PATH_DEPTH = 8
"""Writers record dynamic paths up to this many keys; deeper predicates are not lowered."""


def dynamic_path(column: str, segments: Sequence[str]) -> str:
    """The canonical name of a path inside a dynamic column (JSON-pointer escaped).

    >>> dynamic_path("attributes", ["http.method"])
    'attributes/http.method'
    >>> dynamic_path("attributes", ["a/b", "c"])
    'attributes/a~1b/c'
    """
    escaped = (s.replace("~", "~0").replace("/", "~1") for s in segments)
    return "/".join([column, *escaped])


# ---------------------------------------------------------------- the predicate language


class BlockPredicate:
    """Base of the lowered predicate nodes."""


@dataclass(frozen=True)
class TimeRange(BlockPredicate):
    """``start <= column < end`` in ns (or as integers); either bound may be None (open).
    ``column`` may name a dynamic path (``attributes/size``): its answer cast to bigint."""

    column: str
    start: int | None
    end: int | None


@dataclass(frozen=True)
class Equals(BlockPredicate):
    column: str
    value: Value


@dataclass(frozen=True)
class InSet(BlockPredicate):
    column: str
    values: frozenset[Value]


@dataclass(frozen=True)
class StringHas(BlockPredicate):
    """The column's text holds ``token`` as a word."""

    column: str
    token: str


@dataclass(frozen=True)
class StringHolds(BlockPredicate):
    """The column's text holds ``text`` (three bytes or more) as a substring, ASCII case
    ignored: what the trigram filters (``_gram_filter``) prune by."""

    column: str
    text: str


@dataclass(frozen=True)
class DynamicPathExists(BlockPredicate):
    column: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class DynamicPathEquals(BlockPredicate):
    """The path's answer (text) equals ``value``; a ``str`` value is compared with the
    path's stats when the extent shredded it, any other value only proves the path present."""

    column: str
    path: tuple[str, ...]
    value: Any


@dataclass(frozen=True)
class And(BlockPredicate):
    children: tuple[BlockPredicate, ...]


@dataclass(frozen=True)
class Or(BlockPredicate):
    children: tuple[BlockPredicate, ...]


@dataclass(frozen=True)
class Not(BlockPredicate):
    child: BlockPredicate


# ---------------------------------------------------------------- evaluation


def block_evaluator(predicate: BlockPredicate | None) -> Callable[[BlockStats], bool]:
    """A function telling whether a block may hold a row matching ``predicate``."""
    if predicate is None:
        return lambda _: True
    return lambda stats: _may_match(predicate, stats)


def _range_of(stats: BlockStats, column: str, value: Any) -> tuple[ColStat, bool] | None:
    """The column's stat and whether ``value`` is comparable with it, or None if unknown."""
    stat = stats.columns.get(column)
    if stat is None or stat.kind == "Dyn":
        return None
    numeric = stat.kind in ("Ts", "Int64")
    comparable = (
        isinstance(value, int) and not isinstance(value, bool)
        if numeric
        else (isinstance(value, str))
    )
    return stat, comparable


def _all_null(stat: ColStat, stats: BlockStats) -> bool:
    return stat.nulls >= stats.row_count


def _may_equal(stats: BlockStats, column: str, value: Value) -> bool:
    found = _range_of(stats, column, value)
    if found is None:
        return True
    stat, comparable = found
    if _all_null(stat, stats):
        return False
    if not comparable or stat.min is None or stat.max is None:
        return True
    return stat.min <= value <= stat.max  # type: ignore[operator]


def _path_may_exist(stats: BlockStats, column: str, path: tuple[str, ...]) -> bool:
    stat = stats.columns.get(column)
    if stat is None or stat.kind != "Dyn":
        return True
    if _all_null(stat, stats):
        return False
    return stat.paths is None or dynamic_path(column, path) in stat.paths


def _may_match(p: BlockPredicate, stats: BlockStats) -> bool:
    match p:
        case TimeRange(column, start, end):
            found = _range_of(stats, column, 0)
            if found is None:
                return True
            stat, comparable = found
            if _all_null(stat, stats):
                return False
            if not comparable or stat.min is None or stat.max is None:
                return True
            return (start is None or stat.max >= start) and (end is None or stat.min < end)
        case Equals(column, value):
            return _may_equal(stats, column, value)
        case InSet(column, values):
            return any(_may_equal(stats, column, v) for v in values)
        case StringHas(column, _) | StringHolds(column, _):
            stat = stats.columns.get(column)
            return stat is None or not _all_null(stat, stats)
        case DynamicPathExists(column, path):
            return _path_may_exist(stats, column, path)
        case DynamicPathEquals(column, path, value):
            if not _path_may_exist(stats, column, path):
                return False
            # A text value: the path's own stats (shredded extents) bound its answers.
            name = dynamic_path(column, path)
            return not isinstance(value, str) or _may_equal(stats, name, value)
        case And(children):
            return all(_may_match(c, stats) for c in children)
        case Or(children):
            return any(_may_match(c, stats) for c in children)
        case Not(child):
            return not _must_match(child, stats)
    return True


def _must_match(p: BlockPredicate, stats: BlockStats) -> bool:
    """True only if the stats prove every row makes ``p`` TRUE."""
    match p:
        case TimeRange(column, start, end):
            found = _range_of(stats, column, 0)
            if found is None or not found[1]:
                return False
            stat = found[0]
            return (
                stat.nulls == 0
                and stat.min is not None
                and stat.max is not None
                and (start is None or stat.min >= start)
                and (end is None or stat.max < end)
            )
        case Equals(column, value):
            return _constant_in(stats, column, {value})
        case InSet(column, values):
            return _constant_in(stats, column, values)
        case And(children):
            return all(_must_match(c, stats) for c in children)
        case Or(children):
            return any(_must_match(c, stats) for c in children)
    return False


def _constant_in(stats: BlockStats, column: str, values: set[Value] | frozenset[Value]) -> bool:
    stat = stats.columns.get(column)
    if stat is None or stat.kind == "Dyn" or stat.nulls != 0 or stat.min is None:
        return False
    if stat.min != stat.max:
        return False
    return any(type(v) is type(stat.min) and v == stat.min for v in values)

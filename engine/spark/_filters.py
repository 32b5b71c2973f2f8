"""Spark's pushed filters as a BlockPredicate, for the catalog and block stages of pruning.

Pure and conservative, like every pruning step: a filter that cannot be translated is left
out of the AND (the predicate keeps more), and nothing here claims a filter is applied
exactly -- Spark evaluates every filter again on the rows kyma returns.

Timestamp bounds are widened by a microsecond on each side: Spark sees kyma's nanosecond
timestamps truncated to microseconds, so a bound on the truncated value bounds the stored
one only within that much. Under a NOT only exact translations are used (a widened range
there would drop rows).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from kyma.engine.format import predicate as bp
from kyma.engine.types import KymaType

_US = 1_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")  # the extent token sets' tokenization
_ALNUM = re.compile(r"[A-Za-z0-9]")

Translate = Callable[[Filter, str, KymaType, bool], bp.BlockPredicate | None]


def to_predicate(
    filters: Iterable[Filter], columns: dict[str, KymaType]
) -> bp.BlockPredicate | None:
    """The AND of what ``filters`` (Spark's conjunction) imply, or None when nothing does."""
    parts = [p for f in filters if (p := translate(f, columns)) is not None]
    return None if not parts else parts[0] if len(parts) == 1 else bp.And(tuple(parts))


def translate(
    spark_filter: Filter, columns: dict[str, KymaType], *, exact: bool = False
) -> bp.BlockPredicate | None:
    """One filter as a BlockPredicate; ``exact`` (under NOT) refuses widened translations."""
    if isinstance(spark_filter, Not):
        inner = translate(spark_filter.child, columns, exact=True)
        return None if inner is None else bp.Not(inner)
    path = getattr(spark_filter, "attribute", ())
    if len(path) != 1 or path[0] not in columns:
        return None
    rule = _RULES.get(type(spark_filter))
    return None if rule is None else rule(spark_filter, path[0], columns[path[0]], exact)


def _value(ktype: KymaType, value: object) -> int | str | None:
    """``value`` as the stats of a ``ktype`` column hold it, or None if they do not compare."""
    if ktype.name in ("int", "long"):
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if ktype.name == "string":
        return value if isinstance(value, str) else None
    if ktype.name == "timestamp" and isinstance(value, datetime.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
        delta = aware - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * _US
    return None


def _equal(f: EqualTo, column: str, ktype: KymaType, exact: bool) -> bp.BlockPredicate | None:
    value = _value(ktype, f.value)
    if value is None:
        return None
    if ktype.name == "timestamp":
        assert isinstance(value, int)
        return None if exact else bp.TimeRange(column, value - _US + 1, value + _US)
    return bp.Equals(column, value)


def _in(f: In, column: str, ktype: KymaType, exact: bool) -> bp.BlockPredicate | None:
    # A NULL in the list never makes the IN true; every other value must compare.
    values = [_value(ktype, v) for v in f.value if v is not None]
    if None in values or ktype.name == "timestamp":
        return None
    return bp.InSet(column, frozenset(values))  # type: ignore[arg-type]


def _bound(f: Filter, column: str, ktype: KymaType, exact: bool) -> bp.BlockPredicate | None:
    value = _value(ktype, f.value)  # type: ignore[attr-defined]
    if not isinstance(value, int) or ktype.name not in ("int", "long", "timestamp"):
        return None
    if ktype.name == "timestamp":
        if exact:
            return None
        low, high = value - _US + 1, value + _US  # the stored ns whose truncation is value
        bounds = {GreaterThan: (low, None), GreaterThanOrEqual: (low, None)}
        bounds |= {LessThan: (None, high), LessThanOrEqual: (None, high)}
    else:
        bounds = {GreaterThan: (value + 1, None), GreaterThanOrEqual: (value, None)}
        bounds |= {LessThan: (None, value), LessThanOrEqual: (None, value + 1)}
    return bp.TimeRange(column, *bounds[type(f)])


def _words(f: Filter, column: str, ktype: KymaType, exact: bool) -> bp.BlockPredicate | None:
    """Whole words inside a LIKE pattern: the text holds each of them as a token."""
    text: str = f.value  # type: ignore[attr-defined]
    if ktype.name != "string" or exact or not isinstance(text, str):
        return None
    pieces = _WORD_SPLIT.split("".join(c.lower() if c.isascii() else c for c in text))
    # A word touching an open end of the pattern may continue in the text.
    if not isinstance(f, StringStartsWith) and text[:1] and _ALNUM.match(text[0]):
        pieces = pieces[1:]
    if not isinstance(f, StringEndsWith) and text[-1:] and _ALNUM.match(text[-1]):
        pieces = pieces[:-1]
    words = sorted({w for w in pieces if len(w) >= 2})
    has = [bp.StringHas(column, w) for w in words]
    return None if not has else has[0] if len(has) == 1 else bp.And(tuple(has))


_RULES: dict[type, Translate] = {
    EqualTo: _equal,
    EqualNullSafe: lambda f, c, t, e: None if f.value is None else _equal(f, c, t, e),
    In: _in,
    GreaterThan: _bound,
    GreaterThanOrEqual: _bound,
    LessThan: _bound,
    LessThanOrEqual: _bound,
    StringStartsWith: _words,
    StringEndsWith: _words,
    StringContains: _words,
}
"""Capabilities as data: the Spark filter classes kyma can prune with, and how."""

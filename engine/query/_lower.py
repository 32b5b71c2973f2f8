"""Lowering: WHERE conditions on one table reference → BlockPredicate (or None).

Pure and conservative. A conjunct that cannot be lowered is dropped from an AND (the
result is weaker, so it keeps more); an OR or NOT over something unlowerable is not lowered
at all. Every lowered leaf is NULL when its column is NULL, so pruning under outer joins
is safe too. Works on qualified expressions: every column names its table alias.
"""

from __future__ import annotations

import re

from sqlglot import exp

from kyma.engine.format._gram_filter import like_literals
from kyma.engine.format._token_filter import like_words
from kyma.engine.format.predicate import (
    MAX_PATH_DEPTH,
    And,
    BlockPredicate,
    DynamicPathEquals,
    DynamicPathExists,
    Equals,
    InSet,
    Not,
    Or,
    StringHas,
    StringHolds,
    TimeRange,
    dynamic_path,
)
from kyma.engine.query._path_columns import path_call
from kyma.engine.types import KymaType, parse_timestamp

_ORDERED = {"int", "long", "timestamp"}
_TOKEN = re.compile(r"[a-z0-9]{2,}")


class _Lowering:
    def __init__(self, alias: str, columns: dict[str, KymaType]) -> None:
        self.alias = alias
        self.columns = columns

    def column(self, node: exp.Expression) -> tuple[str, KymaType] | None:
        if isinstance(node, exp.Column) and node.table == self.alias and node.name in self.columns:
            return node.name, self.columns[node.name]
        return None

    def literal(self, node: exp.Expression, ktype: KymaType) -> int | str | None:
        """The Python value of a literal compared with a column of ``ktype``."""
        negative = isinstance(node, exp.Neg)
        if negative:
            node = node.this
        if isinstance(node, exp.Cast) and node.to.is_type("timestamp", "timestamptz"):
            node = node.this
        if not isinstance(node, exp.Literal):
            return None
        if ktype.name in ("int", "long") and not node.is_string:
            try:
                value = int(node.this)
            except ValueError:
                return None
            return -value if negative else value
        if ktype.name == "timestamp" and node.is_string and not negative:
            # Only literals with a zone: no doubt about how DataFusion reads them.
            return parse_timestamp(node.this, require_zone=True)
        if ktype.name == "string" and node.is_string and not negative:
            return node.this
        return None

    def comparison(self, node: exp.Binary) -> BlockPredicate | None:
        left, right, kind = node.this, node.expression, type(node)
        if self.column(right) is not None and self.column(left) is None:
            left, right = right, left
            kind = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE}.get(
                kind, kind
            )
        if (dyn := self.dynamic_path(left)) is not None and kind is exp.EQ:
            if isinstance(right, exp.Literal):
                # Only a text literal compares text with text; others prove the path present.
                value = right.this if right.is_string else None
                return DynamicPathEquals(dyn[0], dyn[1], value)
            return None
        if (path := self.long_path(left)) is not None:
            number = self.literal(right, KymaType("long"))
            if not isinstance(number, int):
                return None
            if kind is exp.EQ:
                return TimeRange(path, number, number + 1)
            return _bounded(path, kind, number)
        found = self.column(left)
        if found is None:
            return None
        name, ktype = found
        value = self.literal(right, ktype)
        if value is None:
            return None
        if kind is exp.EQ:
            return Equals(name, value)
        if kind is exp.NEQ:
            return Not(Equals(name, value))
        if ktype.name not in _ORDERED or not isinstance(value, int):
            return None
        return _bounded(name, kind, value)

    def long_path(self, node: exp.Expression) -> str | None:
        """``attributes['size']::long``: the path's name (its stats are its longs' range)."""
        if not (isinstance(node, exp.Cast) and node.to.is_type("bigint")):
            return None
        dyn = self.dynamic_path(node.this)
        return None if dyn is None else dynamic_path(*dyn)

    def dynamic_path(self, node: exp.Expression) -> tuple[str, tuple[str, ...]] | None:
        call = path_call(node)
        found = None if call is None else self.column(call[0])
        if call is None or found is None or found[1].name != "dynamic":
            return None
        # Paths deeper than the extents record cannot prove absence.
        return (found[0], call[1]) if 0 < len(call[1]) <= MAX_PATH_DEPTH else None

    def lower(self, node: exp.Expression, *, exact: bool = False) -> BlockPredicate | None:
        """``exact``: under a NOT, where dropping a conjunct would make the result stronger."""
        match node:
            case exp.Paren():
                return self.lower(node.this, exact=exact)
            case exp.And():
                ands = [self.lower(c, exact=exact) for c in node.flatten()]
                if exact and None in ands:
                    return None
                parts = [p for p in ands if p is not None]
                return None if not parts else parts[0] if len(parts) == 1 else And(tuple(parts))
            case exp.Or():
                ors = [self.lower(c, exact=exact) for c in node.flatten()]
                return None if None in ors else Or(tuple(ors))  # type: ignore[arg-type]
            case exp.Is(expression=exp.Null()) if node.args.get("negate"):
                # ``attributes['x'] IS NOT NULL``: the path must exist.
                dyn = self.dynamic_path(node.this)
                return None if dyn is None else DynamicPathExists(*dyn)
            case exp.Not(this=exp.Is(expression=exp.Null())):
                dyn = self.dynamic_path(node.this.this)
                return None if dyn is None else DynamicPathExists(*dyn)
            case exp.Not():
                inner = self.lower(node.this, exact=True)
                return None if inner is None else Not(inner)
            case exp.EQ() | exp.NEQ() | exp.GT() | exp.GTE() | exp.LT() | exp.LTE():
                return self.comparison(node)
            case exp.Between():
                return self.between(node)
            case exp.In():
                return self.in_list(node)
            case exp.Anonymous() if node.name.lower() == "has_token":
                return self.has_token(node)
            case exp.Like() | exp.ILike() if not exact:  # implied words: not an equivalence
                return self.like(node)
        return None

    def like(self, node: exp.Like | exp.ILike) -> BlockPredicate | None:
        """``message LIKE '% timeout %'``: the words any match holds (``like_words``)."""
        found = self.column(node.this)
        pattern = node.expression
        if found is None or found[1].name != "string":
            return None
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            return None
        insensitive = isinstance(node, exp.ILike)
        words = like_words(pattern.this, insensitive=insensitive)
        parts: list[BlockPredicate] = [StringHas(found[0], w) for w in words]
        literals = like_literals(pattern.this, insensitive=insensitive)
        parts += [StringHolds(found[0], text) for text in literals]
        return None if not parts else parts[0] if len(parts) == 1 else And(tuple(parts))

    def between(self, node: exp.Between) -> BlockPredicate | None:
        found = self.column(node.this)
        if found is None or found[1].name not in _ORDERED:
            return None
        low = self.literal(node.args["low"], found[1])
        high = self.literal(node.args["high"], found[1])
        if not isinstance(low, int) or not isinstance(high, int):
            return None
        return TimeRange(found[0], low, high + 1)

    def in_list(self, node: exp.In) -> BlockPredicate | None:
        found = self.column(node.this)
        if found is None or node.args.get("query") is not None or not node.expressions:
            return None
        values = [self.literal(v, found[1]) for v in node.expressions]
        return None if None in values else InSet(found[0], frozenset(values))  # type: ignore[arg-type]

    def has_token(self, node: exp.Anonymous) -> BlockPredicate | None:
        if len(node.expressions) != 2:
            return None
        target, token = node.expressions
        found = self.column(target)
        if found is None or not (isinstance(token, exp.Literal) and token.is_string):
            return None
        word = token.this.lower()
        # Only what the token sets can hold: ASCII alphanumeric words of two or more.
        if not _TOKEN.fullmatch(word):
            return None
        if len(word) < 3:
            return StringHas(found[0], word)
        return And((StringHas(found[0], word), StringHolds(found[0], word)))


def _bounded(name: str, kind: type, value: int) -> BlockPredicate | None:
    bounds = {
        exp.GT: (value + 1, None),
        exp.GTE: (value, None),
        exp.LT: (None, value),
        exp.LTE: (None, value + 1),
    }.get(kind)
    return None if bounds is None else TimeRange(name, *bounds)


def lower(
    condition: exp.Expression | None, alias: str, columns: dict[str, KymaType]
) -> BlockPredicate | None:
    """The BlockPredicate implied by ``condition`` for the table reference ``alias``."""
    return None if condition is None else _Lowering(alias, columns).lower(condition)

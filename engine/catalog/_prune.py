"""Stage 1 of the pruning cascade: a BlockPredicate as a SQL condition on manifest rows.

Pure (builds SQL, runs nothing) and conservative: whatever the extent-level stats cannot
decide is TRUE. Values travel as query parameters, never as SQL text.
"""

from __future__ import annotations

import json

from psycopg import sql

from kyma.engine.format.predicate import (
    And,
    BlockPredicate,
    DynamicPathEquals,
    DynamicPathExists,
    Equals,
    InSet,
    Not,
    Or,
    StringHas,
    TimeRange,
    dynamic_path,
)

TIME_COLUMN = "_timestamp"  # the column min_ts/max_ts bound
TRUE = sql.SQL("TRUE")
# An IN list longer than this is not lowered into stage 1 (stage 2 still prunes with it):
# the catalog statement stays small whatever the query says.
MAX_IN_VALUES = 10_000


def _set_may_hold(column: str, kind: str, value: object) -> sql.Composable:
    """The extent's ``distinct``/``tokens`` set is unknown (null) or holds ``value``."""
    stats = sql.SQL("column_stats -> {} -> {}").format(sql.Literal(column), sql.Literal(kind))
    return sql.SQL("({s} IS NULL OR jsonb_typeof({s}) <> 'array' OR {s} @> {v}::jsonb)").format(
        s=stats, v=sql.Literal(json.dumps([value]))
    )


def _set_may_hold_any(column: str, kind: str, values: frozenset[object]) -> sql.Composable:
    """Like ``_set_may_hold`` for any of ``values``, as one array parameter: a hashed
    ``= ANY`` per extent, however long the list."""
    stats = sql.SQL("column_stats -> {} -> {}").format(sql.Literal(column), sql.Literal(kind))
    wanted = sorted(json.dumps(v) for v in values)
    return sql.SQL(
        "({s} IS NULL OR jsonb_typeof({s}) <> 'array' OR EXISTS"
        " (SELECT 1 FROM jsonb_array_elements({s}) AS e(v) WHERE e.v = ANY({v}::jsonb[])))"
    ).format(s=stats, v=sql.Literal(wanted))


def extent_condition(predicate: BlockPredicate | None) -> sql.Composable:
    """A condition over ``kyma.manifest`` columns that every possibly-matching extent meets."""
    match predicate:
        case None:
            return TRUE
        case TimeRange(column, start, end) if column == TIME_COLUMN:
            parts = [sql.SQL("max_ts IS NOT NULL")]
            if start is not None:
                parts.append(sql.SQL("max_ts >= {}").format(sql.Literal(start)))
            if end is not None:
                parts.append(sql.SQL("min_ts < {}").format(sql.Literal(end)))
            return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))
        case Equals(column, value):
            return _set_may_hold(column, "distinct", value)
        case InSet(column, values):
            if not values:
                return sql.SQL("FALSE")
            if len(values) > MAX_IN_VALUES:
                return TRUE
            return _set_may_hold_any(column, "distinct", values)
        case StringHas(column, token):
            return _set_may_hold(column, "tokens", token)
        case DynamicPathExists(column, path) | DynamicPathEquals(column, path, _):
            return sql.SQL("(present_paths @> ARRAY[{p}] OR {c} = ANY(present_paths))").format(
                p=sql.Literal(dynamic_path(column, path)), c=sql.Literal(column)
            )
        case And(children):
            parts = [extent_condition(c) for c in children]
            return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))
        case Or(children):
            parts = [extent_condition(c) for c in children]
            return sql.SQL("({})").format(sql.SQL(" OR ").join(parts))
        case Not():
            return TRUE
    return TRUE

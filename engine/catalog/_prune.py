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

IN_SNAPSHOT = (
    "table_id = %s AND added_snapshot_id <= %s"
    " AND (removed_snapshot_id IS NULL OR removed_snapshot_id > %s)"
)
"""Manifest rows of one table's snapshot; parameters: table id, snapshot id twice."""
TIME_COLUMN = "_timestamp"  # the column min_ts/max_ts bound
TRUE = sql.SQL("TRUE")
# An IN list longer than this is not lowered into stage 1 (stage 2 still prunes with it):
# the catalog statement stays small whatever the query says.
MAX_IN_VALUES = 10_000


def _set_may_hold_any(column: str, kind: str, values: frozenset[object]) -> sql.Composable:
    """The extent's ``distinct``/``tokens`` set of ``column`` is unknown or holds one of
    ``values``: one overlap with its ``set_keys`` (GIN-indexed; sql/011_manifest_scale.sql).

    The keys are spelled by Postgres from jsonb on both sides (``kyma.set_key``, which
    hashes a long value; sql/012_long_set_keys.sql), so a value's key is the same whatever
    its JSON spelling in the query. A set too large to index is keyed ``~`` alone
    (sql/013_large_sets_unindexed.sql): the set itself, in ``column_stats``, decides."""
    prefix = f"{column}/{kind}="
    wanted = sorted(json.dumps(v) for v in values)
    return sql.SQL(
        "(set_keys && (SELECT array_agg(kyma.set_key({p}, v::jsonb::text))"
        " || ARRAY[{p} || '*', {p} || '~'] FROM unnest({v}::text[]) AS v)"
        " AND (NOT set_keys @> ARRAY[{p} || '~']"
        " OR column_stats -> {c} -> {k} @> ANY({members}::jsonb[])))"
    ).format(
        p=sql.Literal(prefix),
        v=sql.Literal(wanted),
        c=sql.Literal(column),
        k=sql.Literal(kind),
        members=sql.Literal([f"[{w}]" for w in wanted]),
    )


def _path_may_exist(column: str, path: tuple[str, ...]) -> sql.Composable:
    """The extent holds the path, or any path (past the cap): a GIN-indexed overlap."""
    return sql.SQL("present_paths && ARRAY[{p}, {c}]").format(
        p=sql.Literal(dynamic_path(column, path)), c=sql.Literal(column)
    )


def _path_value_may_be(name: str, value: str) -> sql.Composable:
    """A shredded path's distinct set (column stats under the path's name) is unknown or
    holds ``value``. Paths are not table columns, so an extent that did not shred the path
    has no entry and no ``set_keys`` marker: this reads ``column_stats`` itself."""
    stats = sql.SQL("column_stats -> {} -> 'distinct'").format(sql.Literal(name))
    return sql.SQL("({s} IS NULL OR jsonb_typeof({s}) <> 'array' OR {s} @> {v}::jsonb)").format(
        s=stats, v=sql.Literal(json.dumps([value]))
    )


def _path_range(name: str, start: int | None, end: int | None) -> sql.Composable:
    """A shredded long-only path's answers (``min``/``max`` in its column stats) meet the
    range; unknown stats keep the extent."""
    lo = sql.SQL("column_stats -> {} -> 'min'").format(sql.Literal(name))
    hi = sql.SQL("column_stats -> {} -> 'max'").format(sql.Literal(name))
    parts = []
    if start is not None:
        parts.append(sql.SQL("({hi})::numeric >= {v}").format(hi=hi, v=sql.Literal(start)))
    if end is not None:
        parts.append(sql.SQL("({lo})::numeric < {v}").format(lo=lo, v=sql.Literal(end)))
    if not parts:
        return TRUE
    return sql.SQL(
        "(jsonb_typeof({lo}) IS DISTINCT FROM 'number' OR jsonb_typeof({hi}) IS DISTINCT FROM"
        " 'number' OR ({cond}))"
    ).format(lo=lo, hi=hi, cond=sql.SQL(" AND ").join(parts))


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
            return _set_may_hold_any(column, "distinct", frozenset([value]))
        case InSet(column, values):
            if not values:
                return sql.SQL("FALSE")
            if len(values) > MAX_IN_VALUES:
                return TRUE
            return _set_may_hold_any(column, "distinct", values)
        case StringHas(column, token):
            return _set_may_hold_any(column, "tokens", frozenset([token]))
        case DynamicPathExists(column, path):
            return _path_may_exist(column, path)
        case DynamicPathEquals(column, path, value):
            if not isinstance(value, str):
                return _path_may_exist(column, path)
            held = _path_value_may_be(dynamic_path(column, path), value)
            return sql.SQL("({} AND {})").format(_path_may_exist(column, path), held)
        case TimeRange(column, start, end) if "/" in column:
            return _path_range(column, start, end)
        case And(children):
            parts = [extent_condition(c) for c in children]
            return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))
        case Or(children):
            parts = [extent_condition(c) for c in children]
            return sql.SQL("({})").format(sql.SQL(" OR ").join(parts))
        case Not():
            return TRUE
    return TRUE

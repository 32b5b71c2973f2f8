"""The limits checked before parsing: the expression depth estimate never undercounts the
tree sqlglot builds, the IN list count equals the lists sqlglot parses (quoted text and
comments do not count), literal function sizes are refused exactly past the memory share,
and the row shape check refuses exactly the rows past its limits (brackets and colons
inside strings do not count)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from kyma.engine.errors import IngestError, LimitExceededError, StatementLimitError
from kyma.engine.query._estimate import COPIES, check_functions
from kyma.engine.query._guard import check_in_lists, check_statement, expression_depth
from kyma.ingest.coerce import check_shape

_LEAVES = st.sampled_from(["1", "a", "'x(+'", "f(b)", "NULL"])
_OPERATORS = st.sampled_from(["+", "-", "*", "=", "<", "AND", "OR", "||"])


def _expressions(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return (
        st.tuples(children, _OPERATORS, children).map(" ".join)
        | children.map(lambda c: f"({c})")
        | children.map(lambda c: f"abs({c})")
        | st.tuples(children, children).map(lambda p: f"coalesce({p[0]}, {p[1]})")
        | children.map(lambda c: f"CASE WHEN {c} THEN 1 END")
        | children.map(lambda c: f"NOT {c}")
    )


_SQL = st.recursive(_LEAVES, _expressions, max_leaves=40).map(lambda e: f"SELECT {e}")


def _tree_depth(node: sqlglot.exp.Expression) -> int:
    """Depth counted in operators, groups and calls: the nodes the estimate counts (a WHEN
    is part of its CASE)."""
    counted = (sqlglot.exp.Binary, sqlglot.exp.Unary, sqlglot.exp.Func, sqlglot.exp.Case)
    deepest, stack = 0, [(node, 0)]
    while stack:
        current, depth = stack.pop()
        depth += isinstance(current, counted) and not isinstance(current, sqlglot.exp.If)
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in current.iter_expressions())
    return deepest


@settings(max_examples=150, deadline=None)
@given(_SQL)
def test_depth_estimate_bounds_the_parsed_tree(sql: str) -> None:
    estimate = expression_depth(sql)
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except (sqlglot.errors.ParseError, RecursionError):
        return
    assert estimate >= _tree_depth(tree.expressions[0]), sql
    check_statement(sql, 1 << 20, estimate)  # its own estimate passes
    if estimate > 1:  # (a limit of 0 is no limit)
        with pytest.raises(StatementLimitError, match="exceeds the limit"):
            check_statement(sql, 1 << 20, estimate - 1)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_VALUES = st.recursive(
    st.none() | st.integers() | st.sampled_from(["[", "]{", '"}', "a:b", "\\\\["]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["k", "[", "{}"]), children, max_size=3)
    ),
    max_leaves=30,
)
_ROWS = st.lists(
    st.dictionaries(st.text(min_size=1, max_size=3), _VALUES, max_size=12), min_size=1, max_size=4
)


@settings(max_examples=200, deadline=None)
@given(_ROWS, st.integers(1, 12), st.integers(1, 8))
def test_shape_check_refuses_exactly_the_rows_past_the_limits(
    rows: list[dict], max_keys: int, max_depth: int
) -> None:
    body = "".join(json.dumps(row) + "\n" for row in rows).encode()
    wide = next((i for i, row in enumerate(rows, 1) if len(row) > max_keys), None)
    deep = next((i for i, row in enumerate(rows, 1) if _depth(row) > max_depth), None)
    if wide is not None:
        with pytest.raises(LimitExceededError, match=f"^line {wide} has"):
            check_shape(body, max_keys, max_depth)
    elif deep is not None:
        with pytest.raises(IngestError, match=f"^line {deep}: JSON nested deeper"):
            check_shape(body, max_keys, max_depth)
    else:
        check_shape(body, max_keys, max_depth)


_IN_VALUES = st.sampled_from(["1", "'a,b'", "'it''s (x'", "NULL", '"c,d"', "f(1, 2)", "(3)"])
_FILLER = st.sampled_from(["", " -- IN (1,2,3\n", " /* IN (4,5) */ ", " AND 'IN (6,7)' = s"])


@st.composite
def _in_statements(draw: st.DrawFn) -> tuple[str, list[int]]:
    """A statement with IN lists (and text that looks like them) and their lengths."""
    lists = draw(st.lists(st.lists(_IN_VALUES, min_size=1, max_size=12), min_size=1, max_size=3))
    parts = [f"k IN ({', '.join(values)}){draw(_FILLER)}" for values in lists]
    return "SELECT 1 FROM t WHERE " + " OR ".join(parts), [len(v) for v in lists]


@settings(max_examples=200, deadline=None)
@given(_in_statements(), st.integers(1, 12))
def test_in_list_check_counts_the_values_sqlglot_parses(
    case: tuple[str, list[int]], limit: int
) -> None:
    sql, lengths = case
    parsed = sqlglot.parse_one(sql, read="postgres")
    assert sorted(len(n.expressions) for n in parsed.find_all(sqlglot.exp.In)) == sorted(lengths)
    first = next((n for n in lengths if n > limit), None)  # the check stops at the first
    if first is not None:
        with pytest.raises(StatementLimitError, match=f"IN list of {first} values"):
            check_in_lists(sql, limit)
    else:
        check_in_lists(sql, limit)


_SIZES = st.integers(0, 3_000_000_000)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8), _SIZES, st.integers(1, 4), st.sampled_from(["repeat", "lpad", "range"]))
def test_literal_sizes_are_refused_exactly_past_the_memory_share(
    width: int, size: int, factor: int, name: str
) -> None:
    """Sizes written as products are folded; a result over memory / COPIES is refused."""
    count = f"{size} * {factor}" if size % factor == 0 else f"({size} + 0)"
    value = size * factor if size % factor == 0 else size
    call = {
        "repeat": (f"repeat('{'x' * width}', {count})", width * value),
        "lpad": (f"lpad('x', {count})", 4 * value),
        "range": (f"range(0, {count})", 8 * value),
    }[name]
    statement = sqlglot.parse_one(f"SELECT {call[0]}", read="postgres")
    memory = 256 << 20
    if call[1] * COPIES > memory:
        with pytest.raises(LimitExceededError, match=f"would build about {call[1]} bytes"):
            check_functions(statement, memory)
    else:
        check_functions(statement, memory)

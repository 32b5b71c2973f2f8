"""Generated SELECTs over the seeded ``public.items``, and an exact comparison of their rows.

``federated_queries(table_ref)`` draws Postgres-valid SELECTs whose answer does not depend on
the session (timestamps carry a UTC offset; no date_trunc on timestamptz) and whose order is
total whenever they have an ORDER BY. To run one query on two sides, draw it with the
placeholder ``"{table}"`` and ``str.format(table=...)`` it for each; nothing else in a query
holds a brace.
"""

from __future__ import annotations

import datetime
import math
from collections import Counter
from decimal import Decimal

from hypothesis import strategies as st

# The values of tests/connectors/source_seed.sql (test_query_strategies checks they match).
NAMES = (
    "apple", "Apple", "banana", "Banana", "_under", "zeta", "Zeta", "Éclair", "eclair", "éclair",
    "50% off", "100%", "a_b", "a%b", "ab", "back\\slash", "C:\\temp\\new", "", "  padded ",
    "apple pie", "x!y", "!bang", "Straße", "ZEBRA", "a\\%b",
)  # fmt: skip
TAGS = ("red", "Red", "green", "Green", "blue", "BLUE", "", "ünïcode", "a_tag", "z%")
PRICES = ("47.50", "47.51", "19.99", "0.10", "0.30", "1234.56", "-5.25", "0.01", "0", "100")
SCORES = ("1e16", "-1e16", "1.0", "0.1", "0.3", "-0.1", "0.001", "3.14159", "0", "7")
CODES = ("AB", "ab", "A", "Zz", "é", "", " x", "AB c")  # char(6): trailing blanks don't count
BIGS = (  # numeric(30,10): more digits than a double holds
    "1234567890123456.0123456789", "0.001", "98765432109876.5432109876", "1.5", "42",
)  # fmt: skip
_UTC = datetime.UTC
_FIRST = datetime.datetime(2024, 3, 9, tzinfo=_UTC)  # the data spans 2024-03-09 05:00 UTC ..
_SECONDS = 3 * 86400 + 6 * 3600  # .. 2024-03-11 23:00 UTC; literals reach a little past both
_EDGES = tuple(
    datetime.datetime(2024, 3, day, hour, minute, second, micro, tzinfo=_UTC)
    for day, hour, minute, second, micro in [
        (10, 7, 0, 0, 0),  # the DST change in New York
        (10, 6, 59, 59, 999999),
        (10, 5, 0, 0, 0),  # midnight in New York, before and after the change
        (11, 4, 0, 0, 0),
        (10, 0, 0, 0, 0),  # midnight UTC
    ]
)
_OFFSETS = tuple(datetime.timedelta(minutes=m) for m in (0, -300, -240, 60, 330))

ORDERABLE = (
    "name", "tag", "grp", "qty", "price", "score", "created_at", "day", "flag", "code", "big",
)  # fmt: skip
PROJECTIONS = (
    "id", "grp", "qty", "price", "score", "name", "tag", "created_at", "day", "flag",
    "lower(name)", "upper(name)", "lower(tag)", "upper(tag)", "coalesce(name, 'none')",
    "coalesce(tag, name)", "coalesce(grp, -1)", "coalesce(qty, 0)", "grp + 1", "qty - grp",
    "qty * 2", "id * grp", "grp - id", "qty + id", "qty / 3", "code", "big", "length(code)",
    "code || '|'", "big * 2", "big + price",
)  # fmt: skip
GROUP_KEYS = ("grp", "tag", "flag", "code")
SUMMABLE = ("grp", "qty", "price", "score", "big")
EXTREMES = ("grp", "qty", "price", "score", "name", "tag", "created_at", "day", "code", "big")
COUNTABLE = (
    "grp", "qty", "price", "score", "name", "tag", "created_at", "day", "flag", "code", "big",
)  # fmt: skip
OPERATORS = ("=", "!=", "<", "<=", ">", ">=")
_MAX_DEPTH = 3
assert not any("{" in s or "}" in s for s in NAMES + TAGS), "queries must stay str.format-safe"


def quote(text: str) -> str:
    """A SQL string literal (standard_conforming_strings: a backslash is an ordinary char)."""
    return "'" + text.replace("'", "''") + "'"


def timestamptz(instant: datetime.datetime, offset: datetime.timedelta) -> str:
    """A TIMESTAMPTZ literal for ``instant`` written in ``offset``, so no session zone applies.

    >>> at = datetime.datetime(2024, 3, 10, 6, 30, tzinfo=datetime.UTC)
    >>> timestamptz(at, datetime.timedelta(hours=-5))
    "TIMESTAMPTZ '2024-03-10 01:30:00-05:00'"
    >>> timestamptz(at.replace(microsecond=5), datetime.timedelta(minutes=330))
    "TIMESTAMPTZ '2024-03-10 12:00:00.000005+05:30'"
    """
    local = instant.astimezone(datetime.timezone(offset))
    return f"TIMESTAMPTZ {quote(local.isoformat(sep=' '))}"


def like_pattern(
    value: str, start: int, stop: int, shape: str, escape: str, escape_all: bool
) -> str:
    """A LIKE pattern from ``value[start:stop]`` with the metacharacters in it escaped.

    ``shape`` places the wildcards; with ``escape_all`` false only the escape character is
    escaped, so a ``%`` or ``_`` in the value is a wildcard (the pattern stays valid).

    >>> like_pattern("50% off", 0, 3, "prefix", "\\\\", True)
    '50\\\\%%'
    >>> like_pattern("a_b", 0, 3, "exact", "!", True)
    'a!_b'
    >>> like_pattern("x!y", 0, 2, "one_char", "!", False)
    'x!!_'
    """
    metachars = (escape, "%", "_") if escape_all else (escape,)
    part = "".join(escape + c if c in metachars else c for c in value[start:stop])
    if shape == "prefix":
        return part + "%"
    if shape == "suffix":
        return "%" + part
    if shape == "infix":
        return "%" + part + "%"
    if shape == "one_char":
        return part + "_"
    return part


@st.composite
def _like(draw: st.DrawFn, column: str) -> str:
    value = draw(st.sampled_from([v for v in NAMES + TAGS + CODES if v]))
    start = draw(st.integers(0, len(value) - 1))
    stop = draw(st.integers(start + 1, len(value)))
    shape = draw(st.sampled_from(("prefix", "suffix", "infix", "one_char", "exact")))
    escape = draw(st.sampled_from(("\\", "!")))
    pattern = like_pattern(value, start, stop, shape, escape, draw(st.booleans()))
    operator = draw(st.sampled_from(("LIKE", "NOT LIKE", "ILIKE")))
    clause = f" ESCAPE {quote(escape)}" if escape != "\\" else ""
    return f"{column} {operator} {quote(pattern)}{clause}"


def _instants() -> st.SearchStrategy[str]:
    seconds = st.integers(0, _SECONDS).map(lambda s: _FIRST + datetime.timedelta(seconds=s))
    instant = st.one_of(seconds, st.sampled_from(_EDGES))
    return st.builds(timestamptz, instant, st.sampled_from(_OFFSETS))


def _dates() -> st.SearchStrategy[str]:
    days = st.integers(-1, 4).map(lambda d: datetime.date(2024, 3, 8) + datetime.timedelta(d))
    day = st.one_of(days, st.just(datetime.date(1969, 12, 31)))
    return day.map(lambda d: f"DATE '{d.isoformat()}'")


# Each column's literals, and the expressions compared like it.
_INT_LITERALS = st.one_of(st.integers(-60, 320), st.just(9007199254740993)).map(str)
_TEXT_LITERALS = st.sampled_from(NAMES + TAGS + ("b", "Zz", "É", "apple pie!")).map(quote)
_LITERALS = {
    "int": _INT_LITERALS,
    "price": st.sampled_from(PRICES),
    "score": st.sampled_from(SCORES),
    "text": _TEXT_LITERALS,
    "char": st.sampled_from(CODES).flatmap(lambda c: st.sampled_from((c, c + "  "))).map(quote),
    "big": st.sampled_from((*BIGS, "0.5", "1234567890123456.01234567891")),
    "ts": _instants(),
    "date": _dates(),
}
_OPERANDS = {
    "int": ("id", "grp", "qty", "qty / 3", "coalesce(grp, -1)", "qty - grp"),
    "price": ("price",),
    "score": ("score",),
    "text": ("name", "tag", "lower(name)", "upper(tag)"),
    "char": ("code",),
    "big": ("big",),
    "ts": ("created_at",),
    "date": ("day",),
}
_COLUMNS = ("id",) + COUNTABLE


@st.composite
def _comparison(draw: st.DrawFn, kind: str) -> str:
    operand = draw(st.sampled_from(_OPERANDS[kind]))
    literal = _LITERALS[kind]
    form = draw(st.sampled_from(("compare", "in", "between")))
    if form == "compare":
        return f"{operand} {draw(st.sampled_from(OPERATORS))} {draw(literal)}"
    if form == "between":
        return f"{operand} BETWEEN {draw(literal)} AND {draw(literal)}"
    items = draw(st.lists(st.one_of(literal, st.just("NULL")), min_size=1, max_size=4))
    return f"{operand} IN ({', '.join(items)})"


def _leaf() -> st.SearchStrategy[str]:
    """One condition; each kind of operand is its own branch, so all come up often."""
    null_test = st.builds(
        "{} {}".format, st.sampled_from(_COLUMNS), st.sampled_from(("IS NULL", "IS NOT NULL"))
    )
    flag = st.sampled_from(("flag", "flag = TRUE", "flag = FALSE", "flag IS NOT TRUE"))
    comparisons = [_comparison(kind) for kind in _OPERANDS]
    likes = (_like("name"), _like("tag"), _like("code"))
    return st.one_of(*likes, null_test, *comparisons, flag)


def predicates(depth: int = _MAX_DEPTH) -> st.SearchStrategy[str]:
    """A WHERE condition: leaves under at most ``depth`` levels of AND, OR and NOT."""
    if depth == 0:
        return _leaf()
    inner = predicates(depth - 1)
    return st.one_of(
        _leaf(),
        inner.map("NOT ({})".format),
        st.builds("({} AND {})".format, inner, inner),
        st.builds("({} OR {})".format, inner, inner),
    )


def _direction() -> st.SearchStrategy[str]:
    nulls = st.sampled_from(("", " NULLS FIRST", " NULLS LAST"))
    return st.builds("{}{}".format, st.sampled_from((" ASC", " DESC")), nulls)


# A WHERE clause ANDs one to three trees of depth 2: depth 3 in all, and more leaves than one
# tree of depth 3 (Hypothesis draws those mostly as chains of NOT).
_CONJUNCTS = st.lists(predicates(_MAX_DEPTH - 1), min_size=1, max_size=3)


@st.composite
def _where(draw: st.DrawFn) -> str:
    if not draw(st.integers(0, 3)):
        return ""
    return " WHERE " + " AND ".join(draw(_CONJUNCTS))


@st.composite
def _limit(draw: st.DrawFn) -> str:
    limit = f" LIMIT {draw(st.integers(0, 40))}"
    if draw(st.booleans()):
        limit += f" OFFSET {draw(st.integers(0, 30))}"
    return limit


@st.composite
def _rows_query(draw: st.DrawFn, table_ref: str) -> str:
    if draw(st.integers(0, 9)) == 0:
        select = "*"
    else:
        chosen = draw(st.lists(st.sampled_from(PROJECTIONS), min_size=1, max_size=4))
        select = ", ".join(f"{expr} AS c{i}" for i, expr in enumerate(chosen))
    query = f"SELECT {select} FROM {table_ref}{draw(_where())}"
    limited = draw(st.booleans())
    if limited or draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from((*ORDERABLE, "lower(name)")), max_size=2))
        keys.append("id")  # the unique key last: the order is total
        query += " ORDER BY " + ", ".join(key + draw(_direction()) for key in keys)
    if limited:
        query += draw(_limit())
    return query


def _aggregates() -> st.SearchStrategy[str]:
    return st.one_of(
        st.just("count(*)"),
        st.builds("count({})".format, st.sampled_from(COUNTABLE)),
        st.builds("count(DISTINCT {})".format, st.sampled_from(COUNTABLE)),
        st.builds("{}({})".format, st.sampled_from(("sum", "avg")), st.sampled_from(SUMMABLE)),
        st.builds("{}({})".format, st.sampled_from(("min", "max")), st.sampled_from(EXTREMES)),
    )


@st.composite
def _aggregate_query(draw: st.DrawFn, table_ref: str) -> str:
    keys = draw(st.lists(st.sampled_from(GROUP_KEYS), max_size=3, unique=True))
    aggregates = draw(st.lists(_aggregates(), min_size=1, max_size=4))
    select = ", ".join(f"{expr} AS c{i}" for i, expr in enumerate(keys + aggregates))
    query = f"SELECT {select} FROM {table_ref}{draw(_where())}"
    if keys:
        query += " GROUP BY " + ", ".join(keys)
        if draw(st.booleans()):
            query += f" HAVING count(*) > {draw(st.integers(0, 12))}"
        ordered = draw(st.permutations(keys))  # every key: one row per group, a total order
        query += " ORDER BY " + ", ".join(key + draw(_direction()) for key in ordered)
        if draw(st.booleans()):
            query += draw(_limit())
    return query


def federated_queries(table_ref: str) -> st.SearchStrategy[str]:
    """SELECTs over ``public.items`` read from ``table_ref``; ordered iff they say ORDER BY.

    Compare rows in order when ``" ORDER BY " in query``, as a multiset otherwise.
    """
    return st.one_of(_rows_query(table_ref), _aggregate_query(table_ref))


def rows_equal(expected: list[tuple], actual: list[tuple], ordered: bool) -> bool:
    """Whether two results hold the same rows, exactly; in the same order if ``ordered``.

    Numbers compare exactly; in a column where either side has a float, every number becomes
    a float (a Decimal from psycopg as ``float(Decimal)``). NaN equals NaN, as in SQL's
    ordering. Datetimes compare as instants, a naive one read as UTC. A bool never equals a
    number.

    >>> rows_equal([(Decimal("47.50"), "a")], [(47.5, "a")], ordered=True)
    True
    >>> rows_equal([(Decimal("0.1"),)], [(0.1,)], ordered=True)
    True
    >>> rows_equal([(0.30000000000000004,)], [(0.3,)], ordered=True)
    False
    >>> rows_equal([(Decimal("9007199254740993"),)], [(9007199254740993,)], ordered=True)
    True
    >>> rows_equal([(Decimal("9007199254740993"),)], [(9007199254740992,)], ordered=True)
    False
    >>> rows_equal([(float("nan"),)], [(float("nan"),)], ordered=True)
    True
    >>> rows_equal([(True,)], [(1,)], ordered=True)
    False
    >>> ny = datetime.timezone(datetime.timedelta(hours=-5))
    >>> aware = datetime.datetime(2024, 3, 10, 1, 30, tzinfo=ny)
    >>> rows_equal([(aware,)], [(datetime.datetime(2024, 3, 10, 6, 30),)], ordered=True)
    True
    >>> rows_equal([(aware,)], [(datetime.datetime(2024, 3, 10, 1, 30),)], ordered=True)
    False
    >>> rows_equal([(1, None), (2, "x"), (2, "x")], [(2, "x"), (1, None), (2, "x")], False)
    True
    >>> rows_equal([(1, None), (2, "x"), (2, "x")], [(2, "x"), (1, None), (2, "x")], True)
    False
    >>> rows_equal([(1,), (1,), (2,)], [(1,), (2,), (2,)], ordered=False)
    False
    >>> rows_equal([(1,)], [(1, 2)], ordered=True)
    False
    """
    rows = [*expected, *actual]
    if len(expected) != len(actual) or len({len(row) for row in rows}) > 1:
        return False
    width = len(rows[0]) if rows else 0
    floats = {i for i in range(width) if any(isinstance(row[i], float) for row in rows)}

    def canonical(row: tuple) -> tuple:
        return tuple(_canonical(value, i in floats) for i, value in enumerate(row))

    left, right = map(canonical, expected), map(canonical, actual)
    return list(left) == list(right) if ordered else Counter(left) == Counter(right)


def rows_close(expected: list[tuple], actual: list[tuple], ordered: bool, slack: float) -> bool:
    """rows_equal, except that numbers in float columns may differ by up to ``slack``: a float
    sum computed in another order (kyma's vectorized sums) rounds differently.

    >>> rows_close([(1, 257.0), (2, 0.5)], [(2, 0.5), (1, 258.0)], ordered=False, slack=2.0)
    True
    >>> rows_close([(1, 257.0)], [(1, 260.0)], ordered=True, slack=2.0)
    False
    >>> rows_close([(1, 257.0)], [(2, 257.0)], ordered=True, slack=2.0)
    False
    >>> rows_close([(Decimal("9007199254740943"), 257.0)], [(9007199254740943, 258.0)], False, 2.0)
    True
    """
    if rows_equal(expected, actual, ordered):
        return True
    rows = [*expected, *actual]
    if len(expected) != len(actual) or len({len(row) for row in rows}) > 1:
        return False
    width = len(rows[0]) if rows else 0
    floats = {i for i in range(width) if any(isinstance(row[i], float) for row in rows)}

    def exact_part(row: tuple) -> tuple:
        return tuple(_canonical(v, False) for i, v in enumerate(row) if i not in floats)

    def order(row: tuple) -> tuple:
        return tuple(repr(_canonical(v, True)) for v in exact_part(row))

    if ordered:
        left, right = expected, actual
    else:
        left, right = sorted(expected, key=order), sorted(actual, key=order)
    for one, other in zip(left, right, strict=True):
        if exact_part(one) != exact_part(other):
            return False
        for i in floats:
            a, b = _canonical(one[i], True), _canonical(other[i], True)
            numbers = isinstance(a, float) and isinstance(b, float)
            if a != b and not (numbers and abs(a - b) <= slack):
                return False
    return True


_NAN = ("nan",)


def _canonical(value: object, as_float: bool) -> object:
    """A hashable stand-in for ``value`` that is equal exactly when rows_equal says so."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float | Decimal):
        if isinstance(value, Decimal) and value.is_nan():
            return _NAN
        number = float(value) if as_float else value
        return _NAN if isinstance(number, float) and math.isnan(number) else number
    if isinstance(value, datetime.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_UTC)
        return aware.astimezone(_UTC)
    if isinstance(value, list | tuple):
        return tuple(_canonical(item, as_float) for item in value)
    return value

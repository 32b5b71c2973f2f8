"""Spark filters → BlockPredicate: conservative translations, exact ones under NOT."""

from __future__ import annotations

import datetime

import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    In,
    IsNull,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from kyma.engine.format.predicate import And, Equals, InSet, StringHas, TimeRange
from kyma.engine.format.predicate import Not as BNot
from kyma.engine.spark._filters import to_predicate
from kyma.engine.types import KymaType

TYPES = {
    name: KymaType(t)
    for name, t in [("n", "long"), ("s", "string"), ("_timestamp", "timestamp"), ("r", "real")]
}
NOON = datetime.datetime(2026, 1, 1, 12, tzinfo=datetime.UTC)
NOON_NS = 1_767_268_800 * 10**9


@pytest.mark.parametrize(
    ("spark_filter", "predicate"),
    [
        (EqualTo(("n",), 5), Equals("n", 5)),
        (EqualTo(("n",), "5"), None),  # the stats of a long column never hold a string
        (EqualTo(("n",), True), None),
        (EqualTo(("s",), "a"), Equals("s", "a")),
        (EqualTo(("r",), 1.5), None),  # no stats for real
        (EqualTo(("s", "x"), "a"), None),  # nested fields do not exist in kyma
        (EqualNullSafe(("n",), None), None),
        (GreaterThan(("n",), 5), TimeRange("n", 6, None)),
        (LessThanOrEqual(("n",), 5), TimeRange("n", None, 6)),
        (In(("s",), ("a", None, "b")), InSet("s", frozenset({"a", "b"}))),
        (In(("n",), (1, "x")), None),
        (IsNull(("n",)), None),
        (Not(EqualTo(("n",), 5)), BNot(Equals("n", 5))),
        # Spark sees timestamps truncated to µs: bounds widen by one on each side.
        (GreaterThan(("_timestamp",), NOON), TimeRange("_timestamp", NOON_NS - 999, None)),
        (EqualTo(("_timestamp",), NOON), TimeRange("_timestamp", NOON_NS - 999, NOON_NS + 1000)),
        (Not(EqualTo(("_timestamp",), NOON)), None),  # a widened range under NOT would drop rows
        (
            EqualTo(("_timestamp",), NOON.replace(tzinfo=None)),  # naive: UTC
            TimeRange("_timestamp", NOON_NS - 999, NOON_NS + 1000),
        ),
        # Whole words of a LIKE pattern are tokens of the text; open ends may continue.
        (StringStartsWith(("s",), "Login tim"), StringHas("s", "login")),
        (StringEndsWith(("s",), "for user42"), StringHas("s", "user42")),
        (StringContains(("s",), "a timeout b"), StringHas("s", "timeout")),
        (StringContains(("s",), "timeout"), None),
        (Not(StringStartsWith(("s",), "login ")), None),
    ],
)
def test_translation(spark_filter, predicate) -> None:
    assert to_predicate([spark_filter], TYPES) == predicate


def test_filters_are_anded() -> None:
    both = to_predicate([EqualTo(("s",), "a"), IsNull(("n",)), GreaterThan(("n",), 1)], TYPES)
    assert both == And((Equals("s", "a"), TimeRange("n", 2, None)))

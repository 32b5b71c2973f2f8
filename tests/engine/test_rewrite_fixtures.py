"""kyma's SQL front end against stored expected output: each statement in
tests/fixtures/rewrite.sql parsed in kyma's dialect, names folded and ``RULES`` applied."""

from __future__ import annotations

import pytest
from sql_fixtures import cases

from kyma.engine.query._parse import parse


@pytest.mark.parametrize(("sql", "expected"), cases("rewrite.sql"))
def test_rewrite(sql: str, expected: str) -> None:
    assert parse(sql).sql("kyma") == expected

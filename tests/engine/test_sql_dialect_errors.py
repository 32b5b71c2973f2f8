"""Mistakes in kyma's own syntax are told as precisely as the statement handlers told them."""

from __future__ import annotations

import pytest

from kyma.engine.errors import SqlError
from kyma.engine.query._parse import parse


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE CONNECTOR pg", "expected CREATE CONNECTOR <name> TYPE <type> WITH ("),
        ("CREATE SOURCE s kafka", "expected CREATE SOURCE <name> TYPE kafka|filedrop WITH ("),
        ("CREATE SOURCE s TYPE kafka (a = 1)", "expected WITH (<option> = <value>, …) after"),
        ("CREATE CONNECTOR c TYPE postgres WITH (a = 1", "not closed with ')'"),
        ("CREATE CONNECTOR c TYPE postgres WITH (a 1)", "expected <option> = <value> in WITH"),
        ("CREATE CONNECTOR c TYPE postgres WITH (a = 1; b = 2)", "not closed with ')'"),
        ("CREATE CONNECTOR c TYPE postgres WITH (a = 1 b = 2)", "expected ',' between options"),
        ("CREATE CONNECTOR c TYPE postgres WITH (a = b)", "expected a string, number, true or"),
        ("ALTER CONNECTOR src", "expected ALTER CONNECTOR <name> WITH ("),
        ("DROP SOURCE a b", "DROP SOURCE takes one name"),
        ("DROP CONNECTOR IF EXISTS", "DROP CONNECTOR takes one name"),
        ("REFRESH CONNECTOR", "REFRESH CONNECTOR takes one name"),
        ("SELECT * FROM t AS OF SNAPSHOT 1.5", "AS OF SNAPSHOT expects a snapshot id, got '1.5'"),
        ("SELECT * FROM t AS OF SNAPSHOT x", "AS OF SNAPSHOT expects a snapshot id, got 'x'"),
        ("ALTER TABLE t SET RETENTION 30", "SET RETENTION expects a duration in quotes"),
        ("EXPLAIN", "EXPLAIN needs the statement to explain"),
        ("EXPLAIN SELEC 1", "column 9: unknown word 'SELEC' (did you mean SELECT?)"),
    ],
)
def test_kyma_syntax_mistakes_are_precise(sql: str, message: str) -> None:
    with pytest.raises(SqlError) as raised:
        parse(sql)
    assert message in str(raised.value)

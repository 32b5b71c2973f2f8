"""Syntax errors in kyma's words: sqlglot's parse errors, rewritten for people.

sqlglot describes what its parser missed in its own terms (``Required keyword: 'this' missing
for <class 'sqlglot.expressions.query.Where'>``, ``Invalid expression / Unexpected token``).
This module names the SQL instead: the clause or operator left incomplete, the unexpected
word, and a misspelled keyword (``SELEC`` → did you mean SELECT?).

>>> describe("SELEC 1", {"description": "Invalid expression / Unexpected token",
...                      "line": 1, "col": 7, "highlight": "1"})
(1, 1, "unknown word 'SELEC' (did you mean SELECT?)")
>>> describe("SELECT 1 WHERE", {"description": "Required keyword: 'this' missing for"
...          " <class 'sqlglot.expressions.query.Where'>", "line": 1, "col": 14})
(1, 14, 'WHERE is incomplete: an expression is missing after it')
"""

from __future__ import annotations

import difflib
import itertools
import re
from typing import Any

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from kyma.engine.query.dialect import Kyma

# Keywords a misspelled word is compared with: clauses, statements and common operators.
KEYWORDS = [
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "ORDER",
    "BY",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "JOIN",
    "INNER",
    "LEFT",
    "RIGHT",
    "FULL",
    "CROSS",
    "ON",
    "USING",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "WITH",
    "AS",
    "AND",
    "OR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "LIKE",
    "ILIKE",
    "BETWEEN",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "DISTINCT",
    "CREATE",
    "TABLE",
    "DROP",
    "ALTER",
    "DESCRIBE",
    "SHOW",
    "EXPLAIN",
    "INSERT",
    "VALUES",
    "CAST",
    "INTERVAL",
    "ASC",
    "DESC",
    "EXISTS",
    "SOURCE",
    "CONNECTOR",
    "REFRESH",
]
# Operators by the node sqlglot builds for them; other nodes are named by their key (WHERE).
_OPERATORS = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.DPipe: "||",
    exp.Alias: "AS",
    exp.Order: "ORDER BY",
    exp.Group: "GROUP BY",
}
_REQUIRED = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*\.(\w+)'>")
_CLASS = re.compile(r"<class '[\w.]*\.(\w+)'>")
_UNEXPECTED = "Invalid expression / Unexpected token"
_EXPECTING = re.compile(r"Expecting (\S+)")


def describe(sql: str, error: dict[str, Any]) -> tuple[int | None, int | None, str]:
    """(line, column, message) for one of sqlglot's ParseError entries."""
    line, column = error.get("line"), error.get("col")
    text = str(error.get("description") or "invalid syntax")
    found = error.get("highlight")
    tokens = _tokens(sql)
    explained = itertools.dropwhile(lambda t: t.text.upper() == "EXPLAIN", tokens)
    first = next(explained, None)  # the first word of the statement (explained or not)
    if first is not None and first.token_type == TokenType.VAR and _keyword_like(first.text):
        guess = _keyword_like(first.text)
        return first.line, _start(first), f"unknown word {first.text!r} (did you mean {guess}?)"
    if match := _REQUIRED.fullmatch(text):
        return line, column, _incomplete(match.group(2))
    if match := _EXPECTING.fullmatch(text):
        last = tokens and (tokens[-1].line, tokens[-1].col) == (line, column)
        where = f" {'after' if last else 'before'} {found!r}" if found else ""
        return line, column, f"expected {match.group(1)!r}{where}"
    if text == _UNEXPECTED:
        word = _word_before(tokens, line, column)
        if word is not None and (guess := _keyword_like(word.text)):
            return line, column, f"unexpected {found!r} after {word.text!r} (did you mean {guess}?)"
        return line, column, f"unexpected {found!r}" if found else "unexpected end of statement"
    return line, column, _CLASS.sub(lambda m: _sql_name(m.group(1)), text)


def _incomplete(node: str) -> str:
    """``WHERE needs an expression``: what a clause or an operator left out."""
    return f"{_sql_name(node)} is incomplete: an expression is missing after it"


def _sql_name(node: str) -> str:
    cls = getattr(exp, node, None)
    if cls in _OPERATORS:
        return _OPERATORS[cls]
    key = getattr(cls, "key", node.lower())
    return str(key).replace("_", " ").upper()


def _keyword_like(word: str) -> str | None:
    """The keyword ``word`` looks like a misspelling of, if any (and it is not one itself)."""
    upper = word.upper()
    if upper in KEYWORDS or len(upper) < 3:
        return None
    close = difflib.get_close_matches(upper, KEYWORDS, n=1, cutoff=0.75)
    return close[0] if close else None


def _tokens(sql: str) -> list[Token]:
    try:
        return Kyma().tokenize(sql)
    except TokenError:
        return []


def _word_before(tokens: list[Token], line: int | None, column: int | None) -> Token | None:
    """The plain word (not a keyword) just before the token sqlglot stopped at."""
    for before, token in zip(tokens, tokens[1:], strict=False):
        if (token.line, token.col) == (line, column):
            return before if before.token_type == TokenType.VAR else None
    return None


def _start(token: Token) -> int:
    """The column where ``token`` begins (sqlglot's ``col`` is where it ends)."""
    return token.col - len(token.text) + 1

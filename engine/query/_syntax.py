"""Syntax errors in kyma's words: sqlglot's parse errors, rewritten for people.

sqlglot describes what its parser missed in its own terms (``Required keyword: 'this' missing
for <class 'sqlglot.expressions.query.Where'>``, ``Invalid expression / Unexpected token``).
This module names the SQL instead: the clause or operator left incomplete, the unexpected
word, and a misspelled keyword (``SELEC`` → did you mean SELECT?), a quote or comment left open.

>>> describe("SELEC 1", {"description": "Invalid expression / Unexpected token",
...                      "line": 1, "col": 7, "highlight": "1"})
(1, 1, "unknown word 'SELEC' (did you mean SELECT?)")
>>> describe("SELECT 1 WHERE", {"description": "Required keyword: 'this' missing for"
...          " <class 'sqlglot.expressions.query.Where'>", "line": 1, "col": 14})
(1, 14, 'WHERE is incomplete: an expression is missing after it')
>>> describe("SELECT a[1 FROM t", {"description": "Expected ]", "line": 1, "col": 15,
...                                 "highlight": "FROM"})
(1, 15, "expected ']' before 'FROM'")
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from kyma.engine.errors import AmbiguousColumnError, KymaError, SqlError, UndefinedColumnError
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
_EXPECTING = re.compile(r"Expect(?:ing|ed) (\S+)")
_MISSING = re.compile(r"Missing (\S+) from (\d+):(\d+)")  # the tokenizer's: line, offset
_UNTERMINATED = {"'": "quoted string", '"': "quoted identifier"}


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


def describe_token_error(sql: str, error: TokenError) -> tuple[int | None, int | None, str]:
    """(line, column, message) for a statement sqlglot could not even split into words: a
    quote, a dollar quote or a comment left open.

    >>> try:
    ...     Kyma().tokenize("SELECT 1,\\n  'abc")
    ... except TokenError as e:
    ...     describe_token_error("SELECT 1,\\n  'abc", e)
    (2, 3, "unterminated quoted string: a ' is missing")
    """
    cause = _MISSING.fullmatch(str(error.__cause__ or ""))
    if cause is None and isinstance(error.__cause__, IndexError) and "/*" in sql:
        return None, None, "unterminated /* comment: a */ is missing"  # read past the end
    if cause is None:
        return None, None, "the statement cannot be read as SQL words"
    delimiter, line, offset = cause.group(1), int(cause.group(2)), int(cause.group(3))
    what = _UNTERMINATED.get(delimiter, "dollar-quoted string")
    column = offset - sql.rfind("\n", 0, offset)  # 1-based
    return line, column, f"unterminated {what}: a {delimiter} is missing"


_UNRESOLVED = re.compile(r"Column '(.+?)' could not be resolved(?: for table: '(.+?)')?")
_UNKNOWN_COLUMN = re.compile(r"Unknown column: (.+)")
_POSITION = re.compile(r"Unknown output column: (\d+)")


def unresolved(message: str, references: Callable[[str], int] = lambda _: 0) -> KymaError:
    """A name sqlglot could not resolve against the statement's tables, in Postgres's words;
    ``references(column)``: how many of the statement's table references have that column
    (more than one: the name is ambiguous).

    >>> unresolved("Column 'servce' could not be resolved. Line: 1, Col: 13")
    UndefinedColumnError('column "servce" does not exist')
    >>> unresolved("Column 'x' could not be resolved for table: 'l'. Line: 1, Col: 10")
    UndefinedColumnError('column l.x does not exist')
    >>> unresolved("Column 'id' could not be resolved", lambda column: 2)
    AmbiguousColumnError('column reference "id" is ambiguous')
    """
    first = message.split("\n", 1)[0].split(". Line", 1)[0]
    if match := _UNRESOLVED.match(first):
        column, table = match.groups()
        if table is None and references(column) > 1:
            return AmbiguousColumnError(f'column reference "{column}" is ambiguous')
        named = f"{table}.{column}" if table else f'"{column}"'
        return UndefinedColumnError(f"column {named} does not exist")
    if match := _UNKNOWN_COLUMN.match(first):
        return UndefinedColumnError(f'column "{match.group(1)}" does not exist')
    if match := _POSITION.match(first):
        return SqlError(f"position {match.group(1)} is not in the select list")
    return SqlError(first)


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

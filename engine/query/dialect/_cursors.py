"""Cursor statements, named by their first word: ``DECLARE name [BINARY] [NO SCROLL] CURSOR
[WITH HOLD | WITHOUT HOLD] FOR <query>``, ``FETCH``/``MOVE [NEXT | ALL | n | FORWARD
[n | ALL]] [FROM | IN] name`` and ``CLOSE name | ALL``. Cursors move forward only: SCROLL and
the backward or absolute directions are refused (0A000). The tokenizer keeps what follows
DECLARE and FETCH as one string (they are commands to sqlglot); it is tokenized again here.

>>> import sqlglot
>>> stmt = sqlglot.parse_one('DECLARE "c" NO SCROLL CURSOR WITH HOLD FOR SELECT 1', read="kyma")
>>> stmt.name, stmt.args["hold"], stmt.text("query")
('c', True, 'SELECT 1')
>>> sqlglot.parse_one("fetch forward 10 from C", read="kyma").sql("kyma")
'FETCH FORWARD 10 FROM c'
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import Token, TokenType

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.query.dialect.expressions import Cursor

_BACKWARD = ("PRIOR", "FIRST", "LAST", "ABSOLUTE", "RELATIVE", "BACKWARD")


def _declare(verb: str, tokens: list[Token]) -> Cursor:
    text = _rest(tokens)
    tokens = Postgres().tokenize(text)
    if not tokens:
        raise SqlError("DECLARE needs a cursor name")
    name, at = _name(tokens[0], "DECLARE"), 1
    binary = False
    while at < len(tokens) and _word(tokens[at]) != "CURSOR":
        word = _word(tokens[at])
        if word == "BINARY":
            binary = True
        elif word == "NO" and at + 1 < len(tokens) and _word(tokens[at + 1]) == "SCROLL":
            at += 1
        elif word == "SCROLL":
            raise UnsupportedStatementError(
                "SCROLL cursors are not supported: kyma's cursors move forward only"
            )
        elif word not in ("ASENSITIVE", "INSENSITIVE"):
            raise SqlError(f"syntax error at or near {tokens[at].text!r} in DECLARE")
        at += 1
    at += 1  # CURSOR
    hold = False
    if at + 1 < len(tokens) and _word(tokens[at + 1]) == "HOLD":
        if _word(tokens[at]) not in ("WITH", "WITHOUT"):
            raise SqlError(f"syntax error at or near {tokens[at].text!r} in DECLARE")
        hold, at = _word(tokens[at]) == "WITH", at + 2
    if at >= len(tokens) or _word(tokens[at]) != "FOR" or at + 1 >= len(tokens):
        raise SqlError("expected DECLARE name CURSOR FOR <query>")
    query = text[tokens[at].end + 1 :].strip()
    return Cursor(verb=verb, this=name, query=exp.Literal.string(query), binary=binary, hold=hold)


def _fetch(verb: str, tokens: list[Token]) -> Cursor:
    """FETCH and MOVE: forward only; ``count`` None for ALL."""
    if len(tokens) == 1 and tokens[0].token_type == TokenType.STRING:  # FETCH's rest
        tokens = Postgres().tokenize(tokens[0].text)
    count: int | None = 1
    at = 0
    first = _word(tokens[0]) if len(tokens) > 1 else ""
    if first in _BACKWARD or first == "-" or (first == "FORWARD" and _word(tokens[1]) == "-"):
        raise UnsupportedStatementError(
            f"{verb} {first if first != '-' else 'BACKWARD'} is not supported: kyma's"
            f" cursors move forward only (use {verb} NEXT, FORWARD n or ALL)"
        )
    if first in ("NEXT", "ALL"):
        count, at = (1 if first == "NEXT" else None), 1
    elif first == "FORWARD":
        at = 1
        following = _word(tokens[1]) if len(tokens) > 2 else ""
        if following == "ALL":
            count, at = None, 2
        elif tokens[1].token_type == TokenType.NUMBER and len(tokens) > 2:
            count, at = _count(tokens[1], verb), 2
    elif tokens and tokens[0].token_type == TokenType.NUMBER and len(tokens) > 1:
        count, at = _count(tokens[0], verb), 1
    if at < len(tokens) and _word(tokens[at]) in ("FROM", "IN"):
        at += 1
    if len(tokens) - at != 1:
        raise SqlError(f"expected {verb} [NEXT | ALL | n | FORWARD [n | ALL]] [FROM | IN] name")
    found = None if count is None else exp.Literal.number(count)
    return Cursor(verb=verb, this=_name(tokens[at], verb), count=found)


def _close(verb: str, tokens: list[Token]) -> Cursor:
    if len(tokens) == 1 and _word(tokens[0]) == "ALL":
        return Cursor(verb=verb, this=exp.Star())
    if len(tokens) != 1:
        raise SqlError("expected CLOSE name | ALL")
    return Cursor(verb=verb, this=_name(tokens[0], verb))


def _count(token: Token, verb: str) -> int:
    if not token.text.isdigit():
        raise SqlError(f"{verb} takes a whole number of rows, got {token.text!r}")
    count = int(token.text)
    if count == 0:
        raise UnsupportedStatementError(
            f"{verb} FORWARD 0 (the current row again) is not supported: kyma's cursors"
            " move forward only"
        )
    return count


def _rest(tokens: list[Token]) -> str:
    if len(tokens) != 1 or tokens[0].token_type != TokenType.STRING:
        raise SqlError("expected DECLARE name CURSOR FOR <query>")
    return tokens[0].text


def _word(token: Token) -> str:
    """A keyword as written (upper case); a quoted name is never one."""
    return "" if token.token_type == TokenType.IDENTIFIER else token.text.upper()


def _name(token: Token, verb: str) -> exp.Identifier:
    """A cursor name: unquoted ones fold to lower case, as in Postgres."""
    if token.token_type == TokenType.IDENTIFIER:
        return exp.to_identifier(token.text, quoted=True)
    if token.token_type == TokenType.VAR or token.text.isidentifier():
        return exp.to_identifier(token.text.lower())
    raise SqlError(f"{verb} expects a cursor name, got {token.text!r}")


VERBS: dict[str, Callable[[str, list[Token]], exp.Expression]] = {
    "DECLARE": _declare,
    "FETCH": _fetch,
    "MOVE": _fetch,
    "CLOSE": _close,
}

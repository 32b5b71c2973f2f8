"""``WITH (key = value, …)`` option lists of kyma's own statements (CREATE CONNECTOR/SOURCE).

Values are SQL literals: strings, numbers, true and false.
"""

from __future__ import annotations

from typing import Any

from sqlglot.tokens import Token, Tokenizer, TokenType

from kyma.engine.errors import SqlError


def tokenize(sql: str) -> list[Token] | None:
    """The statement's tokens without a trailing ``;``; None if it does not tokenize."""
    try:
        tokens = Tokenizer().tokenize(sql)
    except Exception:  # not for the caller; the query parser reports the syntax error
        return None
    if tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens = tokens[:-1]
    return tokens


def with_options(tokens: list[Token], after: str) -> dict[str, Any]:
    """``WITH (a = 'x', b = 2)`` → ``{"a": "x", "b": 2}``; SqlError naming what is wrong.

    >>> with_options(tokenize("WITH (url = 'x', pool_size = 4, tls = true)"), "the type")
    {'url': 'x', 'pool_size': 4, 'tls': True}
    """
    if not tokens:
        return {}
    if tokens[0].token_type != TokenType.WITH or len(tokens) < 2 or tokens[1].text != "(":
        raise SqlError(f"expected WITH (<option> = <value>, …) after {after}")
    if tokens[-1].text != ")":
        raise SqlError("the WITH option list is not closed with ')'")
    inner, options = tokens[2:-1], {}
    for start in range(0, len(inner), 4):
        group = inner[start : start + 4]
        if len(group) < 3 or group[1].token_type != TokenType.EQ:
            shown = " ".join(t.text for t in group)
            raise SqlError(f"expected <option> = <value> in WITH (…), got {shown!r}")
        if len(group) == 4 and group[3].token_type != TokenType.COMMA:
            raise SqlError(f"expected ',' between options, got {group[3].text!r}")
        options[group[0].text.lower()] = _value(group[2])
    return options


def name_token(tokens: list[Token], statement: str) -> str:
    """The one name a statement like ``DROP CONNECTOR x`` takes (unquoted names fold)."""
    if len(tokens) != 1 or tokens[0].token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        raise SqlError(f"{statement} takes one name")
    token = tokens[0]
    return token.text if token.token_type == TokenType.IDENTIFIER else token.text.lower()


def _value(token: Token) -> Any:
    if token.token_type == TokenType.STRING:
        return token.text
    if token.token_type == TokenType.NUMBER:
        return float(token.text) if "." in token.text else int(token.text)
    if token.token_type in (TokenType.TRUE, TokenType.FALSE):
        return token.token_type == TokenType.TRUE
    raise SqlError(f"expected a string, number, true or false, got {token.text!r}")

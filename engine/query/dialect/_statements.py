"""kyma's own statements, parsed from the statement's tokens into ``KymaStatement`` nodes.

``STATEMENTS`` maps a statement's first two words to the function that parses the rest; a new
statement is one line there and one handler where its objects live (``connectors/statements.py``
runs the CONNECTOR statements, ``ingest/source_statements.py`` the SOURCE ones). A function
returns None when the words turn out not to start its statement (``SHOW SOURCES x``): the
Postgres parser then has its turn. Mistakes raise SqlError naming what was expected.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from kyma.engine.errors import SqlError
from kyma.engine.query.dialect.expressions import KymaStatement

Parse = Callable[[str, str, list[Token]], KymaStatement | None]


def _create(what: str, types: str) -> Parse:
    """``CREATE <noun> name TYPE type [WITH (…)]``; ``types`` is shown in the error."""

    def parse(verb: str, noun: str, tokens: list[Token]) -> KymaStatement:
        if len(tokens) < 3 or tokens[1].text.upper() != "TYPE":
            raise SqlError(
                f"expected CREATE {what} <name> TYPE {types} WITH (<option> = <value>, …)"
            )
        return KymaStatement(
            verb=verb,
            noun=noun,
            this=exp.to_identifier(tokens[0].text.lower()),
            kind=exp.var(tokens[2].text.lower()),
            options=with_options(tokens[3:], f"the {noun.lower()} type"),
        )

    return parse


def _alter(verb: str, noun: str, tokens: list[Token]) -> KymaStatement:
    """``ALTER <noun> name WITH (…)``."""
    if len(tokens) < 2:
        raise SqlError(f"expected ALTER {noun} <name> WITH (<option> = <value>, …)")
    name = name_token(tokens[:1], f"ALTER {noun}")
    options = with_options(tokens[1:], f"the {noun.lower()} name")
    return KymaStatement(verb=verb, noun=noun, this=_name(name), options=options)


def _named(verb: str, noun: str, tokens: list[Token]) -> KymaStatement:
    """``DROP <noun> [IF EXISTS] name``, ``REFRESH <noun> name``."""
    exists = verb == "DROP" and [t.text.upper() for t in tokens[:2]] == ["IF", "EXISTS"]
    name = name_token(tokens[2:] if exists else tokens, f"{verb} {noun}")
    return KymaStatement(verb=verb, noun=noun, this=_name(name), exists=exists)


def _show(verb: str, noun: str, tokens: list[Token]) -> KymaStatement | None:
    """``SHOW CONNECTORS``, ``SHOW SOURCES``: nothing may follow."""
    return None if tokens else KymaStatement(verb=verb, noun=noun)


def _kill(verb: str, noun: str, tokens: list[Token]) -> KymaStatement:
    """``KILL QUERY 'q12'`` (or ``KILL QUERY q12``): stop a running statement by its id."""
    if len(tokens) != 1 or tokens[0].token_type not in (TokenType.STRING, TokenType.VAR):
        raise SqlError("expected KILL QUERY '<id>', the id GET /v1/queries lists")
    return KymaStatement(verb=verb, noun=noun, this=exp.Literal.string(tokens[0].text))


STATEMENTS: dict[tuple[str, str], Parse] = {
    ("CREATE", "CONNECTOR"): _create("CONNECTOR", "<type>"),
    ("ALTER", "CONNECTOR"): _alter,
    ("DROP", "CONNECTOR"): _named,
    ("REFRESH", "CONNECTOR"): _named,
    ("SHOW", "CONNECTORS"): _show,
    ("CREATE", "SOURCE"): _create("SOURCE", "kafka|filedrop"),
    ("DROP", "SOURCE"): _named,
    ("SHOW", "SOURCES"): _show,
    ("KILL", "QUERY"): _kill,
}


def with_options(tokens: list[Token], after: str) -> list[exp.Property]:
    """``WITH (a = 'x', b = 2)`` → Property nodes; SqlError naming what is wrong."""
    if not tokens:
        return []
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
    return [exp.Property(this=exp.var(key), value=value) for key, value in options.items()]


def name_token(tokens: list[Token], statement: str) -> str:
    """The one name a statement like ``DROP CONNECTOR x`` takes (unquoted names fold)."""
    if len(tokens) != 1 or tokens[0].token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
        raise SqlError(f"{statement} takes one name")
    token = tokens[0]
    return token.text if token.token_type == TokenType.IDENTIFIER else token.text.lower()


def _name(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=name != name.lower())


def _value(token: Token) -> exp.Expression:
    if token.token_type == TokenType.STRING:
        return exp.Literal.string(token.text)
    if token.token_type == TokenType.NUMBER:
        return exp.Literal.number(token.text)
    if token.token_type in (TokenType.TRUE, TokenType.FALSE):
        return exp.Boolean(this=token.token_type == TokenType.TRUE)
    raise SqlError(f"expected a string, number, true or false, got {token.text!r}")

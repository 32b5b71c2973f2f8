"""Statements named by their first word alone: savepoints, ``ABORT`` and the asynchronous
notifications (``LISTEN``/``UNLISTEN``/``NOTIFY``), which sqlglot's Postgres parser reads as
an aliased column, and ``VACUUM [table]``, which it reads as an opaque command. ``VERBS``
maps the word to the function that parses the tokens after it; a session (the Postgres
protocol's) or the engine gives them meaning.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import Token, TokenType

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.query.dialect.expressions import KymaStatement, Notification, Savepoint

Parse = Callable[[str, list[Token]], exp.Expression]


def _savepoint(verb: str, tokens: list[Token]) -> Savepoint:
    """``SAVEPOINT name``, ``RELEASE [SAVEPOINT] name``."""
    release = verb == "RELEASE"
    if release and tokens and tokens[0].text.upper() == "SAVEPOINT" and len(tokens) > 1:
        tokens = tokens[1:]
    shown = "RELEASE [SAVEPOINT]" if release else "SAVEPOINT"
    return Savepoint(this=_identifier(tokens, f"{shown} takes one savepoint name"), release=release)


def _abort(verb: str, tokens: list[Token]) -> exp.Rollback:
    """``ABORT [WORK | TRANSACTION]``: ROLLBACK's other name."""
    if [t.text.upper() for t in tokens] not in ([], ["WORK"], ["TRANSACTION"]):
        raise SqlError("expected ABORT [WORK | TRANSACTION]")
    return exp.Rollback()


def _notification(verb: str, tokens: list[Token]) -> Notification:
    """``LISTEN channel``, ``UNLISTEN channel | *``, ``NOTIFY channel [, 'payload']``."""
    payload = None
    if verb == "UNLISTEN" and [t.text for t in tokens] == ["*"]:
        return Notification(verb=verb, this=exp.Star())
    if verb == "NOTIFY" and len(tokens) == 3 and tokens[1].token_type == TokenType.COMMA:
        if tokens[2].token_type != TokenType.STRING:
            raise SqlError(f"NOTIFY's payload is a string, got {tokens[2].text!r}")
        payload, tokens = exp.Literal.string(tokens[2].text), tokens[:1]
    channel = _identifier(tokens, f"{verb} takes one channel name")
    return Notification(verb=verb, this=channel, payload=payload)


def _identifier(tokens: list[Token], expected: str) -> exp.Identifier:
    """The one name in ``tokens``: unquoted names fold to lower case, as in Postgres."""
    if len(tokens) != 1:
        raise SqlError(expected)
    token = tokens[0]
    if token.token_type == TokenType.IDENTIFIER:
        return exp.to_identifier(token.text, quoted=True)
    if token.token_type == TokenType.VAR or token.text.isidentifier():
        return exp.to_identifier(token.text.lower())
    raise SqlError(f"{expected}, got {token.text!r}")


def _vacuum(verb: str, tokens: list[Token]) -> KymaStatement:
    """``VACUUM [table]`` (``this``: the table, None for every table). The tokenizer keeps
    what follows the word as one string (VACUUM is a command to it): tokenized here."""
    if len(tokens) == 1 and tokens[0].token_type == TokenType.STRING:
        tokens = Postgres().tokenize(tokens[0].text)
    if not tokens:
        return KymaStatement(verb=verb, noun="TABLE")
    if tokens[0].text.upper() in _VACUUM_OPTIONS or tokens[0].text == "(":
        raise UnsupportedStatementError(
            f"VACUUM {tokens[0].text.upper()} is not supported: kyma's VACUUM takes a table"
            " name, or none (every table)"
        )
    return KymaStatement(
        verb=verb, noun="TABLE", this=_identifier(tokens, "VACUUM takes one table name")
    )


_VACUUM_OPTIONS = {"FULL", "FREEZE", "VERBOSE", "ANALYZE", "ANALYSE"}

VERBS: dict[str, Parse] = {
    "VACUUM": _vacuum,
    "SAVEPOINT": _savepoint,
    "RELEASE": _savepoint,
    "ABORT": _abort,
    "LISTEN": _notification,
    "UNLISTEN": _notification,
    "NOTIFY": _notification,
}

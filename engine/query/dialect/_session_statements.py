"""Statements named by their first word: savepoints, ``ABORT``, the asynchronous
notifications (``LISTEN``/``UNLISTEN``/``NOTIFY``), which sqlglot's Postgres parser reads as
an aliased column, SQL prepared statements (``PREPARE``, ``EXECUTE``, ``DEALLOCATE``), which
it keeps as unparsed commands, and ``VACUUM [table]``, which it reads as an opaque command.
``VERBS`` maps the word to the function that parses the tokens after it; a session (the
Postgres protocol's) or the engine gives them meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from kyma.engine.errors import SqlError, UnsupportedStatementError
from kyma.engine.query.dialect.expressions import (
    Deallocate,
    ExecutePrepared,
    KymaStatement,
    Notification,
    Prepare,
    Savepoint,
)

# What PREPARE may hold, as in Postgres (its PreparableStmt).
_PREPARABLE = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Merge)

Parse = Callable[[str, list[Token]], exp.Expression]
T = TypeVar("T")


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


def _prepare(verb: str, tokens: list[Token]) -> Prepare:
    """``PREPARE name [(type, …)] AS statement``."""
    text, tokens = _command_rest(tokens, "PREPARE name [(type, …)] AS statement")
    name = _identifier(tokens[:1], "PREPARE takes a statement name")
    types: list[exp.DataType] = []
    at = 1
    if at < len(tokens) and tokens[at].token_type == TokenType.L_PAREN:
        groups, at = _parenthesized(tokens, at)
        for group in groups:
            spelled = text[group[0].start : group[-1].end + 1]
            try:
                types.append(exp.DataType.build(spelled, dialect="postgres"))
            except (ParseError, ValueError):
                raise SqlError(f'type "{spelled}" does not exist') from None
    if at >= len(tokens) or tokens[at].text.upper() != "AS" or at + 1 >= len(tokens):
        raise SqlError("expected PREPARE name [(type, …)] AS statement")
    body = text[tokens[at].end + 1 :].strip()
    from kyma.engine.query.dialect import Kyma  # the dialect is built from this module

    statements = [s for s in _parsed(lambda: sqlglot.parse(body, read=Kyma)) if s is not None]
    if len(statements) != 1 or not isinstance(statements[0], _PREPARABLE):
        raise SqlError(f"PREPARE takes one SELECT, VALUES, INSERT, UPDATE or DELETE, got {body!r}")
    return Prepare(
        this=name, expressions=types, expression=statements[0], body=exp.Literal.string(body)
    )


def _execute(verb: str, tokens: list[Token]) -> ExecutePrepared:
    """``EXECUTE name [(argument, …)]``."""
    text, tokens = _command_rest(tokens, "EXECUTE name [(argument, …)]")
    name = _identifier(tokens[:1], "EXECUTE takes a prepared statement name")
    if len(tokens) == 1:
        return ExecutePrepared(this=name, expressions=[])
    from kyma.engine.query.dialect import Kyma  # the dialect is built from this module

    arguments = _parsed(lambda: sqlglot.parse_one(text[tokens[1].start :], read=Kyma))
    if isinstance(arguments, exp.Paren):
        return ExecutePrepared(this=name, expressions=[arguments.this])
    if isinstance(arguments, exp.Tuple) and arguments.expressions:
        return ExecutePrepared(this=name, expressions=arguments.expressions)
    raise SqlError("expected EXECUTE name [(argument, …)]")


def _deallocate(verb: str, tokens: list[Token]) -> Deallocate:
    """``DEALLOCATE [PREPARE] name | ALL``."""
    if tokens and tokens[0].text.upper() == "PREPARE":
        tokens = tokens[1:]
    if len(tokens) == 1 and tokens[0].token_type == TokenType.STRING:  # a command's rest
        tokens = _command_rest(tokens, "DEALLOCATE [PREPARE] name | ALL")[1]
    if len(tokens) == 1 and tokens[0].token_type == TokenType.ALL:
        return Deallocate(this=exp.Star())
    return Deallocate(this=_identifier(tokens, "DEALLOCATE [PREPARE] takes a name or ALL"))


def _parsed(parse: Callable[[], T]) -> T:
    """What ``parse`` returns; its syntax error as SqlError (42601)."""
    try:
        return parse()
    except (ParseError, TokenError) as e:
        detail = e.errors[0].get("description") if isinstance(e, ParseError) and e.errors else e
        raise SqlError(f"syntax error: {detail}") from None


def _command_rest(tokens: list[Token], expected: str) -> tuple[str, list[Token]]:
    """The text the tokenizer kept whole after a command word (PREPARE, EXECUTE), and its
    tokens."""
    if len(tokens) != 1 or tokens[0].token_type != TokenType.STRING:
        raise SqlError(f"expected {expected}")
    text = tokens[0].text
    try:
        return text, Postgres().tokenize(text)
    except TokenError as e:
        raise SqlError(f"syntax error: {e}") from None


def _parenthesized(tokens: list[Token], at: int) -> tuple[list[list[Token]], int]:
    """The comma-separated groups of tokens inside the parentheses opening at ``at``, and
    the index past the closing one."""
    groups: list[list[Token]] = [[]]
    depth = 0
    for index in range(at, len(tokens)):
        token = tokens[index]
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            if depth == 1:
                continue
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                if not all(groups):
                    break
                return groups, index + 1
        elif token.token_type == TokenType.COMMA and depth == 1:
            groups.append([])
            continue
        groups[-1].append(token)
    raise SqlError("expected a parenthesized list of types")


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
    "PREPARE": _prepare,
    "EXECUTE": _execute,
    "DEALLOCATE": _deallocate,
}

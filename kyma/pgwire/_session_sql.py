"""The session statements a Postgres protocol session answers itself, read from the tokens of
kyma's dialect (its lexer, never a regular expression over the text): ``SET``, ``SHOW``,
``SHOW COLUMNS FROM t``, and the one-row ``SELECT`` of a session function or of
``current_setting`` / ``set_config`` that drivers send on connecting.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from kyma.engine.query.dialect import Kyma

FUNCTIONS = (
    "version",
    "current_schema",
    "current_database",
    "current_user",
    "session_user",
    "current_role",
    "pg_backend_pid",
)
_SHORT = 2_000  # longer statements are never one of these: not tokenized twice
_NAME = (TokenType.VAR, TokenType.IDENTIFIER)


def tokens(text: str, limit: int | None = _SHORT) -> list[Token]:
    """``text``'s tokens; a command's rest (``SHOW …``, kept as one string) tokenized too.
    None (no tokens) past ``limit`` characters.

    >>> [t.text for t in tokens("SHOW time zone")]
    ['SHOW', 'time', 'zone']
    """
    if limit is not None and len(text) > limit:
        return []
    try:
        found = Kyma().tokenize(text)
    except TokenError:
        return []
    found = [t for t in found if t.token_type != TokenType.SEMICOLON]
    command = len(found) == 2 and found[0].token_type in Kyma.Tokenizer.COMMANDS
    if command and found[1].token_type == TokenType.STRING:  # the rest, kept as one string
        offset = text.find(found[1].text, found[0].end + 1)
        rest = tokens(found[1].text)
        for token in rest:  # positions in ``text``
            token.start, token.end = token.start + offset, token.end + offset
        return [found[0], *rest]
    return found


def _words(found: list[Token]) -> list[str]:
    return [t.text.lower() for t in found]


def _dotted(found: list[Token]) -> tuple[str, int] | None:
    """A setting's name (``search_path``, ``myapp.tenant``) at the start of ``found``, and
    how many tokens it takes."""
    if not found or found[0].token_type == TokenType.STRING:
        return None
    parts, at = [found[0].text], 1
    while at + 1 < len(found) and found[at].token_type == TokenType.DOT:
        parts.append(found[at + 1].text)
        at += 2
    name = ".".join(parts)
    return (name, at) if all(p.replace("_", "").isalnum() for p in parts) else None


@dataclass(frozen=True)
class SetStatement:
    name: str  # lower-case; ``timezone`` for SET TIME ZONE
    value: str  # as written (quotes kept)
    local: bool


def read_set(text: str) -> SetStatement | None:
    """``SET [SESSION | LOCAL] name {= | TO} value`` or ``SET … TIME ZONE value``.

    >>> read_set("SET LOCAL search_path TO public, x")
    SetStatement(name='search_path', value='public, x', local=True)
    >>> read_set("set time zone 'UTC'"), read_set("SET a.b=1").name
    (SetStatement(name='timezone', value="'UTC'", local=False), 'a.b')
    """
    found = tokens(text)
    if not found or found[0].text.lower() != "set":
        return None
    at, local = 1, False
    if len(found) > at and found[at].text.lower() in ("session", "local"):
        local = found[at].text.lower() == "local"
        at += 1
    if _words(found[at : at + 2]) == ["time", "zone"] and len(found) > at + 2:
        return SetStatement("timezone", text[found[at + 2].start :].strip(), local)
    named = _dotted(found[at:])
    if named is None or at + named[1] >= len(found):
        return None
    name, width = named
    last = found[at + width - 1]
    following = found[at + width]
    if following.token_type == TokenType.EQ or following.text.lower() == "to":
        last = following
    value = text[last.end + 1 :].strip()
    return SetStatement(name.lower(), value, local) if value else None


def read_show(text: str) -> str | None:
    """The setting ``SHOW name`` names (``SHOW TIME ZONE``: ``timezone``), else None.

    >>> read_show("show Transaction Isolation Level"), read_show("SHOW myapp.tenant")
    ('transaction_isolation', 'myapp.tenant')
    >>> read_show("SHOW TABLES"), read_show("SELECT 1")
    ('tables', None)
    """
    found = tokens(text)
    if not found or found[0].text.lower() != "show":
        return None
    words = _words(found[1:])
    if words == ["time", "zone"]:
        return "timezone"
    if words == ["transaction", "isolation", "level"]:
        return "transaction_isolation"
    named = _dotted(found[1:])
    return named[0].lower() if named is not None and named[1] == len(found) - 1 else None


def show_columns_table(text: str) -> str | None:
    """The table of ``SHOW [FULL] COLUMNS {FROM | IN} table``, as written.

    >>> show_columns_table('show full columns from "Ev".x;'), show_columns_table("SHOW x")
    ('"Ev".x', None)
    """
    found = tokens(text)
    words = _words(found)
    at = 2 if words[1:2] == ["full"] else 1
    if words[:1] != ["show"] or words[at : at + 1] != ["columns"]:
        return None
    if words[at + 1 : at + 2] not in (["from"], ["in"]) or len(found) <= at + 2:
        return None
    return text[found[at + 2].start : found[-1].end + 1]


def read_function(text: str) -> tuple[str, str | None] | None:
    """``SELECT [pg_catalog.]fn[()] [AS alias]`` of a session function: (fn, alias).

    >>> read_function("select pg_catalog.version() as v"), read_function("SELECT current_user")
    (('version', 'v'), ('current_user', None))
    """
    found = tokens(text)
    if not found or found[0].token_type != TokenType.SELECT:
        return None
    at = 1
    if _words(found[at : at + 2]) == ["pg_catalog", "."]:
        at += 2
    if at >= len(found) or found[at].text.lower() not in FUNCTIONS:
        return None
    fn, at = found[at].text.lower(), at + 1
    if [t.token_type for t in found[at : at + 2]] == [TokenType.L_PAREN, TokenType.R_PAREN]:
        at += 2
    alias = _alias(found, at)
    if alias is None:
        return (fn, None) if at == len(found) else None
    return (fn, alias[0]) if alias[1] == len(found) else None


def _alias(found: list[Token], at: int) -> tuple[str, int] | None:
    """``AS name`` at ``at``: the name and the index after it."""
    if at + 1 < len(found) and found[at].token_type == TokenType.ALIAS:
        name = found[at + 1]
        if name.token_type != TokenType.STRING and name.text.replace("_", "").isalnum():
            return name.text, at + 2
    return None


@dataclass(frozen=True)
class ConfigCall:
    name: str
    value: str | None  # set_config's; None: current_setting
    alias: str | None


def read_config(text: str) -> list[ConfigCall] | None:
    """``SELECT current_setting('name'), set_config('name', 'value', is_local) [AS a], …``.

    >>> read_config("select current_setting('search_path') as a, set_config('x', 'v', false)")
    [ConfigCall(name='search_path', value=None, alias='a'), ConfigCall(name='x', value='v', \
alias=None)]
    """
    found = tokens(text)
    if not found or found[0].token_type != TokenType.SELECT:
        return None
    calls, at = [], 1
    while True:
        call = _config_call(found, at)
        if call is None:
            return None
        calls.append(call[0])
        at = call[1]
        if at == len(found):
            return calls
        if found[at].token_type != TokenType.COMMA:
            return None
        at += 1


def _config_call(found: list[Token], at: int) -> tuple[ConfigCall, int] | None:
    kinds = [t.token_type for t in found[at : at + 4]]
    fn = found[at].text.lower() if at < len(found) else ""
    if fn == "current_setting" and kinds == [_VAR, _OPEN, _TEXT, _CLOSE]:
        name, value, at = found[at + 2].text, None, at + 4
    elif fn == "set_config":
        kinds = [t.token_type for t in found[at : at + 8]]
        if kinds[:7] != [_VAR, _OPEN, _TEXT, _COMMA, _TEXT, _COMMA, kinds[6]] or kinds[7:] != [
            _CLOSE
        ]:
            return None
        if found[at + 6].token_type not in _NAME + (TokenType.TRUE, TokenType.FALSE):
            return None
        name, value, at = found[at + 2].text, found[at + 4].text, at + 8
    else:
        return None
    alias = _alias(found, at)
    if alias is not None:
        return ConfigCall(name, value, alias[0]), alias[1]
    return ConfigCall(name, value, None), at


_VAR, _TEXT, _COMMA = TokenType.VAR, TokenType.STRING, TokenType.COMMA
_OPEN, _CLOSE = TokenType.L_PAREN, TokenType.R_PAREN


@functools.lru_cache(maxsize=1024)
def session_select(text: str) -> tuple[tuple[str, str | None] | None, Sequence[ConfigCall] | None]:
    """``read_function`` and ``read_config`` of a SELECT, kept by its text: a query that is
    neither is not tokenized again each time it is sent."""
    calls = read_config(text)
    return read_function(text), None if calls is None else tuple(calls)

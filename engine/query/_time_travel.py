"""``FROM logs AS OF SNAPSHOT 42``: found in the token stream, before parsing.

The clause becomes the quoted table name ``"logs@42"`` (aliased back to ``logs`` unless the
query gives its own alias), which the planner resolves to table ``logs`` at snapshot 42.
Working on tokens, not text, keeps string literals and comments out of reach.
"""

from __future__ import annotations

import re

from sqlglot.tokens import Tokenizer, TokenType

from kyma.engine.errors import SqlError

_VERSIONED = re.compile(r"(?P<table>[A-Za-z_][A-Za-z0-9_]*)@(?P<snapshot>\d+)")


def split_versioned(name: str) -> tuple[str, int | None]:
    """``logs@42`` → ``("logs", 42)``; a plain name → ``(name, None)``."""
    match = _VERSIONED.fullmatch(name)
    return (match["table"], int(match["snapshot"])) if match else (name, None)


def apply(sql: str) -> str:
    if "SNAPSHOT" not in sql.upper():  # tokenizing a long statement costs seconds
        return sql
    try:
        tokens = Tokenizer().tokenize(sql)
    except Exception as e:  # sqlglot raises TokenError; the parser reports it precisely
        raise SqlError(f"syntax error: {e}") from None
    out: list[str] = []
    cursor = 0
    i = 0
    while i + 4 < len(tokens):
        name, as_, of, snap, number = tokens[i : i + 5]
        if (
            as_.token_type == TokenType.ALIAS
            and of.text.upper() == "OF"
            and snap.text.upper() == "SNAPSHOT"
            and number.token_type == TokenType.NUMBER
            and name.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        ):
            if not number.text.isdigit():
                raise SqlError(f"AS OF SNAPSHOT expects a snapshot id, got {number.text!r}")
            table = name.text if name.token_type == TokenType.IDENTIFIER else name.text.lower()
            nxt = tokens[i + 5] if i + 5 < len(tokens) else None
            aliased = nxt is not None and nxt.token_type in (
                TokenType.ALIAS,
                TokenType.VAR,
                TokenType.IDENTIFIER,
            )
            out.append(sql[cursor : name.start])
            out.append(f'"{table}@{int(number.text)}"' + ("" if aliased else f' AS "{table}"'))
            cursor = number.end + 1
            i += 5
            continue
        i += 1
    out.append(sql[cursor:])
    return "".join(out)

"""The SQL dialect of what kyma sends to a Postgres source: sqlglot's, with string literals
that mean the same under either ``standard_conforming_strings``.

Sessions pin ``standard_conforming_strings=on``, but a plain ``'a\\b'`` would still change
meaning (and ``'x\\'' OR 1=1 --'`` turn into SQL) on a session where it is off. A string with
a backslash is therefore written as an escape string, ``E'a\\\\b'``, which every setting reads
the same way; a string without one is the same under both.

>>> from sqlglot import exp
>>> exp.Literal.string("x\\\\' OR 1=1 --").sql(dialect="kymapostgres")
"E'x\\\\\\\\'' OR 1=1 --'"
>>> exp.Literal.string("it's").sql(dialect="kymapostgres")
"'it''s'"
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import TokenType

NAME = "kymapostgres"  # sqlglot registers a dialect under its class name, lower-cased


def quote(text: str) -> str:
    """``text`` as a Postgres string literal that does not depend on the session's settings."""
    doubled = text.replace("'", "''")
    return f"E'{doubled.replace(chr(92), chr(92) * 2)}'" if "\\" in text else f"'{doubled}'"


def conforming_strings(sql: str) -> str:
    """``sql`` with every plain string literal that holds a backslash written by ``quote``.

    Done on the generated text, so that it covers every path by which sqlglot writes a
    string (literals, JSON path keys, LIKE escapes, ...); escape strings (``E'…'``) and
    dollar-quoted ones already mean the same under either setting.
    """
    if "\\" not in sql:
        return sql
    parts, done = [], 0
    for token in KymaPostgres().tokenize(sql):
        if token.token_type == TokenType.STRING and "\\" in token.text:
            parts += [sql[done : token.start], quote(token.text)]
            done = token.end + 1
    return "".join(parts) + sql[done:]


class KymaPostgres(Postgres):
    class Generator(Postgres.Generator):
        def generate(self, expression: exp.Expr, copy: bool = True) -> str:
            return conforming_strings(super().generate(expression, copy))

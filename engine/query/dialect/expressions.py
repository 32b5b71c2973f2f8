"""The nodes kyma's dialect adds to sqlglot's tree: EXPLAIN and kyma's own statements.

>>> import sqlglot
>>> sql = "CREATE CONNECTOR pg TYPE postgres WITH (url = 'x', pool_size = 4)"
>>> stmt = sqlglot.parse_one(sql, read="kyma")
>>> stmt.verb, stmt.noun, stmt.name, statement_options(stmt)
('CREATE', 'CONNECTOR', 'pg', {'url': 'x', 'pool_size': 4})
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

# ``t AS OF SNAPSHOT 42``: the table's ``exp.Version`` names this.
SNAPSHOT = "SNAPSHOT"


class Explain(exp.Expression):
    """``EXPLAIN [ANALYZE] <statement>``: ``this`` is the statement explained; with
    ``analyze`` it runs, and the plan carries what each operator did."""

    arg_types = {"this": True, "analyze": False}


class KymaStatement(exp.Expression):
    """``CREATE CONNECTOR pg TYPE postgres WITH (…)``, ``SHOW SOURCES`` and their kin.

    ``verb`` and ``noun`` name the statement (``CREATE``, ``CONNECTOR``); ``this`` is the
    object's name, ``kind`` the type after TYPE, ``options`` the WITH list as Property nodes
    and ``exists`` the IF EXISTS of a DROP.
    """

    arg_types = {
        "verb": True,
        "noun": True,
        "this": False,
        "kind": False,
        "options": False,
        "exists": False,
    }

    @property
    def verb(self) -> str:
        return str(self.args["verb"])

    @property
    def noun(self) -> str:
        return str(self.args["noun"])

    @property
    def type_name(self) -> str:
        return self.text("kind")


def statement_options(stmt: KymaStatement) -> dict[str, Any]:
    """The WITH list as Python values: strings, ints, floats and booleans."""
    return {p.name: _python(p.args["value"]) for p in stmt.args.get("options") or []}


def _python(value: exp.Expression) -> Any:
    if isinstance(value, exp.Boolean):
        return value.this
    if value.is_string:
        return value.this
    text = value.this
    return float(text) if "." in text else int(text)


class Savepoint(exp.Expression):
    """``SAVEPOINT name`` or, with ``release``, ``RELEASE [SAVEPOINT] name``; ``ROLLBACK TO
    [SAVEPOINT] name`` is sqlglot's ``exp.Rollback`` with its ``savepoint``."""

    arg_types = {"this": True, "release": False}


class Notification(exp.Expression):
    """``LISTEN channel``, ``UNLISTEN channel|*``, ``NOTIFY channel [, 'payload']``: ``verb``
    names which; ``this`` the channel (``*``), ``payload`` NOTIFY's string."""

    arg_types = {"verb": True, "this": True, "payload": False}

    @property
    def verb(self) -> str:
        return str(self.args["verb"])


class Prepare(exp.Expression):
    """``PREPARE name [(type, …)] AS statement``: ``this`` the name, ``expressions`` the
    declared parameter types, ``expression`` the statement parsed and ``body`` its text
    (run as written, its ``$n`` bound at EXECUTE)."""

    arg_types = {"this": True, "expressions": False, "expression": True, "body": True}


class ExecutePrepared(exp.Expression):
    """``EXECUTE name [(argument, …)]``: ``expressions`` the arguments."""

    arg_types = {"this": True, "expressions": False}


class Deallocate(exp.Expression):
    """``DEALLOCATE [PREPARE] name | ALL``: ``this`` the name, or ``exp.Star`` for ALL."""

    arg_types = {"this": True}


class Cursor(exp.Expression):
    """``DECLARE``, ``FETCH``, ``MOVE`` and ``CLOSE`` of a cursor: ``verb`` names which,
    ``this`` the cursor (``*`` for CLOSE ALL). DECLARE: ``query`` is the query's text as
    written, ``binary`` and ``hold`` its options. FETCH and MOVE: ``count`` the rows
    (None: ALL)."""

    arg_types = {
        "verb": True,
        "this": True,
        "query": False,
        "binary": False,
        "hold": False,
        "count": False,
    }

    @property
    def verb(self) -> str:
        return str(self.args["verb"])

    @property
    def count(self) -> int | None:
        count = self.args.get("count")
        return None if count is None else int(count.this)

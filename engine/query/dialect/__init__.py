"""kyma's SQL dialect: Postgres plus kyma's statements and clauses, parsed in one pass.

``EXPLAIN <statement>``, ``CREATE/ALTER/DROP/REFRESH CONNECTOR``, ``SHOW CONNECTORS``,
``CREATE/DROP SOURCE``, ``SHOW SOURCES``, ``t AS OF SNAPSHOT 42`` and
``ALTER TABLE t SET RETENTION '30 days'``, ``SAVEPOINT``, ``RELEASE``, ``ABORT``, ``LISTEN``,
``UNLISTEN``, ``NOTIFY``, ``PREPARE``, ``EXECUTE``, ``DEALLOCATE`` and the cursor statements
(``DECLARE``, ``FETCH``, ``MOVE``, ``CLOSE``) are parsed into the tree; ``live(...)`` and
dynamic paths are Postgres syntax. Meaning comes later: kyma's rewrite rules and statement handlers.

>>> import sqlglot
>>> sql = "EXPLAIN SELECT * FROM logs AS OF SNAPSHOT 3 AS l"
>>> print(sqlglot.parse_one(sql, read=Kyma).sql(Kyma))
EXPLAIN SELECT * FROM logs AS OF SNAPSHOT 3 AS l
>>> print(sqlglot.parse_one("ALTER TABLE logs SET RETENTION '30 days'", read=Kyma).sql(Kyma))
ALTER TABLE logs SET (retention = '30 days')
>>> print(sqlglot.parse_one("drop source if exists Clicks", read=Kyma).sql(Kyma))
DROP SOURCE IF EXISTS clicks
>>> print(sqlglot.parse_one('release savepoint "_pg3_1"', read=Kyma).sql(Kyma))
RELEASE SAVEPOINT "_pg3_1"
>>> print(sqlglot.parse_one("prepare q (int) as select $1 + 1", read=Kyma).sql(Kyma))
PREPARE q (INT) AS SELECT $1 + 1
"""

from __future__ import annotations

from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import TokenType

from kyma.engine.query.dialect._generator import KymaGenerator
from kyma.engine.query.dialect._parser import KymaParser
from kyma.engine.query.dialect.expressions import (
    Cursor,
    Deallocate,
    ExecutePrepared,
    Explain,
    KymaStatement,
    Notification,
    Prepare,
    Savepoint,
    statement_options,
)


class Kyma(Postgres):
    class Tokenizer(Postgres.Tokenizer):
        # EXPLAIN and REFRESH start statements kyma parses, not commands kept as text.
        KEYWORDS = {**Postgres.Tokenizer.KEYWORDS, "REFRESH": TokenType.REFRESH}
        KEYWORDS.pop("EXPLAIN")

    Parser = KymaParser
    Generator = KymaGenerator


__all__ = [
    "Deallocate",
    "ExecutePrepared",
    "Cursor",
    "Explain",
    "Kyma",
    "KymaStatement",
    "Notification",
    "Prepare",
    "Savepoint",
    "statement_options",
]

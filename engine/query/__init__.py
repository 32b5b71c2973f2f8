"""The query path: parse a statement with sqlglot and run it against the catalog.

Statements are dispatched by kind; the answer is an Arrow table plus a status line.
"""

from kyma.engine.query._access import ADMIN, READ, Access
from kyma.engine.query._limits import Cancel, QueryEvent, QueryLimits, contained
from kyma.engine.query._parse import kyma_type, parse_statement
from kyma.engine.query._quarantine import Quarantine
from kyma.engine.query._result import QueryResult
from kyma.engine.query._running import Caller, RunningStatements
from kyma.engine.query._session import QueryEngine

__all__ = [
    "ADMIN",
    "READ",
    "Access",
    "Cancel",
    "Caller",
    "QueryEngine",
    "QueryEvent",
    "QueryLimits",
    "QueryResult",
    "Quarantine",
    "RunningStatements",
    "contained",
    "kyma_type",
    "parse_statement",
]

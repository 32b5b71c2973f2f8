"""kyma's errors as SQLSTATE codes: the one table (kyma.engine.error_statuses) names them.

The message is kyma's own, as in the HTTP and Flight SQL answers.
"""

from __future__ import annotations

import logging

from kyma.engine import errors as e
from kyma.engine.error_statuses import status

log = logging.getLogger("kyma.pgwire")

INTERNAL = "XX000"


def sqlstate(error: Exception) -> str:
    code = str(status(error, "sqlstate"))
    if code == INTERNAL:
        log.error("Postgres protocol request failed: %s", error, exc_info=error)
    return code


def message(error: Exception) -> str:
    if isinstance(error, e.KymaError):
        return str(error)
    return "internal error; see the server log"

"""The status an export answers, chosen from the class of the error it ended with.

The gRPC code comes from the one table (kyma.engine.error_statuses): bad input is not
retried (INVALID_ARGUMENT), a commit that failed or timed out is (UNAVAILABLE), as the OTLP
specification's retryable statuses say. OTLP/HTTP answers the matching HTTP status.
"""

from __future__ import annotations

import grpc

from kyma.engine.error_statuses import status

_HTTP = {
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "RESOURCE_EXHAUSTED": 413,
    "INVALID_ARGUMENT": 400,
    "UNAVAILABLE": 503,
    "FAILED_PRECONDITION": 500,
    "INTERNAL": 500,
}


def status_of(error: BaseException) -> tuple[grpc.StatusCode, int]:
    """The gRPC code and HTTP status of an export that failed with ``error``."""
    code = str(status(error, "otlp"))
    return grpc.StatusCode[code], _HTTP[code]

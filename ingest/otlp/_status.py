"""The status an export answers, chosen from the class of the error it ended with.

Bad input is not retried (INVALID_ARGUMENT, 400); a commit that failed or timed out is
(UNAVAILABLE, 503), as the OTLP specification's retryable statuses say.
"""

from __future__ import annotations

import grpc

from kyma.engine.errors import (
    IngestError,
    KymaError,
    LimitExceededError,
    PermissionDeniedError,
    RetryableError,
    UnauthenticatedError,
)

STATUSES: tuple[tuple[type[BaseException], grpc.StatusCode, int], ...] = (
    (UnauthenticatedError, grpc.StatusCode.UNAUTHENTICATED, 401),
    (PermissionDeniedError, grpc.StatusCode.PERMISSION_DENIED, 403),
    (LimitExceededError, grpc.StatusCode.RESOURCE_EXHAUSTED, 413),
    (IngestError, grpc.StatusCode.INVALID_ARGUMENT, 400),
    (RetryableError, grpc.StatusCode.UNAVAILABLE, 503),
    (KymaError, grpc.StatusCode.FAILED_PRECONDITION, 500),  # e.g. a table of the wrong shape
    (BaseException, grpc.StatusCode.INTERNAL, 500),
)


def status_of(error: BaseException) -> tuple[grpc.StatusCode, int]:
    """The gRPC code and HTTP status of an export that failed with ``error``."""
    return next((code, http) for kind, code, http in STATUSES if isinstance(error, kind))

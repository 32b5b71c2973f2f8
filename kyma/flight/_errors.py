"""kyma's errors as Flight statuses: the one table (kyma.engine.error_statuses) names the code.

pyarrow turns the exception a handler raises into the gRPC status the client sees:
``ArrowInvalid`` → INVALID_ARGUMENT, ``ArrowKeyError`` → NOT_FOUND,
``ArrowNotImplementedError`` → UNIMPLEMENTED, ``FlightUnavailableError`` → UNAVAILABLE,
``FlightInternalError`` → INTERNAL. The message is kyma's own, as in the HTTP answers.

pyarrow appends the traceback of an ``Arrow*`` exception to the status as its detail, so
they are raised ``from None``: the client sees this module's frame, not the engine's.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.flight as flight

from kyma.engine import errors as e
from kyma.engine.error_statuses import status

log = logging.getLogger("kyma.flight")

# The pyarrow exception that carries each gRPC code the table names.
_CARRIER: dict[str, type[Exception]] = {
    "UNAUTHENTICATED": flight.FlightUnauthenticatedError,
    "PERMISSION_DENIED": flight.FlightUnauthorizedError,
    "NOT_FOUND": pa.ArrowKeyError,
    "UNIMPLEMENTED": pa.ArrowNotImplementedError,
    "UNAVAILABLE": flight.FlightUnavailableError,
    "INVALID_ARGUMENT": pa.ArrowInvalid,
    "INTERNAL": flight.FlightInternalError,
}

F = TypeVar("F", bound=Callable[..., Any])


def to_flight_error(error: e.KymaError) -> Exception:
    cls = _CARRIER[str(status(error, "flight"))]
    if cls is flight.FlightInternalError:
        log.error("Flight SQL request failed: %s", error, exc_info=error)
    return cls(str(error))


def translated(handler: F) -> F:
    """Run a FlightServerBase handler; kyma's errors become Flight statuses, others INTERNAL."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except e.KymaError as error:
            log.debug("Flight SQL request failed: %s", error, exc_info=error)
            raise to_flight_error(error) from None
        except (pa.ArrowException, flight.FlightError, NotImplementedError):
            raise
        except Exception:
            log.exception("unexpected error in a Flight SQL request")
            raise flight.FlightInternalError("internal error; see the server log") from None

    return wrapper  # type: ignore[return-value]

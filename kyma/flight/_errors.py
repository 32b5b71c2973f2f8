"""Flight status codes for kyma's errors: chosen here, at the Flight edge, and nowhere else.

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

log = logging.getLogger("kyma.flight")

# First match wins: more specific classes first (the order of kyma.server.errors.STATUS).
STATUS: tuple[tuple[type[Exception], type[Exception]], ...] = (
    (e.UnauthenticatedError, flight.FlightUnauthenticatedError),
    (e.PermissionDeniedError, flight.FlightUnauthorizedError),
    (e.NotFoundError, pa.ArrowKeyError),
    (e.UnsupportedStatementError, pa.ArrowNotImplementedError),
    (e.RetryableError, flight.FlightUnavailableError),
    (e.ConnectorDisabledError, flight.FlightUnavailableError),
    (e.TlsFailedError, flight.FlightUnavailableError),
    (e.PushdownFailedError, flight.FlightInternalError),
    (e.TerminalError, pa.ArrowInvalid),
)

F = TypeVar("F", bound=Callable[..., Any])


def to_flight_error(error: e.KymaError) -> Exception:
    cls = next((f for k, f in STATUS if isinstance(error, k)), flight.FlightInternalError)
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

"""kyma's errors as Flight statuses: the one table (kyma.engine.error_statuses) names the code.

pyarrow turns the exception a handler raises into the gRPC status the client sees:
``ArrowInvalid`` → INVALID_ARGUMENT, ``ArrowKeyError`` → NOT_FOUND,
``ArrowNotImplementedError`` → UNIMPLEMENTED, ``FlightUnavailableError`` → UNAVAILABLE,
``FlightInternalError`` → INTERNAL. The message is kyma's own, as in the HTTP answers.

pyarrow appends ``traceback.format_exception`` of any exception that is not a
``FlightError`` to the status message (apache/arrow#34251), and the ``FlightError`` classes
carry no INVALID_ARGUMENT, NOT_FOUND or UNIMPLEMENTED. So those codes are raised as
``Untraced`` exceptions: formatting one fails (reading its ``__suppress_context__`` raises),
and pyarrow then appends only its class name ("Detail: Python exception: InvalidArgument").
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


class Untraced(Exception):
    """An exception ``traceback.format_exception`` cannot format: pyarrow sends its message
    and class name, never the server's stack. Only for raising to pyarrow."""

    @property
    def __suppress_context__(self) -> bool:  # type: ignore[override]
        raise TypeError("a Flight status, not formatted with its traceback")


class InvalidArgument(Untraced, pa.ArrowInvalid):
    """INVALID_ARGUMENT."""


class NotFound(Untraced, pa.ArrowKeyError):
    """NOT_FOUND."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


class Unimplemented(Untraced, pa.ArrowNotImplementedError):
    """UNIMPLEMENTED."""


class Unknown(Untraced, pa.ArrowException):
    """UNKNOWN: another Arrow error met while answering (e.g. the client's data)."""


# The exception that carries each gRPC code the table names.
_CARRIER: dict[str, type[Exception]] = {
    "UNAUTHENTICATED": flight.FlightUnauthenticatedError,
    "PERMISSION_DENIED": flight.FlightUnauthorizedError,
    "NOT_FOUND": NotFound,
    "UNIMPLEMENTED": Unimplemented,
    "UNAVAILABLE": flight.FlightUnavailableError,
    "INVALID_ARGUMENT": InvalidArgument,
    "INTERNAL": flight.FlightInternalError,
    "CANCELLED": flight.FlightCancelledError,
}

F = TypeVar("F", bound=Callable[..., Any])


def to_flight_error(error: e.KymaError) -> Exception:
    cls = _CARRIER[str(status(error, "flight"))]
    if cls is flight.FlightInternalError:
        log.error("Flight SQL request failed: %s", error, exc_info=error)
    return cls(str(error))


def untraced(error: Exception) -> Exception:
    """An Arrow error raised while answering, as the ``Untraced`` carrier of its code."""
    if isinstance(error, flight.FlightError | Untraced):
        return error
    for kind, carrier in (
        (NotImplementedError, Unimplemented),  # ArrowNotImplementedError too
        (pa.ArrowKeyError, NotFound),
        (pa.ArrowInvalid, InvalidArgument),
    ):
        if isinstance(error, kind):
            return carrier(str(error))
    return Unknown(str(error))


def translated(handler: F) -> F:
    """Run a FlightServerBase handler; kyma's errors become Flight statuses, others INTERNAL."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except e.KymaError as error:
            log.debug("Flight SQL request failed: %s", error, exc_info=error)
            raise to_flight_error(error) from None
        except (pa.ArrowException, flight.FlightError, NotImplementedError) as error:
            raise untraced(error) from None
        except Exception:
            log.exception("unexpected error in a Flight SQL request")
            raise flight.FlightInternalError("internal error; see the server log") from None

    return wrapper  # type: ignore[return-value]

"""Durations: Postgres's time-valued settings (``statement_timeout = '1s'``), read and shown
as it does, and the few timing helpers statements share.

A bare number is milliseconds; a unit may follow, with or without a space: ``us``, ``ms``,
``s``, ``min``, ``h``, ``d``. Shown in the largest unit that holds the value whole.

>>> milliseconds("statement_timeout", "2min"), milliseconds("statement_timeout", 1500)
(120000, 1500)
>>> shown(1000), shown(500), shown(90_000), shown(0)
('1s', '500ms', '90s', '0')
"""

from __future__ import annotations

import time

from kyma.engine.errors import ConfigError

_UNITS = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_SHOWN = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000))
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_MILLISECONDS = 2**31 - 1  # Postgres's range for these settings


def milliseconds(name: str, value: str | int | float) -> int:
    """The value of time setting ``name`` in milliseconds; ConfigError (22023) as Postgres
    words it for a value it cannot read or one out of range."""
    text = str(value).strip()
    unit = text[len(text.rstrip(_LETTERS)) :]  # unit names are case-sensitive, as in Postgres
    try:
        amount = float(text[: len(text) - len(unit)].strip()) * _UNITS[unit or "ms"]
    except (ValueError, KeyError):
        raise ConfigError(f'invalid value for parameter "{name}": {str(value)!r}') from None
    ms = round(amount)
    if not 0 <= ms <= MAX_MILLISECONDS:
        raise ConfigError(
            f"{ms} ms is outside the valid range for parameter {name!r} (0 .. {MAX_MILLISECONDS})"
        )
    return ms


def shown(ms: int) -> str:
    """``ms`` as SHOW prints it."""
    if ms == 0:
        return "0"
    for unit, size in _SHOWN:
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def lowest(*seconds: float) -> float:
    """The lowest of timeouts that are set (0: none).

    >>> lowest(0, 5.0, 2.5), lowest(0, 0)
    (2.5, 0)
    """
    return min((s for s in seconds if s), default=0)


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()``), to the microsecond."""
    return round((time.perf_counter() - started) * 1000, 3)

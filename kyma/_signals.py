"""SIGTERM and SIGINT for kyma's long-running commands: interrupt while starting, stop once up.

While a command starts, a signal raises KeyboardInterrupt (start-up is abandoned, what was
started is stopped). Once ``serving()`` is called the handler only sets a flag, so the signal
can never land in the middle of shutting down or of printing the ready banner: ``wait()``
returns and the command stops its parts in order and exits 0.
"""

from __future__ import annotations

import signal
import time
from types import FrameType

_POLL_SECONDS = 0.2


class StopSignals:
    def __init__(self) -> None:
        self._serving = False
        self._requested: str | None = None
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if not self._serving:
            raise KeyboardInterrupt(name)
        self._requested = name  # a plain assignment: no lock a handler could deadlock on

    def serving(self) -> None:
        """From now on a signal asks ``wait()`` to return; call before printing 'ready'."""
        self._serving = True

    def wait(self) -> str:
        """Block until SIGTERM or SIGINT; the signal's name."""
        self.serving()
        while self._requested is None:
            time.sleep(_POLL_SECONDS)  # a signal interrupts the sleep; the flag is read at once
        return self._requested

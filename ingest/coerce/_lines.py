"""Where an NDJSON body's lines end, and bounds of each line's keys and nesting depth.

One pass of a compiled helper (``kyma.engine.native.lines``, without the GIL) serves the
request limits (``check_lines`` at the edge, ``check_shape``) and the fast reader's layout,
which before each scanned the whole body themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kyma.engine.native.lines import marks


@dataclass(frozen=True)
class Lines:
    """The lines of ``body.split(b"\\n")``, one entry each (int64 arrays)."""

    ends: np.ndarray
    """Where each line ends: the offset of its newline, or of the body's end."""
    colons: np.ndarray
    """Each line's ``:`` (at least its top-level keys)."""
    openers: np.ndarray
    """Each line's ``{`` and ``[`` (at least its nesting depth)."""

    @property
    def starts(self) -> np.ndarray:
        starts = np.empty_like(self.ends)
        starts[0] = 0
        starts[1:] = self.ends[:-1] + 1
        return starts

    @property
    def lengths(self) -> np.ndarray:
        return self.ends - self.starts


def scan(body: bytes, max_newlines: int = -1) -> Lines | None:
    """The lines of ``body``; None when it has more than ``max_newlines`` newlines (-1: any
    number), found before one entry per line is allocated."""
    found = marks(body, max_newlines)
    return None if found is None else Lines(*found)

"""When the CDC loop reads the slot next: at once while it has changes (a step takes what
piled up meanwhile, so batches grow with the load), soon after it first comes up empty (a
quiet stream's next change waits little), then less often while the source stays quiet.
While nothing new is written at the source, a step costs one query and no decoding."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Pace:
    """The wait after each step, from ``min_seconds`` doubling up to ``max_seconds``.

    >>> pace = Pace(0.02, 0.2)
    >>> [pace.after(n) for n in (3, 0, 0, 0, 0, 0, 0, 1, 0)]
    [0.0, 0.02, 0.04, 0.08, 0.16, 0.2, 0.2, 0.0, 0.02]
    """

    min_seconds: float = 0.02
    max_seconds: float = 0.2
    _wait: float = 0.0

    def after(self, applied: int) -> float:
        """Seconds to wait after a step that applied ``applied`` source transactions."""
        if applied:
            self._wait = 0.0
        else:
            self._wait = min(self.max_seconds, max(self.min_seconds, self._wait * 2))
        return self._wait

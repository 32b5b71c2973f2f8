"""Types of the compiled ``lines`` module (``lines.pyx``)."""

import numpy as np

def marks(body: bytes, max_newlines: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None: ...

"""Types of the compiled ``json_keys`` module (``json_keys.pyx``)."""

import numpy as np

def in_order(
    data: bytes | memoryview | np.ndarray,
    offsets: np.ndarray,
    texts: list[bytes],
    present: np.ndarray,
) -> np.ndarray: ...

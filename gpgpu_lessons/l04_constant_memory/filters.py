"""The filters and the lookup table of lesson 04, as read-only float32 module constants.

A kernel that reads one of them through ``cuda.const.array_like`` (or as a plain global) has its
values compiled in, so they must never change: the arrays are read-only.
"""

import numpy as np


def gaussian(size: int = 5, sigma: float = 1.0) -> np.ndarray:
    """A size x size Gaussian blur filter (odd size), normalised to sum 1, as float32."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1 or size % 2 == 0:
        raise ValueError(f"a Gaussian filter needs an odd integer size >= 1, got {size!r}")
    r = np.arange(size) - size // 2
    g = np.exp(-((r / sigma) ** 2) / 2)
    return (np.outer(g, g) / np.outer(g, g).sum()).astype(np.float32)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


LAPLACIAN = _frozen(np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]], dtype=np.float32))  # edges
BOX_BLUR = _frozen(np.full((3, 3), 1 / 9, dtype=np.float32))  # 3x3 mean
GAUSSIAN_5 = _frozen(gaussian(5, 1.0))  # the homework's 5x5 blur
TONE_CURVE = _frozen((np.linspace(0, 1, 256, dtype=np.float32) ** 2.2).astype(np.float32))  # gamma

NAMED = {"LAPLACIAN": LAPLACIAN, "BOX_BLUR": BOX_BLUR, "GAUSSIAN_5": GAUSSIAN_5}

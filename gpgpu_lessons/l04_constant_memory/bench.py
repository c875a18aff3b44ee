"""What `python -m gpgpu_tools.bench` times of this lesson: the fast 5x5 filter.

`BENCH` declares the lesson's bench family; the bench finds it here (the keys:
tools/gpgpu_tools/bench/families.py).
"""

import numpy as np

from . import fast, reference
from .filters import GAUSSIAN_5


def filtered(inputs, where):
    """The 5x5 filter (clamp-to-edge borders) in float64 at the output's indices `where`."""
    (a,) = inputs
    y, x = where
    h, w = a.shape
    ky, kx = GAUSSIAN_5.shape
    total = np.zeros(y.shape, dtype=np.float64)
    for dy in range(ky):
        rows = np.clip(y + dy - ky // 2, 0, h - 1)
        for dx in range(kx):
            columns = np.clip(x + dx - kx // 2, 0, w - 1)
            total += float(GAUSSIAN_5[dy, dx]) * a[rows, columns]
    return total


def tolerance(inputs) -> float:
    """The absolute float32 error lesson 04's tests allow the filter."""
    return reference.tolerance(inputs[0], GAUSSIAN_5)


def cupy_correlate(cp, a):
    """cupyx.scipy.ndimage.correlate with clamp-to-edge borders, or None without cupyx."""
    try:
        from cupyx.scipy import ndimage
    except ImportError:
        return None
    weights = cp.asarray(GAUSSIAN_5)
    return lambda: ndimage.correlate(a, weights, mode="nearest")


BENCH = (
    {
        "family": "filter",
        "order": 5,
        "description": "float32 images, 5x5 Gaussian, clamp-to-edge, lesson 04",
        "dtype": np.float32,
        "sweep": "matrices",
        "kernels": (
            {
                "name": "filter 5x5",
                "wrapper": fast.filter2d,
                "expected": filtered,
                "cupy_name": "cupyx.scipy.ndimage.correlate(a, w, mode='nearest')",
                "cupy": cupy_correlate,
                "options": {"weights": GAUSSIAN_5},
                "tolerance": tolerance,
            },
        ),
        "of_copy": 0.75,
        # its loads are one float each: rows of no whole 16-byte word change nothing
        "skip": ("sides 4 and 12 mod 16",),
        # the tuned tile (128 threads of 32 outputs each) is slow to simulate: one edge-only image
        "tiny": (((5, 7), "edge only"),),
    },
)

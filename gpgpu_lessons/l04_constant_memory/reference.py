"""The NumPy filter every kernel of lesson 04 is checked against, and its float32 tolerance."""

import math

import numpy as np


def reference(image, weights, dtype=np.float64) -> np.ndarray:
    """The filter with NumPy (float64 unless told): edge-padded image, a multiply-add per tap.

    A correlation with clamp-to-edge borders: out[y, x] = sum of weights[dy, dx] *
    image[clamp(y + dy - ky // 2), clamp(x + dx - kx // 2)], a neighbour outside the image
    reading the nearest edge pixel.
    """
    image = np.asarray(image, dtype=dtype)
    weights = np.asarray(weights, dtype=dtype)
    ky, kx = weights.shape
    h, w = image.shape
    padded = np.pad(image, ((ky // 2, ky // 2), (kx // 2, kx // 2)), mode="edge")
    out = np.zeros((h, w), dtype=dtype)
    for dy in range(ky):
        for dx in range(kx):
            out += weights[dy, dx] * padded[dy : dy + h, dx : dx + w]
    return out


def tolerance(image, weights) -> float:
    """Absolute float32 accumulation error bound for comparing a kernel with reference()."""
    scale = float(np.max(np.abs(image))) * float(np.sum(np.abs(weights)))
    return 1e-6 * max(scale, 1.0) * math.sqrt(np.size(weights)) * 8

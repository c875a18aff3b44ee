"""The NumPy versions of lesson 02's operations: every kernel is checked against these, and the
notebook times them on the CPU for seed 002's table."""

from __future__ import annotations

import numpy as np

from . import checks


def negative(image: np.ndarray) -> np.ndarray:
    """255 - every byte."""
    return 255 - image


def flip_horizontal(image: np.ndarray) -> np.ndarray:
    """Left-right mirror (a contiguous copy, as the kernels write)."""
    return np.ascontiguousarray(image[:, ::-1])


def flip_vertical(image: np.ndarray) -> np.ndarray:
    """Top-bottom mirror (a contiguous copy)."""
    return np.ascontiguousarray(image[::-1])


def mosaic(image: np.ndarray, size: int) -> np.ndarray:
    """Each size x size tile painted with its mean: (sum + count // 2) // count of its pixels.

    Edge tiles (where size does not divide the image) average only the pixels they hold.
    """
    size = checks.mosaic_size(size)
    height, width = image.shape[:2]
    tiles_y, tiles_x = -(-height // size), -(-width // size)
    padded = image
    if (tiles_y * size, tiles_x * size) != (height, width):  # pad with zeros: they add nothing
        padded = np.zeros((tiles_y * size, tiles_x * size) + image.shape[2:], dtype=np.uint8)
        padded[:height, :width] = image
    tiles = padded.reshape(tiles_y, size, tiles_x, size, *image.shape[2:])
    sums = tiles.sum(axis=(1, 3), dtype=np.int64)
    rows = np.minimum(size, height - size * np.arange(tiles_y))  # real pixels per tile
    cols = np.minimum(size, width - size * np.arange(tiles_x))
    counts = np.multiply.outer(rows, cols).reshape(tiles_y, tiles_x, *([1] * (image.ndim - 2)))
    means = ((sums + counts // 2) // counts).astype(np.uint8)
    spread = np.broadcast_to(means[:, None, :, None], tiles.shape).reshape(padded.shape)
    return np.ascontiguousarray(spread[:height, :width])

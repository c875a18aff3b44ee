"""Random test data for the graders: never zeros, never a multiple of the block unless asked."""

from __future__ import annotations

import numpy as np


def floats(rng: np.random.Generator, shape, low: float = 0.5, high: float = 1.5) -> np.ndarray:
    """float32 values in [low, high): no zeros, so an unwritten or skipped element shows."""
    values = rng.random(shape, dtype=np.float32)
    values *= np.float32(high - low)
    values += np.float32(low)
    return values


def signed(rng: np.random.Generator, shape) -> np.ndarray:
    """float32 values in +-[0.5, 1.5): both signs, never zero."""
    values = floats(rng, shape)
    np.negative(values, out=values, where=rng.integers(0, 2, size=shape, dtype=np.uint8) == 1)
    return values


def pixels(rng: np.random.Generator, shape, low: int = 1) -> np.ndarray:
    """uint8 pixels in [low, 255]."""
    return rng.integers(low, 256, size=shape, dtype=np.uint8)


def blocks(n: int, per_block: int) -> int:
    """Blocks of per_block threads that cover n items (at least one)."""
    return max(1, -(-int(n) // int(per_block)))


def empty(shape, dtype=np.float32) -> np.ndarray:
    """An output array (the grader fills it with poison or zeros before each launch)."""
    return np.empty(shape, dtype=dtype)

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


def next_to(value, dtype=np.float32) -> tuple:
    """The values of dtype right below and right above value: the next floats, or value -+ 1."""
    kind = np.dtype(dtype)
    if kind.kind == "f":
        v = kind.type(value)
        return np.nextafter(v, kind.type(-np.inf)), np.nextafter(v, kind.type(np.inf))
    return kind.type(int(value) - 1), kind.type(int(value) + 1)


def near(rng: np.random.Generator, n: int, value, width: float = 1e-3, dtype=np.float32):
    """n values of dtype within width of value, in random order, value and its next ones first."""
    kind = np.dtype(dtype)
    if kind.kind != "f":
        info = np.iinfo(kind)
        low, high = max(int(value) - 1, info.min), min(int(value) + 1, info.max)
        return rng.integers(low, high + 1, size=n).astype(kind)
    below = above = kind.type(value)
    exact = [below]
    for _ in range(4):
        below, above = next_to(below, kind)[0], next_to(above, kind)[1]
        exact += [below, above]
    spread = (value - width + 2 * width * rng.random(n)).astype(kind)
    spread[: min(n, len(exact))] = exact[:n]
    return rng.permutation(spread)


def edges(rng: np.random.Generator, n: int, low: float = 0.5, high: float = 1.5, width=1e-3):
    """n float32 values of [low, high) within width of its edges, low and the top float first."""
    top = next_to(high)[0]
    values = np.concatenate(
        [floats(rng, n // 2, low, low + width), floats(rng, n - n // 2, top - width, top)]
    )
    np.minimum(values, top, out=values)  # float32 rounding may reach high itself
    values[: min(n, 2)] = (low, top)[: min(n, 2)]
    return rng.permutation(values)

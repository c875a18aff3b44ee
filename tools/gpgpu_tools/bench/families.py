"""What the bench times: each family's fast wrapper, its NumPy reference and CuPy's counterpart.

A family is one kind of input (float32 matrices, uint8 images, float32 vectors) and the fast
kernels that take it; `FAMILIES` lists them in the order the bench runs them. A kernel's
`expected(inputs, where)` gives the reference values of its output at the indices `where` (one
array per axis of the output's first two axes), from the host copies of its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpgpu_lessons.l01_coalescing import fast as coalescing
from gpgpu_lessons.l02_shared_memory import fast as images
from gpgpu_lessons.l03_bank_conflicts import fast as transposes
from gpgpu_lessons.l04_constant_memory import fast as filters
from gpgpu_lessons.l04_constant_memory import reference as filter_reference
from gpgpu_lessons.l04_constant_memory.filters import GAUSSIAN_5
from gpgpu_lessons.l05_atomics_vs_reduction import fast as reductions

from . import data


@dataclass(frozen=True)
class Kernel:
    """One timed operation: the fast wrapper, its reference, and CuPy's way of doing the same."""

    name: str
    wrapper: Any  # the @launch.op wrapper; wrapper.prepare(*inputs, out=out) -> Launch
    expected: Callable | None  # (host inputs, where) -> values; None for a reduction
    cupy_name: str
    cupy: Callable  # (cupy module, cupy inputs) -> a callable that does the same on CuPy
    options: dict = field(default_factory=dict)  # extra arguments of prepare
    tolerance: Callable | None = None  # (host inputs) -> absolute error allowed; None: exact

    @property
    def wrapper_name(self) -> str:
        return f"{self.wrapper.__module__}.{self.wrapper.__name__}"

    def prepare(self, inputs, out):
        return self.wrapper.prepare(*inputs, out=out, **self.options)


@dataclass(frozen=True)
class Family:
    """Fast kernels that take the same inputs, and what the issue asks of them."""

    name: str
    dtype: Any
    description: str
    kernels: tuple[Kernel, ...]
    inputs: int = 1  # arrays of the input's shape (2 for the dot)
    transposed: bool = False  # the output's shape is the input's reversed
    reduction: bool = False  # one number out, compared with a float64 sum
    of_copy: float | None = None  # target: at least this x the same-run device copy
    of_cupy: float | None = None  # target: at least this x CuPy's time ...
    cupy_from: int = 0  # ... from this many elements up

    def make(self, shape, seed: int) -> tuple:
        """Random device inputs of this shape."""
        return tuple(data.random_array(shape, self.dtype, seed + k) for k in range(self.inputs))

    def output(self, shape) -> tuple[tuple[int, ...], np.dtype]:
        """The shape and dtype of a kernel's output for inputs of `shape`."""
        if self.reduction:
            return (1,), np.dtype(self.dtype)
        return (tuple(shape)[::-1] if self.transposed else tuple(shape)), np.dtype(self.dtype)

    def bytes_moved(self, shape) -> int:
        """Bytes that must move: every input read (and, but for a reduction, the output written)."""
        nbytes = int(np.prod(shape)) * np.dtype(self.dtype).itemsize
        return nbytes * (self.inputs if self.reduction else 2)

    def target(self) -> str:
        """The issue's target for this family, in words."""
        parts = []
        if self.of_copy:
            parts.append(f">= {self.of_copy:g}x copy")
        if self.of_cupy:
            start = f" from {self.cupy_from:,} elements" if self.cupy_from else ""
            parts.append(f">= {self.of_cupy:g}x CuPy{start}")
        return ", ".join(parts)


# ---- references at positions of the output ---------------------------------------------------


def _transposed(inputs, where):
    (a,) = inputs
    y, x = where
    return a[x, y]


def _negative(inputs, where):
    (a,) = inputs
    return 255 - a[where]


def _flipped_horizontally(inputs, where):
    (a,) = inputs
    y, x = where
    return a[y, a.shape[1] - 1 - x]


def _flipped_vertically(inputs, where):
    (a,) = inputs
    y, x = where
    return a[a.shape[0] - 1 - y, x]


def _copied(inputs, where):
    return inputs[0][where]


def _filtered(inputs, where):
    """The 5x5 filter (clamp-to-edge borders) in float64 at the positions `where`."""
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


def filter_tolerance(inputs) -> float:
    """The absolute float32 error lesson 04's tests allow the filter."""
    return filter_reference.tolerance(inputs[0], GAUSSIAN_5)


def _cupy_correlate(cp, a):
    """cupyx.scipy.ndimage.correlate with clamp-to-edge borders, or None without cupyx."""
    try:
        from cupyx.scipy import ndimage
    except ImportError:
        return None
    weights = cp.asarray(GAUSSIAN_5)
    return lambda: ndimage.correlate(a, weights, mode="nearest")


FAMILIES = {
    family.name: family
    for family in (
        Family(
            "transpose",
            np.float32,
            "float32 matrices, lesson 03",
            (
                Kernel(
                    "transpose",
                    transposes.transpose,
                    _transposed,
                    "a.T.copy() (CuPy)",
                    lambda cp, a: lambda: a.T.copy(),  # a copy even where a.T is contiguous
                ),
            ),
            transposed=True,
            of_copy=0.85,
            of_cupy=3.0,
        ),
        Family(
            "negative",
            np.uint8,
            "uint8 images, gray and RGB, lesson 02",
            (
                Kernel(
                    "negative",
                    images.negative_fast,
                    _negative,
                    "255 - a",
                    lambda cp, a: lambda: 255 - a,
                ),
            ),
            of_copy=0.85,
        ),
        Family(
            "flips",
            np.uint8,
            "uint8 images, gray and RGB, lesson 02",
            (
                Kernel(
                    "flip horizontal",
                    images.flip_horizontal_fast,
                    _flipped_horizontally,
                    "cupy.flip(a, 1).copy()",
                    lambda cp, a: lambda: cp.flip(a, 1).copy(),  # a copy, never a view
                ),
                Kernel(
                    "flip vertical",
                    images.flip_vertical_fast,
                    _flipped_vertically,
                    "cupy.flip(a, 0).copy()",
                    lambda cp, a: lambda: cp.flip(a, 0).copy(),
                ),
            ),
            of_copy=0.85,
        ),
        Family(
            "copy",
            np.float32,
            "float32 vectors of any length, lesson 01",
            (
                Kernel(
                    "copy",
                    coalescing.copy,
                    _copied,
                    "cupy.copy(a)",
                    lambda cp, a: lambda: cp.copy(a),
                ),
            ),
            of_copy=0.95,
        ),
        Family(
            "filter",
            np.float32,
            "float32 images, 5x5 Gaussian, clamp-to-edge, lesson 04",
            (
                Kernel(
                    "filter 5x5",
                    filters.filter2d,
                    _filtered,
                    "cupyx.scipy.ndimage.correlate(a, w, mode='nearest')",
                    _cupy_correlate,
                    {"weights": GAUSSIAN_5},
                    filter_tolerance,
                ),
            ),
            of_copy=0.75,
        ),
        Family(
            "sum",
            np.float32,
            "float32 vectors, lesson 05",
            (
                Kernel(
                    "sum",
                    reductions.sum_grid_stride,
                    None,
                    "cupy.sum(a)",
                    lambda cp, a: lambda: cp.sum(a),
                ),
            ),
            reduction=True,
            of_cupy=0.95,
            cupy_from=2**25,
        ),
        Family(
            "dot",
            np.float32,
            "pairs of float32 vectors, lesson 01",
            (
                Kernel(
                    "dot",
                    coalescing.dot,
                    None,
                    "cupy.dot(x, y)",
                    lambda cp, x, y: lambda: cp.dot(x, y),
                ),
            ),
            inputs=2,
            reduction=True,
            of_cupy=0.95,
            cupy_from=2**25,
        ),
    )
}

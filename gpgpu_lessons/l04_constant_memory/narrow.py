"""Lesson 04, reaching the ceiling on images of 2 to 4 columns: the filter folded onto them.

Clamped to an image of W <= 4 columns, every filter column reads one of the W image columns, so
for output column x the KY x KX filter is a KY x W one (`folded`): the taps that read the same
image column, summed. `filter_narrow` stages a band of whole rows in shared memory (the rows of a
narrow image lie side by side in memory: one contiguous run, copied without an index division
in a block inside the image), and each thread makes ROWS rows' W outputs, each from its KY x W
neighbours read once: KY x W multiply-adds an output where the tall tiles of
`fast.filter_tiled` make KY x KX, and no thread idles over a column outside the image.

Any filter, memory and width is the same code compiled with other constants (`narrow_kernel`).
The bench records the layout on N x 3 (`python -m gpgpu_tools.bench --record`,
gpgpu_lessons/recorded/bench/<gpu>.json).
"""

from __future__ import annotations

import functools
import zlib
from typing import NamedTuple

import numpy as np
from numba import cuda, float32, int64

from .. import launch
from ..device.index import at
from ..specialise import specialise
from .checks import IMAGE_DTYPES
from .filters import GAUSSIAN_5

MAX_COLUMNS = 4  # the widest image filter_narrow takes


class Narrow(NamedTuple):
    """The layout of filter_narrow on an image of `columns` columns: threads x rows rows a block."""

    columns: int
    threads: int = 128
    rows: int = 8  # rows a thread makes, `threads` apart


def folded(weights: np.ndarray, columns: int) -> np.ndarray:
    """folded[x, dy, c]: the sum of the taps of row dy that output column x applies to image
    column c of an image `columns` wide, clamped to its edges."""
    ky, kx = weights.shape
    taps = np.zeros((columns, ky, columns), np.float64)
    for x in range(columns):
        for dx in range(kx):
            c = min(max(x + dx - kx // 2, 0), columns - 1)
            taps[x, :, c] += weights[:, dx]
    return taps.astype(np.float32)


# The constants filter_narrow reads; `narrow_kernel` compiles it with other values. As written:
# the 5x5 Gaussian folded onto 3 columns, from constant memory.
W = 3  # the image's columns
THREADS, ROWS = Narrow(W)[1:]  # threads a block, rows a thread
KY = GAUSSIAN_5.shape[0]  # the filter's rows
BAND = THREADS * ROWS + KY - 1  # the rows a block stages: its own and the filter's halo
BAND_WORDS = BAND * W  # ... in floats
FOLDED = folded(GAUSSIAN_5, W)  # the filter a constant-memory kernel has compiled in


@cuda.jit(device=True, inline="always")
def constant_folded(weights):
    """The folded filter from constant memory: FOLDED, compiled in (the argument is not read)."""
    return cuda.const.array_like(FOLDED)


@cuda.jit(device=True, inline="always")
def global_folded(weights):
    """The folded filter from global memory: the kernel's argument."""
    return weights


read_folded = constant_folded  # where filter_narrow reads its filter (global_folded: 'global')


@cuda.jit
def filter_narrow(flat, weights, out, h):
    """Each thread makes ROWS rows' W outputs from the filter folded onto the W columns."""
    band = cuda.shared.array(BAND_WORDS, float32)  # whole rows, side by side as in the image
    first = int64(cuda.blockIdx.x) * (THREADS * ROWS)  # the block's first row
    y0 = first - KY // 2  # the image row of band's first
    if y0 >= 0 and y0 + BAND <= h:  # inside the image: one contiguous run, coalesced
        for j in range(cuda.threadIdx.x, BAND_WORDS, THREADS):
            band[j] = float32(flat[at(y0 * W + j)])
    else:  # at the top or bottom: each row clamped to the image
        for j in range(cuda.threadIdx.x, BAND_WORDS, THREADS):
            row = min(max(y0 + j // W, 0), h - 1)
            band[j] = float32(flat[at(row * W + j % W)])
    cuda.syncthreads()
    taps = read_folded(weights)
    for k in range(ROWS):
        t = cuda.threadIdx.x + k * THREADS  # a warp makes 32 neighbouring rows
        if first + t < h:
            near = cuda.local.array((KY, W), float32)  # this row's neighbours, read once
            for dy in range(KY):
                for c in range(W):
                    near[dy, c] = band[at((t + dy) * W + c)]
            for x in range(W):
                acc = float32(0)
                for dy in range(KY):
                    for c in range(W):
                        acc += taps[x, dy, c] * near[dy, c]
                out[at((first + t) * W + x)] = acc


def kernel_name(memory: str, weights: np.ndarray, columns: int) -> str:
    """The profiler's name for one instance, e.g. filter_narrow_constant_5x5_w3_3b1fd2c4."""
    ky, kx = weights.shape
    name = f"filter_narrow_{memory}_{ky}x{kx}_w{columns}"
    return name + (f"_{zlib.crc32(weights.tobytes()):08x}" if memory == "constant" else "")


@functools.cache
def _instance(memory: str, filter_shape, weights_bytes: bytes | None, columns: int):
    """filter_narrow with other constants (cached: one kernel per filter, memory and width)."""
    if weights_bytes is None:
        weights = np.zeros(filter_shape, np.float32)  # a 'global' kernel reads its argument
    else:
        weights = np.frombuffer(weights_bytes, np.float32).reshape(filter_shape)
    taps = constant_folded if memory == "constant" else global_folded
    return specialise(
        filter_narrow,
        kernel_name(memory, weights, columns),
        device_functions=(taps,),
        inline_device_functions=True,
        read_folded=taps,
        W=columns,
        KY=weights.shape[0],
        BAND=THREADS * ROWS + weights.shape[0] - 1,
        BAND_WORDS=(THREADS * ROWS + weights.shape[0] - 1) * columns,
        FOLDED=folded(weights, columns),
    )


def narrow_kernel(weights: np.ndarray, memory: str, columns: int):
    """filter_narrow for this (checked) filter, memory and image width."""
    if memory == "constant" and columns == W and np.array_equal(weights, GAUSSIAN_5):
        return filter_narrow  # the kernel as the module defines it
    compiled_in = weights.tobytes() if memory == "constant" else None
    return _instance(memory, weights.shape, compiled_in, columns)


def narrow_launch(kernel, d_image, weights: np.ndarray, output: launch.Output, to_host: bool):
    """The Launch of filter_narrow over the h x W image: a block for every THREADS x ROWS rows."""
    h, columns = d_image.shape
    layout = Narrow(columns)
    d_folded = cuda.to_device(folded(weights, columns))  # a 'constant' kernel ignores it
    return launch.single(
        kernel,
        launch.grid_1d(h, layout.threads * layout.rows),
        layout.threads,
        d_image.reshape(h * columns),
        d_folded,
        output.device.reshape(h * columns),
        h,
        out=output,
        to_host=to_host,
    )


SIGNATURES = {  # the instances filter2d launches with the 5x5 Gaussian, either memory
    narrow_kernel(GAUSSIAN_5, memory, columns): [
        f"void({np.dtype(image).name}[::1], float32[:, :, ::1], float32[::1], int64)"
        for image in IMAGE_DTYPES
    ]
    for memory in ("constant", "global")
    for columns in range(2, MAX_COLUMNS + 1)
}

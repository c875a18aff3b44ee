"""Lesson 04, reaching the ceiling on images of 5 to 80 columns: a band of whole rows.

The rows of an image a few dozen columns wide lie side by side in memory, so a block's rows and
the filter's halo are one contiguous run. `filter_band` copies that run into shared memory
(every load in flight at once, a warp reading 32 neighbouring pixels), then each thread makes
ROWS outputs down one column, UNITS times: a unit is ROWS outputs, and the units are numbered
along the rows, so a warp makes neighbouring outputs and stores them side by side. A filter tap
that reaches past the left or right edge is clamped to it (its offset is a constant, so one
`min` or `max`). Where the tall tiles of `fast.filter_tiled` put 8 threads across such an image,
up to half of them on columns outside it, no thread here works outside the image.

The width is an argument, not a constant: one kernel for every width, each filter and memory
compiled once (`band_kernel`). The layout is chosen by one-off runs (the numbers are where
LAYOUT is defined); the bench records it on N x 7 and N x 17 (`python -m gpgpu_tools.bench
--record`, gpgpu_lessons/recorded/bench/<gpu>.json).
"""

from __future__ import annotations

import functools
import zlib
from typing import NamedTuple

import numpy as np
from numba import cuda, float32, int64, uint32

from .. import launch
from ..device.index import at, clamp
from ..specialise import specialise
from .checks import IMAGE_DTYPES
from .filters import GAUSSIAN_5

MIN_COLUMNS, MAX_COLUMNS = 5, 80  # the image widths filter2d may give filter_band


class Band(NamedTuple):
    """filter_band's layout: `threads` a block, each making `units` units of `rows` outputs down
    a column."""

    threads: int = 128
    rows: int = 8
    units: int = 4


def band_rows(layout: Band, ky: int, w: int) -> int:
    """The rows a block of filter_band stages on an image w columns wide: its outputs' and the
    filter's halo."""
    return layout.threads * layout.units // w * layout.rows + ky - 1


def constants(layout: Band, filter_shape) -> dict:
    """The module constants filter_band reads, for one layout and one filter shape."""
    ky, kx = filter_shape
    widths = range(MIN_COLUMNS, MAX_COLUMNS + 1)
    loaded = max(band_rows(layout, ky, w) * w for w in widths)
    return {
        "THREADS": layout.threads,
        "ROWS": layout.rows,
        "UNITS": layout.units,
        "KY": ky,
        "KX": kx,
        "MAX_BAND": max(band_rows(layout, ky, w) * (w | 1) for w in widths),
        "PASSES": -(-loaded // layout.threads),
        "WINDOW": layout.rows + ky - 1,
    }


def block_rows(layout: Band, ky: int, w: int) -> int:
    """The output rows of one block of filter_band on an image w columns wide."""
    return band_rows(layout, ky, w) - (ky - 1)


# The constants filter_band reads; `band_kernel` compiles it with other values. As written: the
# 5x5 Gaussian from constant memory, with the layout LAYOUT. Units of 8 rows: a unit's 12 band
# rows give 8 outputs (1.5 shared loads an output). A warp's units span several groups of rows,
# whose reads fall on the same banks for some widths; rows of even length get a float of
# padding. On an NVIDIA H100 (2026-11-28, one-off runs, 5x5 Gaussian, ratio to CuPy's copy):
# N x 5 to N x 80 at 0.82-0.93x, where the tiles made 0.51-0.80x (aside from N x 8, 16, 24
# and 40, which the tall tiles span exactly: 0.80-0.92x there); at 88 columns and more TILE is
# faster (0.84x against 0.80x). Units of 5 rows made 0.65-0.91x; no padding made 0.59x on N x 8
# (bank conflicts) and up to 0.96x on others; 3 units a thread, 2 units of 256 threads, or
# units of 7 rows, no better.
LAYOUT = Band()
WEIGHTS = GAUSSIAN_5  # the filter a constant-memory kernel has compiled in
THREADS, ROWS, UNITS = LAYOUT  # threads a block; outputs a unit (down a column); units a thread
KY, KX = WEIGHTS.shape  # filter rows and columns
WIDTHS = range(MIN_COLUMNS, MAX_COLUMNS + 1)
MAX_BAND = max(band_rows(LAYOUT, KY, w) * (w | 1) for w in WIDTHS)  # floats: the largest band
PASSES = -(-max(band_rows(LAYOUT, KY, w) * w for w in WIDTHS) // THREADS)  # loads a thread
WINDOW = ROWS + KY - 1  # band rows behind one unit's ROWS outputs


@cuda.jit(device=True, inline="always")
def constant_taps(weights):
    """The filter from constant memory: WEIGHTS, compiled in (the argument is not read)."""
    return cuda.const.array_like(WEIGHTS)


@cuda.jit(device=True, inline="always")
def global_taps(weights):
    """The filter from global memory: the kernel's argument."""
    return weights


read_taps = constant_taps  # where filter_band reads its filter (global_taps: 'global')


@cuda.jit(device=True, inline="always")
def load_band(flat, band, y0, h, w, rows):
    """band = the image's rows y0 .. y0 + rows - 1, w | 1 floats apart; rows outside the image
    clamped to it."""
    t, words = uint32(cuda.threadIdx.x), uint32(rows * w)
    inside = y0 >= 0 and y0 + rows <= h
    staged = cuda.local.array(PASSES, float32)
    for i in range(PASSES):  # every load first, so that all are in flight
        j = uint32(min(uint32(t + i * THREADS), words - 1))  # (past the band: a repeat)
        if inside:  # one contiguous run: a warp reads 32 neighbours
            staged[i] = float32(flat[at(y0 * w + j)])
        else:  # the top or bottom block: its rows clamped to the image
            staged[i] = float32(flat[at(clamp(y0 + j // w, h) * w + j % w)])
    if w & 1:  # rows of odd length: the band as in the image
        for i in range(PASSES):
            if uint32(t + i * THREADS) < words:
                band[uint32(t + i * THREADS)] = staged[i]
    else:  # rows of even length: a float of padding after each
        y, x = uint32(t // w), uint32(t % w)  # where element t goes: band row y, column x
        dy, dx = uint32(THREADS // w), uint32(THREADS % w)  # ... and element t + THREADS
        for i in range(PASSES):
            if y < rows:
                band[at(y * (w + 1) + x)] = staged[i]
            y, x = uint32(y + dy), uint32(x + dx)
            if x >= w:
                y, x = uint32(y + 1), uint32(x - w)


@cuda.jit
def filter_band(flat, weights, out, h, w):
    """Stage a band of whole rows; each thread makes UNITS units of ROWS outputs down a column."""
    taps = cuda.local.array((KY, KX), float32)  # the filter in registers: read once
    for dy in range(KY):
        for dx in range(KX):
            taps[dy, dx] = read_taps(weights)[dy, dx]
    band = cuda.shared.array(MAX_BAND, float32)  # rows w | 1 floats apart: an odd pitch
    w32 = uint32(w)
    groups = uint32(uint32(THREADS * UNITS) // w32)  # units a block makes down each column
    first = int64(cuda.blockIdx.x) * (groups * ROWS)  # the block's first output row
    load_band(flat, band, first - KY // 2, h, w32, uint32(groups * ROWS + KY - 1))
    cuda.syncthreads()
    for i in range(UNITS):
        u = uint32(cuda.threadIdx.x + i * THREADS)  # units along the rows: a warp makes
        g, c = uint32(u // w32), uint32(u % w32)  # neighbouring outputs
        top = uint32(g * ROWS)  # the unit's first row in the block
        if g < groups and first + top < h:
            acc = cuda.local.array(ROWS, float32)  # constant indices once unrolled: registers
            for k in range(ROWS):
                acc[k] = 0
            column = cuda.local.array(WINDOW, float32)
            for dx in range(KX):
                x = min(max(int64(c) + (dx - KX // 2), 0), w - 1)  # clamped to the image
                for j in range(WINDOW):  # each band value read from shared memory once
                    column[j] = band[at((top + j) * (w32 | 1) + x)]
                for dy in range(KY):
                    for k in range(ROWS):
                        acc[k] += taps[dy, dx] * column[k + dy]
            for k in range(ROWS):
                if first + top + k < h:
                    out[at((first + top + k) * w + c)] = acc[k]


def kernel_name(memory: str, weights: np.ndarray, layout: Band) -> str:
    """The profiler's name for one instance, e.g. filter_band_constant_5x5_3b1fd2c4."""
    ky, kx = weights.shape
    name = f"filter_band_{memory}_{ky}x{kx}"
    if layout != LAYOUT:
        name += f"_{layout.threads}t_r{layout.rows}u{layout.units}"
    return name + (f"_{zlib.crc32(weights.tobytes()):08x}" if memory == "constant" else "")


@functools.cache
def _instance(memory: str, filter_shape, weights_bytes: bytes | None, layout: Band):
    """filter_band with other constants (cached: one kernel per filter, memory and layout)."""
    if weights_bytes is None:
        weights = np.zeros(filter_shape, np.float32)  # a 'global' kernel reads its argument
    else:
        weights = np.frombuffer(weights_bytes, np.float32).reshape(filter_shape)
    taps = constant_taps if memory == "constant" else global_taps
    return specialise(
        filter_band,
        kernel_name(memory, weights, layout),
        device_functions=(taps, load_band),
        inline_device_functions=True,
        read_taps=taps,
        WEIGHTS=weights,
        **constants(layout, filter_shape),
    )


def band_kernel(weights: np.ndarray, memory: str, layout: Band = LAYOUT):
    """filter_band for this (checked) filter, memory and layout."""
    if memory == "constant" and layout == LAYOUT and np.array_equal(weights, WEIGHTS):
        return filter_band  # the kernel as the module defines it
    compiled_in = weights.tobytes() if memory == "constant" else None
    return _instance(memory, weights.shape, compiled_in, layout)


def fits(filter_shape, layout: Band = LAYOUT) -> bool:
    """True when filter_band's largest band fits in a block's 48 KiB of static shared memory."""
    return constants(layout, filter_shape)["MAX_BAND"] * 4 <= launch.STATIC_SHARED_MEMORY_BYTES


def band_launch(kernel, d_image, weights, output: launch.Output, to_host: bool, layout=LAYOUT):
    """The Launch of filter_band over an h x w image: a block for every block_rows rows."""
    h, w = d_image.shape
    return launch.single(
        kernel,
        launch.grid_1d(h, block_rows(layout, weights.shape[0], w)),
        layout.threads,
        d_image.reshape(h * w),
        cuda.to_device(weights),  # a 'constant' kernel ignores it
        output.device.reshape(h * w),
        h,
        w,
        out=output,
        to_host=to_host,
    )


SIGNATURES = {  # the instances filter2d launches with the 5x5 Gaussian, either memory
    band_kernel(GAUSSIAN_5, memory): [
        f"void({np.dtype(image).name}[::1], float32[:, ::1], float32[::1], int64, int64)"
        for image in IMAGE_DTYPES
    ]
    for memory in ("constant", "global")
}

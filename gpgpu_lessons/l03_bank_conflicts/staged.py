"""The transpose of matrices with 5 to 64 columns of 4-byte elements, staged in shared memory.

A block takes 2**shift whole rows of `a`: in memory they are one contiguous run, so the block
reads it in 16-byte loads (4 elements; the run starts at a multiple of 4 elements, whatever the
row length). It stages the run in shared memory as rows of `w | 1` elements, an odd stride, so
that a warp reading down a column of the tile meets no bank conflict. Then each warp writes 32
neighbours of a row of `out`. `fast.transpose` takes it from FLAT_MIN_BYTES up, where
`python -m gpgpu_tools.tune thin_transpose` timed it fastest (gpgpu_lessons/recorded/tuning/).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, uint32

from .. import hardware, launch
from ..device.vector import load_vector

COLUMNS = (5, 64)  # the row lengths it takes; fewer columns: transpose_gather_columns is as fast
ITEMS = 8  # elements a thread moves, all loaded before any is stored
# Blocks of at most THREADS threads, so that three fill an SM of 2,048 threads (sm_80, sm_90):
# blocks of 800 to 1,024 threads, two an SM, ran slower on N x 12, 24 and 31 (a one-off H100 run).
THREADS = 672
SPAN = 6144  # elements of the tile: 2**shift rows of w | 1, for every w in COLUMNS (a test checks)
VEC = 4  # elements per load: 16 bytes of a 4-byte type
DTYPES = (np.float32, np.int32, np.uint32)
MAX_BYTES = 2**31  # 32-bit index arithmetic below; larger matrices take the gather


@cuda.jit
def transpose_staged_columns(a_flat, out, shift):
    """A block stages a[y0:y0 + 2**shift, :], read as one run of 16-byte loads, in shared memory."""
    tile = cuda.shared.array(SPAN, a_flat.dtype)  # tile[y * stride + x] = a[y0 + y, x]
    held = cuda.local.array(ITEMS, a_flat.dtype)  # registers
    w, h, shift = uint32(out.shape[0]), uint32(out.shape[1]), uint32(shift)
    t, threads = uint32(cuda.threadIdx.x), uint32(cuda.blockDim.x)
    y0 = uint32(uint32(cuda.blockIdx.x) << shift)
    run, start = uint32(min(uint32(1) << shift, h - y0) * w), uint32(y0 * w)
    for k in range(ITEMS // VEC):  # all loads first: a warp reads 512 neighbouring bytes
        f = uint32((t + k * threads) * VEC)
        if f + VEC <= run:
            four = load_vector(a_flat, uint32(start + f), VEC)
            for v in range(VEC):
                held[k * VEC + v] = four[v]
        else:  # the run's last, partial load
            for v in range(VEC):
                if f + v < run:
                    held[k * VEC + v] = a_flat[uint32(start + f + v)]
    stride = w | uint32(1)  # odd: no bank conflicts when a warp reads down a column
    y, x = uint32(t * VEC // w), uint32(t * VEC % w)  # element t * VEC of the run: a[y0 + y, x]
    dy, dx = uint32(threads * VEC // w), uint32(threads * VEC % w)  # a step of the block's loads
    for k in range(ITEMS // VEC):
        for v in range(VEC):  # w >= VEC: the four cross at most one row's end
            row, column = y, uint32(x + v)
            if column >= w:
                row, column = uint32(y + 1), uint32(column - w)
            if (t + k * threads) * VEC + v < run:
                tile[uint32(row * stride + column)] = held[k * VEC + v]
        y, x = uint32(y + dy), uint32(x + dx)
        if x >= w:
            y, x = uint32(y + 1), uint32(x - w)
    cuda.syncthreads()
    mask = uint32((1 << shift) - 1)
    for k in range(ITEMS):  # a warp reads down a column of the tile ...
        x, y = uint32((t + k * threads) >> shift), uint32((t + k * threads) & mask)
        if x < w and y0 + y < h:
            held[k] = tile[uint32(y * stride + x)]
    for k in range(ITEMS):  # ... and writes 32 neighbours of a row of out
        x, y = uint32((t + k * threads) >> shift), uint32((t + k * threads) & mask)
        if x < w and y0 + y < h:
            out[x, uint32(y0 + y)] = held[k]


def rows_shift(w: int) -> int:
    """log2 of the rows a block stages: the most whose w columns THREADS threads move."""
    return (THREADS * ITEMS // w).bit_length() - 1


def fits(w: int, dtype, nbytes: int) -> bool:
    """Whether rows of w elements of dtype, nbytes in all, suit transpose_staged_columns."""
    return np.dtype(dtype) in DTYPES and COLUMNS[0] <= w <= COLUMNS[1] and nbytes < MAX_BYTES


def aligned(d_a) -> bool:
    """Whether d_a starts on a load's VEC elements (then so does every block's run)."""
    return launch.aligned(d_a, VEC * d_a.dtype.itemsize)


def staged_launch(d_a, o, to_host) -> launch.Launch:
    """transpose_staged_columns over d_a (`fits` and `aligned` say which), into Output o."""
    if not (fits(d_a.shape[1], d_a.dtype, d_a.nbytes) and aligned(d_a)):
        raise ValueError(
            f"the staged transpose takes {COLUMNS[0]} to {COLUMNS[1]} columns of a 4-byte type, "
            f"16-byte aligned, under {MAX_BYTES} bytes; got {d_a.shape} {d_a.dtype}: "
            "use fast.transpose(), which takes any matrix"
        )
    h, w = d_a.shape
    shift = rows_shift(w)
    needed = launch.blocks_for(w << shift, ITEMS)  # threads of ITEMS elements
    threads = hardware.WARP_SIZE * launch.blocks_for(needed, hardware.WARP_SIZE)  # whole warps
    grid = launch.blocks_for(h, 1 << shift)
    args = (d_a.reshape(d_a.size), o.device, shift)
    return launch.single(transpose_staged_columns, grid, threads, *args, out=o, to_host=to_host)


SIGNATURES = {
    transpose_staged_columns: [
        f"void({t}[::1], {t}[:, ::1], int64)" for t in (np.dtype(d).name for d in DTYPES)
    ],
}

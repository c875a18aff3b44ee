"""Lesson 03's textbook kernels: the matrix transpose from naive to tiled and padded.

As in Mark Harris's transpose.cu: a block of TILE x ROWS threads moves a TILE x TILE tile, each
thread TILE / ROWS elements, one per tile row it visits. `copy` is the ceiling, `transpose_naive`
writes down columns, `transpose_tiled` goes through a shared tile (a tile column sits in one
bank), `transpose_padded` is the same kernel with one column of padding. Seed 000 used 16 x 16
threads, one element each: the `*_16` kernels. The kernels are written for float32 (the shared
tile's type); the wrappers refuse other dtypes: `fast.transpose` takes them.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import launch

TILE = 32  # a block moves a TILE x TILE tile ...
ROWS = 8  # ... with TILE x ROWS threads: each thread moves TILE / ROWS elements
PADDED = TILE + 1  # a tile row with one column of padding
SEED_TILE = 16  # seed 000: 16 x 16 threads, one element each
SEED_PADDED = SEED_TILE + 1
DTYPES = (np.float32,)


@cuda.jit
def copy(a, out):
    """The ceiling: a tile read and written row by row, both coalesced."""
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    h, w = a.shape
    for j in range(0, TILE, ROWS):
        if x < w and y + j < h:
            out[y + j, x] = a[y + j, x]


@cuda.jit
def transpose_naive(a, out):
    """Coalesced reads, scattered writes: a warp's 32 stores go to 32 rows of out."""
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    h, w = a.shape
    for j in range(0, TILE, ROWS):
        if x < w and y + j < h:
            out[x, y + j] = a[y + j, x]


@cuda.jit
def transpose_tiled(a, out):
    """Through a shared tile: coalesced reads and writes, but a tile column is in one bank."""
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):  # loads clamped to the matrix: no branch, all in flight
        tile[ty + j, tx] = a[min(y + j, h - 1), min(x, w - 1)]  # a warp writes a tile row
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty  # the transposed tile
    for j in range(0, TILE, ROWS):
        if x < h and y + j < w:
            out[y + j, x] = tile[tx, ty + j]  # a warp reads a tile column


@cuda.jit
def transpose_padded(a, out):
    """The tiled transpose with one column of padding: a tile column spreads over all 32 banks."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):  # loads clamped to the matrix: no branch, all in flight
        tile[ty + j, tx] = a[min(y + j, h - 1), min(x, w - 1)]  # a warp writes a tile row
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty  # the transposed tile
    for j in range(0, TILE, ROWS):
        if x < h and y + j < w:
            out[y + j, x] = tile[tx, ty + j]  # a warp reads a tile column


@cuda.jit
def transpose_naive_16(a, out):
    """Seed 000's naive kernel: 16 x 16 threads, one element each, written down a column."""
    x = cuda.blockIdx.x * SEED_TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * SEED_TILE + cuda.threadIdx.y
    h, w = a.shape
    if x < w and y < h:
        out[x, y] = a[y, x]


@cuda.jit
def transpose_tiled_16(a, out):
    """Seed 000's shared-memory kernel on a 16 x 16 tile (its "high conflict" case)."""
    tile = cuda.shared.array((SEED_TILE, SEED_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * SEED_TILE + tx, cuda.blockIdx.y * SEED_TILE + ty
    if x < w and y < h:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * SEED_TILE + tx, cuda.blockIdx.x * SEED_TILE + ty
    if x < h and y < w:
        out[y, x] = tile[tx, ty]


@cuda.jit
def transpose_padded_16(a, out):
    """Seed 000's shared-memory kernel on a 16 x 17 tile (its "low conflict" case)."""
    tile = cuda.shared.array((SEED_TILE, SEED_PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * SEED_TILE + tx, cuda.blockIdx.y * SEED_TILE + ty
    if x < w and y < h:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * SEED_TILE + tx, cuda.blockIdx.x * SEED_TILE + ty
    if x < h and y < w:
        out[y, x] = tile[tx, ty]


# ---- wrappers ------------------------------------------------------------------------------


def _refuse_other_dtypes(a) -> None:
    """The kernels' shared tile is float32: other element types would be converted silently."""
    dtype = getattr(a, "dtype", None)
    if (isinstance(a, np.ndarray) or launch.is_device_array(a)) and np.dtype(dtype) != np.float32:
        raise TypeError(
            f"a has dtype {dtype}, but the textbook kernels are written for float32 "
            "(their shared tile is float32): use fast.transpose, which takes 4- and "
            "8-byte types and complex64, or convert first: a.astype(np.float32)"
        )


def _launch(kernel, a, out, tile: int, rows: int, *, transposed: bool = True) -> launch.Launch:
    """Check a float32 2-D input and its output; one launch per band of rows (N x 1 included)."""
    _refuse_other_dtypes(a)
    d_a, to_host = launch.device_input(a, name="a", dtypes=DTYPES, ndim=2)
    o = launch.device_output(
        out, d_a.shape[::-1] if transposed else d_a.shape, d_a.dtype, inputs=(d_a,)
    )
    bands = launch.row_bands(d_a.shape, (tile, tile))
    if len(bands) == 1:
        return launch.single(
            kernel, bands[0][2], (tile, rows), d_a, o.device, out=o, to_host=to_host
        )
    # taller than 65535 blocks: rows first:end of a go to columns first:end of out
    steps = tuple(
        launch.Step(
            kernel,
            grid,
            (tile, rows),
            (d_a[first:end], o.device[:, first:end] if transposed else o.device[first:end]),
        )
        for first, end, grid in bands
    )
    return launch.Launch(steps, out=o.device, to_host=to_host, host_out=o.host, out_given=o.given)


@launch.op
def tile_copy(a, *, out=None):
    """Copy a float32 2-D array with the transposes' tiling: the ceiling a transpose can reach."""
    return _launch(copy, a, out, TILE, ROWS, transposed=False)


@launch.op
def naive(a, *, out=None):
    """Transpose a float32 2-D array directly: coalesced reads, scattered writes."""
    return _launch(transpose_naive, a, out, TILE, ROWS)


@launch.op
def tiled(a, *, out=None):
    """Transpose a float32 2-D array through a 32 x 32 shared tile (32-way bank conflicts)."""
    return _launch(transpose_tiled, a, out, TILE, ROWS)


@launch.op
def padded(a, *, out=None):
    """Transpose a float32 2-D array through a padded 32 x 33 shared tile (no bank conflicts)."""
    return _launch(transpose_padded, a, out, TILE, ROWS)


@launch.op
def seed_naive(a, *, out=None):
    """Seed 000's naive transpose of a float32 2-D array: 16 x 16 threads, one element each."""
    return _launch(transpose_naive_16, a, out, SEED_TILE, SEED_TILE)


@launch.op
def seed_tiled(a, *, out=None):
    """Seed 000's transpose through a 16 x 16 shared tile, float32."""
    return _launch(transpose_tiled_16, a, out, SEED_TILE, SEED_TILE)


@launch.op
def seed_padded(a, *, out=None):
    """Seed 000's transpose through a padded 16 x 17 shared tile, float32."""
    return _launch(transpose_padded_16, a, out, SEED_TILE, SEED_TILE)


# What the lesson times, name -> builder of the Launch (wrapper.prepare: (a, out=None) -> Launch)
VARIANTS = {
    "copy 32x8": tile_copy.prepare,
    "naive 16x16 (seed)": seed_naive.prepare,
    "tiled 16x16 (seed)": seed_tiled.prepare,
    "padded 16x16 (seed)": seed_padded.prepare,
    "naive 32x8": naive.prepare,
    "tiled 32x8": tiled.prepare,
    "padded 32x8": padded.prepare,
}

_C = "void(float32[:, ::1], float32[:, ::1])"
_BAND = "void(float32[:, ::1], float32[:, :])"  # a band of a tall transpose: columns of out
SIGNATURES = {
    copy: [_C],
    transpose_naive: [_C, _BAND],
    transpose_tiled: [_C, _BAND],
    transpose_padded: [_C, _BAND],
    transpose_naive_16: [_C, _BAND],
    transpose_tiled_16: [_C, _BAND],
    transpose_padded_16: [_C, _BAND],
}

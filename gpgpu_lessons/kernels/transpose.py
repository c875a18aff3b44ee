"""Lesson 03, bank conflicts: the matrix transpose from naive to the copy ceiling (seeds 000 and 003).

Every kernel moves a TILE x TILE tile with a block of TILE x ROWS threads (each thread moves
TILE / ROWS elements, one per tile row it visits). The kernels are built by small factories
that close over the tile shape, the padding and the element type as compile-time constants,
so "tiled" and "padded" are one kernel with pad=0 and pad=1, not two copies. Each thread first
loads all its elements into registers (``held``) and only then stores them, so all its loads
are in flight together: that is what keeps enough bytes moving to approach the copy ceiling.

The shared tile is a flat array indexed through ``tile_slot`` (seed 003's ``index_tile``); the
same Python function is compiled into the kernels and called by ``gpgpu_lessons.banks`` to draw
which bank each lane of a warp hits.
"""
from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from .. import arrays

FOUR_BYTE = (np.float32, np.uint32, np.int32)
EIGHT_BYTE = (np.float64, np.uint64, np.int64)
DTYPES = FOUR_BYTE + EIGHT_BYTE
TILE, ROWS = 32, 8          # Mark Harris's shape: 32 x 8 threads move a 32 x 32 tile
SEED_TILE = 16              # seed 000: 16 x 16 threads, one element each
WIDE_TILE = 64              # the wide kernel: 64 x 64 tiles, two 4-byte elements per access
_LOW_HALF = np.uint64(0xFFFFFFFF)
_HALF_SHIFT = np.uint64(32)


def tile_slot(row, col, width):
    """Position of element (row, col) in a flat shared tile with `width` slots per row."""
    return row * width + col


tile_slot_gpu = cuda.jit(device=True)(tile_slot)


@functools.cache
def _direct_kernel(tile: int, rows: int, transpose: bool, dtype):
    """Build the copy (transpose=False) or the naive transpose with the given tiling."""
    per_thread = tile // rows

    @cuda.jit
    def copy_or_transpose_direct(a, out):
        """Without shared memory: a warp reads a row; the naive transpose writes it as a column."""
        held = cuda.local.array(per_thread, dtype)   # registers: all of a thread's loads in flight at once
        h, w = a.shape
        x = cuda.blockIdx.x * tile + cuda.threadIdx.x
        y0 = cuda.blockIdx.y * tile + cuda.threadIdx.y
        for k in range(per_thread):
            if x < w and y0 + k * rows < h:
                held[k] = a[y0 + k * rows, x]
        for k in range(per_thread):
            if x < w and y0 + k * rows < h:
                if transpose:
                    out[x, y0 + k * rows] = held[k]   # neighbouring lanes write h elements apart
                else:
                    out[y0 + k * rows, x] = held[k]

    return copy_or_transpose_direct


@functools.cache
def _shared_kernel(tile: int, rows: int, pad: int, dtype):
    """Build the transpose through a shared tile of tile x (tile + pad) elements of `dtype`."""
    width, slots = tile + pad, tile * (tile + pad)   # shared array sizes must be constants
    per_thread = tile // rows

    @cuda.jit
    def transpose_through_shared(a, out):
        """Read a tile row by row, write it transposed row by row; pad > 0 spreads a column over the banks."""
        buf = cuda.shared.array(slots, dtype)
        held = cuda.local.array(per_thread, dtype)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        h, w = a.shape
        x = cuda.blockIdx.x * tile + tx
        y0 = cuda.blockIdx.y * tile
        for k in range(per_thread):
            if x < w and y0 + ty + k * rows < h:
                held[k] = a[y0 + ty + k * rows, x]
        for k in range(per_thread):
            buf[tile_slot_gpu(ty + k * rows, tx, width)] = held[k]   # a warp writes a tile row
        cuda.syncthreads()
        for k in range(per_thread):
            held[k] = buf[tile_slot_gpu(tx, ty + k * rows, width)]   # a warp reads a tile column
        ox = cuda.blockIdx.y * tile + tx                              # output column = input row
        oy0 = cuda.blockIdx.x * tile + ty                             # output row = input column
        for k in range(per_thread):
            if ox < h and oy0 + k * rows < w:
                out[oy0 + k * rows, ox] = held[k]

    return transpose_through_shared


@functools.cache
def _wide_kernel(tile: int, rows: int, pad: int):
    """Build the transpose of 4-byte elements that moves two neighbours per 8-byte access."""
    width, slots = tile + pad, tile * (tile + pad)
    pairs = tile // 2
    per_thread = tile // rows

    @cuda.jit
    def transpose_wide(a2, out2):
        """As transpose_through_shared, but global memory is read and written 8 bytes (two elements) at a time."""
        buf = cuda.shared.array(slots, numba.uint32)
        held = cuda.local.array(per_thread, numba.uint64)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        h, w2 = a2.shape                    # a2 is the input seen as pairs: (h, w / 2) uint64
        w, h2 = out2.shape                  # out2 is the output seen as pairs: (w, h / 2)
        x2 = cuda.blockIdx.x * pairs + tx
        y0 = cuda.blockIdx.y * tile
        for k in range(per_thread):
            if x2 < w2 and y0 + ty + k * rows < h:
                held[k] = a2[y0 + ty + k * rows, x2]
        for k in range(per_thread):         # little endian: the low half is the left element
            buf[tile_slot_gpu(ty + k * rows, 2 * tx, width)] = held[k] & _LOW_HALF
            buf[tile_slot_gpu(ty + k * rows, 2 * tx + 1, width)] = held[k] >> _HALF_SHIFT
        cuda.syncthreads()
        for k in range(per_thread):         # output pair tx = input rows 2 tx and 2 tx + 1
            low = buf[tile_slot_gpu(2 * tx, ty + k * rows, width)]
            high = buf[tile_slot_gpu(2 * tx + 1, ty + k * rows, width)]
            held[k] = (numba.uint64(high) << _HALF_SHIFT) | low
        ox2 = cuda.blockIdx.y * pairs + tx
        oy0 = cuda.blockIdx.x * tile + ty
        for k in range(per_thread):
            if ox2 < h2 and oy0 + k * rows < w:
                out2[oy0 + k * rows, ox2] = held[k]

    return transpose_wide


# ---- host wrappers -------------------------------------------------------------------------

def _check_tiling(tile: int, rows: int, pad: int, itemsize: int, threads_x: int) -> None:
    """Reject tilings a kernel cannot run: rows must divide the tile, the block and tile must fit."""
    for name, value, low in (("tile", tile, 1), ("rows", rows, 1), ("pad", pad, 0)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if tile % rows:
        raise ValueError(f"rows ({rows}) must divide tile ({tile}): each thread moves tile / rows elements")
    arrays.check_threads((threads_x, rows))
    arrays.check_shared_memory(tile * (tile + pad) * itemsize, f"a {tile} x {tile + pad} tile")


def _inputs(a, out, *, transposed: bool):
    """Validate a 2-D input and its output (transposed shape or same shape)."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=DTYPES, ndim=2)
    shape = d_a.shape[::-1] if transposed else d_a.shape
    return d_a, arrays.device_output(out, shape, d_a.dtype), to_host


def _grid(shape, tile: int) -> tuple[int, int]:
    """One block per tile: x over the columns, y over the rows."""
    h, w = shape
    return arrays.blocks_for(w, tile), arrays.blocks_for(h, tile)


def _direct(a, out, tile, rows, transpose):
    d_a, d_out, to_host = _inputs(a, out, transposed=transpose)
    _check_tiling(tile, rows, 0, 0, tile)
    kernel = _direct_kernel(tile, rows, transpose, numba.from_dtype(d_a.dtype))
    kernel[_grid(d_a.shape, tile), (tile, rows)](d_a, d_out)
    return arrays.returned(d_out, to_host)


def copy(a, *, out=None, tile: int = TILE, rows: int = ROWS):
    """Copy a 2-D array with the transposes' tiling: the ceiling a transpose should approach."""
    return _direct(a, out, tile, rows, transpose=False)


def naive(a, *, out=None, tile: int = TILE, rows: int = ROWS):
    """Transpose a 2-D array directly: coalesced reads, scattered writes (seed 000's first kernel)."""
    return _direct(a, out, tile, rows, transpose=True)


def tiled(a, *, out=None, tile: int = TILE, rows: int = ROWS, pad: int = 0):
    """Transpose through a shared tile of tile x (tile + pad) elements; pad=0 has bank conflicts."""
    d_a, d_out, to_host = _inputs(a, out, transposed=True)
    _check_tiling(tile, rows, pad, d_a.dtype.itemsize, tile)
    kernel = _shared_kernel(tile, rows, pad, numba.from_dtype(d_a.dtype))
    kernel[_grid(d_a.shape, tile), (tile, rows)](d_a, d_out)
    return arrays.returned(d_out, to_host)


def padded(a, *, out=None, tile: int = TILE, rows: int = ROWS):
    """Transpose through a padded tile of tile x (tile + 1) elements: no bank conflicts when tile = 32."""
    return tiled(a, out=out, tile=tile, rows=rows, pad=1)


def seed(a, *, out=None, pad: int = 1):
    """Seed 000's shape: 16 x 16 threads, one element each, through a 16 x (16 + pad) tile."""
    return tiled(a, out=out, tile=SEED_TILE, rows=SEED_TILE, pad=pad)


def wide(a, *, out=None, tile: int = WIDE_TILE, rows: int = ROWS, pad: int = 1):
    """Transpose 4-byte elements moving two neighbours per 8-byte access; both sides must be even."""
    d_a, d_out, to_host = _inputs(a, out, transposed=True)
    if d_a.dtype.itemsize != 4:
        raise TypeError(f"wide() packs two 4-byte elements into 8 bytes; a has dtype {d_a.dtype}: "
                        "use padded() for 8-byte elements")
    if d_a.shape[0] % 2 or d_a.shape[1] % 2:
        raise ValueError(f"wide() needs an even number of rows and columns, got shape {d_a.shape}; "
                         "use padded() for odd shapes")
    if tile % 2:
        raise ValueError(f"tile must be even (a thread moves pairs), got {tile}")
    _check_tiling(tile, rows, pad, 4, tile // 2)
    h, w = d_a.shape
    grid = (arrays.blocks_for(w, tile), arrays.blocks_for(h, tile))
    _wide_kernel(tile, rows, pad)[grid, (tile // 2, rows)](d_a.view(np.uint64), d_out.view(np.uint64))
    return arrays.returned(d_out, to_host)


def transpose(a, *, out=None):
    """The fastest transpose here: wide() where it applies (4-byte elements, even sides), else padded()."""
    shape, dtype = getattr(a, "shape", ()), getattr(a, "dtype", None)
    if len(shape) == 2 and dtype in FOUR_BYTE and shape[0] % 2 == 0 and shape[1] % 2 == 0 and 0 not in shape:
        return wide(a, out=out)
    return padded(a, out=out)


def kernel(kind: str, *, tile: int = TILE, rows: int = ROWS, pad: int = 1, dtype=np.float32):
    """The kernel a wrapper launches ("copy", "naive", "shared" or "wide"), e.g. to show its source."""
    numba_type = numba.from_dtype(np.dtype(dtype))
    builders = {"copy": lambda: _direct_kernel(tile, rows, False, numba_type),
                "naive": lambda: _direct_kernel(tile, rows, True, numba_type),
                "shared": lambda: _shared_kernel(tile, rows, pad, numba_type),
                "wide": lambda: _wide_kernel(tile, rows, pad)}
    if kind not in builders:
        raise ValueError(f"kind must be one of {sorted(builders)}, got {kind!r}")
    return builders[kind]()


# Every variant the lesson times, name -> wrapper (all take (a, out=...)).
VARIANTS = {
    "copy 32x8": copy,
    "naive 16x16 (seed)": functools.partial(naive, tile=SEED_TILE, rows=SEED_TILE),
    "tiled 16x16 (seed)": functools.partial(seed, pad=0),
    "padded 16x16 (seed)": seed,
    "naive 32x8": naive,
    "tiled 32x8": tiled,
    "padded 32x8": padded,
    "padded 64x8": functools.partial(padded, tile=64, rows=8),
    "wide 32x8 (64x64 tile)": wide,
    "wide 32x4 (64x64 tile)": functools.partial(wide, rows=4),
}


# ---- why transposes matter -----------------------------------------------------------------

BINOMIAL_5 = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16


@cuda.jit
def filter_rows(a, taps, out):
    """Filter every row with a short 1-D kernel (edges clamped): each warp reads along a row."""
    x, y = cuda.grid(2)
    h, w = a.shape
    if y < h and x < w:
        r = len(taps) // 2
        acc = numba.float32(0)
        for k in range(len(taps)):
            acc += taps[k] * a[y, min(max(x + k - r, 0), w - 1)]
        out[y, x] = acc


def rows_filter(a, taps=BINOMIAL_5, *, out=None):
    """Filter every row of a float32 2-D array with `taps` (odd length, edges clamped)."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=np.float32, ndim=2)
    taps = np.asarray(taps, dtype=np.float32)
    if taps.ndim != 1 or len(taps) % 2 == 0:
        raise ValueError(f"taps must be a 1-D array of odd length, got shape {taps.shape}")
    d_out = arrays.device_output(out, d_a.shape, np.float32)
    threads = (32, 8)
    grid = (arrays.blocks_for(d_a.shape[1], threads[0]), arrays.blocks_for(d_a.shape[0], threads[1]))
    filter_rows[grid, threads](d_a, cuda.to_device(taps), d_out)
    return arrays.returned(d_out, to_host)


def separable_blur(a, taps=BINOMIAL_5):
    """Seed 000's recipe for a separable 2-D filter: filter rows, transpose, filter rows, transpose back."""
    return transpose(rows_filter(transpose(rows_filter(a, taps)), taps))


def fft2_by_transposes(a, xp=np):
    """Seed 003's 2-D FFT: FFT every row, transpose, FFT every row, transpose back (complex64).

    The row FFTs come from `xp` (NumPy on the host, or CuPy on the GPU); the transposes are
    ours, moving each complex64 value as one 8-byte word.
    """
    def transpose_complex(z):
        return xp.asarray(padded(z.view(xp.uint64))).view(xp.complex64)

    rows = xp.fft.fft(xp.asarray(a, dtype=xp.complex64), axis=1).astype(xp.complex64)
    rows = xp.fft.fft(transpose_complex(rows), axis=1).astype(xp.complex64)
    return transpose_complex(rows)

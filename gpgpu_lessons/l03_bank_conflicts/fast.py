"""Reaching the ceiling: the transpose at the speed of a copy (lesson 03's last part).

`transpose_wide` is the padded transpose with four tricks, each a few lines in it or in its two
helpers `load_runs` and `store_runs`:

- bytes in flight: each thread first loads all its TILE / ROWS runs into registers (`held`),
  then stores them, so its loads are all in flight together;
- vector accesses: each run is VEC neighbours (8 or 16 bytes) moved by ONE load or store
  (`device.vector`), so the tile is 64 x 64 floats with 32 x 16 threads;
- unsigned indices (`device.index.at`): Numba adds no negative-index wraparound code;
- block order: a 1-D grid whose blocks take their tiles in the order of `tile_of_block`:
  down whole tile columns when the resident blocks cover one (`group_for`), so the output's
  rows are written whole; a 1-D grid also lets matrices of any height launch.

Matrices with fewer than FEW rows (or columns) would leave most of a 64 x 64 tile empty:
`transpose_few_rows` (`transpose_few_columns`) moves whole columns (rows) per block instead,
the same staging through shared memory with both sides coalesced: for few rows, a block's
columns are one contiguous run of the output. From FLAT_MIN_BYTES up, the gather kernels take
over (as fast or faster on the thin shapes `python -m gpgpu_tools.tune thin_transpose` times, up
to 40 rows or columns): threads over the OUTPUT's elements, each read from its place in `a`
(neighbouring threads' reads fall in the same few cache lines, which L1 and L2 merge), all loads
before any store, 32-bit index arithmetic. `transpose_gather` (few rows) writes runs of out seen
flat, with one division per thread; `transpose_gather_columns` (few columns) gives a block whole
columns of out, no division at all, and reads a's rows in loads of up to 16 bytes. Faster still
from 5 to 64 columns of 4-byte elements, `staged.transpose_staged_columns` reads a block's rows
as one run of 16-byte loads and stages them in shared memory.

`copy_wide` is the copy with the same tiling, accesses and block order: the ceiling. The kernels
read their sizes from module constants, like the textbook ones; `kernel_for` compiles a copy of
them with other constants (another tiling to tune, one access per element for odd shapes), each
with its own name. `transpose` picks the fastest kernel that applies (`chosen_kernel`: wide
accesses need even sides and aligned arrays; thin matrices take the gather, staged or thin
kernels) and takes 4- and 8-byte elements, complex64 included.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int64, uint32

from .. import hardware, launch, runtime
from ..device.index import at
from ..device.vector import load_vector, store_vector
from ..specialise import python_function, specialise
from . import staged

FOUR_BYTE = (np.float32, np.int32, np.uint32)
EIGHT_BYTE = (np.float64, np.int64, np.uint64, np.complex64)
DTYPES = FOUR_BYTE + EIGHT_BYTE
# The tuned kernel: chosen by `python -m gpgpu_tools.tune wide_transpose` (TUNING below), recorded
# in gpgpu_lessons/recorded/tuning/wide_transpose-<gpu>.json; the lesson's run compares it with
# the copy (experiment 03_bank_conflicts/fast_8192 of gpgpu_lessons/recorded/<gpu>.json).
TILE = 64  # a block moves a 64 x 64 tile ...
ROWS = 16  # ... with (TILE / VEC) x ROWS = 32 x 16 threads ...
VEC = 2  # ... each moving 2 neighbours (8 bytes of float32) per access
PAD = 1  # one column of padding, as in textbook.transpose_padded
PADDED = TILE + PAD  # a tile row with its padding
RUNS = TILE // ROWS  # tile rows each thread moves
WIDE_BLOCK = (TILE // VEC, ROWS)
# Where wide accesses do not apply (odd sides, unaligned arrays): one element per access on a
# 64 x 65 tile with 64 x 8 threads (8 loads in flight each), faster there than Harris's 32 x 8
# threads on 32 x 33. 8-byte elements keep Harris's tile. The bench records this choice on odd,
# prime and 777 x N shapes (`python -m gpgpu_tools.bench --record`, in
# gpgpu_lessons/recorded/bench/<gpu>.json); the alternatives' times are not recorded.
ODD_BLOCK, PLAIN_BLOCK, PLAIN_VEC = (64, 8), (32, 8), 1
# Blocks walk down whole tile columns when the blocks resident at once cover one: the output's
# rows are then written whole (faster than row by row: the lesson's run times both, experiment
# 03_bank_conflicts/fast_8192). Taller matrices take groups of TALL_GROUP tile rows (faster than
# whole columns there; the bench records the choice on N x 777, the alternative is not recorded).
TALL_GROUP = 4
# Matrices with fewer than FEW rows (or columns) waste most of a 64 x 64 tile: the thin
# kernels move THIN_THREADS x THIN_ITEMS elements per block, whole columns (or rows) at a time.
FEW = 32
THIN_THREADS, THIN_ITEMS = 256, 16
THIN_SPAN = THIN_THREADS * THIN_ITEMS


def tile_of_block(block, tiles_y, tiles_x, group):
    """(tile row, tile column) of 1-D block `block`: blocks walk down `group` tile rows, then right.

    group = 1 is the usual row-by-row order. A larger group makes the blocks resident at the same
    time cover a squarer patch of tiles, so both the rows they read and the rows they write (the
    output's rows are the input's columns) are long contiguous runs in DRAM.
    """
    first = (block // (group * tiles_x)) * group  # first tile row of this block's group
    rows_here = min(group, tiles_y - first)  # the last group may be shorter
    inside = block - first * tiles_x
    return first + inside % rows_here, inside // rows_here


tile_of_block_gpu = cuda.jit(device=True)(tile_of_block)


@cuda.jit(device=True, inline="always")
def load_runs(a, held, y, x):
    """held[k] = a[y + k * ROWS, x:x + VEC] for every k: all loads first, one instruction each."""
    h, w = a.shape
    for k in range(TILE // ROWS):
        if y + k * ROWS < h and x < w:
            run = load_vector(a, (at(y + k * ROWS), at(x)), VEC)
            for j in range(VEC):
                held[k, j] = run[j]


@cuda.jit(device=True, inline="always")
def store_runs(out, held, y, x):
    """out[y + k * ROWS, x:x + VEC] = held[k] for every k: one store instruction each."""
    h, w = out.shape
    for k in range(TILE // ROWS):
        if y + k * ROWS < h and x < w:
            yx = (at(y + k * ROWS), at(x))
            if VEC == 1:  # VEC is a constant: Numba keeps one branch
                store_vector(out, yx, (held[k, 0],))
            elif VEC == 2:
                store_vector(out, yx, (held[k, 0], held[k, 1]))
            else:
                store_vector(out, yx, (held[k, 0], held[k, 1], held[k, 2], held[k, 3]))


@cuda.jit
def transpose_wide(a, out, group):
    """The padded transpose with wide accesses, every load in flight, and a chosen block order."""
    tile = cuda.shared.array((TILE, PADDED), a.dtype)
    held = cuda.local.array((RUNS, VEC), a.dtype)  # registers
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    row, col = tile_of_block_gpu(
        cuda.blockIdx.x, (h + TILE - 1) // TILE, (w + TILE - 1) // TILE, group
    )
    load_runs(a, held, row * TILE + ty, col * TILE + VEC * tx)
    for k in range(TILE // ROWS):
        for j in range(VEC):  # a warp writes tile rows
            tile[at(ty + k * ROWS), at(VEC * tx + j)] = held[k, j]
    cuda.syncthreads()
    for k in range(TILE // ROWS):
        for j in range(VEC):  # VEC neighbours of a column
            held[k, j] = tile[at(VEC * tx + j), at(ty + k * ROWS)]
    store_runs(out, held, col * TILE + ty, row * TILE + VEC * tx)


@cuda.jit
def copy_wide(a, out, group):
    """The ceiling of transpose_wide: the copy with the same tiling, accesses and block order."""
    held = cuda.local.array((RUNS, VEC), a.dtype)  # registers
    h, w = a.shape
    row, col = tile_of_block_gpu(
        cuda.blockIdx.x, (h + TILE - 1) // TILE, (w + TILE - 1) // TILE, group
    )
    y, x = row * TILE + cuda.threadIdx.y, col * TILE + VEC * cuda.threadIdx.x
    load_runs(a, held, y, x)
    store_runs(out, held, y, x)


@cuda.jit(device=True, inline="always")
def first_and_step(n):
    """(f // n, f % n) for f = threadIdx.x, and (THIN_THREADS // n, THIN_THREADS % n).

    Element f + THIN_THREADS is then (q, r) further on: one division per thread, not per element.
    """
    return cuda.threadIdx.x // n, cuda.threadIdx.x % n, THIN_THREADS // n, THIN_THREADS % n


@cuda.jit
def transpose_few_rows(a, out_flat, shift):
    """Fewer than FEW rows: a block moves 2**shift whole columns, one contiguous run of out."""
    tile = cuda.shared.array(THIN_SPAN, a.dtype)  # tile[x * stride + y] = a[y, x0 + x]
    held = cuda.local.array(THIN_ITEMS, a.dtype)  # registers
    h, w = a.shape
    stride, cols = h | 1, 1 << shift  # an odd stride: no bank conflicts in either phase
    x0 = cuda.blockIdx.x * cols
    for k in range(THIN_ITEMS):  # all loads first; a warp reads 32 neighbours of a row
        e = cuda.threadIdx.x + k * THIN_THREADS
        y, x = e >> shift, e & (cols - 1)
        if y < h and x0 + x < w:
            held[k] = a[at(y), at(x0 + x)]
    for k in range(THIN_ITEMS):
        e = cuda.threadIdx.x + k * THIN_THREADS
        y, x = e >> shift, e & (cols - 1)
        if y < h and x0 + x < w:
            tile[at(x * stride + y)] = held[k]
    cuda.syncthreads()
    run = min(cols, w - x0) * h  # out[x0:x0 + cols, :] is one run of memory
    x, y, q, r = first_and_step(h)  # element f of the run is out[x0 + x, y]
    for k in range(THIN_ITEMS):
        if cuda.threadIdx.x + k * THIN_THREADS < run:
            held[k] = tile[at(x * stride + y)]
        x, y = x + q, y + r
        if y >= h:
            x, y = x + 1, y - h
    for k in range(THIN_ITEMS):  # a warp writes 32 neighbours of the run
        f = cuda.threadIdx.x + k * THIN_THREADS
        if f < run:
            out_flat[at(x0 * h + f)] = held[k]


@cuda.jit
def transpose_few_columns(a_flat, out, shift):
    """Fewer than FEW columns: a block moves 2**shift whole rows, one contiguous run of a."""
    tile = cuda.shared.array(THIN_SPAN, a_flat.dtype)  # tile[y * stride + x] = a[y0 + y, x]
    held = cuda.local.array(THIN_ITEMS, a_flat.dtype)  # registers
    w, h = out.shape
    stride, rows = w | 1, 1 << shift  # an odd stride: no bank conflicts in either phase
    y0 = cuda.blockIdx.x * rows
    run = min(rows, h - y0) * w  # a[y0:y0 + rows, :] is one run of memory
    for k in range(THIN_ITEMS):  # all loads first; a warp reads 32 neighbours of the run
        f = cuda.threadIdx.x + k * THIN_THREADS
        if f < run:
            held[k] = a_flat[at(y0 * w + f)]
    y, x, q, r = first_and_step(w)  # element f of the run is a[y0 + y, x]
    for k in range(THIN_ITEMS):
        if cuda.threadIdx.x + k * THIN_THREADS < run:
            tile[at(y * stride + x)] = held[k]
        y, x = y + q, x + r
        if x >= w:
            y, x = y + 1, x - w
    cuda.syncthreads()
    for k in range(THIN_ITEMS):
        e = cuda.threadIdx.x + k * THIN_THREADS
        x, y = e >> shift, e & (rows - 1)
        if x < w and y0 + y < h:
            held[k] = tile[at(y * stride + x)]
    for k in range(THIN_ITEMS):  # a warp writes 32 neighbours of a row of out
        e = cuda.threadIdx.x + k * THIN_THREADS
        x, y = e >> shift, e & (rows - 1)
        if x < w and y0 + y < h:
            out[at(x), at(y0 + y)] = held[k]


# ---- thin matrices by gathering: threads over out's elements, each read from its place in a ----

# The constants of transpose_gather and transpose_gather_columns; `gather_kernel` and
# `columns_kernel` compile them with other values. INDEX: uint32 below FLAT_INDEX_BYTES (32-bit
# arithmetic, one 32-bit division per thread, no negative-index code), int64 above. A thread
# writes FLAT_PER_THREAD runs of FLAT_VEC neighbours (one 8- or 16-byte store each when
# FLAT_VEC > 1), all loaded before the first store.
INDEX = uint32
FLAT_VEC = 1
FLAT_PER_THREAD = 8
FLAT_THREADS = 256
FLAT_INDEX_BYTES = 2**31
# transpose() gathers matrices of at most GATHER_ROWS rows with (per_thread, vec) = GATHER_RUNS,
# and those of at most GATHER_COLUMNS columns with COLUMNS_PER_THREAD, from FLAT_MIN_BYTES up
# (smaller ones take a launch's time whichever kernel runs: they stay on the thin kernels).
# Chosen by `python -m gpgpu_tools.tune thin_transpose` (THIN_TUNING below), recorded in
# gpgpu_lessons/recorded/tuning/thin_transpose-<gpu>.json.
GATHER_ROWS, GATHER_RUNS = 40, (2, 4)
GATHER_COLUMNS, COLUMNS_PER_THREAD = 40, 8
# transpose_gather_columns reads COLUMNS_VEC neighbours of a row of `a` with one load (up to 16
# bytes: 4 float32), where the row length and alignment allow (`columns_vec`); as written, 1.
COLUMNS_VEC = 1
FLAT_MIN_BYTES = 2**20


@cuda.jit(device=True, inline="always")
def next_place(q, r, m, dq, dr):
    """divmod(e + s, m) from (q, r) = divmod(e, m) and (dq, dr) = divmod(s, m)."""
    q, r = INDEX(q + dq), INDEX(r + dr)
    if r >= m:
        q, r = INDEX(q + 1), INDEX(r - m)
    return q, r


@cuda.jit(device=True, inline="always")
def store_run(flat, e, held, k):
    """flat[e:e + FLAT_VEC] = held[k], one vector store when the run is whole."""
    if e + FLAT_VEC <= flat.size:
        if FLAT_VEC == 1:  # FLAT_VEC is a constant: Numba keeps one branch
            flat[e] = held[k, 0]
        elif FLAT_VEC == 2:
            store_vector(flat, e, (held[k, 0], held[k, 1]))
        else:
            store_vector(flat, e, (held[k, 0], held[k, 1], held[k, 2], held[k, 3]))
    else:  # the last, partial run; constant indices keep held in registers
        for v in range(FLAT_VEC):
            if e + v < flat.size:
                flat[INDEX(e + v)] = held[k, v]


@cuda.jit
def transpose_gather(a_flat, out_flat, h, w, dq, dr):
    """Few rows: a thread writes runs of out (flat), each element read from a; (dq, dr) = a step."""
    held = cuda.local.array((FLAT_PER_THREAD, FLAT_VEC), a_flat.dtype)  # registers
    run = INDEX(INDEX(cuda.blockIdx.x) * INDEX(cuda.blockDim.x * FLAT_PER_THREAD))
    first = INDEX(INDEX(run + INDEX(cuda.threadIdx.x)) * INDEX(FLAT_VEC))  # INDEX: stay 32-bit
    step = INDEX(INDEX(cuda.blockDim.x) * INDEX(FLAT_VEC))  # elements between a thread's runs
    h, w, dq, dr = INDEX(h), INDEX(w), INDEX(dq), INDEX(dr)
    x, y = INDEX(first // h), INDEX(first % h)  # out[x, y] = a[y, x]: the thread's one division
    for k in range(FLAT_PER_THREAD):  # all loads first: a warp reads h short runs of a
        xv, yv = x, y
        for v in range(FLAT_VEC):
            if first + k * step + v < out_flat.size:
                held[k, v] = a_flat[INDEX(yv * w + xv)]
            xv, yv = next_place(xv, yv, h, 0, 1)
        x, y = next_place(x, y, h, dq, dr)
    for k in range(FLAT_PER_THREAD):
        if first + k * step < out_flat.size:
            store_run(out_flat, INDEX(first + k * step), held, k)


@cuda.jit
def transpose_gather_columns(a, out, shift):
    """Few columns: a block writes out[:, c0:c0 + 2**shift], each element read from a (L1 hits)."""
    held = cuda.local.array((FLAT_PER_THREAD, COLUMNS_VEC), a.dtype)  # registers
    w, h = out.shape
    c0, mask = INDEX(INDEX(cuda.blockIdx.x) << shift), INDEX((1 << shift) - 1)
    for k in range(FLAT_PER_THREAD):  # all loads first: the block reads a[c0:c0 + 2**shift, :]
        e = INDEX(cuda.threadIdx.x + k * cuda.blockDim.x)
        x, c = INDEX((e >> shift) * COLUMNS_VEC), INDEX(c0 + (e & mask))
        if x < w and c < h:  # COLUMNS_VEC neighbours of row c, one load (w is a multiple)
            row = load_vector(a, (c, x), COLUMNS_VEC)
            for v in range(COLUMNS_VEC):
                held[k, v] = row[v]
    for k in range(FLAT_PER_THREAD):  # a warp writes a run of a row of out
        e = INDEX(cuda.threadIdx.x + k * cuda.blockDim.x)
        x, c = INDEX((e >> shift) * COLUMNS_VEC), INDEX(c0 + (e & mask))
        if x < w and c < h:
            for v in range(COLUMNS_VEC):
                out[INDEX(x + v), c] = held[k, v]


@functools.cache
def gather_kernel(per_thread: int, vec: int, index_bits: int):
    """transpose_gather for these runs and index width, compiled once under its own name."""
    if (per_thread, vec, index_bits) == (FLAT_PER_THREAD, FLAT_VEC, 32):
        return transpose_gather
    return specialise(
        transpose_gather,
        f"transpose_gather_x{per_thread}_vec{vec}_i{index_bits}",
        device_functions=(next_place, store_run),
        inline_device_functions=True,
        INDEX=uint32 if index_bits == 32 else int64,
        FLAT_VEC=vec,
        FLAT_PER_THREAD=per_thread,
    )


@functools.cache
def columns_kernel(per_thread: int, index_bits: int, vec: int = 1):
    """transpose_gather_columns for these loads per thread, index width and elements per load."""
    if (per_thread, index_bits, vec) == (FLAT_PER_THREAD, 32, COLUMNS_VEC):
        return transpose_gather_columns
    return specialise(
        transpose_gather_columns,
        f"transpose_gather_columns_x{per_thread}_vec{vec}_i{index_bits}",
        INDEX=uint32 if index_bits == 32 else int64,
        FLAT_PER_THREAD=per_thread,
        COLUMNS_VEC=vec,
    )


def row_vec(w: int, itemsize: int, vec: int = 4) -> int:
    """The most neighbours, up to vec and 16 bytes, that a row of w elements is a multiple of."""
    while vec > 1 and (vec * itemsize > 16 or w % vec):
        vec //= 2
    return vec


def columns_vec(d_a, vec: int = 4) -> int:
    """The most neighbours of a row of d_a, up to vec and 16 bytes, that one load can read:
    row_vec's, d_a aligned to their bytes (so every row is)."""
    itemsize = d_a.dtype.itemsize
    vec = row_vec(d_a.shape[1], itemsize, vec)
    while vec > 1 and not launch.aligned(d_a, vec * itemsize):
        vec //= 2
    return vec


@functools.cache
def kernel_for(tile: int, rows: int, vec: int, pad: int = PAD, transpose: bool = True):
    """transpose_wide (or copy_wide) compiled with TILE, ROWS, VEC, PAD = tile, rows, vec, pad.

    The module's own kernels for the module's constants; otherwise a copy with its own name
    (transpose_wide_32x32_32x8_vec1_pad1, ...) so that profilers tell the instances apart.
    """
    kernel = transpose_wide if transpose else copy_wide
    if (tile, rows, vec, pad if transpose else PAD) == (TILE, ROWS, VEC, PAD):
        return kernel
    name = f"{python_function(kernel).__name__}_{tile}x{tile}_{tile // vec}x{rows}_vec{vec}"
    return specialise(
        kernel,
        name + (f"_pad{pad}" if transpose else ""),
        device_functions=(load_runs, store_runs),
        inline_device_functions=True,
        TILE=tile,
        ROWS=rows,
        VEC=vec,
        PAD=pad,
        PADDED=tile + pad,
        RUNS=tile // rows,
    )


def group_for(tiles_y: int, threads: int) -> int:
    """Whole tile columns when the blocks resident at once cover one; else TALL_GROUP rows."""
    return tiles_y if tiles_y <= hardware.resident_blocks(threads) else TALL_GROUP


def _wide_launch(d_a, o, to_host, block, vec, pad, group, *, transpose: bool) -> launch.Launch:
    """Check the tiling; one launch over a 1-D grid of tiles, from d_a into Output o."""
    dims = launch.block_shape(block)
    if len(dims) == 3:
        raise ValueError(f"block must be (threads along x, rows) for a 2-D tile, got {block!r}")
    threads_x, rows = (dims + (1,))[:2]
    vec = launch.positive_int(vec, "vec")
    pad = launch.positive_int(pad, "pad", minimum=0)
    itemsize, (h, w) = d_a.dtype.itemsize, d_a.shape
    if vec not in (1, 2, 4) or vec * itemsize not in (4, 8, 16):
        raise ValueError(
            f"vec must be 1, 2 or 4 with vec x itemsize <= 16 bytes, got vec={vec} for {d_a.dtype}"
        )
    tile = threads_x * vec
    if tile % rows:
        raise ValueError(
            f"block {block} makes a {tile} x {tile} tile ({threads_x} threads x vec "
            f"{vec}); its rows ({rows}) must divide {tile}"
        )
    if w % vec or (transpose and h % vec):
        sides = "both sides" if transpose else "the rows"
        raise ValueError(
            f"wide accesses of {vec} elements need {sides} to be a multiple of {vec} "
            f"long, got shape {d_a.shape}: use transpose(), which takes any shape"
        )
    if not (launch.aligned(d_a, vec * itemsize) and launch.aligned(o.device, vec * itemsize)):
        raise ValueError(
            f"wide accesses of {vec * itemsize} bytes need arrays aligned to "
            f"{vec * itemsize} bytes: use transpose(), which takes any array"
        )
    if transpose:
        launch.check_shared_memory(tile * (tile + pad) * itemsize, f"a {tile} x {tile + pad} tile")
    tiles_y = launch.blocks_for(h, tile)
    if group is None:
        group = group_for(tiles_y, threads_x * rows)
    group = launch.positive_int(group, "group")
    kernel = kernel_for(tile, rows, vec, pad, transpose)
    return launch.single(
        kernel,
        launch.grid_1d(tiles_y * launch.blocks_for(w, tile), 1),
        (threads_x, rows),
        d_a,
        o.device,
        group,
        out=o,
        to_host=to_host,
    )


def _checked(a, out, *, transpose: bool):
    """(device input, Output, came from host) of a transpose (or, transpose=False, a copy)."""
    d_a, to_host = launch.device_input(a, name="a", dtypes=DTYPES, ndim=2)
    shape = d_a.shape[::-1] if transpose else d_a.shape
    return d_a, launch.device_output(out, shape, d_a.dtype, inputs=(d_a,)), to_host


@launch.op
def wide(a, *, out=None, block=WIDE_BLOCK, vec: int = VEC, pad: int = PAD, group=None):
    """Transpose with vec neighbours per access through a (block x vec)-square padded tile.

    group: tile rows the blocks walk down before moving right; None: group_for's choice.
    """
    d_a, o, to_host = _checked(a, out, transpose=True)
    return _wide_launch(d_a, o, to_host, block, vec, pad, group, transpose=True)


@launch.op
def wide_copy(a, *, out=None, block=WIDE_BLOCK, vec: int = VEC, group=None):
    """Copy with wide()'s tiling, accesses and block order: the ceiling wide() approaches."""
    d_a, o, to_host = _checked(a, out, transpose=False)
    return _wide_launch(d_a, o, to_host, block, vec, 0, group, transpose=False)


def largest_shift(fewest: int) -> int:
    """The largest s with 2**s columns (rows) of `fewest` elements, odd-padded, in THIN_SPAN."""
    return (THIN_SPAN // (fewest | 1)).bit_length() - 1


def _thin_launch(d_a, o, to_host) -> launch.Launch:
    """A thin matrix: blocks of whole columns (few rows) or whole rows (few columns)."""
    h, w = d_a.shape
    if h <= w:
        shift = largest_shift(h)
        grid, args = launch.blocks_for(w, 1 << shift), (d_a, o.device.reshape(o.device.size))
        kernel = transpose_few_rows
    else:
        shift = largest_shift(w)
        grid, args = launch.blocks_for(h, 1 << shift), (d_a.reshape(d_a.size), o.device)
        kernel = transpose_few_columns
    return launch.single(kernel, grid, THIN_THREADS, *args, shift, out=o, to_host=to_host)


def _gather_launch(d_a, o, to_host, per_thread: int, vec: int) -> launch.Launch:
    """transpose_gather: threads over out seen flat, per_thread runs of vec elements each."""
    h, w = d_a.shape
    out_flat = o.device.reshape(d_a.size)
    nbytes = vec * d_a.dtype.itemsize
    if vec not in (1, 2, 4) or nbytes > 16:
        raise ValueError(f"vec must be 1, 2 or 4 with vec x itemsize <= 16 bytes, got {vec}")
    if not launch.aligned(out_flat, nbytes):
        raise ValueError(f"runs of {vec} elements need out aligned to {nbytes} bytes")
    kernel = gather_kernel(per_thread, vec, 32 if d_a.nbytes < FLAT_INDEX_BYTES else 64)
    dq, dr = divmod(vec * FLAT_THREADS, h)  # a thread's step between runs, in out's rows
    grid = launch.grid_1d(d_a.size, FLAT_THREADS * per_thread * vec)
    args = (d_a.reshape(d_a.size), out_flat, h, w, dq, dr)
    return launch.single(kernel, grid, FLAT_THREADS, *args, out=o, to_host=to_host)


def _columns_launch(d_a, o, to_host, per_thread: int, vec: int = 1) -> launch.Launch:
    """transpose_gather_columns: blocks of 2**shift whole columns of out, per_thread loads of
    vec elements a thread (vec: a divisor of the row length, d_a aligned to vec elements)."""
    h, w = d_a.shape
    loads = w // vec  # a row of a: its loads
    shift = max(0, (FLAT_THREADS * per_thread // loads).bit_length() - 1)  # fits a block
    if loads > FLAT_THREADS * per_thread:
        raise ValueError(f"{w} columns do not fit {FLAT_THREADS} x {per_thread} loads a block")
    kernel = columns_kernel(per_thread, 32 if d_a.nbytes < FLAT_INDEX_BYTES else 64, vec)
    grid = launch.grid_1d(h, 1 << shift)
    return launch.single(kernel, grid, FLAT_THREADS, d_a, o.device, shift, out=o, to_host=to_host)


def gather_vec(d, itemsize: int, vec: int) -> int:
    """The widest run of at most vec elements, at most 16 bytes, that d's alignment allows."""
    while vec > 1 and (vec * itemsize > 16 or not launch.aligned(d, vec * itemsize)):
        vec //= 2
    return vec


def _tiled_launch(d_a, o, to_host) -> launch.Launch:
    """The tiled transpose: wide accesses where the sides and alignment allow."""
    h, w = d_a.shape
    nbytes = d_a.dtype.itemsize * VEC
    if d_a.dtype.itemsize == 4 and h % VEC == 0 and w % VEC == 0:
        if launch.aligned(d_a, nbytes) and launch.aligned(o.device, nbytes):
            return _wide_launch(d_a, o, to_host, WIDE_BLOCK, VEC, PAD, None, transpose=True)
    block = ODD_BLOCK if d_a.dtype.itemsize == 4 else PLAIN_BLOCK
    return _wide_launch(d_a, o, to_host, block, PLAIN_VEC, PAD, None, transpose=True)


def chosen_kernel(h: int, w: int, nbytes: int, dtype=np.float32, aligned: bool = True) -> str:
    """The kernel transpose() runs on an h x w matrix of nbytes of dtype (aligned: to 16 bytes):
    gather, staged, gather_columns, thin or tiled."""
    if nbytes >= FLAT_MIN_BYTES and h <= w and h <= GATHER_ROWS:
        return "gather"
    if nbytes >= FLAT_MIN_BYTES and w < h and aligned and staged.fits(w, dtype, nbytes):
        return "staged"
    if nbytes >= FLAT_MIN_BYTES and w < h and w <= GATHER_COLUMNS:
        return "gather_columns"
    return "thin" if min(h, w) < FEW else "tiled"


@launch.op
def transpose(a, *, out=None):
    """Transpose any 2-D array of 4- or 8-byte elements with the fastest kernel that applies."""
    d_a, o, to_host = _checked(a, out, transpose=True)
    kernel = chosen_kernel(*d_a.shape, d_a.nbytes, d_a.dtype, staged.aligned(d_a))
    if kernel == "staged":
        return staged.staged_launch(d_a, o, to_host)
    if kernel == "gather":
        vec = gather_vec(o.device, d_a.dtype.itemsize, GATHER_RUNS[1])
        return _gather_launch(d_a, o, to_host, GATHER_RUNS[0], vec)
    if kernel == "gather_columns":
        return _columns_launch(d_a, o, to_host, COLUMNS_PER_THREAD, columns_vec(d_a))
    return (_thin_launch if kernel == "thin" else _tiled_launch)(d_a, o, to_host)


# What the lesson times, name -> builder of the Launch (a, out=None) -> Launch
WIDE_NAME = f"{WIDE_BLOCK[0]}x{WIDE_BLOCK[1]}, {TILE}x{TILE} tile, {4 * VEC} B"
VARIANTS = {
    f"copy {WIDE_NAME}": wide_copy.prepare,
    f"wide {WIDE_NAME}, row by row": functools.partial(wide.prepare, group=1),
    f"wide {WIDE_NAME}": wide.prepare,
}


def _case(block, vec, group):
    """One point of the tuning space: the wide transpose of the preset float32 square matrix."""
    side = runtime.PRESETS["image_side"]  # 8192 on a GPU: 256 MB each way, well above L2
    d_a = cuda.to_device(np.random.default_rng(0).random((side, side), dtype=np.float32))
    return wide.prepare(d_a, block=block, vec=vec, group=group), 2 * d_a.nbytes


# The space to choose TILE, ROWS, VEC (as block = (TILE / VEC, ROWS) and vec) and GROUP from:
# each case returns (Launch, bytes moved)
TUNING = {
    "family": "wide_transpose",
    # the chosen block and its neighbours (half the rows, half the threads across); one, two or
    # four elements per access (1: no wide accesses); row by row (1) or group_for's rule (None),
    # the two orders the lesson times
    "space": {
        "block": [(32, 8), (32, 16), (16, 16)],
        "vec": [1, 2, 4],
        "group": [1, None],
    },
    "case": _case,
    "chosen": {"block": WIDE_BLOCK, "vec": VEC, "group": None},
}


# Thin shapes of THIN_ELEMENTS + a few float32 (240 MiB, well above L2; the simulator divides
# the long side by THIN_SCALE), issue 25's among them, and the kernels that could move them:
# "thin" (transpose_few_rows/columns), "tiled" (the wide path), "gather" (per_thread runs of
# vec elements a thread), "gather_columns" (per_thread loads of vec elements a thread) and
# "staged" (staged.transpose_staged_columns)
THIN_ELEMENTS = 60 * 2**20
THIN_SIDES = (1, 2, 3, 5, 8, 16, 24, 31, 40, 64, 128)
THIN_SHAPES = [
    shape
    for side in THIN_SIDES
    for shape in (f"{THIN_ELEMENTS // side + 1} x {side}", f"{side} x {THIN_ELEMENTS // side + 1}")
] + ["80973 x 777"]
THIN_SCALE = runtime.pick(gpu=1, simulator=2**15)


@functools.lru_cache(maxsize=1)
def _thin_matrix(shape: str):
    """The random float32 matrix of a THIN_SHAPES entry, on the device."""
    h, w = (int(side) for side in shape.split(" x "))
    h, w = (max(1, h // THIN_SCALE), w) if h > w else (h, max(1, w // THIN_SCALE))
    return cuda.to_device(np.random.default_rng(3).random((h, w), dtype=np.float32))


def _thin_case(shape, kernel, per_thread, vec):
    """One point of THIN_TUNING: (the Launch transposing the shape with this kernel, bytes)."""
    d_a = _thin_matrix(shape)
    o = launch.Output(cuda.device_array(d_a.shape[::-1], d_a.dtype), given=True)
    if kernel == "gather":
        built = _gather_launch(d_a, o, False, per_thread, vec)
    elif kernel == "gather_columns" and columns_vec(d_a, vec) == vec:
        built = _columns_launch(d_a, o, False, per_thread, vec)
    elif kernel == "gather_columns":
        raise ValueError(f"rows of {d_a.shape[1]} elements take no loads of {vec}")
    elif (per_thread, vec) != (1, 1):
        raise ValueError(f"the {kernel} kernel takes no per_thread or vec: timed at 1, 1")
    else:
        launches = {"thin": _thin_launch, "tiled": _tiled_launch, "staged": staged.staged_launch}
        built = launches[kernel](d_a, o, False)
    return built, 2 * d_a.nbytes


def _rule(shape: str) -> dict:
    """What transpose() runs on a THIN_SHAPES entry (float32, aligned), as THIN_TUNING names it."""
    h, w = (int(side) for side in shape.split(" x "))
    kernel = chosen_kernel(h, w, 4 * h * w)
    columns = (COLUMNS_PER_THREAD, row_vec(w, 4))  # float32, aligned: row_vec is columns_vec
    runs = {"gather": GATHER_RUNS, "gather_columns": columns}.get(kernel, (1, 1))
    return {"kernel": kernel, "per_thread": runs[0], "vec": runs[1]}


THIN_TUNING = {
    "family": "thin_transpose",
    "space": {
        "shape": THIN_SHAPES,
        "kernel": ["thin", "tiled", "gather", "gather_columns", "staged"],
        "per_thread": [1, 2, 4, 8, 16],
        "vec": [1, 2, 4],
    },
    "case": _thin_case,
    "chosen": {
        name: {shape: _rule(shape)[name] for shape in THIN_SHAPES}
        for name in ("kernel", "per_thread", "vec")
    },
}


def _names(dtypes) -> list[str]:
    return [np.dtype(d).name for d in dtypes]


def _signatures(dtypes, extra: str = ", int64") -> list[str]:
    return [f"void({t}[:, ::1], {t}[:, ::1]{extra})" for t in _names(dtypes)]


# Every instance the wrappers, the notebook and the tests launch, with every dtype they take
SIGNATURES = {
    transpose_wide: _signatures(FOUR_BYTE),
    copy_wide: _signatures(FOUR_BYTE),
    kernel_for(PLAIN_BLOCK[0] * PLAIN_VEC, PLAIN_BLOCK[1], PLAIN_VEC): _signatures(DTYPES),
    kernel_for(ODD_BLOCK[0] * PLAIN_VEC, ODD_BLOCK[1], PLAIN_VEC): _signatures(FOUR_BYTE),
    transpose_few_rows: [f"void({t}[:, ::1], {t}[::1], int64)" for t in _names(DTYPES)],
    transpose_few_columns: [f"void({t}[::1], {t}[:, ::1], int64)" for t in _names(DTYPES)],
    **{
        gather_kernel(GATHER_RUNS[0], vec, bits): [
            f"void({t}[::1], {t}[::1], int64, int64, int64, int64)"
            for t in _names(DTYPES if vec < 4 else FOUR_BYTE)
        ]
        for vec in (1, 2, 4)
        if vec <= GATHER_RUNS[1]
        for bits in (32, 64)
    },
    # as written (no wrapper takes its 8 runs of 1): the tuning's float32 alone
    transpose_gather: ["void(float32[::1], float32[::1], int64, int64, int64, int64)"],
    transpose_gather_columns: _signatures(DTYPES),
    **{  # loads of 4 elements: 16 bytes of a 4-byte type
        columns_kernel(COLUMNS_PER_THREAD, bits, vec): _signatures(DTYPES if vec < 4 else FOUR_BYTE)
        for bits in (32, 64)
        for vec in (1, 2, 4)
    },
    kernel_for(8, 2, 2): _signatures(DTYPES),  # tests: small tiles
    kernel_for(8, 2, 4): _signatures(FOUR_BYTE),
    kernel_for(8, 4, 2, 0, False): _signatures(DTYPES),
}

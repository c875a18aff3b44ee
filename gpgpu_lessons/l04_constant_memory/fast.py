"""Lesson 04, reaching the ceiling: the tiled filter tuned to near the device copy's speed.

The kernels below are written for one filter and one tile shape, named by module constants:
GAUSSIAN_5, and the Tile TILE. Five tricks, each explained where it is used:

1. the taps as immediates: the kernel copies the filter into registers once; a filter from
   constant memory is known at compile time, so its values end up inside the multiply-adds;
2. many outputs per thread: ROWS outputs down a column and COLS columns per thread, each tile
   value read from shared memory once per column and used for up to ROWS outputs;
3. all loads first: a thread issues every global load of its part of the tile before its first
   shared-memory store, so they are all in flight at once;
4. an interior fast path: blocks wholly inside the image skip every clamp and bounds test, and
   indices are unsigned (device.index.at) so Numba adds no negative-index wraparound;
5. the layout fits the image: `plan` picks the tile's shape for the image's (below), in an edge
   block a thread skips the rows and columns that lie outside the image, and a wide grid only a
   few tiles high walks down its columns (block_position).

Any other filter, memory or tile shape is the same code compiled with other constants:
`tiled_kernel` compiles these functions again with their module constants replaced
(`gpgpu_lessons.specialise`: each copy is a kernel of its own, with its own name).
`filter2d` uses that to fit the tile to the image (`plan`): TILE's threads in one row for 1 x N
and N x 1 (the 5x5 filter folded into 1x5: the clamp makes its rows, or columns, read the same
pixels), and a flat tile (as tall as an image of up to 5 rows) or a tall one (4 or 8 columns
wide) where TILE would compute more than twice the image. Thin images of at least a few MB
(up to 64 rows or columns) take two other kernels instead, `filter_rows` and `filter_columns`,
which stage a block's rows, or columns, whole (THIN_TUNING: `python -m gpgpu_tools.tune
thin_filter`, gpgpu_lessons/recorded/tuning/thin_filter-<gpu>.json). TILE is chosen by
`python -m gpgpu_tools.tune tiled_filter` (gpgpu_lessons/recorded/tuning/tiled_filter-<gpu>.json);
the bench records each layout on the shapes it serves (`python -m gpgpu_tools.bench --record`,
gpgpu_lessons/recorded/bench/<gpu>.json); the times of the layouts not chosen are not recorded.
"""

from __future__ import annotations

import functools
import math
import zlib
from typing import NamedTuple

import numpy as np
from numba import cuda, float32, int32, int64, uint32

from .. import launch, runtime
from ..device.index import at, clamp
from ..specialise import python_function, specialise
from . import checks
from .filters import GAUSSIAN_5, LAPLACIAN

MEMORIES = ("global", "constant")


class Tile(NamedTuple):
    """The tiled kernel's work: threads_x x threads_y threads, each making rows x cols outputs."""

    threads_x: int = 32
    threads_y: int = 4
    rows: int = 8  # output rows per thread, one below the other
    cols: int = 4  # output columns per thread, threads_x apart (less halo per output)
    fast_interior: bool = True  # blocks inside the image skip every clamp and bounds test


# The fastest shape of TUNING["space"] (5x5 Gaussian from constant memory): chosen by
# `python -m gpgpu_tools.tune tiled_filter`, recorded in
# gpgpu_lessons/recorded/tuning/tiled_filter-<gpu>.json; the lesson's run compares it with the
# device copy (experiment 04_constant_memory/fast_5x5 of gpgpu_lessons/recorded/<gpu>.json).
TILE = Tile()
CLAMPS_EVERYWHERE = TILE._replace(fast_interior=False)  # the notebook's bar without trick 4


def pitch(tile_w: int, threads_x: int, rows: int) -> int:
    """A tile row's length in shared memory: tile_w, padded if a warp spans several thread rows.

    The warp's thread rows are rows * pitch floats apart: an odd multiple of threads_x (modulo
    32) puts each on banks of its own (lesson 03's padding).
    """
    if threads_x >= 32 or 32 % threads_x:
        return tile_w  # a warp in one thread row reads neighbours: no conflict to avoid
    padded = [p for p in range(tile_w, tile_w + 32) if rows * p % (2 * threads_x) == threads_x]
    return padded[0] if padded else tile_w


def constants(tile, filter_shape) -> dict:
    """The module constants the kernels below read, for one layout (Tile or Thin) and filter."""
    ky, kx = filter_shape
    if isinstance(tile, Thin):
        return {
            "THIN_THREADS": tile.threads,
            "THIN_ROWS": tile.rows,
            "THIN_LOADS": tile.loads,
            "THIN_SPAN": tile.threads * tile.loads,
            "THIN_WINDOW": tile.rows + ky - 1,
            "THIN_STAGE_OUTPUTS": tile.stage_outputs,
            "THIN_OUTPUT_SPAN": tile.threads * tile.loads if tile.stage_outputs else 1,
            "KY": ky,
            "KX": kx,
        }
    out_h, out_w = tile.threads_y * tile.rows, tile.threads_x * tile.cols
    tile_h, tile_w = out_h + ky - 1, out_w + kx - 1
    return {
        "THREADS_X": tile.threads_x,
        "THREADS_Y": tile.threads_y,
        "ROWS": tile.rows,
        "COLS": tile.cols,
        "FAST_INTERIOR": tile.fast_interior,
        "KY": ky,
        "KX": kx,
        "OUT_H": out_h,
        "OUT_W": out_w,
        "TILE_H": tile_h,
        "TILE_W": tile_w,
        "PITCH": pitch(tile_w, tile.threads_x, tile.rows),
        "PASSES_Y": -(-tile_h // tile.threads_y),
        "PASSES_X": -(-tile_w // tile.threads_x),
        "WINDOW": tile.rows + ky - 1,
    }


WEIGHTS = GAUSSIAN_5  # the filter a constant-memory kernel has compiled in
THREADS_X, THREADS_Y = TILE.threads_x, TILE.threads_y  # threads per block
ROWS, COLS = TILE.rows, TILE.cols  # outputs per thread: ROWS down a column, COLS columns
FAST_INTERIOR = TILE.fast_interior
KY, KX = WEIGHTS.shape  # filter rows and columns
OUT_H, OUT_W = THREADS_Y * ROWS, THREADS_X * COLS  # a block's outputs
TILE_H, TILE_W = OUT_H + KY - 1, OUT_W + KX - 1  # ... plus the filter's halo
PITCH = TILE_W  # a tile row in shared memory: TILE's warps are one thread row each, no padding
PASSES_Y, PASSES_X = -(-TILE_H // THREADS_Y), -(-TILE_W // THREADS_X)  # loads per thread
WINDOW = ROWS + KY - 1  # tile rows behind one thread's ROWS outputs


@cuda.jit(device=True, inline="always")
def constant_taps(weights):
    """The filter from constant memory: WEIGHTS, compiled in (the argument is not read)."""
    return cuda.const.array_like(WEIGHTS)


@cuda.jit(device=True, inline="always")
def global_taps(weights):
    """The filter from global memory: the kernel's argument."""
    return weights


read_taps = constant_taps  # where filter_tiled reads its filter (global_taps: 'global')


@cuda.jit(device=True, inline="always")
def copy_taps(weights, taps):
    """taps[:, :] = the filter, from where read_taps reads it (constant or global memory)."""
    for dy in range(KY):
        for dx in range(KX):
            taps[dy, dx] = read_taps(weights)[dy, dx]


@cuda.jit(device=True, inline="always")
def last_pass_clamp(k, i, passes, n):
    """Index k of pass i; the last pass, which may stick out of a tile of n, repeats n - 1."""
    # The same value goes to the same place again. Once unrolled, i is a constant: only the
    # last pass pays for the min.
    return k if i < passes - 1 else min(k, n - 1)


@cuda.jit(device=True, inline="always")
def load_tile(image, tile, y0, x0, clamped):
    """tile[r, c] = image[y0 + r, x0 + c] (float32), clamped to the image only if `clamped`."""
    h, w = image.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    staged = cuda.local.array((PASSES_Y, PASSES_X), float32)
    for i in range(PASSES_Y):  # every load first, with no branch between them,
        r = last_pass_clamp(ty + i * THREADS_Y, i, PASSES_Y, TILE_H)  # so all are in flight
        row = image[clamp(y0 + r, h) if clamped else at(y0 + r)]
        for j in range(PASSES_X):  # coalesced: a warp reads neighbours of one row
            c = last_pass_clamp(tx + j * THREADS_X, j, PASSES_X, TILE_W)
            staged[i, j] = float32(row[clamp(x0 + c, w) if clamped else at(x0 + c)])
    for i in range(PASSES_Y):  # then the stores
        for j in range(PASSES_X):
            r = last_pass_clamp(ty + i * THREADS_Y, i, PASSES_Y, TILE_H)
            c = last_pass_clamp(tx + j * THREADS_X, j, PASSES_X, TILE_W)
            tile[at(r), at(c)] = staged[i, j]


@cuda.jit(device=True, inline="always")
def filter_tile(tile, taps, out, y0, x0, clamped):
    """This thread's ROWS x COLS outputs from the tile; bounds tests only if `clamped`."""
    top = cuda.threadIdx.y * ROWS
    if clamped and y0 + KY // 2 + top >= out.shape[0]:
        return  # an edge thread whose rows are all below the image: nothing to make
    for col in range(COLS):
        left = cuda.threadIdx.x + col * THREADS_X
        if clamped and x0 + KX // 2 + left >= out.shape[1]:
            return  # this column, and those right of it, are outside the image
        acc = cuda.local.array(ROWS, float32)  # constant indices once unrolled: registers
        for k in range(ROWS):
            acc[k] = 0
        column = cuda.local.array(WINDOW, float32)
        for dx in range(KX):
            for j in range(WINDOW):  # each tile value read from shared memory once
                column[j] = tile[at(top + j), at(left + dx)]
            for dy in range(KY):
                for k in range(ROWS):
                    acc[k] += taps[dy, dx] * column[k + dy]
        for k in range(ROWS):
            y, x = y0 + KY // 2 + top + k, x0 + KX // 2 + left
            if not clamped or (y < out.shape[0] and x < out.shape[1]):
                out[at(y)][at(x)] = acc[k]


# A wide grid at most this many tiles high walks down its columns. A few tiles high, the walk
# wins: a row of tiles is larger than the L2, so along rows the halo rows are gone before the
# row below needs them. Many tiles high (777 x N), it loses: a row of tiles fits in the L2 there.
# One tile high, the walk is the launch order. The bench records the choice on 40 x N and 777 x N
# (gpgpu_lessons/recorded/bench/<gpu>.json); the walk's alternatives are not recorded.
WALK_MAX_TILES_HIGH = 4


@cuda.jit(device=True, inline="always")
def block_position():
    """(column, row) of this block's tile: down each column on a wide grid a few tiles high."""
    across, down = cuda.gridDim.x, cuda.gridDim.y
    if down == 1 or down > WALK_MAX_TILES_HIGH or across <= down:  # the launch order:
        return int64(cuda.blockIdx.x), int64(cuda.blockIdx.y)  # along each row of tiles
    n = cuda.blockIdx.y * across + cuda.blockIdx.x  # down each column: the tiles above and
    return int64(n // down), int64(n % down)  # below share halo rows in L2


@cuda.jit
def filter_tiled(image, weights, out, first_block_row):
    """Stage a tile plus halo in shared memory; each thread makes ROWS x COLS outputs."""
    taps = cuda.local.array((KY, KX), float32)  # the filter in registers: read once
    copy_taps(weights, taps)
    tile = cuda.shared.array((TILE_H, PITCH), float32)
    block_col, block_row = block_position()
    x0 = block_col * OUT_W - KX // 2  # where tile[0, 0] is (may be outside)
    y0 = (first_block_row + block_row) * OUT_H - KY // 2  # a tall image: several launches
    h, w = image.shape
    if FAST_INTERIOR and y0 >= 0 and x0 >= 0 and y0 + TILE_H <= h and x0 + TILE_W <= w:
        load_tile(image, tile, y0, x0, False)  # an interior block: no clamps, no tests
        cuda.syncthreads()
        filter_tile(tile, taps, out, y0, x0, False)
    else:  # a border block
        load_tile(image, tile, y0, x0, True)
        cuda.syncthreads()
        filter_tile(tile, taps, out, y0, x0, True)


# ---- thin images: a block's rows, or columns, whole ------------------------------------------
#
# A few columns wide (N x 3, N x 40), a block's rows are one run of memory: `filter_rows` stages
# them with the KY - 1 halo rows as one flat run (every load coalesced, no clamped duplicates),
# then each thread makes THIN_ROWS outputs down one column from a window of rows in registers
# (KY + THIN_ROWS - 1 shared-memory reads per filter column for THIN_ROWS outputs, not 25 each).
# A few rows high (3 x N, 40 x N), the mirror: `filter_columns` stages every row of a run of
# columns and no halo row (a window row outside the image reads the staged edge row). Indices
# are split with one 32-bit division a thread (lesson 02's short rows).


class Thin(NamedTuple):
    """A thin image's layout: blocks of `threads` threads staging whole rows or whole columns."""

    whole: str  # "rows" for few columns (N x w), "columns" for few rows (h x N)
    threads: int = 256  # threads per block, in one row
    rows: int = 8  # outputs per thread, one below the other
    loads: int = 8  # image values a thread stages: a block stages threads x loads
    stage_outputs: bool = True  # whole rows: outputs through shared memory, stored as one run
    # (a block takes as many rows, or columns, as it can stage; each thread as many runs of
    # `rows` outputs, or columns, as it takes for the block's threads to cover them)


# The layouts `plan` picks for thin images; chosen by `python -m gpgpu_tools.tune thin_filter`
# (THIN_TUNING below), recorded in gpgpu_lessons/recorded/tuning/thin_filter-<gpu>.json.
THIN_ROWS_LAYOUT = Thin("rows")
THIN_COLUMNS_LAYOUT = Thin("columns")
THIN_THREADS, THIN_ROWS, THIN_LOADS, THIN_STAGE_OUTPUTS = THIN_ROWS_LAYOUT[1:]  # as written
THIN_SPAN = THIN_THREADS * THIN_LOADS  # image values a block stages in shared memory
THIN_WINDOW = THIN_ROWS + KY - 1  # staged rows behind one thread's THIN_ROWS outputs
THIN_OUTPUT_SPAN = THIN_SPAN if THIN_STAGE_OUTPUTS else 1  # filter_rows' outputs, staged


@cuda.jit(device=True, inline="always")
def split(i, n):
    """divmod(i, n) for i, n below 2**32 as one 32-bit division, the results int64."""
    q, r = divmod(uint32(i), uint32(n))
    return int64(q), int64(r)


@cuda.jit(device=True, inline="always")
def window_sums(staged, taps, starts, offsets, acc):
    """acc[k]: output k of THIN_ROWS down a column; window row j starts at staged[starts[j]]."""
    for k in range(THIN_ROWS):
        acc[k] = 0
    window = cuda.local.array(THIN_WINDOW, float32)  # constant indices once unrolled: registers
    for dx in range(KX):
        for j in range(THIN_WINDOW):  # each staged value read once per filter column
            window[j] = staged[at(starts[j] + offsets[dx])]
        for dy in range(KY):
            for k in range(THIN_ROWS):
                acc[k] += taps[dy, dx] * window[k + dy]


@cuda.jit(device=True, inline="always")
def stage_rows(src, staged, top, count, h, w, clamped):
    """staged[:count] = the flat image from row `top` on; rows clamped only if `clamped`."""
    held = cuda.local.array(THIN_LOADS, float32)
    for p in range(THIN_LOADS):  # every load first; a warp reads one run of memory
        i = cuda.threadIdx.x + p * THIN_THREADS
        if i < count:
            if clamped:
                r, c = split(i, w)
                held[p] = float32(src[at(int64(clamp(top + r, h)) * w + c)])
            else:
                held[p] = float32(src[at(top * w + i)])
    for p in range(THIN_LOADS):
        i = cuda.threadIdx.x + p * THIN_THREADS
        if i < count:
            staged[i] = held[p]


@cuda.jit(device=True, inline="always")
def store_run(staged, dst, first, count):
    """dst[first:first + count] = staged[:count]: a warp writes one run of memory."""
    for p in range(THIN_LOADS):  # a block's outputs are fewer than the values it staged
        i = cuda.threadIdx.x + p * THIN_THREADS
        if i < count:
            dst[at(first + i)] = staged[i]


@cuda.jit
def filter_rows(src, weights, dst, h, w, groups):
    """Few columns: stage whole rows as one run; each thread THIN_ROWS outputs down a column."""
    taps = cuda.local.array((KY, KX), float32)
    copy_taps(weights, taps)
    staged = cuda.shared.array(THIN_SPAN, float32)
    outputs = cuda.shared.array(THIN_OUTPUT_SPAN, float32)  # if THIN_STAGE_OUTPUTS
    rows = groups * THIN_ROWS  # the block's output rows: `groups` runs of THIN_ROWS a column
    y0 = int64(cuda.blockIdx.x) * rows
    top = y0 - KY // 2  # the image row of staged row 0 (may be outside)
    count = (rows + KY - 1) * w
    if top >= 0 and top + rows + KY - 1 <= h:
        stage_rows(src, staged, top, count, h, w, False)  # no clamp, no division
    else:
        stage_rows(src, staged, top, count, h, w, True)
    cuda.syncthreads()
    per_column = split(THIN_THREADS, w)[0]  # threads a column
    g, c = split(cuda.threadIdx.x, w)  # this thread: column c, runs g, g + per_column...
    offsets = cuda.local.array(KX, int32)
    for dx in range(KX):
        offsets[dx] = clamp(c + dx - KX // 2, w)  # the columns clamped to the image
    starts = cuda.local.array(THIN_WINDOW, int32)  # indices below THIN_SPAN
    acc = cuda.local.array(THIN_ROWS, float32)
    last = groups if g < per_column else 0  # the threads past the last whole column: none
    for run in range(g, last, per_column):
        for j in range(THIN_WINDOW):
            starts[j] = (run * THIN_ROWS + j) * w
        window_sums(staged, taps, starts, offsets, acc)
        for k in range(THIN_ROWS):
            y = run * THIN_ROWS + k  # in the block
            if THIN_STAGE_OUTPUTS:
                outputs[at(y * w + c)] = acc[k]
            elif y0 + y < h:  # a warp's stores: runs of w values
                dst[at((y0 + y) * w + c)] = acc[k]
    if THIN_STAGE_OUTPUTS:
        cuda.syncthreads()
        store_run(outputs, dst, y0 * w, min(rows, h - y0) * w)


@cuda.jit(device=True, inline="always")
def stage_columns(image, staged, x0, pitch, clamped):
    """staged[r * pitch + c] = image[r, x0 + c] for every row r; clamped only if `clamped`."""
    h, w = image.shape
    r, c = split(cuda.threadIdx.x, pitch)  # where this thread's first value is
    dr, dc = split(THIN_THREADS, pitch)  # and its step to the next
    held = cuda.local.array(THIN_LOADS, float32)
    for p in range(THIN_LOADS):  # every load first; a warp reads runs of a row
        if r < h:
            held[p] = float32(image[at(r), clamp(x0 + c, w) if clamped else at(x0 + c)])
        r, c = r + dr, c + dc
        if c >= pitch:
            r, c = r + 1, c - pitch
    for p in range(THIN_LOADS):
        i = cuda.threadIdx.x + p * THIN_THREADS
        if i < h * pitch:
            staged[i] = held[p]


@cuda.jit
def filter_columns(image, weights, out, columns):
    """Few rows: stage every row of a run of columns; each thread THIN_ROWS outputs down one."""
    taps = cuda.local.array((KY, KX), float32)
    copy_taps(weights, taps)
    staged = cuda.shared.array(THIN_SPAN, float32)
    h, w = image.shape
    pitch = columns + KX - 1  # a staged row: the block's columns and the halo
    x0 = int64(cuda.blockIdx.x) * columns - KX // 2  # the image column of staged column 0
    if x0 >= 0 and x0 + pitch <= w:
        stage_columns(image, staged, x0, pitch, False)
    else:
        stage_columns(image, staged, x0, pitch, True)
    cuda.syncthreads()
    groups = split(h + THIN_ROWS - 1, THIN_ROWS)[0]  # runs of THIN_ROWS down a column
    per_run = split(THIN_THREADS, groups)[0]  # threads across the columns, each run
    g, first = split(cuda.threadIdx.x, per_run)  # this thread: run g, columns first, ...
    starts = cuda.local.array(THIN_WINDOW, int32)  # indices below THIN_SPAN
    for j in range(THIN_WINDOW):  # the rows clamped here: staged once, read again
        starts[j] = int64(clamp(g * THIN_ROWS + j - KY // 2, h)) * pitch
    offsets = cuda.local.array(KX, int32)
    acc = cuda.local.array(THIN_ROWS, float32)
    last = columns if g < groups else 0  # the threads past the last whole run: none
    for c in range(first, last, per_run):
        x = x0 + KX // 2 + c
        if x < w:
            for dx in range(KX):
                offsets[dx] = c + dx
            window_sums(staged, taps, starts, offsets, acc)
            for k in range(THIN_ROWS):
                y = g * THIN_ROWS + k
                if y < h:
                    out[at(y), at(x)] = acc[k]


# ---- the same kernel for other filters, memories and tile shapes -----------------------------


def kernel_name(memory: str, weights: np.ndarray, tile) -> str:
    """The profiler's name for one instance, e.g. filter_tiled_constant_5x5_32x4_r8c4_3b1fd2c4."""
    ky, kx = weights.shape
    if isinstance(tile, Thin):  # e.g. filter_rows_constant_5x5_t256r8l8_3b1fd2c4
        name = f"filter_{tile.whole}_{memory}_{ky}x{kx}_t{tile.threads}r{tile.rows}l{tile.loads}"
        name += "" if tile.stage_outputs else "_direct"
    else:
        name = (
            f"filter_tiled_{memory}_{ky}x{kx}_{tile.threads_x}x{tile.threads_y}"
            f"_r{tile.rows}c{tile.cols}" + ("" if tile.fast_interior else "_clamped")
        )
    return name + (f"_{zlib.crc32(weights.tobytes()):08x}" if memory == "constant" else "")


# each layout's kernel and the device functions that read its constants
KERNELS = {
    Tile: (filter_tiled, (copy_taps, load_tile, filter_tile)),
    "rows": (filter_rows, (copy_taps, stage_rows, window_sums, store_run)),
    "columns": (filter_columns, (copy_taps, stage_columns, window_sums)),
}


@functools.cache
def _instance(memory: str, filter_shape: tuple[int, int], weights_bytes: bytes | None, tile):
    """A layout's kernel with other constants (cached: one per filter, memory and layout)."""
    if weights_bytes is None:
        weights = np.zeros(filter_shape, np.float32)  # a 'global' kernel reads its argument
    else:
        weights = np.frombuffer(weights_bytes, np.float32).reshape(filter_shape)
    taps = constant_taps if memory == "constant" else global_taps
    kernel, device_functions = KERNELS[tile.whole if isinstance(tile, Thin) else Tile]
    return specialise(
        kernel,
        kernel_name(memory, weights, tile),
        device_functions=(taps, *device_functions),
        inline_device_functions=True,  # as the module's: inline="always"
        read_taps=taps,
        WEIGHTS=weights,
        **constants(tile, filter_shape),
    )


def check_thin(thin) -> Thin:
    """A Thin layout: whole 'rows' or 'columns', sizes >= 1, at most 1024 threads."""
    if not isinstance(thin, Thin):
        raise TypeError(f"thin must be a fast.Thin, got {thin!r}")
    if thin.whole not in ("rows", "columns"):
        raise ValueError(f"thin.whole must be 'rows' or 'columns', got {thin.whole!r}")
    sizes = [
        launch.positive_int(v, f"thin.{name}") for name, v in zip(Thin._fields[1:4], thin[1:4])
    ]
    checked = Thin(thin.whole, *sizes, bool(thin.stage_outputs))
    launch.block_shape((checked.threads,), name="the layout's threads")
    return checked


def check_tile(tile) -> Tile:
    """A Tile with integer sizes >= 1 and at most 1024 threads."""
    if not isinstance(tile, Tile):
        raise TypeError(f"tile must be a fast.Tile, got {tile!r}")
    sizes = [launch.positive_int(v, f"tile.{name}") for name, v in zip(Tile._fields[:4], tile[:4])]
    checked = Tile(*sizes, bool(tile.fast_interior))
    launch.block_shape((checked.threads_x, checked.threads_y), name="the tile's threads")
    return checked


def shared_bytes(filter_shape, tile=TILE) -> int:
    """Shared memory of a layout's kernel: a tile's outputs plus the filter's halo, or a thin
    layout's staged values and outputs (float32)."""
    c = constants(tile, filter_shape)
    if isinstance(tile, Thin):
        return (c["THIN_SPAN"] + (c["THIN_OUTPUT_SPAN"] if tile.whole == "rows" else 0)) * 4
    return c["TILE_H"] * c["PITCH"] * 4


def tiled_kernel(weights, *, memory: str = "constant", tile: Tile = TILE):
    """The tiled kernel for this filter (compiled in if memory='constant'), memory and tile."""
    return _checked_kernel(*_checked(weights, memory, tile))


def _checked(weights, memory, tile, check=None) -> tuple[np.ndarray, str, Tile | Thin]:
    """(weights, memory, layout) checked; the layout by `check`, else as a Tile or a Thin."""
    memory = checks.memory(memory, MEMORIES)
    weights = checks.weights(weights, constant=memory == "constant")
    tile = (check or (check_thin if isinstance(tile, Thin) else check_tile))(tile)
    launch.check_shared_memory(shared_bytes(weights.shape, tile), "the tile and its halo")
    return weights, memory, tile


def _checked_kernel(weights: np.ndarray, memory: str, tile):
    if memory == "constant" and np.array_equal(weights, WEIGHTS):
        if tile == TILE:
            return filter_tiled  # the kernel as the module defines it
        as_written = (THIN_THREADS, THIN_ROWS, THIN_LOADS, THIN_STAGE_OUTPUTS)
        if isinstance(tile, Thin) and tile[1:] == as_written:
            return KERNELS[tile.whole][0]
    compiled_in = weights.tobytes() if memory == "constant" else None
    return _instance(memory, weights.shape, compiled_in, tile)


# ---- the tile that fits the image --------------------------------------------------------------


def line(tile: Tile) -> Tile:
    """tile's threads in one row, each making its rows x cols outputs side by side in one row."""
    threads = tile.threads_x * tile.threads_y
    return Tile(threads, 1, 1, tile.rows * tile.cols, tile.fast_interior)


# Flat tiles: as tall as the image up to 5 rows, then the tile's 8 rows: 5 kernels, not one per
# height (8 rows compute 1.33 and 1.14 times the outputs of 6 and 7). The bench records the
# choice on 1 x N, 3 x N and 40 x N; the heights not chosen are not recorded.
FLAT_EXACT_ROWS = 5
# Tall tiles: 4 threads across for up to 4 columns, else 8 across; wider images take TILE. The
# bench records the choice on N x 1, N x 3 and N x 40; the widths not chosen are not recorded.
TALL_NARROW_COLUMNS = 4


def flat(tile: Tile, h: int) -> Tile:
    """tile's threads in one row, each making min(h, rows) rows if h <= 5, else tile's rows."""
    threads = tile.threads_x * tile.threads_y
    rows = min(h, tile.rows) if h <= FLAT_EXACT_ROWS else tile.rows
    return Tile(threads, 1, rows, tile.cols, tile.fast_interior)


def tall(tile: Tile, w: int) -> Tile:
    """tile's threads 4 across (w <= 4) or 8 across, the others down, one column each.

    A warp's thread rows are `rows` tile rows apart: 4 across takes an odd row count (9 for
    TILE) and 8 across tile's 8, so that the pitch can put them on different banks.
    """
    threads = tile.threads_x * tile.threads_y
    if w <= TALL_NARROW_COLUMNS:
        across = math.gcd(threads, 4)
        return Tile(across, threads // across, tile.rows | 1, 1, tile.fast_interior)
    across = math.gcd(threads, 8)
    return Tile(across, threads // across, tile.rows, 1, tile.fast_interior)


# Thin images, from THIN_MIN_PIXELS on, take the thin kernels: at most THIN_MAX_SIDE columns
# (N x w: whole rows) or rows (h x N: whole columns). Smaller images keep the tiles: there a
# launch costs about the same whichever kernel runs, and the lesson's images show the tiled one.
# `python -m gpgpu_tools.tune thin_filter` times both on N x 3, N x 40, 3 x N, 40 x N.
THIN_MAX_SIDE = 64
THIN_MIN_PIXELS = 2**20


def whole_columns(thin: Thin, h: int) -> Thin:
    """thin for h x N: each thread making all h rows if h <= 5 (as `flat`), else thin's rows."""
    return thin._replace(rows=min(h, thin.rows) if h <= FLAT_EXACT_ROWS else thin.rows)


def thin_share(thin: Thin, shape, filter_shape) -> int:
    """A thin kernel's last argument: a block's runs of `rows` output rows ('rows') or its
    columns ('columns'), as many as it can stage; 0 if it cannot take the image (fewer threads
    than a row's columns, or a column's runs of rows) or its shared memory does not fit."""
    (h, w), (ky, kx) = shape, filter_shape
    staged = thin.threads * thin.loads
    if not fits(filter_shape, thin):
        return 0
    if thin.whole == "rows":  # a block: share x rows output rows, and KY - 1 halo rows
        enough = w <= thin.threads
        return max(0, (staged // w - (ky - 1)) // thin.rows) if enough else 0
    enough = launch.blocks_for(h, thin.rows) <= thin.threads  # every row, and the halo columns
    return max(0, staged // h - (kx - 1)) if enough else 0


class Plan(NamedTuple):
    """What filter2d launches on one image: the layout, the filter and the shape the kernel sees."""

    tile: Tile | Thin  # a tile of filter_tiled, or a thin kernel's layout
    weights: np.ndarray  # the filter, or for a line its rows (1 x N) or columns (N x 1) summed
    shape: tuple[int, int]  # the image's shape, or (1, N) for an image of one row or column


def fits(filter_shape, tile: Tile) -> bool:
    """True when the tile and its halo fit in a block's 48 KiB of static shared memory."""
    return shared_bytes(filter_shape, tile) <= launch.STATIC_SHARED_MEMORY_BYTES


def efficiency(shape, filter_shape, tile) -> float:
    """The share of the outputs a launch of this layout computes that lie inside the image."""
    if isinstance(tile, Thin):
        (h, w), share = shape, thin_share(tile, shape, filter_shape)
        if tile.whole == "rows":
            return h / (launch.blocks_for(h, share * tile.rows) * share * tile.rows)
        rows, columns = launch.blocks_for(h, tile.rows) * tile.rows, launch.blocks_for(w, share)
        return h * w / (rows * columns * share)
    c = constants(tile, filter_shape)
    (h, w), out_h, out_w = shape, c["OUT_H"], c["OUT_W"]
    computed = launch.blocks_for(h, out_h) * out_h * launch.blocks_for(w, out_w) * out_w
    return h * w / computed


def plan(shape, weights: np.ndarray, tile: Tile = TILE, thin: bool = True) -> Plan:
    """How filter2d covers an image of this shape (weights and tile checked).

    1 x N or N x 1: a `line` tile on the image seen as 1 x N, with the filter folded into one
    row: clamped to the image, every filter row reads its one row (N x 1: every column its
    one column), so summing them is the same filter (the bench: 1 x N, N x 1). A thin image
    of at least THIN_MIN_PIXELS (if `thin`): filter_rows for at most THIN_MAX_SIDE columns,
    else filter_columns for at most THIN_MAX_SIDE rows. Otherwise `tiled_plan`.
    """
    h, w = shape
    if h == 1 or w == 1:
        folded = weights.sum(axis=0 if h == 1 else 1, dtype=np.float64).astype(np.float32)
        if fits((1, folded.size), line(tile)):
            return Plan(line(tile), folded[np.newaxis], (1, h * w))
    if thin and h * w >= THIN_MIN_PIXELS:
        if w <= THIN_MAX_SIDE and thin_share(THIN_ROWS_LAYOUT, shape, weights.shape):
            return Plan(THIN_ROWS_LAYOUT, weights, (h, w))
        layout = whole_columns(THIN_COLUMNS_LAYOUT, h)
        if h <= THIN_MAX_SIDE and thin_share(layout, shape, weights.shape):
            return Plan(layout, weights, (h, w))
    return tiled_plan(shape, weights, tile)


def tiled_plan(shape, weights: np.ndarray, tile: Tile = TILE) -> Plan:
    """`tile`, unless it would compute more than twice the image's outputs: then the one of
    tile, `flat` and `tall` that computes the fewest outside it (filter_tiled, other constants)."""
    h, w = shape
    if efficiency(shape, weights.shape, tile) >= 0.5:
        return Plan(tile, weights, (h, w))
    tiles = [t for t in (tile, flat(tile, h), tall(tile, w)) if fits(weights.shape, t)]
    best = max(tiles, key=lambda t: efficiency(shape, weights.shape, t))  # tile on a tie
    return Plan(best, weights, (h, w))


def launched_kernels(weights, *, memory: str = "constant", tile: Tile = TILE) -> tuple:
    """Every kernel filter2d may launch with this filter, memory and tile, whatever the image."""
    weights, memory, tile = _checked(weights, memory, tile)
    lines = [plan(shape, weights, tile) for shape in ((1, 2), (2, 1))]
    shortest = 2 if lines[0].tile == line(tile) else 1  # an image of one row takes the line
    flats = [flat(tile, h) for h in range(shortest, FLAT_EXACT_ROWS + 2)]
    talls = [tall(tile, w) for w in (TALL_NARROW_COLUMNS, TALL_NARROW_COLUMNS + 1)]
    layouts = dict.fromkeys([tile, *talls, *flats])
    configs = [(weights, t) for t in layouts if fits(weights.shape, t)]
    configs += [(p.weights, p.tile) for p in lines]
    thins = [whole_columns(THIN_COLUMNS_LAYOUT, h) for h in range(2, FLAT_EXACT_ROWS + 2)]
    configs += [(weights, t) for t in dict.fromkeys([THIN_ROWS_LAYOUT, *thins])]
    return tuple(dict.fromkeys(_checked_kernel(w, memory, t) for w, t in configs))


@launch.op
def filter2d(
    image, weights, *, memory: str = "constant", tile: Tile = TILE, thin_kernels=True, out=None
):
    """Filter a 2-D float32 or uint8 image (clamp-to-edge) into float32: the tuned tiled kernel.

    `tile` is the bulk tile; `plan` lays its threads out to fit thin images, or takes a thin
    kernel for them (unless thin_kernels is False: the tuning tool's comparison).
    """
    weights, memory, tile = _checked(weights, memory, tile, check_tile)
    d_image, to_host, output = checks.image_and_output(image, out)
    chosen = plan(d_image.shape, weights, tile, thin=bool(thin_kernels))
    if isinstance(chosen.tile, Thin):
        return _thin_launch(d_image, weights, memory, chosen.tile, output, to_host)
    c = constants(chosen.tile, chosen.weights.shape)
    d_weights = cuda.to_device(chosen.weights)  # a 'constant' kernel ignores its argument
    args = (d_image.reshape(chosen.shape), d_weights, output.device.reshape(chosen.shape))
    return checks.banded(
        _checked_kernel(chosen.weights, memory, chosen.tile),
        chosen.shape,
        (c["OUT_W"], c["OUT_H"]),
        (chosen.tile.threads_x, chosen.tile.threads_y),
        args,
        output,
        to_host,
        first_in_blocks=True,
    )


@launch.op
def filter_thin(
    image, weights, *, memory: str = "constant", thin: Thin = THIN_ROWS_LAYOUT, out=None
):
    """filter2d with a thin kernel on any image it takes: whole rows (few columns) or columns."""
    weights, memory, thin = _checked(weights, memory, thin, check_thin)
    d_image, to_host, output = checks.image_and_output(image, out)
    return _thin_launch(d_image, weights, memory, thin, output, to_host)


def _thin_launch(d_image, weights, memory, thin: Thin, output, to_host) -> launch.Launch:
    """One launch of a thin kernel over the image: 1-D blocks along its long side."""
    h, w = d_image.shape
    share = thin_share(thin, (h, w), weights.shape)
    if share < 1:
        raise ValueError(
            f"a {h} x {w} image is too {'wide' if thin.whole == 'rows' else 'tall'} for {thin}: "
            "use filter2d, or a layout with more threads or loads"
        )
    kernel = _checked_kernel(weights, memory, thin)
    d_weights = cuda.to_device(weights)  # a 'constant' kernel ignores its argument
    if thin.whole == "rows":
        grid = launch.blocks_for(h, share * thin.rows)
        args = (d_image.reshape(h * w), d_weights, output.device.reshape(h * w), h, w, share)
    else:
        grid, args = launch.blocks_for(w, share), (d_image, d_weights, output.device, share)
    return launch.single(kernel, grid, thin.threads, *args, out=output, to_host=to_host)


def _tuning_case(threads_y: int, rows: int, cols: int):
    """One tuning point: the 5x5 Gaussian from constant memory on the preset image (GPU: 8192²)."""
    side = runtime.PRESETS["image_side"]
    image = cuda.to_device(np.random.default_rng(3).random((side, side), dtype=np.float32) + 0.5)
    prepared = filter2d.prepare(
        image, GAUSSIAN_5, tile=Tile(32, threads_y, rows, cols), out=cuda.device_array_like(image)
    )
    return prepared, 2 * image.nbytes


TUNING = {
    "family": "tiled_filter",
    # the chosen tile's neighbours: 4 or 8 thread rows, half or twice the rows per thread, the
    # chosen columns per thread and half of them (32 threads across: one warp a thread row)
    "space": {"threads_y": [4, 8], "rows": [4, 8, 16], "cols": [2, 4]},
    "chosen": {"threads_y": TILE.threads_y, "rows": TILE.rows, "cols": TILE.cols},
    "case": _tuning_case,
}

# ---- tuning the thin kernels: each layout on each thin shape ---------------------------------

# The images: about THIN_TUNING_PIXELS float32 pixels (GPU: 252 MB, well past the L2; the
# simulator: a few hundred), N the long side: "N x 3" is 20971521 x 3 on the GPU.
THIN_GPU_PIXELS = 62914560
THIN_TUNING_PIXELS = runtime.pick(gpu=THIN_GPU_PIXELS, simulator=960)
THIN_TUNING_SHAPES = ("N x 3", "3 x N", "N x 40", "40 x N")


def thin_tuning_shape(label: str, pixels: int) -> tuple[int, int]:
    """The shape of a THIN_TUNING_SHAPES label: 'N x 3' -> (pixels // 3 + 1, 3)."""
    h, w = label.split(" x ")
    return (pixels // int(w) + 1, int(w)) if h == "N" else (int(h), pixels // int(h) + 1)


@functools.lru_cache(maxsize=1)
def _thin_tuning_image(label: str):
    """The random float32 image of a THIN_TUNING shape (the tool times one shape after another)."""
    shape = thin_tuning_shape(label, THIN_TUNING_PIXELS)
    return cuda.to_device(np.random.default_rng(5).random(shape, dtype=np.float32) + 0.5)


def _thin_tuning_case(
    shape: str, layout: str, threads: int, rows: int, loads: int, stage_outputs: bool
):
    """One point of THIN_TUNING: the 5x5 Gaussian from constant memory with one layout.

    'tiles': filter2d without the thin kernels, its bulk tile 32 x threads/32 threads of `rows`
    x 4 outputs (TILE at 128 threads and 8 rows), laid out by `tiled_plan` (flat, tall). 'rows',
    'columns': filter_thin. A parameter a layout does not read is timed at its first value only.
    """
    space = THIN_TUNING["space"]
    if layout == "tiles" and loads != space["loads"][0]:
        raise ValueError("the tiles stage no `loads`: timed at the first value only")
    if layout != "rows" and stage_outputs != space["stage_outputs"][0]:
        raise ValueError(f"{layout} store no staged outputs: timed at the first value only")
    image = _thin_tuning_image(shape)
    out = cuda.device_array(image.shape, np.float32)
    if layout == "tiles":
        tile = Tile(32, threads // 32, rows, TILE.cols)
        prepared = filter2d.prepare(image, GAUSSIAN_5, tile=tile, thin_kernels=False, out=out)
    else:
        thin = Thin(layout, threads, rows, loads, stage_outputs)
        prepared = filter_thin.prepare(image, GAUSSIAN_5, thin=thin, out=out)
    return prepared, image.nbytes + out.nbytes


def _thin_choice(label: str) -> dict:
    """THIN_TUNING's parameters of what `plan` picks on the GPU's image of this shape."""
    chosen = plan(thin_tuning_shape(label, THIN_GPU_PIXELS), GAUSSIAN_5).tile
    if isinstance(chosen, Thin):
        return {"layout": chosen.whole, **chosen._asdict()}
    threads = chosen.threads_x * chosen.threads_y  # TILE, as the case builds it
    return {
        "layout": "tiles",
        "threads": threads,
        "rows": TILE.rows,
        "loads": THIN_LOADS,
        "stage_outputs": True,
    }


THIN_TUNING = {
    "family": "thin_filter",
    # the thin shapes of the bench at 252 MB: today's tiles (TILE at 128 threads and 8 rows; its
    # tall and flat tiles with 3 rows a thread, or twice the threads) against both thin kernels.
    # Rows 3: what filter_columns runs on 3 x N (each thread all its rows).
    "space": {
        "shape": list(THIN_TUNING_SHAPES),
        "layout": ["tiles", "rows", "columns"],
        "threads": [128, 256],
        "rows": [3, 8],
        "loads": [8],
        "stage_outputs": [True, False],
    },
    # plan's choice on each shape (a guess until the GPU's record is in): the thin kernels at
    # THIN_ROWS_LAYOUT and THIN_COLUMNS_LAYOUT, TILE on the bulk shapes
    "chosen": {
        name: {label: _thin_choice(label)[name] for label in THIN_TUNING_SHAPES}
        for name in ("layout", "threads", "rows", "loads", "stage_outputs")
    },
    "case": _thin_tuning_case,
}

IMAGES = ("float32", "uint8")  # the image dtypes filter2d accepts


def _signatures(kernel) -> list[str]:
    """A kernel's launch signatures, one per image dtype: filter_rows sees flat images."""
    if python_function(kernel).__name__.startswith("filter_rows"):
        flat = "float32[:, ::1], float32[::1], int64, int64, int64"
        return [f"void({image}[::1], {flat})" for image in IMAGES]
    return [f"void({image}[:, ::1], float32[:, ::1], float32[:, ::1], int64)" for image in IMAGES]


NOTEBOOK_INSTANCES = (  # the instances the notebook runs
    tiled_kernel(GAUSSIAN_5, memory="global"),
    tiled_kernel(GAUSSIAN_5, tile=CLAMPS_EVERYWHERE),
    tiled_kernel(LAPLACIAN),
)
SIGNATURES = {
    kernel: _signatures(kernel)
    for kernel in (*launched_kernels(WEIGHTS), filter_rows, filter_columns, *NOTEBOOK_INSTANCES)
}

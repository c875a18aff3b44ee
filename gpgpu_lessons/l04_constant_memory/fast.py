"""Lesson 04, reaching the ceiling: the tiled filter tuned to near the device copy's speed.

The kernels below are written for one filter and one tile shape, named by module constants:
GAUSSIAN_5, and the Tile TILE. Five tricks, each explained where it is used:

1. the taps as immediates: the kernel copies the filter into registers once; a filter from
   constant memory is known at compile time, so its values end up inside the multiply-adds;
2. many outputs per thread: ROWS outputs down a column and COLS columns per thread, each tile
   value read from shared memory once per column and used for up to ROWS outputs;
3. all loads first: a thread issues every global load of its part of the tile before its first
   shared-memory store, so they are all in flight at once;
4. an interior fast path: blocks whose columns lie inside the image skip every column clamp and
   bounds test (rows are clamped only in the top and bottom rows of tiles), and indices are
   unsigned (device.index.at) so Numba adds no negative-index wraparound;
5. the layout fits the image: `plan` picks the tile's shape for the image's (below), in an edge
   block a thread skips the rows and columns that lie outside the image, and a wide grid only a
   few tiles high walks down its columns (block_position).

Any other filter, memory or tile shape is the same code compiled with other constants:
`tiled_kernel` compiles these functions again with their module constants replaced
(`gpgpu_lessons.specialise`: each copy is a kernel of its own, with its own name).
`filter2d` uses that to fit the tile to the image (`plan`): TILE's threads in one row for 1 x N
and N x 1 (the 5x5 filter folded into 1x5: the clamp makes its rows, or columns, read the same
pixels), `narrow.filter_narrow` for 2 to 4 columns (the filter folded onto them),
`band.filter_band` for 5 to 80 columns (whole rows staged, a thread a column of outputs) unless a
tall tile spans the image exactly, and a flat tile (as tall as an image of up to 5 rows) or a
tall one (as wide as an image of up to 40 columns) where TILE would compute more than twice the
image. TILE is chosen by `python -m gpgpu_tools.tune tiled_filter`
(gpgpu_lessons/recorded/tuning/tiled_filter-<gpu>.json);
the bench records each layout on the shapes it serves (`python -m gpgpu_tools.bench --record`,
gpgpu_lessons/recorded/bench/<gpu>.json); the times of the layouts not chosen are not recorded.
"""

from __future__ import annotations

import functools
import math
import zlib
from typing import NamedTuple

import numpy as np
from numba import cuda, float32, int64

from .. import launch, runtime
from ..device.index import at, clamp
from ..specialise import specialise
from . import band, checks, narrow
from .filters import GAUSSIAN_5, LAPLACIAN

MEMORIES = ("global", "constant")


class Tile(NamedTuple):
    """The tiled kernel's work: threads_x x threads_y threads, each making rows x cols outputs."""

    threads_x: int = 32
    threads_y: int = 4
    rows: int = 4  # output rows per thread, one below the other
    cols: int = 4  # output columns per thread, threads_x apart (less halo per output)
    fast_interior: bool = True  # blocks whose columns are inside skip the column clamps


# The fastest shape of TUNING["space"] (5x5 Gaussian from constant memory) over the lesson's
# image and one with odd sides: chosen by `python -m gpgpu_tools.tune tiled_filter`, recorded in
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


def constants(tile: Tile, filter_shape) -> dict:
    """The module constants the kernels below read, for one tile shape and one filter shape."""
    ky, kx = filter_shape
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
def last_pass_clamp(k, i, passes, n):
    """Index k of pass i; the last pass, which may stick out of a tile of n, repeats n - 1."""
    # The same value goes to the same place again. Once unrolled, i is a constant: only the
    # last pass pays for the min.
    return k if i < passes - 1 else min(k, n - 1)


@cuda.jit(device=True, inline="always")
def load_tile(image, tile, y0, x0, clamp_rows, clamp_cols):
    """tile[r, c] = image[y0 + r, x0 + c] (float32); rows, columns clamped to the image if asked."""
    h, w = image.shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    staged = cuda.local.array((PASSES_Y, PASSES_X), float32)
    for i in range(PASSES_Y):  # every load first, with no branch between them,
        r = last_pass_clamp(ty + i * THREADS_Y, i, PASSES_Y, TILE_H)  # so all are in flight
        row = image[clamp(y0 + r, h) if clamp_rows else at(y0 + r)]
        for j in range(PASSES_X):  # coalesced: a warp reads neighbours of one row
            c = last_pass_clamp(tx + j * THREADS_X, j, PASSES_X, TILE_W)
            staged[i, j] = float32(row[clamp(x0 + c, w) if clamp_cols else at(x0 + c)])
    for i in range(PASSES_Y):  # then the stores
        for j in range(PASSES_X):
            r = last_pass_clamp(ty + i * THREADS_Y, i, PASSES_Y, TILE_H)
            c = last_pass_clamp(tx + j * THREADS_X, j, PASSES_X, TILE_W)
            tile[at(r), at(c)] = staged[i, j]


@cuda.jit(device=True, inline="always")
def filter_tile(tile, taps, out, y0, x0, clamp_rows, clamp_cols):
    """This thread's ROWS x COLS outputs from the tile; bounds tests where rows or columns are
    clamped."""
    h, w = out.shape
    top = cuda.threadIdx.y * ROWS
    if clamp_rows and y0 + KY // 2 + top >= h:
        return  # an edge thread whose rows are all below the image: nothing to make
    for col in range(COLS):
        left = cuda.threadIdx.x + col * THREADS_X
        if clamp_cols and x0 + KX // 2 + left >= w:
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
            if (not clamp_rows or y < h) and (not clamp_cols or x < w):
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
    for dy in range(KY):
        for dx in range(KX):
            taps[dy, dx] = read_taps(weights)[dy, dx]
    tile = cuda.shared.array((TILE_H, PITCH), float32)
    block_col, block_row = block_position()
    x0 = block_col * OUT_W - KX // 2  # where tile[0, 0] is (may be outside)
    y0 = (first_block_row + block_row) * OUT_H - KY // 2  # a tall image: several launches
    h, w = image.shape
    rows_outside = y0 < 0 or y0 + TILE_H > h  # the top or bottom row of tiles
    if FAST_INTERIOR and x0 >= 0 and x0 + TILE_W <= w:  # columns inside: no column clamps,
        load_tile(image, tile, y0, x0, rows_outside, False)  # no column tests
        cuda.syncthreads()
        filter_tile(tile, taps, out, y0, x0, rows_outside, False)
    else:  # a block at the left or right border
        load_tile(image, tile, y0, x0, True, True)
        cuda.syncthreads()
        filter_tile(tile, taps, out, y0, x0, True, True)


# ---- the same kernel for other filters, memories and tile shapes -----------------------------


def kernel_name(memory: str, weights: np.ndarray, tile: Tile) -> str:
    """The profiler's name for one instance, e.g. filter_tiled_constant_5x5_32x4_r8c4_3b1fd2c4."""
    ky, kx = weights.shape
    name = (
        f"filter_tiled_{memory}_{ky}x{kx}_{tile.threads_x}x{tile.threads_y}"
        f"_r{tile.rows}c{tile.cols}" + ("" if tile.fast_interior else "_clamped")
    )
    return name + (f"_{zlib.crc32(weights.tobytes()):08x}" if memory == "constant" else "")


@functools.cache
def _instance(memory: str, filter_shape: tuple[int, int], weights_bytes: bytes | None, tile: Tile):
    """filter_tiled with other constants (cached: one kernel per filter, memory and tile)."""
    if weights_bytes is None:
        weights = np.zeros(filter_shape, np.float32)  # a 'global' kernel reads its argument
    else:
        weights = np.frombuffer(weights_bytes, np.float32).reshape(filter_shape)
    taps = constant_taps if memory == "constant" else global_taps
    return specialise(
        filter_tiled,
        kernel_name(memory, weights, tile),
        device_functions=(taps, load_tile, filter_tile),
        inline_device_functions=True,  # as the module's: inline="always"
        read_taps=taps,
        WEIGHTS=weights,
        **constants(tile, filter_shape),
    )


def check_tile(tile) -> Tile:
    """A Tile with integer sizes >= 1 and at most 1024 threads."""
    if not isinstance(tile, Tile):
        raise TypeError(f"tile must be a fast.Tile, got {tile!r}")
    sizes = [launch.positive_int(v, f"tile.{name}") for name, v in zip(Tile._fields[:4], tile[:4])]
    checked = Tile(*sizes, bool(tile.fast_interior))
    launch.block_shape((checked.threads_x, checked.threads_y), name="the tile's threads")
    return checked


def shared_bytes(filter_shape, tile: Tile = TILE) -> int:
    """Shared memory of the tiled kernel: the block's outputs plus the filter's halo, float32."""
    c = constants(tile, filter_shape)
    return c["TILE_H"] * c["PITCH"] * 4


def tiled_kernel(weights, *, memory: str = "constant", tile: Tile = TILE):
    """The tiled kernel for this filter (compiled in if memory='constant'), memory and tile."""
    return _checked_kernel(*_checked(weights, memory, tile))


def _checked(weights, memory, tile) -> tuple[np.ndarray, str, Tile]:
    memory = checks.memory(memory, MEMORIES)
    weights = checks.weights(weights, constant=memory == "constant")
    tile = check_tile(tile)
    launch.check_shared_memory(shared_bytes(weights.shape, tile), "the tile and its halo")
    return weights, memory, tile


def _checked_kernel(weights: np.ndarray, memory: str, tile: Tile):
    if memory == "constant" and tile == TILE and np.array_equal(weights, WEIGHTS):
        return filter_tiled  # the kernel as the module defines it
    compiled_in = weights.tobytes() if memory == "constant" else None
    return _instance(memory, weights.shape, compiled_in, tile)


# ---- the tile that fits the image --------------------------------------------------------------


def line(tile: Tile) -> Tile:
    """tile's threads in one row, each making its rows x cols outputs side by side in one row."""
    threads = tile.threads_x * tile.threads_y
    return tile._replace(threads_x=threads, threads_y=1, rows=1, cols=tile.rows * tile.cols)


# Flat tiles: as tall as the image up to 5 rows, then the tile's rows. The bench records the
# choice on 1 x N and 3 x N; the heights not chosen are not recorded.
FLAT_EXACT_ROWS = 5
# Tall tiles: 8 threads across, each making up to 5 columns, so that one tile spans an image of
# up to 40 columns (a tile narrower than the image re-reads its neighbours' halo columns from L2
# in part-used sectors); wider images, one column a thread. plan gives TILE's tall tiles only
# the widths they span exactly (8, 16, 24, 32, 40): band.filter_band takes the others (band.py).
# A tile that spans the image in 1 or 2 columns a thread makes twice the tile's rows: a thread's
# 4 outputs paid for too little of the tile's loads. On an NVIDIA H100, 2026-11-27, one-off
# runs, 4 rows -> 8: N x 8 0.68x -> 0.82x the device copy, N x 16 0.83x -> 0.93x; with 3 or
# more columns, 8 rows gained on N x 24 and N x 40 and lost on N x 20, 31 and 33. The bench
# records N x 40 (one column a thread made 0.72x there); the widths not chosen are not recorded.
TALL_COLUMNS_PER_THREAD = 5
TALL_DEEP_COLUMNS = 2


def flat(tile: Tile, h: int) -> Tile:
    """tile's threads in one row, each making h rows if h <= 5, else tile's rows."""
    threads = tile.threads_x * tile.threads_y
    rows = h if h <= FLAT_EXACT_ROWS else tile.rows
    return tile._replace(threads_x=threads, threads_y=1, rows=rows)


# Short images, 6 rows to SHORT_TILES tiles high: one row of tiles as tall as the image (rounded
# up to the tile's rows of threads), each thread making more or fewer rows than TILE's. On an
# NVIDIA H100 the 5x5 filter of 17 x N (odd N) ran at 0.53x the device copy with TILE (two rows
# of tiles, the second making one row) and at 0.83x with 5 rows a thread (2026-11-27, one-off
# run); the bench records the choice on 7 x N and 17 x N.
SHORT_TILES = 2


def short(tile: Tile, h: int) -> Tile:
    """tile with as many rows per thread as one row of tiles needs to span an image h rows high."""
    return tile._replace(rows=-(-h // tile.threads_y))


def tall(tile: Tile, w: int) -> Tile:
    """tile's threads 8 across, the others down, each making tile's rows in up to 5 columns:
    as many as one tile needs to span an image w columns wide, if it can, else one; twice the
    rows where one tile spans the image in 1 or 2 columns a thread."""
    threads = tile.threads_x * tile.threads_y
    across = math.gcd(threads, 8)
    cols = -(-w // across)
    rows = 2 * tile.rows if cols <= TALL_DEEP_COLUMNS else tile.rows
    if cols > TALL_COLUMNS_PER_THREAD:
        cols, rows = 1, tile.rows
    return tile._replace(threads_x=across, threads_y=threads // across, rows=rows, cols=cols)


class Plan(NamedTuple):
    """What filter2d launches on one image: the tile, the filter and the shape the kernel sees."""

    tile: Tile | narrow.Narrow | band.Band  # Narrow: filter_narrow; Band: filter_band
    weights: np.ndarray  # the filter, or for a line its rows (1 x N) or columns (N x 1) summed
    shape: tuple[int, int]  # the image's shape, or (1, N) for an image of one row or column


def fits(filter_shape, tile: Tile) -> bool:
    """True when the tile and its halo fit in a block's 48 KiB of static shared memory."""
    return shared_bytes(filter_shape, tile) <= launch.STATIC_SHARED_MEMORY_BYTES


def efficiency(shape, filter_shape, tile: Tile) -> float:
    """The share of the outputs a launch of this tile computes that lie inside the image."""
    c = constants(tile, filter_shape)
    (h, w), out_h, out_w = shape, c["OUT_H"], c["OUT_W"]
    computed = launch.blocks_for(h, out_h) * out_h * launch.blocks_for(w, out_w) * out_w
    return h * w / computed


def plan(shape, weights: np.ndarray, tile: Tile = TILE) -> Plan:
    """How filter2d covers an image of this shape with tile's threads (weights and tile checked).

    1 x N or N x 1: a `line` tile on the image seen as 1 x N, with the filter folded into one
    row: clamped to the image, every filter row reads its one row (N x 1: every column its
    one column), so summing them is the same filter (the bench: 1 x N, N x 1). 2 to 4 columns:
    filter_narrow (`narrow`). 5 to 80 columns: filter_band (`band`), unless `tall` spans the
    image with no column outside it (its threads reuse each tile value across their columns).
    Otherwise the one that computes the fewest outputs outside the image (the first on a tie)
    of `tile`, `short` if the image is 6 to 2 tiles' rows high, and `flat` and `tall` if tile
    would compute more than twice the image's outputs. Each tile is filter_tiled with other
    constants.
    """
    h, w = shape
    if h == 1 or w == 1:
        folded = weights.sum(axis=0 if h == 1 else 1, dtype=np.float64).astype(np.float32)
        if fits((1, folded.size), line(tile)):
            return Plan(line(tile), folded[np.newaxis], (1, h * w))
    if 2 <= w <= narrow.MAX_COLUMNS:
        return Plan(narrow.Narrow(w), weights, (h, w))
    spans = tall(tile, w).threads_x * tall(tile, w).cols == w  # every tall column inside
    if band.MIN_COLUMNS <= w <= band.MAX_COLUMNS and not spans and band.fits(weights.shape):
        return Plan(band.LAYOUT, weights, (h, w))
    layouts = [tile]
    if FLAT_EXACT_ROWS < h <= SHORT_TILES * tile.threads_y * tile.rows:
        layouts.append(short(tile, h))
    if efficiency(shape, weights.shape, tile) < 0.5:
        layouts += [flat(tile, h), tall(tile, w)]
    fitting = [t for t in layouts if fits(weights.shape, t)]
    best = max(fitting, key=lambda t: efficiency(shape, weights.shape, t))  # the first on a tie
    return Plan(best, weights, (h, w))


def launched_kernels(weights, *, memory: str = "constant", tile: Tile = TILE) -> tuple:
    """Every kernel filter2d may launch with this filter, memory and tile, whatever the image."""
    weights, memory, tile = _checked(weights, memory, tile)
    lines = [plan(shape, weights, tile) for shape in ((1, 2), (2, 1))]
    shortest = 2 if lines[0].tile == line(tile) else 1  # an image of one row takes the line
    flats = [flat(tile, h) for h in range(shortest, FLAT_EXACT_ROWS + 2)]
    widest = TALL_COLUMNS_PER_THREAD * 8 + 1  # every width tall() tells apart
    talls = [tall(tile, w) for w in range(narrow.MAX_COLUMNS + 1, widest + 1)]
    tallest = SHORT_TILES * tile.threads_y * tile.rows  # the short layouts plan picks:
    wide = [plan((h, 2**20), weights, tile).tile for h in range(FLAT_EXACT_ROWS + 1, tallest + 1)]
    shorts = [t for t in wide if t != tile]  # (a tie keeps tile)
    layouts = dict.fromkeys([tile, *talls, *flats, *shorts])
    configs = [(weights, t) for t in layouts if fits(weights.shape, t)]
    configs += [(p.weights, p.tile) for p in lines if isinstance(p.tile, Tile)]
    tiled = [_checked_kernel(w, memory, t) for w, t in configs]
    narrows = [narrow.narrow_kernel(weights, memory, w) for w in range(2, narrow.MAX_COLUMNS + 1)]
    bands = [band.band_kernel(weights, memory)] if band.fits(weights.shape) else []
    return tuple(dict.fromkeys([*tiled, *narrows, *bands]))


@launch.op
def filter2d(image, weights, *, memory: str = "constant", tile: Tile = TILE, out=None):
    """Filter a 2-D float32 or uint8 image (clamp-to-edge) into float32: the tuned tiled kernel.

    `tile` is the bulk tile; `plan` lays its threads out to fit thin images.
    """
    weights, memory, tile = _checked(weights, memory, tile)
    d_image, to_host, output = checks.image_and_output(image, out)
    chosen = plan(d_image.shape, weights, tile)
    if isinstance(chosen.tile, narrow.Narrow):
        kernel = narrow.narrow_kernel(weights, memory, chosen.tile.columns)
        return narrow.narrow_launch(kernel, d_image, weights, output, to_host)
    if isinstance(chosen.tile, band.Band):
        kernel = band.band_kernel(weights, memory, chosen.tile)
        return band.band_launch(kernel, d_image, weights, output, to_host, chosen.tile)
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


def _tuning_case(threads_y: int, rows: int, cols: int):
    """One tuning point: the 5x5 Gaussian from constant memory on the preset image (GPU: 8192²)
    and on one with odd sides (8193 x 8191), whose rows start off the cache lines' boundaries;
    one Launch runs both."""
    side = runtime.PRESETS["image_side"]
    rng = np.random.default_rng(3)
    steps, moved = (), 0
    for shape in ((side, side), (side + 1, side - 1)):
        image = cuda.to_device(rng.random(shape, dtype=np.float32) + 0.5)
        tile = Tile(32, threads_y, rows, cols)
        out = cuda.device_array_like(image)
        steps += filter2d.prepare(image, GAUSSIAN_5, tile=tile, out=out).steps
        moved += 2 * image.nbytes
    return launch.Launch(steps), moved


TUNING = {
    "family": "tiled_filter",
    # the chosen tile's neighbours: 4 or 8 thread rows, half or twice the rows per thread, the
    # chosen columns per thread and half of them (32 threads across: one warp a thread row).
    # Half the columns times about the same on these two images, but the flat tiles that
    # TILE's threads make for 3 x N then run at 0.67x the copy where 4 columns run at 0.84x
    # (an NVIDIA H100, 2026-11-27, one-off runs); TILE keeps 4.
    "space": {"threads_y": [4, 8], "rows": [2, 4, 8], "cols": [2, 4]},
    "chosen": {"threads_y": TILE.threads_y, "rows": TILE.rows, "cols": TILE.cols},
    "case": _tuning_case,
}

IMAGES = checks.IMAGE_TYPES  # the image dtypes filter2d accepts
NOTEBOOK_INSTANCES = (  # the instances the notebook runs
    tiled_kernel(GAUSSIAN_5, memory="global"),
    tiled_kernel(GAUSSIAN_5, tile=CLAMPS_EVERYWHERE),
    tiled_kernel(LAPLACIAN),
)
SIGNATURES = {  # filter_tiled first; filter_narrow's and filter_band's: their modules'
    kernel: [f"void({image}, float32[:, ::1], float32[:, ::1], int64)" for image in IMAGES]
    for kernel in (*launched_kernels(WEIGHTS), *NOTEBOOK_INSTANCES)
    if kernel not in {**narrow.SIGNATURES, **band.SIGNATURES}
}

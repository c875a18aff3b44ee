"""Exercises of lesson 02 (shared memory): barriers, halos, tiles, a tree and a scan."""

from __future__ import annotations

import numpy as np

from . import checks, data, figures
from .registry import Case, Exercise

TITLE = "Shared memory"

SEGMENT = 64


def _segments_reversed(a, size):
    out = a.copy()
    for start in range(0, a.size, size):
        out[start : start + size] = a[start : start + size][::-1]
    return out


def _block_reverse_case(rng, n, block=SEGMENT, timed_only=False):
    a = data.signed(rng, n)
    expected = data.empty(n) if timed_only else _segments_reversed(a, block)
    return Case(
        f"n = {n}",
        {"a": a, "out": data.empty(n)},
        {"out": expected},
        data.blocks(n, block),
        block,
        bytes_moved=8 * n,
    )


BLOCK_REVERSE = Exercise(
    id="02.1",
    name="block_reverse",
    title="Reverse each block through shared memory",
    statement="""\
Each block of `B = 64` threads reverses its own segment of 64 elements: stage the segment in a
shared array, wait for the whole block, then write it back reversed. The last segment is
shorter when `n` is not a multiple of 64 (`n = 1` and `n = 150` here): reverse its `m`
elements among themselves. Why is the barrier needed, when each thread writes only one element?""",
    skeleton='''\
from numba import cuda, float32

B = 64  # threads per block = elements per segment


@cuda.jit
def block_reverse(a, out):
    """Reverse each segment of B elements (the last may be shorter) through shared memory."""
    tile = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, a.size - start)  # elements in this block's segment
    # TODO: stage a[start + t] in tile, wait for the block, write the reversed segment
''',
    params=("a", "out"),
    hints=(
        "Thread t reads what thread m - 1 - t wrote into the tile: that thread may not have "
        "written it yet without `cuda.syncthreads()`.",
        "Only the threads with an element (`t < m`) load and store, but every thread, with an "
        "element or without, must reach the barrier: it goes outside any `if`.",
        "The last segment has `m` elements, fewer than `B`: they are reversed among themselves, so "
        "the mirror of `t` is `m - 1 - t`, not `B - 1 - t`. Each thread writes `out` where it read "
        "`a`.",
    ),
    cases=lambda rng, gpu: (
        [_block_reverse_case(rng, 1), _block_reverse_case(rng, 150)]
        + ([_block_reverse_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesShared("this exercise stages each segment in shared memory"),),
    next="Next: 02.2, a stencil that needs its neighbours' elements: a halo.",
    performance=lambda rng: _block_reverse_case(rng, 2**25, timed_only=True),
)


def _smooth_expected(a):
    padded = np.pad(a, 1, mode="edge")
    return ((padded[:-2] + padded[1:-1] + padded[2:]) / np.float32(3)).astype(np.float32)


def _smooth_case(rng, n, block=SEGMENT):
    a = data.signed(rng, n)
    return Case(
        f"n = {n}",
        {"a": a, "out": data.empty(n)},
        {"out": _smooth_expected(a)},
        data.blocks(n, block),
        block,
        bytes_moved=8 * n,
    )


STENCIL = Exercise(
    id="02.2",
    name="smooth",
    title="A 1-D stencil with a halo",
    statement="""\
`out[i] = (a[i - 1] + a[i] + a[i + 1]) / 3`, where a read past either end takes the end
element (`a[-1]` means `a[0]`, `a[n]` means `a[n - 1]`). Each block of 64 threads loads its 64
elements **and one neighbour on each side** (the halo) into a shared tile of 66, waits, and
computes from the tile, so each element is read from global memory about once. Shapes: `n = 1`,
`n = 300` (the last block is partial: who loads its right halo?).""",
    skeleton='''\
from numba import cuda, float32

B = 64
WIDE = B + 2  # the tile: B elements and one halo element on each side


@cuda.jit
def smooth(a, out):
    """3-point average with clamped ends, through a shared tile with a halo."""
    tile = cuda.shared.array(WIDE, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    n = a.size
    # TODO: tile[t + 1] = a[i]; the halo tile[0] and tile[m + 1] (clamped to the array's ends)
    # TODO: a barrier, then out[i] from tile[t], tile[t + 1], tile[t + 2]
''',
    params=("a", "out"),
    hints=(
        "Tile element `t + 1` holds `a[i]`; `tile[0]` holds the element left of the block's first, "
        "and `tile[m + 1]` the one right of its last, `m` being the number of elements the block "
        "has (fewer than 64 in the last block).",
        "Thread 0 also loads the left halo element, and the block's last thread *with an element* "
        "the right one. Clamp those two reads to the array with `max(..., 0)` and `min(..., n - "
        "1)`.",
        "Threads past the end of `a` load nothing and write nothing, but all of them reach the "
        "barrier. The output reads only the tile: `tile[t]`, `tile[t + 1]` and `tile[t + 2]` are "
        "the left neighbour, the element and the right neighbour.",
    ),
    cases=lambda rng, gpu: (
        [_smooth_case(rng, 1), _smooth_case(rng, 300)]
        + ([_smooth_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.UsesShared("this exercise reads each element once, into a shared tile"),
        checks.GlobalReadsAtMost(
            2.0, "Load each element into the tile once and read the neighbours from the tile."
        ),
    ),
    figure=figures.halo,
    next="Next: 02.3, a tree in shared memory: the mosaic.",
    performance=lambda rng: _smooth_case(rng, 2**25),
)

TILE = 8


def _mosaic_expected(image, tile=TILE):
    out = np.empty_like(image)
    for y in range(0, image.shape[0], tile):
        for x in range(0, image.shape[1], tile):
            block = image[y : y + tile, x : x + tile]
            out[y : y + tile, x : x + tile] = block.astype(np.float64).mean()
    return out


def _mosaic_case(rng, h, w, tile=TILE, timed_only=False):
    image = data.floats(rng, (h, w), 0, 255)
    grid = (data.blocks(w, tile), data.blocks(h, tile))
    expected = data.empty((h, w)) if timed_only else _mosaic_expected(image, tile)
    return Case(
        f"a {h} x {w} image",
        {"image": image, "out": data.empty((h, w))},
        {"out": expected},
        grid,
        (tile, tile),
        rtol=1e-5,
        atol=1e-3,
        bytes_moved=2 * image.nbytes,
    )


MOSAIC = Exercise(
    id="02.3",
    name="mosaic",
    title="A tiled mosaic",
    statement="""\
Paint every 8 x 8 tile of a float32 image with the **mean** of its pixels. One block of 8 x 8
threads per tile: each thread puts its pixel into a shared array of 64, then the block adds them
up with a tree (32 + 32, 16 + 16, ... with a barrier after each step), and every thread writes
the mean. Edge tiles (the shapes are 1 x 13 and 11 x 12) average only their real pixels.""",
    skeleton='''\
from numba import cuda, float32

TILE = 8
CELLS = TILE * TILE


@cuda.jit
def mosaic(image, out):
    """Each TILE x TILE tile painted with its mean, summed by a tree in shared memory."""
    total = cuda.shared.array(CELLS, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = image.shape
    tid = ty * TILE + tx
    inside = y < h and x < w
    # TODO: total[tid] = the pixel (0 outside the image); a barrier
    # TODO: the tree: step = 32, 16, ..., 1: threads tid < step add total[tid + step]
    # TODO: the mean: total[0] / the number of real pixels in this tile
''',
    params=("image", "out"),
    hints=(
        "Every thread of the block must reach every `cuda.syncthreads()`: the barrier of each step "
        "of the tree comes after that step's additions, outside their `if`.",
        "The tree halves the number of adding threads at each step: 32 threads add the upper half "
        "of `total` into the lower half, then 16, ..., then 1. After the last step `total[0]` is "
        "the tile's sum.",
        "A tile at the right or bottom edge has fewer real pixels: its columns are the smaller of "
        "`TILE` and the columns left in the image from its first one (`w - bx * TILE`); its rows "
        "likewise. Threads outside the image put 0 into `total` and write nothing.",
    ),
    cases=lambda rng, gpu: (
        [_mosaic_case(rng, 1, 13), _mosaic_case(rng, 11, 12)]
        + ([_mosaic_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesShared("the tile's sum is a tree in shared memory"),),
    next="Next: 02.4, a 2-D stencil: a tile with a halo on four sides.",
    performance=lambda rng: _mosaic_case(rng, 4096, 4096, timed_only=True),
)

BLUR_TILE = 8


def _blur_expected(image):
    padded = np.pad(image.astype(np.float64), 1, mode="edge")
    h, w = image.shape
    total = sum(padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3))
    return (total / 9).astype(np.float32)


def _blur_case(rng, h, w, tile=BLUR_TILE, timed_only=False):
    image = data.floats(rng, (h, w))
    grid = (data.blocks(w, tile), data.blocks(h, tile))
    expected = data.empty((h, w)) if timed_only else _blur_expected(image)
    return Case(
        f"a {h} x {w} image",
        {"image": image, "out": data.empty((h, w))},
        {"out": expected},
        grid,
        (tile, tile),
        bytes_moved=2 * image.nbytes,
    )


BLUR = Exercise(
    id="02.4",
    name="box_blur",
    title="A 3 x 3 blur with a 2-D halo",
    statement="""\
`out[y, x]` = the mean of the 3 x 3 pixels around `(y, x)`, reads past an edge clamped to the
edge. Each block of 8 x 8 threads loads the **10 x 10** tile its outputs need (its pixels and a
one-pixel ring) into shared memory, waits, and computes its 64 outputs from the tile. 100
loads for 64 threads: let the threads walk the tile (`k = tid, tid + 64`). Shapes: 1 x 20 and
9 x 17.""",
    skeleton='''\
from numba import cuda, float32

TILE = 8
HALO = TILE + 2


@cuda.jit
def box_blur(image, out):
    """3 x 3 mean with clamped edges, from a (TILE + 2)^2 shared tile."""
    tile = cuda.shared.array((HALO, HALO), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE - 1, cuda.blockIdx.y * TILE - 1  # tile[0, 0]'s pixel
    h, w = image.shape
    # TODO: fill the tile: k = ty * TILE + tx, then k + 64, while k < HALO * HALO
    #       (row k // HALO, column k % HALO; clamp the image coordinates)
    # TODO: a barrier; then out[y, x] = the mean of tile[ty:ty + 3, tx:tx + 3] if inside
''',
    params=("image", "out"),
    hints=(
        "Tile element `(r, c)` holds the pixel at row `y0 + r` and column `x0 + c`, each clamped "
        "into the image. The output of thread `(tx, ty)` sits at `tile[ty + 1, tx + 1]`.",
        "100 tile elements for 64 threads: each thread loads element `k`, then `k + 64`, as long "
        "as it is below 100. Clamp each coordinate between 0 and the last row (or column).",
        "After the barrier, only the threads whose pixel is inside the image write: the mean of "
        "the 3 x 3 tile elements that start at `tile[ty, tx]`. A thread outside still helps load "
        "the tile and reaches the barrier.",
    ),
    cases=lambda rng, gpu: (
        [_blur_case(rng, 1, 20), _blur_case(rng, 9, 17)]
        + ([_blur_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.UsesShared("each block reads its tile into shared memory once"),
        checks.GlobalReadsAtMost(
            6.0, "Read the tile once into shared memory; the nine neighbours come from there."
        ),
    ),
    next="Next: 02.5, a scan: barriers between reading and writing.",
    performance=lambda rng: _blur_case(rng, 4096, 4096, timed_only=True),
)


def _scan_expected(a, size=SEGMENT):
    out = np.empty_like(a)
    for start in range(0, a.size, size):
        out[start : start + size] = np.cumsum(a[start : start + size], dtype=np.int64)
    return out


def _scan_case(rng, n, block=SEGMENT, timed_only=False):
    a = rng.integers(1, 100, size=n, dtype=np.int32)
    expected = data.empty(n, np.int32) if timed_only else _scan_expected(a)
    return Case(
        f"n = {n}",
        {"a": a, "out": data.empty(n, np.int32)},
        {"out": expected},
        data.blocks(n, block),
        block,
        bytes_moved=8 * n,
    )


SCAN = Exercise(
    id="02.5",
    name="block_scan",
    title="An inclusive scan per block",
    statement="""\
Each block of 64 threads computes the running sums of its segment: `out[start + t] = a[start] +
... + a[start + t]` (int32). Hillis and Steele's scan: for `d = 1, 2, 4, ..., 32`, thread `t >= d`
adds the value `d` places to its left. Every thread reads its neighbour's value *before* anyone
overwrites it: where do the barriers go? Shapes: `n = 1` and `n = 100`.""",
    skeleton='''\
from numba import cuda, int32

B = 64


@cuda.jit
def block_scan(a, out):
    """Inclusive running sums of each block's segment (Hillis-Steele, in shared memory)."""
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        if t >= d:
            sums[t] += sums[t - d]  # TODO: is this safe while other threads update sums?
        d *= 2
    if i < a.size:
        out[i] = sums[t]
''',
    params=("a", "out"),
    hints=(
        "Thread t reads `sums[t - d]` while thread t - d may already be writing its new value: the "
        "reads of a step and its writes must not overlap.",
        "Split each step in two: every thread first reads the value it needs into a local "
        "variable; a barrier; then every thread adds it into its own element; a second barrier "
        "before the next step reads.",
        "A barrier inside `if t >= d:` is reached by some threads only: keep both barriers outside "
        "the `if`, and let the threads with `t < d` add 0 (or nothing).",
    ),
    cases=lambda rng, gpu: (
        [_scan_case(rng, 1), _scan_case(rng, 100)] + ([_scan_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesShared("the scan runs in shared memory"),),
    figure=figures.scan_steps,
    next="Next: lesson 03's exercises, where the banks of shared memory matter.",
    performance=lambda rng: _scan_case(rng, 2**25, timed_only=True),
)

EXERCISES = [BLOCK_REVERSE, STENCIL, MOSAIC, BLUR, SCAN]

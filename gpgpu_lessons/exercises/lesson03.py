"""Exercises of lesson 03 (bank conflicts): padding, layouts, addressing, a rotation, a matmul."""

from __future__ import annotations

import numpy as np

from . import checks, data, figures
from .registry import Case, Exercise

TITLE = "Bank conflicts"

TILE, ROWS = 32, 8


def _tiles_case(rng, h, w, expected, label="a"):
    a = data.signed(rng, (h, w))
    grid = (data.blocks(w, TILE), data.blocks(h, TILE))
    return Case(
        f"{label} {h} x {w} matrix",
        {"a": a, "out": data.empty((w, h))},
        {"out": expected(a)},
        grid,
        (TILE, ROWS),
        bytes_moved=2 * a.nbytes,
    )


def _transpose_case(rng, h, w):
    return _tiles_case(rng, h, w, lambda a: np.ascontiguousarray(a.T))


PADDED = Exercise(
    id="03.1",
    name="transpose_padded",
    title="A padded tile",
    statement="""\
The lesson's tiled transpose: blocks of 32 x 8 threads copy a 32 x 32 tile of `a` into shared
memory by rows and write it out by columns. Reading a **column** of the tile, the 32 lanes of a
warp hit 32 addresses 32 words apart: all in one bank, a 32-way conflict. Remove the conflicts
without changing what the kernel computes. (Shapes: 1 x 40 and 33 x 32.)""",
    skeleton='''\
from numba import cuda, float32

TILE, ROWS = 32, 8


@cuda.jit
def transpose_padded(a, out):
    """out = a.T through a shared tile (remove its bank conflicts)."""
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < h and x < w:
            tile[ty + k, tx] = a[y + k, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < w and x < h:
            out[y + k, x] = tile[tx, ty + k]
''',
    params=("a", "out"),
    hints=(
        "Element `tile[r, c]` sits in bank `(r * width + c) % 32`, `width` being the tile's row "
        "length in words. Which width makes `r * width % 32` different for r = 0..31?",
        "Any odd width works; the cheapest is one word more than the data needs. A shared array "
        "may be wider than the tile stored in it.",
        "Only the shape of the shared array changes (its second dimension): the loops and indices "
        "stay as they are, and nothing reads or writes the extra column.",
    ),
    cases=lambda rng, gpu: (
        [_transpose_case(rng, 1, 40), _transpose_case(rng, 33, 32)]
        + ([_transpose_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    trace_blocks=1,
    checks=(checks.NoBankConflicts(), checks.Coalesced("load"), checks.Coalesced("store")),
    figure=figures.padded_banks,
    next="Next: 03.2, pairs of numbers in shared memory without conflicts.",
    performance=lambda rng: _transpose_case(rng, 4096, 4096),
)

PAIR_BLOCK = 64


def _pairs_expected(points, block=PAIR_BLOCK):
    out = np.empty(points.shape[0], np.float32)
    for start in range(0, points.shape[0], block):
        chunk = points[start : start + block].astype(np.float64)
        mirrored = chunk[::-1]
        out[start : start + block] = np.sqrt(((chunk - mirrored) ** 2).sum(axis=1))
    return out


def _pairs_case(rng, n, block=PAIR_BLOCK, timed_only=False):
    points = data.signed(rng, (n, 2))
    expected = data.empty(n) if timed_only else _pairs_expected(points, block)
    return Case(
        f"{n} points",
        {"points": points, "out": data.empty(n)},
        {"out": expected},
        data.blocks(n, block),
        block,
        bytes_moved=points.nbytes + 4 * n,
    )


PAIRS = Exercise(
    id="03.2",
    name="mirror_distance",
    title="Pairs in shared memory, conflict-free",
    statement="""\
Each block of 64 threads stages its 64 points (x, y) of an `(n, 2)` float32 array in shared
memory, then thread `t` writes the distance between its point and the point of the mirrored
thread `m - 1 - t` (`m` = the block's points; the last block is partial). The skeleton keeps
the pairs side by side, `pts[2t], pts[2t + 1]`: a warp's 4-byte accesses are 8 bytes apart,
two lanes per bank. Choose a layout in which every access of a warp is conflict-free.""",
    skeleton='''\
from numba import cuda, float32

B = 64
PAIRS = 2 * B


@cuda.jit
def mirror_distance(points, out):
    """Distance from each point to its mirror in the block, through shared memory."""
    pts = cuda.shared.array(PAIRS, float32)  # x0, y0, x1, y1, ... (change the layout)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, points.shape[0] - start)
    if t < m:
        pts[2 * t] = points[start + t, 0]
        pts[2 * t + 1] = points[start + t, 1]
    cuda.syncthreads()
    if t < m:
        dx = pts[2 * t] - pts[2 * (m - 1 - t)]
        dy = pts[2 * t + 1] - pts[2 * (m - 1 - t) + 1]
        out[start + t] = (dx * dx + dy * dy) ** 0.5
''',
    params=("points", "out"),
    hints=(
        "Lane t and lane t + 16 use the same bank when their words are 2 * t apart. Keep all the x "
        "side by side, and all the y.",
        "Two shared arrays of `B` floats, one for the x and one for the y (or one `(2, B)` array): "
        "thread t's x and y then sit at index t, one word from its neighbour's. Declare each "
        "shared array on its own line.",
        "The mirrored reads at `m - 1 - t` are conflict-free too: the 32 lanes of a warp read 32 "
        "neighbouring words, in reverse order.",
    ),
    cases=lambda rng, gpu: (
        [_pairs_case(rng, 1), _pairs_case(rng, 150)]
        + ([_pairs_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesShared("the points are staged in shared memory"), checks.NoBankConflicts()),
    figure=figures.pair_layouts,
    next="Next: 03.3, the addressing of a reduction tree.",
    performance=lambda rng: _pairs_case(rng, 2**25, timed_only=True),
)

SUM_BLOCK = 64


def _sums_case(rng, n, block=SUM_BLOCK):
    a = data.floats(rng, n)
    padded = np.zeros(data.blocks(n, block) * block, np.float64)
    padded[:n] = a
    sums = padded.reshape(-1, block).sum(axis=1).astype(np.float32)
    return Case(
        f"n = {n}",
        {"a": a, "sums": data.empty(sums.size)},
        {"sums": sums},
        sums.size,
        block,
        bytes_moved=4 * n,
    )


SUMS = Exercise(
    id="03.3",
    name="block_sums",
    title="A reduction tree without bank conflicts",
    statement="""\
`sums[b]` = the sum of block `b`'s 64 elements (0 past the end), by a tree in shared memory. The
skeleton is the classic *interleaved addressing* (Harris, step 2): at step `s`, thread `t` adds
`buf[2 s t + s]` into `buf[2 s t]`: lanes `2 s` words apart, two (in larger blocks: more)
lanes per bank.
Rewrite the tree with *sequential addressing*: at step `s` = 32, 16, ..., 1, thread `t < s`
adds `buf[t + s]` into `buf[t]`. Shapes: `n = 1` and `n = 100`.""",
    skeleton='''\
from numba import cuda, float32

B = 64


@cuda.jit
def block_sums(a, sums):
    """sums[b] = the sum of block b's elements, by a tree in shared memory."""
    buf = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    buf[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    s = 1
    while s < B:
        index = 2 * s * t
        if index < B:
            buf[index] += buf[index + s]
        cuda.syncthreads()
        s *= 2
    if t == 0:
        sums[cuda.blockIdx.x] = buf[0]
''',
    params=("a", "sums"),
    hints=(
        "In the sequential tree the lanes of a warp touch neighbouring words at each step, one "
        "word per bank. The number of adding threads halves at each step, and the distance with "
        "it.",
        "Start with `s` at half the block (32): the threads below `s` add the element `s` places "
        "up into their own; a barrier; halve `s`; stop once it is 0.",
        "Keep the barrier after each step and outside the `if`. At the end `buf[0]` holds the sum, "
        "whichever order the tree went in.",
    ),
    cases=lambda rng, gpu: (
        [_sums_case(rng, 1), _sums_case(rng, 100)] + ([_sums_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesShared("the tree runs in shared memory"), checks.NoBankConflicts()),
    figure=figures.reduction_addressing,
    next="Next: 03.4, a rotation through a padded tile.",
    performance=lambda rng: _sums_case(rng, 2**25),
)


def _rotate_case(rng, h, w):
    return _tiles_case(rng, h, w, lambda a: np.ascontiguousarray(np.rot90(a)))


ROTATE = Exercise(
    id="03.4",
    name="rotate",
    title="Rotate by 90 degrees through a tile",
    statement="""\
`out = np.rot90(a)`: a quarter turn counter-clockwise, `out[i, j] = a[j, w - 1 - i]` for an
`h x w` float32 matrix (`out` is `w x h`). Like the transpose: blocks of 32 x 8 threads read a
32 x 32 tile of `a` by rows (coalesced), and write it by rows of `out` (coalesced), reading the
tile by columns, without bank conflicts. Which tile of `out` does block `(bx, by)` write, when
`w` is not a multiple of 32? Shapes: 40 x 1 and 33 x 32.""",
    skeleton='''\
from numba import cuda, float32

TILE, ROWS = 32, 8


@cuda.jit
def rotate(a, out):
    """out = np.rot90(a), through a shared tile, without bank conflicts."""
    tile = cuda.shared.array((TILE, TILE), float32)  # TODO: read by columns below: conflicts?
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < h and x < w:
            tile[ty + k, tx] = a[y + k, x]
    cuda.syncthreads()
    # TODO: out row i = w - 1 - (a's column); out column j = a's row. Let lanes (tx) run
    #       along out's columns (a's rows) and read tile[row, column] accordingly.
''',
    params=("a", "out"),
    hints=(
        "`out[i, j] = a[j, w - 1 - i]`: a row of `out` is a column of `a`, read from the bottom "
        "up. Let neighbouring lanes write neighbouring columns `j` of `out`, so that the stores "
        "are coalesced: `j` is then a row of `a`, one that the block loaded.",
        "Block `(bx, by)` loaded rows `by * TILE` on and columns `bx * TILE` on of `a`. Lane `tx` "
        "takes tile row `tx` (its `j`), and each step of its loop one tile column (a column `c` of "
        "`a`, which is row `w - 1 - c` of `out`). Check both `c` and `j` against the matrix before "
        "writing.",
        "Reading a tile column, the 32 lanes of a warp hit one bank: the 32-way conflict of "
        "exercise 03.1, and the same cure, in the tile's declaration.",
    ),
    cases=lambda rng, gpu: (
        [_rotate_case(rng, 40, 1), _rotate_case(rng, 33, 32)]
        + ([_rotate_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    trace_blocks=1,
    checks=(checks.NoBankConflicts(), checks.Coalesced("load"), checks.Coalesced("store")),
    next="Next: 03.5, the tiled matrix multiply.",
    performance=lambda rng: _rotate_case(rng, 4096, 4096),
)

MM_TILE = 8


def _matmul_case(rng, m, k, n):
    a, b = data.signed(rng, (m, k)), data.signed(rng, (k, n))
    expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    grid = (data.blocks(n, MM_TILE), data.blocks(m, MM_TILE))
    return Case(
        f"({m} x {k}) @ ({k} x {n})",
        {"a": a, "b": b, "c": data.empty((m, n))},
        {"c": expected},
        grid,
        (MM_TILE, MM_TILE),
        rtol=1e-4,
        atol=1e-4,
        bytes_moved=a.nbytes + b.nbytes + 4 * m * n,
    )


MATMUL = Exercise(
    id="03.5",
    name="matmul",
    title="A tiled matrix multiply",
    statement="""\
`c = a @ b` for float32 matrices, one thread per element of `c`, blocks of 8 x 8 threads. The
block walks along `k` in 8-wide steps: it loads an 8 x 8 tile of `a` and one of `b` into shared
memory, waits, adds the 8 products of each thread, and **waits again** before the next tiles
overwrite these. Shapes that are no multiples of 8: (1 x 9) @ (9 x 17) and (17 x 20) @ (20 x 5):
load zeros where a tile sticks out of a matrix.""",
    skeleton='''\
from numba import cuda, float32

T = 8


@cuda.jit
def matmul(a, b, c):
    """c = a @ b with T x T tiles of a and b in shared memory."""
    sa = cuda.shared.array((T, T), float32)
    sb = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = float32(0)
    for start in range(0, a.shape[1], T):
        # TODO: sa[ty, tx] = a[row, start + tx] (0 outside a); sb[ty, tx] = b[start + ty, col]
        # TODO: barrier; acc += sa[ty, j] * sb[j, tx] for j in range(T); barrier
        pass
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc
''',
    params=("a", "b", "c"),
    hints=(
        "Without the first barrier a thread reads tile elements not loaded yet; without the "
        "second, a fast thread overwrites the tiles while slow ones still read them.",
        "A tile element outside a matrix must be 0, not skipped: a thread whose `row` is past the "
        "rows of `a`, or whose `start + tx` is past its columns, stores 0 in `sa`; likewise for "
        "`sb` with `start + ty` and `col`. Those zeros add nothing to `acc`.",
        "Every thread loads and reaches both barriers, even one whose element of `c` is outside "
        "the matrix: only the final write is guarded.",
    ),
    cases=lambda rng, gpu: (
        [_matmul_case(rng, 1, 9, 17), _matmul_case(rng, 17, 20, 5)]
        + ([_matmul_case(rng, 257, 67, 129)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.UsesShared("the tiles of a and b go through shared memory"),
        checks.NoBankConflicts(),
    ),
    figure=figures.matmul_tiles,
    next="Next: lesson 04's exercises: constant memory, and when not to use it.",
    performance=lambda rng: _matmul_case(rng, 2048, 256, 2048),
)

EXERCISES = [PADDED, PAIRS, SUMS, ROTATE, MATMUL]

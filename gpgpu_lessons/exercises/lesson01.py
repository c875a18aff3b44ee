"""Exercises of lesson 01 (coalescing): reversed, offset, strided, 3-channel and struct reads."""

from __future__ import annotations

import numpy as np

from . import checks, data, figures
from .registry import Case, Exercise

TITLE = "Memory coalescing"

BLOCK = 128


def _one_d(rng, gpu, sizes_sim, sizes_gpu, make):
    return [make(rng, n) for n in (sizes_sim + (sizes_gpu if gpu else []))]


def _reverse_case(rng, n, block=BLOCK):
    src = data.signed(rng, n)
    return Case(
        f"n = {n}",
        {"src": src, "dst": data.empty(n)},
        {"dst": src[::-1].copy()},
        data.blocks(n, block),
        block,
        bytes_moved=8 * n,
    )


REVERSE = Exercise(
    id="01.1",
    name="reverse",
    title="A reversed copy",
    statement="""\
Complete `reverse`: `dst[i] = src[n - 1 - i]`, one element per thread, launched with blocks
of 128 threads covering `n` (`n = 1`, `n = 200`; a million and three on a GPU). Before you
run it: is a warp's load still coalesced when its lanes read *descending* addresses?""",
    skeleton='''\
from numba import cuda


@cuda.jit
def reverse(src, dst):
    """dst[i] = src[n - 1 - i], one element per thread."""
    i = cuda.grid(1)
    # TODO
''',
    params=("src", "dst"),
    hints=(
        "A warp's cost is the set of sectors it touches, not the order of its lanes.",
        "The grid is rounded up to whole blocks: the threads past the end must do nothing. `n` is "
        "the length of `src` (every array has `.size`).",
        "Thread 0 reads the last element, at `n - 1`: an index of `n - i` is one past the end.",
    ),
    cases=lambda rng, gpu: _one_d(rng, gpu, [1, 200], [1_000_003], _reverse_case),
    trace_case=1,
    checks=(checks.Coalesced("load"), checks.Coalesced("store")),
    next="Next: 01.2, reads shifted by one element.",
    performance=lambda rng: _reverse_case(rng, 2**25, 256),
)


def _difference_case(rng, n, block=BLOCK):
    a = data.signed(rng, n)
    return Case(
        f"n = {n}",
        {"a": a, "out": data.empty(n - 1)},
        {"out": a[1:] - a[:-1]},
        data.blocks(n - 1, block),
        block,
        bytes_moved=8 * (n - 1),
    )


DIFFERENCE = Exercise(
    id="01.2",
    name="difference",
    title="Neighbour differences (an offset read)",
    statement="""\
Complete `difference`: `out[i] = a[i + 1] - a[i]` for `i` in `0 ... n - 2` (`out` has `n - 1`
elements), launched with blocks of 128 threads covering `n - 1`. The read of `a[i + 1]` is
offset by one element: how many sectors does a warp touch for it, and does that matter?""",
    skeleton='''\
from numba import cuda


@cuda.jit
def difference(a, out):
    """out[i] = a[i + 1] - a[i]."""
    i = cuda.grid(1)
    # TODO
''',
    params=("a", "out"),
    hints=(
        "Which array decides which threads have work: `a` or `out`?",
        "`out` has `n - 1` elements: the thread with `i = n - 1` has no difference to compute, and "
        "its `a[i + 1]` would be past the end of `a`.",
        "A warp's read of `a[i + 1]` touches 5 sectors instead of 4, and the next warp needs that "
        "fifth one too (L2 serves it): an offset read costs little.",
    ),
    cases=lambda rng, gpu: _one_d(rng, gpu, [2, 300], [1_000_003], _difference_case),
    trace_case=1,
    checks=(checks.Coalesced("load"), checks.Coalesced("store")),
    next="Next: 01.3, seed 004's chunked partial sums.",
    performance=lambda rng: _difference_case(rng, 2**25, 256),
)

PARTIAL_THREADS = 128


def _partials_case(rng, n, grid=4, block=32):
    x = data.floats(rng, n)
    threads = grid * block
    exact = float(x.astype(np.float64).sum())

    def verify(got):
        partials = got["partials"].astype(np.float64)
        if np.isnan(partials).any():
            first = int(np.flatnonzero(np.isnan(partials))[0])
            return (
                f"`partials[{first}]` was never written: every thread writes its partial "
                "sum (0 when it has no elements)"
            )
        total = float(partials.sum())
        if abs(total - exact) > 1e-5 * exact:
            return (
                f"the partial sums add up to {total:.7g}, the sum of x is {exact:.7g} "
                f"({total / exact:.4g}x): some elements are counted "
                f"{'more than once' if total > exact else 'never'}"
            )
        return None

    return Case(
        f"n = {n} with {threads} threads",
        {"x": x, "partials": data.empty(threads)},
        {"partials": np.zeros(threads, np.float32)},
        grid,
        block,
        verify=verify,
        bytes_moved=4 * n,
    )


PARTIALS = Exercise(
    id="01.3",
    name="partial_sums",
    title="Partial sums, coalesced",
    statement="""\
Seed 004 gives each of its threads its own contiguous **chunk** of `x` to sum. Correct, and 4.5x
slower than it should be: at any moment the 32 lanes of a warp read 32 addresses a chunk apart.
Rewrite `partial_sums` so that neighbouring threads read neighbouring elements; the partial sums
must still add up to `x.sum()`. The grader launches 4 blocks of 32 threads on `n = 4000` and
`n = 77`.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def partial_sums(x, partials):
    """partials[t] = the sum of thread t's share of x (make the reads coalesced)."""
    t = cuda.grid(1)
    threads = cuda.gridsize(1)
    chunk = (x.size + threads - 1) // threads
    acc = 0.0
    for j in range(t * chunk, min((t + 1) * chunk, x.size)):
        acc += x[j]
    partials[t] = acc
''',
    params=("x", "partials"),
    hints=(
        "Thread t should read x[t] first, then jump over what all the other threads read.",
        "That is a grid-stride loop, as in exercise 00.5: its step is the number of threads in the "
        "grid, which the skeleton already has. The chunk is no longer needed.",
        "The sum does not change: every element is still added by exactly one thread, in another "
        "order. A step of the block size instead of the grid adds elements more than once.",
    ),
    cases=lambda rng, gpu: (
        [_partials_case(rng, 4000), _partials_case(rng, 77)]
        + ([_partials_case(rng, 1_000_003, 264, 256)] if gpu else [])
    ),
    trace_case=0,
    checks=(checks.Coalesced("load"),),
    figure=figures.chunked_vs_interleaved,
    next="Next: 01.4, a 3-channel image read in full sectors.",
    performance=lambda rng: _partials_case(rng, 2**25, 1056, 256),
)


def _invert_case(rng, h, w, block=BLOCK):
    image = data.pixels(rng, (h, w, 3))
    return Case(
        f"a {h} x {w} RGB image",
        {"image": image, "out": data.empty((h, w, 3), np.uint8)},
        {"out": 255 - image},
        data.blocks(h * w * 3, block),
        block,
        bytes_moved=2 * image.nbytes,
    )


INVERT = Exercise(
    id="01.4",
    name="invert_rgb",
    title="A 3-channel image in full sectors",
    statement="""\
`invert_rgb` computes `out = 255 - image` for an `(h, w, 3)` uint8 image. The grader launches
**one thread per byte** (`ceil(h * w * 3 / 128)` blocks of 128), but the skeleton uses one
thread per pixel: each lane reads 3 bytes, 3 bytes away from its neighbour's, so a warp's load
spans 96 bytes to use 32. Make every lane handle one byte, so a warp reads 32 neighbouring
bytes: one full sector.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def invert_rgb(image, out):
    """out = 255 - image for an (h, w, 3) uint8 image, one thread per byte (fix the indexing)."""
    i = cuda.grid(1)
    w = image.shape[1]
    if i < image.shape[0] * w:          # one thread per pixel, for now
        y, x = i // w, i % w
        for c in range(3):
            out[y, x, c] = 255 - image[y, x, c]
''',
    params=("image", "out"),
    hints=(
        "There are now three threads per pixel, one per byte. Which pixel, and which channel of "
        "it, is byte `i`?",
        "In memory order the 3 bytes of a pixel come one after another: byte `i` belongs to pixel "
        "`i // 3` and is its channel `i % 3`. The pixel's row and column follow from its number as "
        "in the skeleton.",
        "The guard changes too: there are `h * w * 3` bytes, not `h * w` pixels, and a thread past "
        "the last byte must do nothing.",
    ),
    cases=lambda rng, gpu: (
        [_invert_case(rng, 1, 37), _invert_case(rng, 5, 20)]
        + ([_invert_case(rng, 1001, 1003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.Coalesced("load", slack=1.2), checks.Coalesced("store", slack=1.2)),
    figure=figures.rgb_bytes,
    next="Next: 01.5, an array of structs read in full sectors.",
    performance=lambda rng: _invert_case(rng, 4096, 4096, 256),
)


def _split_case(rng, n, block=BLOCK):
    points = data.signed(rng, (n, 3))
    outputs = {name: data.empty(n) for name in ("xs", "ys", "zs")}
    expected = {name: points[:, k].copy() for k, name in enumerate(("xs", "ys", "zs"))}
    return Case(
        f"{n} points",
        {"points": points, **outputs},
        expected,
        data.blocks(3 * n, block),
        block,
        bytes_moved=2 * points.nbytes,
    )


SPLIT = Exercise(
    id="01.5",
    name="split_xyz",
    title="Array of structs to struct of arrays",
    statement="""\
`points` is an `(n, 3)` float32 array of structs (x, y, z of each point, side by side);
`split_xyz` copies it into three arrays `xs`, `ys`, `zs` (a struct of arrays). The skeleton
reads `points[i, 0]`, `points[i, 1]`, `points[i, 2]` in thread `i`: lanes 12 bytes apart, three
times. The grader launches one thread **per float** (`3n` threads, blocks of 128): make each
thread read one float, so that every warp's read is coalesced.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def split_xyz(points, xs, ys, zs):
    """xs, ys, zs = the columns of an (n, 3) array, one thread per float (fix the reads)."""
    i = cuda.grid(1)
    if i < points.shape[0]:             # one thread per point, for now
        xs[i] = points[i, 0]
        ys[i] = points[i, 1]
        zs[i] = points[i, 2]
''',
    params=("points", "xs", "ys", "zs"),
    hints=(
        "Float `i` of `points`, in memory order, is coordinate `i % 3` of point `i // 3`.",
        "Each thread reads its one float, then writes it into the output of its coordinate: a "
        "branch on the coordinate. The writes need not be coalesced: the grader checks the reads.",
        "There are `3n` floats: the guard compares `i` with the number of floats, not of points.",
    ),
    cases=lambda rng, gpu: (
        [_split_case(rng, 1), _split_case(rng, 100)]
        + ([_split_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.Coalesced("load"),),
    next="Next: lesson 02's exercises: shared memory and barriers.",
    performance=lambda rng: _split_case(rng, 2**25, 256),
)

EXERCISES = [REVERSE, DIFFERENCE, PARTIALS, INVERT, SPLIT]

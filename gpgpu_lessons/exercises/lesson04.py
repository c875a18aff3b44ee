"""Exercises of lesson 04 (constant memory): broadcasts that pay, and a table that does not."""

from __future__ import annotations

import numpy as np

from . import checks, data
from .registry import Case, Exercise

TITLE = "Constant memory"

BLOCK = 128
COEFFS = np.array([0.5, -1.25, 0.75, 2.0, -0.5, 0.125, 0.0625], np.float32)


def _poly_case(rng, n, block=BLOCK, timed_only=False):
    x = data.signed(rng, n)
    expected = (
        data.empty(n)
        if timed_only
        else np.polynomial.polynomial.polyval(
            x.astype(np.float64), COEFFS.astype(np.float64)
        ).astype(np.float32)
    )
    return Case(
        f"n = {n}",
        {"x": x, "out": data.empty(n)},
        {"out": expected},
        data.blocks(n, block),
        block,
        rtol=1e-5,
        atol=1e-5,
        bytes_moved=8 * n,
    )


POLY = Exercise(
    id="04.1",
    name="poly",
    title="Coefficients in constant memory",
    statement="""\
`out[i] = c0 + c1 x + c2 x^2 + ... + c6 x^6` with `x = x[i]` and the seven coefficients
`COEFFS` below, by Horner's rule. Every lane of a warp needs the same coefficient at the same
time: a broadcast, what constant memory is for. Read `COEFFS` through
`cuda.const.array_like(COEFFS)` (Numba freezes a module-level array a kernel reads into constant
memory anyway; the call says so). Blocks of 128 threads; `n = 1` and `n = 200`.""",
    skeleton='''\
import numpy as np
from numba import cuda

COEFFS = np.array([0.5, -1.25, 0.75, 2.0, -0.5, 0.125, 0.0625], np.float32)  # c0 ... c6


@cuda.jit
def poly(x, out):
    """out = the polynomial with coefficients COEFFS at x, by Horner's rule."""
    i = cuda.grid(1)
    # TODO: c = cuda.const.array_like(COEFFS); acc = c6; then acc = acc * x + c5, ..., c0
''',
    params=("x", "out"),
    hints=(
        "Horner: `c0 + x (c1 + x (c2 + ... x c6))`: start from the last coefficient.",
        "Start with `c6`, then six times: multiply by the element and add the next lower "
        "coefficient, down to `c0`. Read `x[i]` once into a local variable, and guard the thread "
        "with the array's size.",
        "Every lane reads the same coefficient at the same step: the broadcast that constant "
        "memory serves at once. A loop that counts down from 5 to 0 uses each remaining "
        "coefficient once.",
    ),
    cases=lambda rng, gpu: (
        [_poly_case(rng, 1), _poly_case(rng, 200)] + ([_poly_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesConstant("the coefficients"), checks.NoSerialisedConstant()),
    next="Next: 04.2, a filter whose weights go to constant memory.",
    performance=lambda rng: _poly_case(rng, 2**25, 256, timed_only=True),
)

TAPS = np.array([1, 4, 6, 4, 1], np.float32) / 16


def _rows_filtered(image, taps):
    radius = taps.size // 2
    padded = np.pad(image.astype(np.float64), ((0, 0), (radius, radius)), mode="edge")
    w = image.shape[1]
    return sum(t * padded[:, d : d + w] for d, t in enumerate(taps.astype(np.float64)))


def _blur_case(rng, h, w, block=(32, 4), timed_only=False):
    image = data.floats(rng, (h, w))
    grid = (data.blocks(w, block[0]), data.blocks(h, block[1]))
    expected = data.empty((h, w)) if timed_only else _rows_filtered(image, TAPS).astype(np.float32)
    return Case(
        f"a {h} x {w} image",
        {"image": image, "taps": TAPS.copy(), "out": data.empty((h, w))},
        {"out": expected},
        grid,
        block,
        bytes_moved=2 * image.nbytes,
    )


BLUR = Exercise(
    id="04.2",
    name="blur_rows",
    title="Filter weights in constant memory",
    statement="""\
Blur each row with the 5 taps `TAPS = [1, 4, 6, 4, 1] / 16`: `out[y, x] = sum over d of
TAPS[d] * image[y, x + d - 2]`, reads past the row's ends clamped to its end pixels. The skeleton
reads the taps from a device array in global memory, passed as an argument; put them in
**constant memory** instead (`cuda.const.array_like(TAPS)`; the grader still passes `taps`, with
the same values). Blocks of 32 x 4 threads; images 1 x 37 and 9 x 40.""",
    skeleton='''\
import numpy as np
from numba import cuda, float32

TAPS = np.array([1, 4, 6, 4, 1], np.float32) / 16


@cuda.jit
def blur_rows(image, taps, out):
    """Horizontal 5-tap blur with clamped borders (move the taps to constant memory)."""
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        acc = float32(0)
        for d in range(5):
            acc += taps[d] * image[y, min(max(x + d - 2, 0), w - 1)]
        out[y, x] = acc
''',
    params=("image", "taps", "out"),
    hints=(
        "`cuda.const.array_like` takes a module-level NumPy array and makes a constant-memory copy "
        "the kernel reads; all lanes read the same tap at once: a broadcast.",
        "Make the constant copy of `TAPS` once, at the top of the kernel, and read the taps from "
        "it instead of from the argument `taps`, which stays unused.",
        "The grader checks where the taps come from: a read of `taps` is still a read of global "
        "memory, even with the right values.",
    ),
    cases=lambda rng, gpu: (
        [_blur_case(rng, 1, 37), _blur_case(rng, 9, 40)]
        + ([_blur_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesConstant("the taps"), checks.NoSerialisedConstant()),
    next="Next: 04.3, a colour matrix in constant memory.",
    performance=lambda rng: _blur_case(rng, 4096, 4096, timed_only=True),
)
YCC = np.array(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], np.float32
)
YCC_OFFSET = np.array([0.0, 0.5, 0.5], np.float32)


def _colour_case(rng, h, w, block=BLOCK):
    image = data.floats(rng, (h, w, 3), 0.05, 1.0)
    expected = image.astype(np.float64) @ YCC.T.astype(np.float64) + YCC_OFFSET
    return Case(
        f"a {h} x {w} RGB image",
        {"image": image, "out": data.empty((h, w, 3))},
        {"out": expected.astype(np.float32)},
        data.blocks(h * w, block),
        block,
        bytes_moved=2 * image.nbytes,
    )


COLOUR = Exercise(
    id="04.3",
    name="to_ycbcr",
    title="A colour matrix in constant memory",
    statement="""\
Convert an `(h, w, 3)` float32 RGB image to YCbCr: each output pixel is `YCC @ rgb + OFFSET`
with the 3 x 3 matrix and the offset below (JPEG's). One thread per pixel (blocks of 128,
covering `h * w`); all lanes read the same matrix element at the same time: put `YCC` and
`OFFSET` in constant memory (`cuda.const.array_like`). Images 1 x 5 and 7 x 30.""",
    skeleton='''\
import numpy as np
from numba import cuda

YCC = np.array([[0.299, 0.587, 0.114],
                [-0.168736, -0.331264, 0.5],
                [0.5, -0.418688, -0.081312]], np.float32)
OFFSET = np.array([0.0, 0.5, 0.5], np.float32)


@cuda.jit
def to_ycbcr(image, out):
    """out[y, x] = YCC @ image[y, x] + OFFSET, one thread per pixel."""
    p = cuda.grid(1)
    # TODO: m = cuda.const.array_like(YCC), o = ...(OFFSET); pixel (p // w, p % w)
''',
    params=("image", "out"),
    hints=(
        "`m = cuda.const.array_like(YCC)` gives a 3 x 3 constant array: `m[k, c]`.",
        "Thread `p` has pixel `p` in row-major order: row `p // w`, column `p % w`, `w` being the "
        "image's width. The threads with `p` at or past `h * w` do nothing.",
        "Output channel `k` is `OFFSET[k]` plus the dot product of row `k` of `YCC` with the "
        "pixel's three values: read the pixel once, then compute the three channels.",
    ),
    cases=lambda rng, gpu: (
        [_colour_case(rng, 1, 5), _colour_case(rng, 7, 30)]
        + ([_colour_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.UsesConstant("the matrix and the offset"), checks.NoSerialisedConstant()),
    next="Next: 04.4, a table where constant memory is the wrong choice.",
    performance=lambda rng: _colour_case(rng, 4096, 4096, 256),
)

GAMMA = (255 * (np.arange(256) / 255) ** (1 / 2.2)).round().astype(np.uint8)


def _gamma_case(rng, n, block=BLOCK):
    pixels = data.pixels(rng, n, 0)
    edges = np.array([255, 0], np.uint8)[:n]  # the table's last and first entries
    pixels[: edges.size] = edges
    return Case(
        f"n = {n} pixels",
        {"pixels": pixels, "lut": GAMMA.copy(), "out": data.empty(n, np.uint8)},
        {"out": GAMMA[pixels]},
        data.blocks(n, block),
        block,
        bytes_moved=2 * n,
    )


GAMMA_TABLE = Exercise(
    id="04.4",
    name="gamma",
    title="When constant memory is the wrong choice",
    statement="""\
`out[i] = lut[pixels[i]]`: a gamma correction through a 256-entry table. The skeleton puts the
table in constant memory. But the lanes of a warp look up *different* entries (one per pixel
value): constant memory serves one address at a time, so a warp of noisy pixels waits up to 32
times. Read the table where different addresses per warp are cheap: from the `lut` argument
(global memory, cached) or a copy in shared memory. Blocks of 128; `n = 1` and `n = 300`.""",
    skeleton='''\
import numpy as np
from numba import cuda

GAMMA = (255 * (np.arange(256) / 255) ** (1 / 2.2)).round().astype(np.uint8)


@cuda.jit
def gamma(pixels, lut, out):
    """out[i] = lut[pixels[i]] (the table in constant memory: a bad idea here)."""
    table = cuda.const.array_like(GAMMA)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = table[pixels[i]]
''',
    params=("pixels", "lut", "out"),
    hints=(
        "The grader passes the same table as `lut`, a device array in global memory.",
        "Different addresses in one warp are cheap in global memory (it is cached) and in shared "
        "memory, and serialise in constant memory. Read the table from `lut`, or copy it into a "
        "shared array first (every thread copies some entries, then a barrier).",
    ),
    cases=lambda rng, gpu: (
        [_gamma_case(rng, 1), _gamma_case(rng, 300)]
        + ([_gamma_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.NoSerialisedConstant(),),
    next="Next: 04.5, a 3 x 3 filter: constant weights and a shared tile.",
    performance=lambda rng: _gamma_case(rng, 2**25),
)

SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
F_TILE = 8


def _filtered(image, weights):
    padded = np.pad(image.astype(np.float64), 1, mode="edge")
    h, w = image.shape
    return sum(
        weights[dy, dx] * padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)
    )


def _sharpen_case(rng, h, w, tile=F_TILE, timed_only=False):
    image = data.floats(rng, (h, w))
    grid = (data.blocks(w, tile), data.blocks(h, tile))
    expected = data.empty((h, w)) if timed_only else _filtered(image, SHARPEN).astype(np.float32)
    return Case(
        f"a {h} x {w} image",
        {"image": image, "out": data.empty((h, w))},
        {"out": expected},
        grid,
        (tile, tile),
        rtol=1e-5,
        atol=1e-5,
        bytes_moved=2 * image.nbytes,
    )


SHARPEN_FILTER = Exercise(
    id="04.5",
    name="sharpen",
    title="Constant weights and a shared tile",
    statement="""\
A 3 x 3 sharpening filter: `out[y, x] = sum of SHARPEN[dy, dx] * image[y + dy - 1, x + dx - 1]`,
reads past an edge clamped to the edge. Both lessons at once: the nine weights in **constant
memory** (every lane reads the same weight), the image through a **shared** 10 x 10 tile per
block of 8 x 8 threads (each pixel read from global memory about once). Images 1 x 20 and
9 x 17.""",
    skeleton='''\
import numpy as np
from numba import cuda, float32

SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
TILE = 8
HALO = TILE + 2


@cuda.jit
def sharpen(image, out):
    """3 x 3 filter: weights in constant memory, the image through a shared tile."""
    tile = cuda.shared.array((HALO, HALO), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE - 1, cuda.blockIdx.y * TILE - 1
    h, w = image.shape
    # TODO: weights = cuda.const.array_like(SHARPEN)
    # TODO: fill the (clamped) tile, a barrier, then the weighted sum of tile[ty:ty+3, tx:tx+3]
''',
    params=("image", "out"),
    hints=(
        "The tile is the one of exercise 02.4: 10 x 10 pixels for 8 x 8 threads, loaded by the "
        "threads in turn, each coordinate clamped into the image.",
        "Weight `(dy, dx)` multiplies the pixel `dy - 1` rows and `dx - 1` columns away, which the "
        "tile holds at `tile[ty + dy, tx + dx]`; read the weights from the constant array.",
        "Every thread helps load the tile and reaches the barrier; only those whose pixel is "
        "inside the image write. Without the clamp, the top and left edges read row or column -1.",
    ),
    cases=lambda rng, gpu: (
        [_sharpen_case(rng, 1, 20), _sharpen_case(rng, 9, 17)]
        + ([_sharpen_case(rng, 1001, 999)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.UsesConstant("the weights"),
        checks.NoSerialisedConstant(),
        checks.UsesShared("the image goes through a shared tile"),
        checks.GlobalReadsAtMost(6.0, "Read the tile into shared memory once."),
    ),
    next="Next: lesson 05's exercises: atomics, and how to need fewer of them.",
    performance=lambda rng: _sharpen_case(rng, 4096, 4096, timed_only=True),
)

EXERCISES = [POLY, BLUR, COLOUR, GAMMA_TABLE, SHARPEN_FILTER]

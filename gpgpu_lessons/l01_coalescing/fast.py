"""Lesson 01, reaching the ceiling: a copy as fast as the GPU's own, and the fastest dot product.

One trick per kernel:

1. `copy_vectors`: each thread moves one WIDE element (4, 8 or 16 bytes, a view of the same
   bytes) with one load and one store instruction (`device.vector`: Numba alone splits a
   16-byte complex128 into two 8-byte accesses);
2. `copy_unrolled`: UNROLL wide elements per thread, all loads issued before the first store,
   so more bytes are in flight;
3. `copy_grid_stride`: a grid that fills the GPU WAVES times, each thread looping over the array;
4. `dot_block_tree`: coalesced grid-stride partial sums (`dot_in_flight`, DOT_UNROLL loads in
   flight), a shared-memory tree per block, and one launch: the last block hands the total over
   (`device.handover`) instead of a launch that clears the output first.

`copy` copies any element count: the wide kernel moves the bulk, the textbook copy the few
elements left at the end (fewer than one wide element).

How the constants were chosen: by `python -m gpgpu_tools.tune copy` and `... tune dot` on a GPU
(COPY_TUNING's and DOT_TUNING's spaces; `TUNING` lists both for the tool), recorded in
gpgpu_lessons/recorded/tuning/copy-<gpu>.json and dot-<gpu>.json. The lesson's own run compares
the chosen kernels with the device copy and cupy.dot (experiments 01_coalescing/copy_variants
and dot_variants of gpgpu_lessons/recorded/<gpu>.json; docs/results.md shows them).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32

from .. import hardware, launch, runtime
from ..device.copy import copy_one_per_thread
from ..device.handover import add_and_hand_over, scratch
from ..device.tree import tree_sum
from ..device.vector import load_vector, store_vector
from ..specialise import specialise
from . import textbook

BLOCK = 256  # threads per copy block (chosen: COPY_TUNING)
ELEMENT_BYTES = 16  # bytes per wide element of the default copy (chosen: COPY_TUNING)
UNROLL = 4  # wide elements per thread of copy_unrolled (a variant the lesson shows, not tuned)
WAVES = 4  # copy_grid_stride's grid: WAVES x the blocks the GPU holds at once (not tuned)
DOT_BLOCK = 256  # threads per block of the dot (chosen: DOT_TUNING)
DOT_UNROLL = 4  # element pairs loaded before they are added (chosen: DOT_TUNING)
DOT_WAVES = 4  # the dot's grid, in rounds of resident blocks (chosen: DOT_TUNING)
WIDE = {4: np.dtype(np.uint32), 8: np.dtype(np.uint64), 16: np.dtype(np.complex128)}
VARIANTS = ("vectors", "unrolled", "grid_stride")


@cuda.jit
def copy_vectors(src, dst):
    """One wide element per thread, moved by ONE load and ONE store instruction."""
    i = cuda.grid(1)
    if i < src.size:
        store_vector(dst, i, load_vector(src, i, 1))


@cuda.jit
def copy_unrolled(src, dst):
    """UNROLL wide elements per thread, a block apart: all loads issued before the first store."""
    held = cuda.local.array(UNROLL, src.dtype)
    width = cuda.blockDim.x
    start = cuda.blockIdx.x * width * UNROLL + cuda.threadIdx.x
    if start + (UNROLL - 1) * width < src.size:  # a whole step: no bounds checks
        for k in range(UNROLL):
            held[k] = load_vector(src, start + k * width, 1)[0]
        for k in range(UNROLL):
            store_vector(dst, start + k * width, (held[k],))
    else:  # the grid's last, partial step
        for k in range(UNROLL):
            if start + k * width < src.size:
                store_vector(dst, start + k * width, load_vector(src, start + k * width, 1))


@cuda.jit
def copy_grid_stride(src, dst):
    """A grid of a few waves of blocks; each thread copies every gridsize-th wide element."""
    i = cuda.grid(1)
    while i < src.size:
        store_vector(dst, i, load_vector(src, i, 1))
        i += cuda.gridsize(1)


@cuda.jit(device=True, inline="always")
def dot_in_flight(x, y, first):
    """This thread's grid-stride sum of x * y from `first`, DOT_UNROLL pairs loaded per step."""
    acc = float32(0)  # float32 products keep a float32 sum; float64 ones widen it
    step = cuda.gridDim.x * DOT_BLOCK * DOT_UNROLL
    for base in range(first, x.size, step):
        for k in range(DOT_UNROLL):
            if base + k * DOT_BLOCK < x.size:
                acc += x[base + k * DOT_BLOCK] * y[base + k * DOT_BLOCK]
    return acc


@cuda.jit
def dot_block_tree(x, y, total, sum_so_far, tickets):
    """Grid-stride sums, DOT_UNROLL loads in flight, a tree per block, one hand-over per block."""
    partial = cuda.shared.array(DOT_BLOCK, x.dtype)
    tid = cuda.threadIdx.x
    partial[tid] = dot_in_flight(x, y, cuda.blockIdx.x * DOT_BLOCK * DOT_UNROLL + tid)
    tree_sum(partial, tid, DOT_BLOCK)
    if tid == 0:  # the last block to finish writes total[0]: no launch to clear it first
        add_and_hand_over(partial[0], total, sum_so_far, tickets)


# ---- wrappers ------------------------------------------------------------------------------


def _copy_launch(d_a, o, to_host, element_bytes, variant, block) -> launch.Launch:
    """The bulk of d_a as wide elements through the variant's kernel, then the edge, into o."""
    if element_bytes not in WIDE:
        raise ValueError(f"element_bytes must be one of {tuple(WIDE)}, got {element_bytes!r}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    block = textbook.threads_per_block(block)
    if not runtime.is_simulator():
        for name, array in (("a", d_a), ("out", o.device)):
            if array.__cuda_array_interface__["data"][0] % element_bytes:
                raise ValueError(
                    f"{name} does not start on a {element_bytes}-byte boundary (a "
                    "slice?): wide accesses need aligned addresses; use a smaller "
                    "element_bytes, textbook.copy, or copy it to a fresh device array"
                )
    bulk = d_a.nbytes // element_bytes * element_bytes // d_a.dtype.itemsize  # in wide elements
    steps = []
    if bulk:
        src, dst = d_a[:bulk].view(WIDE[element_bytes]), o.device[:bulk].view(WIDE[element_bytes])
        if variant == "vectors":
            blocks = launch.grid_1d(src.size, block)
            steps.append(launch.Step(copy_vectors, blocks, block, (src, dst)))
        elif variant == "unrolled":
            blocks = launch.grid_1d(src.size, block * UNROLL)
            steps.append(launch.Step(copy_unrolled, blocks, block, (src, dst)))
        else:
            blocks = hardware.filled_grid(src.size, block, waves=WAVES)
            steps.append(launch.Step(copy_grid_stride, blocks, block, (src, dst)))
    if bulk < d_a.size:  # the edge: fewer than one wide element
        edge = (d_a[bulk:], o.device[bulk:])
        steps.append(launch.Step(copy_one_per_thread, 1, d_a.size - bulk, edge))
    return launch.Launch(tuple(steps), o.device, to_host, o.host, out_given=o.given)


@launch.op
def copy(a, *, element_bytes: int = ELEMENT_BYTES, variant: str = "vectors", out=None, block=BLOCK):
    """Copy a 1-D array of any length through `element_bytes`-wide elements (a VARIANTS kernel)."""
    d_a, to_host = launch.device_input(a, name="a", dtypes=textbook.COPY_DTYPES, ndim=1)
    o = launch.device_output(out, d_a.shape, d_a.dtype, inputs=(d_a,))
    return _copy_launch(d_a, o, to_host, element_bytes, variant, block)


def _dot_launch(
    d_x, d_y, o, to_host, kernel=dot_block_tree, block=DOT_BLOCK, unroll=DOT_UNROLL, waves=DOT_WAVES
) -> launch.Launch:
    """One launch of the dot kernel with just enough blocks (at most `waves` rounds of them)."""
    blocks = hardware.filled_grid(-(-d_x.size // unroll), block, waves=waves)
    acc, tickets = scratch(d_x.dtype, like=d_x)  # left at 0 by every launch (device.handover)
    return launch.single(
        kernel, blocks, block, d_x, d_y, o.device, acc, tickets, out=o, to_host=to_host, scalar=True
    )


@launch.op
def dot(x, y, *, out=None):
    """x . y summed in the inputs' precision (float32 or float64): a number, or out[0] if given."""
    d_x, d_y, to_host = launch.device_pair(x, y, dtypes=textbook.FLOATS, ndim=1)
    o = launch.scalar_output(out, d_x.dtype, inputs=(d_x, d_y), like=d_x)  # stored once
    return _dot_launch(d_x, d_y, o, to_host)


# ---- tuning (python -m gpgpu_tools.tune) -------------------------------------------------


@functools.lru_cache(maxsize=1)
def _tuning_arrays():
    """Two random float32 arrays of the GPU preset size for the tuning cases, made once."""
    rng = np.random.default_rng(0)
    n = runtime.PRESETS["vector_elements"]
    return tuple(cuda.to_device(rng.random(n, dtype=np.float32)) for _ in range(2))


def _copy_case(element_bytes, variant, block):
    """One copy configuration of COPY_TUNING's space: (its launch, bytes moved)."""
    d_a, d_out = _tuning_arrays()
    o = launch.device_output(d_out, d_a.shape, d_a.dtype, inputs=(d_a,))
    return _copy_launch(d_a, o, False, element_bytes, variant, block), 2 * d_a.nbytes


def _dot_case(block, unroll, waves):
    """One dot configuration of DOT_TUNING's space: (its launch, bytes moved)."""
    d_x, d_y = _tuning_arrays()
    o = launch.device_output(None, (1,), d_x.dtype)
    kernel = dot_block_tree
    if (block, unroll) != (DOT_BLOCK, DOT_UNROLL):
        kernel = specialise(
            dot_block_tree,
            f"dot_block_tree_{block}x{unroll}",
            device_functions=(dot_in_flight,),
            inline_device_functions=True,
            DOT_BLOCK=block,
            DOT_UNROLL=unroll,
        )
    return _dot_launch(d_x, d_y, o, False, kernel, block, unroll, waves), 2 * d_x.nbytes


COPY_TUNING = {
    "family": "copy",
    # the chosen 16-byte elements and the next narrower; the three kernels the lesson shows; the
    # block's neighbours (the lesson's run times 4-byte elements: copy_variants)
    "space": {"element_bytes": [8, 16], "variant": list(VARIANTS), "block": [128, 256, 512]},
    "chosen": {"element_bytes": ELEMENT_BYTES, "variant": "vectors", "block": BLOCK},
    "case": _copy_case,
}
DOT_TUNING = {
    "family": "dot",
    # the block's neighbours; no unrolling (1) up to twice the chosen loads in flight; the
    # chosen grid of 4 rounds of resident blocks and half of it
    "space": {"block": [128, 256, 512], "unroll": [1, 2, 4, 8], "waves": [2, 4]},
    "chosen": {"block": DOT_BLOCK, "unroll": DOT_UNROLL, "waves": DOT_WAVES},
    "case": _dot_case,
}
TUNING = (COPY_TUNING, DOT_TUNING)  # what python -m gpgpu_tools.tune finds

_WIDE_VECTORS = [f"{t.name}[::1]" for t in WIDE.values()]
SIGNATURES = {
    copy_vectors: [f"void({v}, {v})" for v in _WIDE_VECTORS],
    copy_unrolled: [f"void({v}, {v})" for v in _WIDE_VECTORS],
    copy_grid_stride: [f"void({v}, {v})" for v in _WIDE_VECTORS],
    dot_block_tree: [
        f"void({t}[::1], {t}[::1], {t}[::1], {t}[::1], uint32[::1])" for t in ("float32", "float64")
    ],
}

"""Lesson 05, the parallel-sum ladder: from one atomic per element to a grid-stride, warp-shuffle sum.

The steps follow Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007). Each
tree kernel writes one partial sum per block; the wrappers launch it again on the partial sums
until one value is left (Harris's recursion). The last rung needs one launch: every thread
sums many elements in a register, the block sums its threads with warp shuffles, and one
atomic per block adds the block's sum into the result.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import arrays, runtime

THREADS = 256                  # threads per block of every sum kernel (a multiple of 32)
WARPS = THREADS // 32
FULL_MASK = 0xFFFFFFFF         # all 32 lanes of a warp take part in a shuffle
ITEMS = 8                      # independent loads in flight per thread per grid-stride step


@cuda.jit
def sum_atomic_per_element(a, total):
    """Every thread adds its element to total[0] with a global atomic: 1 address, N updates in a row."""
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(total, 0, a[i])


@cuda.jit(device=True)
def tree_interleaved_divergent(partial, tid, keep):
    """Harris 1 (and seed 001): at stride s, threads with tid % 2s == 0 add; the warps stay divergent."""
    s = 1
    while s * keep < partial.size:
        if tid % (2 * s) == 0:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s *= 2


@cuda.jit(device=True)
def tree_interleaved_strided(partial, tid, keep):
    """Harris 2: thread tid adds at 2*s*tid; no divergence, but lanes collide in the same bank."""
    s = 1
    while s * keep < partial.size:
        index = 2 * s * tid
        if index < partial.size:
            partial[index] += partial[index + s]
        cuda.syncthreads()
        s *= 2


@cuda.jit(device=True)
def tree_sequential(partial, tid, keep):
    """Harris 3: the first half adds the second half; conflict-free, idle warps retire whole."""
    s = partial.size // 2
    while s >= keep:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2


@cuda.jit(device=True)
def warp_sum(value):
    """Sum over the 32 lanes of a warp with shfl_down_sync: lane 0 ends with the total."""
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


def _block_tree_kernel(tree, loads, warp_finish):
    """Build a one-partial-per-block tree sum: which tree, loads per thread (1 or 2), warp-shuffle finish."""
    keep = 64 if warp_finish else 1

    @cuda.jit
    def block_tree_sum(a, partials):
        """Load `loads` elements per thread into shared memory, tree-sum them, write the block's sum."""
        partial = cuda.shared.array(THREADS, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (THREADS * loads) + tid
        value = a[i] if i < a.size else float32(0)
        if loads == 2 and i + THREADS < a.size:
            value += a[i + THREADS]              # first add during load
        partial[tid] = value
        cuda.syncthreads()
        tree(partial, tid, keep)
        if warp_finish:
            if tid < 32:                         # the last 64 values: one warp, no barriers
                value = warp_sum(partial[tid] + partial[tid + 32])
        else:
            value = partial[0]
        if tid == 0:
            partials[cuda.blockIdx.x] = value

    return block_tree_sum


@cuda.jit(device=True)
def block_sum_shuffle(value, warp_sums):
    """Sum a value over a block: shuffles within each warp, then warp 0 shuffles the warps' sums."""
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    value = warp_sum(value)
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()
    if warp == 0:
        value = warp_sums[lane] if lane < WARPS else float32(0)
        value = warp_sum(value)
    return value


@cuda.jit
def sum_grid_stride_atomic(a, total):
    """Many elements per thread (grid stride, ITEMS loads in flight), shuffle block sum, 1 atomic per block."""
    warp_sums = cuda.shared.array(WARPS, float32)
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    value = float32(0)
    while i + (ITEMS - 1) * stride < a.size:     # full steps: ITEMS independent coalesced loads
        for k in range(ITEMS):
            value += a[i + k * stride]
        i += ITEMS * stride
    while i < a.size:                            # the ragged tail
        value += a[i]
        i += stride
    value = block_sum_shuffle(value, warp_sums)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(total, 0, value)


@cuda.jit
def zero_first(total):
    """Set total[0] = 0 on the device (the atomic sums add into it)."""
    total[0] = 0


# The ladder, in teaching order: name -> (tree, loads per thread, warp-shuffle finish).
TREE_STEPS = {
    "interleaved, divergent": (tree_interleaved_divergent, 1, False),
    "interleaved, bank conflicts": (tree_interleaved_strided, 1, False),
    "sequential addressing": (tree_sequential, 1, False),
    "first add during load": (tree_sequential, 2, False),
    "warp-shuffle finish": (tree_sequential, 2, True),
}
block_tree_sum = {name: _block_tree_kernel(*step) for name, step in TREE_STEPS.items()}

ATOMIC_PER_ELEMENT = "one atomic per element"
GRID_STRIDE = "grid stride, 1 atomic per block"
LADDER = (ATOMIC_PER_ELEMENT, *TREE_STEPS, GRID_STRIDE)
"""Every rung of the ladder, slowest first: the names `parallel_sum(..., variant=)` takes."""

_scratch: dict[tuple[int, int], object] = {}


def _partials(level: int, count: int):
    """A cached device buffer for one level of partial sums (allocation stays out of timed launches)."""
    key = (level, count)
    if key not in _scratch:
        _scratch[key] = cuda.device_array(count, dtype=np.float32)
    return _scratch[key]


def grid_stride_blocks(n: int) -> int:
    """Blocks for the grid-stride sum: enough to fill every SM (2048 threads each), no more than the data needs."""
    info = runtime.device_info()
    fill = 1 if info.simulator else info.sm_count * (2048 // THREADS)
    return max(1, min(arrays.blocks_for(n, THREADS), fill))


def parallel_sum(a, *, variant: str = GRID_STRIDE, out=None):
    """Sum a 1-D float32 array with one rung of the ladder; returns a NumPy float32 scalar.

    With `out` (a one-element float32 device array) the sum is written there and `out` is
    returned without synchronising, which is what a benchmark wants.
    """
    if variant not in LADDER:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(LADDER)}")
    d_a, _ = arrays.device_input(a, name="a", dtypes=np.float32, ndim=1)
    total = arrays.device_output(out, (1,), np.float32)
    if variant == ATOMIC_PER_ELEMENT:
        zero_first[1, 1](total)
        sum_atomic_per_element[arrays.blocks_for(d_a.size, THREADS), THREADS](d_a, total)
    elif variant == GRID_STRIDE:
        zero_first[1, 1](total)
        sum_grid_stride_atomic[grid_stride_blocks(d_a.size), THREADS](d_a, total)
    else:
        loads = TREE_STEPS[variant][1]
        kernel, values, level = block_tree_sum[variant], d_a, 0
        while True:                              # Harris's recursion: sum the partial sums again
            blocks = arrays.blocks_for(values.size, THREADS * loads)
            partials = total if blocks == 1 else _partials(level, blocks)
            kernel[blocks, THREADS](values, partials)
            if blocks == 1:
                break
            values, level = partials, level + 1
    return total if out is not None else total.copy_to_host()[0]


_numba_reduce = None


def numba_reduce_sum(a, *, out=None):
    """Numba's built-in `cuda.reduce` with +, the library peer of the ladder; same return rules."""
    global _numba_reduce
    if _numba_reduce is None:
        _numba_reduce = cuda.reduce(lambda x, y: x + y)
    d_a, _ = arrays.device_input(a, name="a", dtypes=np.float32, ndim=1)
    if out is None:
        return np.float32(_numba_reduce(d_a))
    total = arrays.device_output(out, (1,), np.float32)
    _numba_reduce(d_a, res=total)
    return total


def tree_pairs(variant: str, threads: int = 16) -> list[list[tuple[int, int, int]]]:
    """(thread, destination, source) of every addition a block tree makes, step by step, from the kernels' formulas.

    For drawing: one list per step, for a block of `threads` threads (a power of two).
    """
    if variant not in TREE_STEPS:
        raise ValueError(f"tree_pairs draws the tree kernels {list(TREE_STEPS)}, got {variant!r}")
    if threads < 2 or threads & (threads - 1):
        raise ValueError(f"threads must be a power of two >= 2, got {threads}")
    tree = TREE_STEPS[variant][0]
    steps = []
    if tree is tree_sequential:
        s = threads // 2
        while s >= 1:
            steps.append([(tid, tid, tid + s) for tid in range(threads) if tid < s])
            s //= 2
    else:
        s = 1
        while s < threads:
            if tree is tree_interleaved_divergent:
                steps.append([(tid, tid, tid + s) for tid in range(threads) if tid % (2 * s) == 0])
            else:
                steps.append([(tid, 2 * s * tid, 2 * s * tid + s) for tid in range(threads) if 2 * s * tid < threads])
            s *= 2
    return steps


def speedups(timings, ceiling=None) -> tuple[list[str], list[list]]:
    """Header and rows for the ladder table: time, bandwidth, % of the copy ceiling, step and cumulative speed-up."""
    header = ["variant", "ms", "GB/s", "% of copy", "step speed-up", "cumulative"]
    rows, first, previous = [], timings[0].median_ms, None
    for t in timings:
        share = 100 * t.gbs / ceiling.gbs if ceiling is not None and t.gbs is not None else None
        rows.append([t.name, t.median_ms, t.gbs, share,
                     None if previous is None else previous / t.median_ms, first / t.median_ms])
        previous = t.median_ms
    return header, rows

"""Lesson 05, the parallel-sum ladder: from one atomic per element to a grid stride.

The rungs follow Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007); each
changes one thing. The tree kernels write one partial sum per block, and `parallel_sum` launches
the kernel again on the partial sums until one value is left (Harris's recursion). The last
rung needs one launch: every thread sums many elements in a register, the block adds its
threads with warp shuffles, and one atomic per block adds the blocks.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import hardware, launch
from ..device.fill import zero_step
from ..device.warp import warp_sum

BLOCK = 256  # threads per block of every rung (a multiple of 32)
WARPS = BLOCK // 32  # warps per block


@cuda.jit
def sum_atomic_per_element(a, total):
    """Rung 1: every thread adds its element into total[0]: N atomics on one address, in a queue."""
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(total, 0, a[i])


@cuda.jit
def sum_interleaved_divergent(a, partials):
    """Rung 2 (the seed's tree): at stride s the threads with tid % 2s == 0 add: warps diverge."""
    partial = cuda.shared.array(BLOCK, float32)
    tid, i = cuda.threadIdx.x, cuda.grid(1)  # cuda.grid(1) = blockIdx.x * BLOCK + tid
    partial[tid] = a[i] if i < a.size else float32(0)
    cuda.syncthreads()
    s = 1
    while s < BLOCK:
        if tid % (2 * s) == 0:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = partial[0]


@cuda.jit
def sum_interleaved_bank_conflicts(a, partials):
    """Rung 3: thread tid adds at 2*s*tid: busy threads are contiguous, but lanes share banks."""
    partial = cuda.shared.array(BLOCK, float32)
    tid, i = cuda.threadIdx.x, cuda.grid(1)  # cuda.grid(1) = blockIdx.x * BLOCK + tid
    partial[tid] = a[i] if i < a.size else float32(0)
    cuda.syncthreads()
    s = 1
    while s < BLOCK:
        if 2 * s * tid < BLOCK:  # thread tid adds at index 2 * s * tid
            partial[2 * s * tid] += partial[2 * s * tid + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = partial[0]


@cuda.jit
def sum_sequential(a, partials):
    """Rung 4: the first half adds the second half: no divergence, no bank conflicts."""
    partial = cuda.shared.array(BLOCK, float32)
    tid, i = cuda.threadIdx.x, cuda.grid(1)  # cuda.grid(1) = blockIdx.x * BLOCK + tid
    partial[tid] = a[i] if i < a.size else float32(0)
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = partial[0]


@cuda.jit(device=True)
def load_two(a):
    """Thread tid of block b: a[i] + a[i + BLOCK], i = b * 2 * BLOCK + tid (0 past the end)."""
    i = cuda.blockIdx.x * (2 * BLOCK) + cuda.threadIdx.x
    value = a[i] if i < a.size else float32(0)
    if i + BLOCK < a.size:
        value += a[i + BLOCK]
    return value


@cuda.jit
def sum_first_add_during_load(a, partials):
    """Rung 5: each thread loads two elements and adds them: half the blocks, no idle first step."""
    partial = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    partial[tid] = load_two(a)  # the first step of the tree, done while loading
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = partial[0]


@cuda.jit
def sum_warp_shuffle_finish(a, partials):
    """Rung 6: as rung 5 down to 64 values, then one warp adds them with shuffles: no barriers."""
    partial, tid, s = cuda.shared.array(BLOCK, float32), cuda.threadIdx.x, BLOCK // 2
    partial[tid] = load_two(a)
    cuda.syncthreads()
    while s >= 64:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid < 32:
        value = warp_sum(partial[tid] + partial[tid + 32])
        if tid == 0:
            partials[cuda.blockIdx.x] = value


@cuda.jit
def sum_grid_stride(a, total):
    """Rung 7: many elements per thread in a register, warp shuffles, one atomic per block."""
    warp_sums = cuda.shared.array(WARPS, float32)
    lane, warp, value = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32, float32(0)
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        value += a[i]
    value = warp_sum(value)  # lane 0 holds its warp's sum
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()
    if warp == 0:
        value = warp_sum(warp_sums[lane] if lane < WARPS else float32(0))
        if lane == 0:
            cuda.atomic.add(total, 0, value)


ATOMIC_PER_ELEMENT = "one atomic per element"
GRID_STRIDE = "grid stride, 1 atomic per block"
TREES = {  # rung -> (kernel, elements each block sums)
    "interleaved, divergent": (sum_interleaved_divergent, BLOCK),
    "interleaved, bank conflicts": (sum_interleaved_bank_conflicts, BLOCK),
    "sequential addressing": (sum_sequential, BLOCK),
    "first add during load": (sum_first_add_during_load, 2 * BLOCK),
    "warp-shuffle finish": (sum_warp_shuffle_finish, 2 * BLOCK),
}
LADDER = (ATOMIC_PER_ELEMENT, *TREES, GRID_STRIDE)
"""Every rung of the ladder, slowest first: the names `parallel_sum(..., variant=)` takes."""


def sum_launch(steps, total: launch.Output, to_host: bool) -> launch.Launch:
    """The Launch of a sum: its steps write total[0]; a Python float unless out= was given."""
    return launch.Launch(
        tuple(steps), total.device, to_host, total.host, True, total.given, total.mapped
    )


@launch.op
def parallel_sum(a, *, variant: str = GRID_STRIDE, out=None):
    """Sum a 1-D float32 array with one rung of the ladder: a Python float, or written to out[0]."""
    if variant not in LADDER:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(LADDER)}")
    d_a, to_host = launch.device_input(a, name="a", dtypes=np.float32, ndim=1)
    total = launch.device_output(out, (1,), np.float32, inputs=(d_a,))
    if variant in (ATOMIC_PER_ELEMENT, GRID_STRIDE):  # atomics add into a cleared total
        if variant == ATOMIC_PER_ELEMENT:
            kernel, grid = sum_atomic_per_element, launch.grid_1d(d_a.size, BLOCK)
        else:
            kernel, grid = sum_grid_stride, hardware.filled_grid(d_a.size, BLOCK)
        step = launch.Step(kernel, grid, BLOCK, (d_a, total.device))
        return sum_launch((zero_step(total.device), step), total, to_host)
    kernel, per_block = TREES[variant]
    steps, values = [], d_a
    while True:  # Harris's recursion: sum the partial sums again, until one is left
        blocks = launch.grid_1d(values.size, per_block)
        # the buffers of partial sums belong to this call: nothing is kept between calls
        partials = total.device if blocks == 1 else cuda.device_array(blocks, dtype=np.float32)
        steps.append(launch.Step(kernel, blocks, BLOCK, (values, partials)))
        if blocks == 1:
            return sum_launch(steps, total, to_host)
        values = partials


ARRAY_TO_SUM = ["void(float32[::1], float32[::1])"]  # (a, total or partial sums)
SIGNATURES = {
    sum_atomic_per_element: ARRAY_TO_SUM,
    sum_interleaved_divergent: ARRAY_TO_SUM,
    sum_interleaved_bank_conflicts: ARRAY_TO_SUM,
    sum_sequential: ARRAY_TO_SUM,
    sum_first_add_during_load: ARRAY_TO_SUM,
    sum_warp_shuffle_finish: ARRAY_TO_SUM,
    sum_grid_stride: ARRAY_TO_SUM,
}

"""Lesson 00's kernels: work whose cost we control, to show what a clock really measures.

The kernels come first, each a few lines; their wrappers (input checks and the launch, through
`gpgpu_lessons.launch`) follow.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import hardware, launch
from ..device import fill
from ..device.copy import DTYPES as COPY_DTYPES
from ..device.copy import copy as copy  # lessons 00 and 01 share the copy
from ..device.copy import copy_one_per_thread as copy_one_per_thread  # on the slides

BLOCK = 256  # threads per block of every launch in this lesson
FLOATS = (np.float32, np.float64)


@cuda.jit
def empty():
    """Does nothing: all that is left to time is the launch itself."""


@cuda.jit
def busy(x, out, iterations):
    """Each thread runs `iterations` dependent multiply-adds: a kernel whose duration we choose."""
    i = cuda.grid(1)
    if i < x.size:
        value = x[i]
        for _ in range(iterations):
            value = value * 0.999 + 0.001
        out[i] = value


@cuda.jit
def scale(x, factor):
    """Multiply x by factor in place: the kernel whose first call compiles it."""
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= factor


@cuda.jit
def copy_passes(src, dst, passes):
    """Copy src to dst `passes` times in one launch (grid-stride loop): the launch is paid once."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for _ in range(passes):
        for i in range(start, src.size, stride):
            dst[i] = src[i]


@cuda.jit
def dot_partial_sums(x, y, total):
    """Seed 004's dot product: each thread sums its own share of x*y, then adds it to total[0]."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    partial = float32(0)  # float32 products keep a float32 sum; float64 ones widen it
    for i in range(start, x.size, stride):
        partial += x[i] * y[i]
    cuda.atomic.add(total, 0, partial)


# ---- wrappers ------------------------------------------------------------------------------


threads_per_block = launch.block_1d  # the core check for 1-D launches


@launch.op
def launch_empty(blocks: int = 1, block=1):
    """Launch the empty kernel: the cost of a launch and nothing else."""
    return launch.single(empty, launch.grid_blocks(blocks), launch.block_shape(block))


@launch.op
def keep_busy(x, iterations: int, *, out=None, block=BLOCK):
    """out = x after `iterations` multiply-adds per element (float32): a duration we choose."""
    block = threads_per_block(block)
    iterations = launch.positive_int(iterations, "iterations", minimum=0)
    d_x, to_host = launch.device_input(x, name="x", dtypes=np.float32, ndim=1)
    o = launch.device_output(out, d_x.shape, d_x.dtype, inputs=(d_x,), in_place=True)
    grid = launch.grid_1d(d_x.size, block)
    return launch.single(busy, grid, block, d_x, o.device, iterations, out=o, to_host=to_host)


@launch.op
def copy_repeated(a, passes: int, *, out=None, block=BLOCK):
    """Copy a 1-D array `passes` times in one launch, with a grid that just fills the GPU."""
    block = threads_per_block(block)
    passes = launch.positive_int(passes, "passes")
    d_a, to_host = launch.device_input(a, name="a", dtypes=COPY_DTYPES, ndim=1)
    o = launch.device_output(out, d_a.shape, d_a.dtype, inputs=(d_a,))
    grid = hardware.filled_grid(d_a.size, block)
    return launch.single(copy_passes, grid, block, d_a, o.device, passes, out=o, to_host=to_host)


@launch.op
def dot(x, y, *, out=None, block=BLOCK):
    """x . y summed in the inputs' precision (float32 or float64): a number, or out[0] if given."""
    block = threads_per_block(block)
    d_x, d_y, to_host = launch.device_pair(x, y, dtypes=FLOATS, ndim=1)
    o = launch.device_output(out, (1,), d_x.dtype, inputs=(d_x, d_y))
    sums = launch.Step(
        dot_partial_sums, hardware.filled_grid(d_x.size, block), block, (d_x, d_y, o.device)
    )
    return launch.Launch(
        (fill.zero_step(o.device), sums), o.device, to_host, o.host, scalar=True, out_given=o.given
    )


def _vectors(dtypes) -> list[str]:
    return [f"{np.dtype(t).name}[::1]" for t in dtypes]


SIGNATURES = {
    empty: ["void()"],
    busy: ["void(float32[::1], float32[::1], int64)"],
    scale: ["void(float32[::1], float64)"],
    copy_passes: [f"void({v}, {v}, int64)" for v in _vectors(COPY_DTYPES)],
    dot_partial_sums: [f"void({v}, {v}, {v})" for v in _vectors(FLOATS)],
}

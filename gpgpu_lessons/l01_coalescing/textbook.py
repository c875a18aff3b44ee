"""Lesson 01's kernels: how the addresses of a warp's 32 threads decide how many bytes move.

The kernels come first, each a few lines; their wrappers (input checks and the launch, through
`gpgpu_lessons.launch`) follow.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import launch
from ..device.copy import DTYPES as COPY_DTYPES
from ..device.copy import copy as copy  # lessons 00 and 01 share the copy
from ..device.copy import copy_one_per_thread as copy_one_per_thread

BLOCK = 256  # threads per block
MAX_STRIDE = launch.MAX_GRID_YZ  # copy_strided runs one grid row per column of the stride
FLOATS = (np.float32, np.float64)


@cuda.jit
def copy_strided(src, dst, stride):
    """Neighbouring threads copy elements `stride` apart; grid row `column` covers the rest."""
    i, column = cuda.grid(2)
    j = i * stride + column  # thread i + 1 reads `stride` elements after thread i
    if j < src.size:
        dst[j] = src[j]


@cuda.jit
def copy_offset(src, dst, offset):
    """Thread i copies element i + offset (wrapping around): every warp starts misaligned."""
    i = cuda.grid(1)
    if i < src.size:
        j = i + offset
        if j >= src.size:
            j -= src.size
        dst[j] = src[j]


@cuda.jit
def dot_coalesced(x, y, partials):
    """Seed 004: thread t of T sums x[t + k*T] * y[t + k*T]: neighbours read neighbours."""
    t = cuda.grid(1)
    partial = float32(0)  # float32 products keep a float32 sum; float64 ones widen it
    for i in range(t, x.size, cuda.gridsize(1)):
        partial += x[i] * y[i]
    partials[t] = partial


@cuda.jit
def dot_chunked(x, y, partials):
    """Seed 004: thread t sums its own chunk: neighbouring threads are `chunk` elements apart."""
    t = cuda.grid(1)
    chunk = (x.size + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    partial = float32(0)
    for i in range(t * chunk, min(t * chunk + chunk, x.size)):
        partial += x[i] * y[i]
    partials[t] = partial


# ---- wrappers ------------------------------------------------------------------------------


threads_per_block = launch.block_1d  # the core check for 1-D launches


def _copy_input(a, out):
    """The checked device input, whether it came from the host, and the checked output."""
    d_a, to_host = launch.device_input(a, name="a", dtypes=COPY_DTYPES, ndim=1)
    return d_a, to_host, launch.device_output(out, d_a.shape, d_a.dtype, inputs=(d_a,))


@launch.op
def copy_with_stride(a, stride: int = 1, *, out=None, block=BLOCK):
    """Copy a 1-D array where neighbouring threads are `stride` elements apart."""
    block = threads_per_block(block)
    stride = launch.positive_int(stride, "stride")
    if stride > MAX_STRIDE:
        raise ValueError(
            f"stride must be at most {MAX_STRIDE} (one grid row per column), got {stride}"
        )
    d_a, to_host, o = _copy_input(a, out)
    grid = (launch.grid_1d(launch.blocks_for(d_a.size, stride), block), stride)
    return launch.single(
        copy_strided, grid, (block, 1), d_a, o.device, stride, out=o, to_host=to_host
    )


@launch.op
def copy_with_offset(a, offset: int = 0, *, out=None, block=BLOCK):
    """Copy a 1-D array where every thread's element is `offset` elements further (wrapping)."""
    block = threads_per_block(block)
    offset = launch.positive_int(offset, "offset", minimum=0)
    d_a, to_host, o = _copy_input(a, out)
    grid, offset = launch.grid_1d(d_a.size, block), offset % d_a.size
    return launch.single(copy_offset, grid, block, d_a, o.device, offset, out=o, to_host=to_host)


@launch.op
def dot_partial_sums(x, y, *, blocks: int, block, chunked: bool = False, out=None):
    """Seed 004's dot products: one partial sum per thread (blocks x block of them) to add up.

    chunked=False: thread t reads x[t + k*T] (coalesced); chunked=True: its own contiguous
    chunk (neighbouring threads far apart).
    """
    block = threads_per_block(block)
    blocks = launch.positive_int(blocks, "blocks")
    d_x, d_y, to_host = launch.device_pair(x, y, dtypes=FLOATS, ndim=1)
    threads = blocks * block
    o = launch.device_output(out, (threads,), d_x.dtype, inputs=(d_x, d_y))
    kernel = dot_chunked if chunked else dot_coalesced
    return launch.single(kernel, blocks, block, d_x, d_y, o.device, out=o, to_host=to_host)


def _vectors(dtypes) -> list[str]:
    return [f"{np.dtype(t).name}[::1]" for t in dtypes]


SIGNATURES = {
    copy_strided: [f"void({v}, {v}, int64)" for v in _vectors(COPY_DTYPES)],
    copy_offset: [f"void({v}, {v}, int64)" for v in _vectors(COPY_DTYPES)],
    dot_coalesced: [f"void({v}, {v}, {v})" for v in _vectors(FLOATS)],
    dot_chunked: [f"void({v}, {v}, {v})" for v in _vectors(FLOATS)],
}

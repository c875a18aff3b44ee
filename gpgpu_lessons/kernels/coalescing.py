"""Lesson 01, memory coalescing: how a warp's addresses decide how many bytes really move."""
from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .. import arrays, runtime

THREADS = 256
FLOATS = (np.float32, np.float64)


@cuda.jit
def copy_one_per_thread(src, dst):
    """Copy where thread i moves element i: a warp touches 32 neighbouring elements (coalesced)."""
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def _dot_grid_stride_kernel(dtype):
    """Build the best dot-product kernel for one accumulator dtype (shared arrays need a fixed type)."""

    @cuda.jit
    def dot_grid_stride(x, y, total):
        """Grid-stride partial sums (coalesced), a shared-memory tree per block, one atomic per block."""
        partial = cuda.shared.array(THREADS, dtype)
        tid = cuda.threadIdx.x
        acc = dtype(0)
        for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            acc += x[i] * y[i]
        partial[tid] = acc
        cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                partial[tid] += partial[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            cuda.atomic.add(total, 0, partial[0])

    return dot_grid_stride


dot_grid_stride = {np.dtype(t): _dot_grid_stride_kernel(numba.from_dtype(t)) for t in FLOATS}


def copy(a, *, out=None, threads: int = THREADS):
    """Copy a 1-D array with one element per thread; returns NumPy for NumPy input."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=(np.float32, np.float64, np.int32, np.uint32), ndim=1)
    d_out = arrays.device_output(out, d_a.shape, d_a.dtype)
    threads = arrays.check_threads(threads)
    copy_one_per_thread[arrays.blocks_for(d_a.size, threads), threads](d_a, d_out)
    return arrays.returned(d_out, to_host)


def dot_blocks(n: int) -> int:
    """Enough blocks to fill the GPU (a few per SM), never more than the data needs."""
    info = runtime.device_info()
    fill = 1 if info.simulator else 8 * info.sm_count
    return max(1, min(arrays.blocks_for(n, THREADS), fill * 4))


def dot(x, y, *, out=None):
    """Dot product accumulated in the inputs' precision (float32 or float64); returns a NumPy scalar.

    With `out` (a one-element device array of the same dtype) it adds into it and returns it
    without synchronising, which is what a benchmark wants.
    """
    d_x, _ = arrays.device_input(x, name="x", dtypes=FLOATS, ndim=1)
    d_y, _ = arrays.device_input(y, name="y", dtypes=FLOATS, ndim=1)
    if d_x.shape != d_y.shape or d_x.dtype != d_y.dtype:
        raise ValueError(f"x and y must have the same shape and dtype, got {d_x.shape} {d_x.dtype} "
                         f"and {d_y.shape} {d_y.dtype}")
    kernel = dot_grid_stride[d_x.dtype]
    if out is not None:
        total = arrays.device_output(out, (1,), d_x.dtype)
        kernel[dot_blocks(d_x.size), THREADS](d_x, d_y, total)
        return total
    total = cuda.to_device(np.zeros(1, dtype=d_x.dtype))
    kernel[dot_blocks(d_x.size), THREADS](d_x, d_y, total)
    return total.copy_to_host()[0]

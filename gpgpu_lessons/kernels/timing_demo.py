"""Lesson 00, timing GPU code: kernels whose cost we control, to show what a clock really measures."""
from __future__ import annotations

import numpy as np
from numba import cuda

from .. import arrays, runtime

THREADS = 256


@cuda.jit
def empty():
    """Does nothing: all that is left to time is the launch itself."""


@cuda.jit
def busy(out, iterations):
    """Each thread runs `iterations` dependent multiply-adds: a kernel whose duration we choose."""
    i = cuda.grid(1)
    if i < out.size:
        x = out[i]
        for _ in range(iterations):
            x = x * 0.999 + 0.001
        out[i] = x


@cuda.jit
def copy_passes(src, dst, passes):
    """Copy src to dst `passes` times in one launch (grid-stride loop): the launch cost is paid once."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for _ in range(passes):
        for i in range(start, src.size, stride):
            dst[i] = src[i]


def copy_repeated(src, dst, passes: int):
    """Launch copy_passes on two same-shaped 1-D device arrays, with a grid that just fills the GPU."""
    for name, a in (("src", src), ("dst", dst)):
        if not arrays.is_device_array(a) or a.ndim != 1:
            raise TypeError(f"{name} must be a 1-D device array")
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError(f"src and dst must match, got {src.shape} {src.dtype} and {dst.shape} {dst.dtype}")
    if passes < 1:
        raise ValueError(f"passes must be >= 1, got {passes}")
    info = runtime.device_info()
    blocks = min(arrays.blocks_for(src.size, THREADS), 1 if info.simulator else 8 * info.sm_count)
    copy_passes[blocks, THREADS](src, dst, passes)


def busy_wait(out, iterations: int):
    """Launch `busy` over a float32 device array; returns at once, before the GPU has finished."""
    if not arrays.is_device_array(out) or out.dtype != np.float32 or out.ndim != 1:
        raise TypeError("out must be a 1-D float32 device array, e.g. cuda.device_array(n, np.float32)")
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    busy[arrays.blocks_for(out.size, THREADS), THREADS](out, iterations)
    return out


def launch_empty(blocks: int = 1, threads: int = 1) -> None:
    """Launch the empty kernel: the cost of a launch and nothing else."""
    arrays.check_threads(threads)
    if blocks < 1:
        raise ValueError(f"blocks must be >= 1, got {blocks}")
    empty[blocks, threads]()


def fresh_scale_kernel():
    """A new, never-compiled kernel each call, so its first launch always includes JIT compilation."""

    @cuda.jit
    def scale(x, factor):
        """Multiply x by factor in place."""
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= factor

    return scale

"""The plain copy that lessons 00 and 01 both show: one element per thread, and its wrapper."""

import numpy as np
from numba import cuda

from .. import launch

BLOCK = 256  # threads per block
DTYPES = (np.float32, np.float64, np.int32, np.uint32)  # the element types the lessons copy


@cuda.jit
def copy_one_per_thread(src, dst):
    """Thread i copies element i: a warp's 32 threads copy 32 neighbouring elements."""
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@launch.op
def copy(a, *, out=None, block=BLOCK):
    """Copy a 1-D array (float32, float64, int32 or uint32), one element per thread."""
    block = launch.block_1d(block)
    d_a, to_host = launch.device_input(a, name="a", dtypes=DTYPES, ndim=1)
    o = launch.device_output(out, d_a.shape, d_a.dtype, inputs=(d_a,))
    grid = launch.grid_1d(d_a.size, block)
    return launch.single(copy_one_per_thread, grid, block, d_a, o.device, out=o, to_host=to_host)


SIGNATURES = {
    copy_one_per_thread: [f"void({t}[::1], {t}[::1])" for t in (np.dtype(d).name for d in DTYPES)]
}

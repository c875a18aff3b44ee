"""Lesson {{N}}'s textbook kernels: {{TITLE}}.

The kernels come first, each a few lines; their wrappers (input checks and the launch, through
`gpgpu_lessons.launch`) follow.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import launch

BLOCK = 256  # threads per block
FACTOR = 2.0  # what scale multiplies by
DTYPES = (np.float32, np.float64)


@cuda.jit
def scale_one_per_thread(a, out):
    """Thread i scales element i: the starting point of the lesson."""
    i = cuda.grid(1)
    if i < a.size:
        out[i] = FACTOR * a[i]


# ---- wrappers ------------------------------------------------------------------------------


@launch.op
def scale(a, *, out=None, block=BLOCK):
    """FACTOR * a for a 1-D float32 or float64 array, one element per thread."""
    block = launch.block_1d(block)
    d_a, to_host = launch.device_input(a, name="a", dtypes=DTYPES, ndim=1)
    o = launch.device_output(out, d_a.shape, d_a.dtype, inputs=(d_a,))
    grid = launch.grid_1d(d_a.size, block)
    return launch.single(scale_one_per_thread, grid, block, d_a, o.device, out=o, to_host=to_host)


SIGNATURES = {
    scale_one_per_thread: ["void(float32[::1], float32[::1])", "void(float64[::1], float64[::1])"],
}

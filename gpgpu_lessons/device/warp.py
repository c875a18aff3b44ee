"""Warp-level helpers: the full-warp mask and a sum over the lanes of a warp."""

from numba import cuda

FULL_MASK = 0xFFFFFFFF  # all 32 lanes of a warp take part


@cuda.jit(device=True)
def warp_sum(value):
    """Sum over the 32 lanes of a warp with shfl_down_sync: lane 0 ends with the total."""
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value

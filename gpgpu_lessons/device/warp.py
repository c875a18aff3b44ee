"""Warp-level helpers: the full-warp mask and a sum over the lanes of a warp."""

from numba import cuda

from ..hardware import FULL_MASK, WARP_SIZE

__all__ = ["FULL_MASK", "warp_sum"]  # FULL_MASK: hardware's, where the kernels look for it


@cuda.jit(device=True)
def warp_sum(value):
    """Sum over the 32 lanes of a warp with shfl_down_sync: lane 0 ends with the total."""
    offset = WARP_SIZE // 2
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value

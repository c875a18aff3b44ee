"""A block's sum in shared memory by halving: the tree the fast sums end with."""

from numba import cuda


@cuda.jit(device=True)
def tree_sum(partial, tid, size):
    """partial[0] = sum(partial[:size]), size a power of two; each thread wrote partial[tid]."""
    cuda.syncthreads()
    half = size // 2
    while half > 0:
        if tid < half:
            partial[tid] += partial[tid + half]
        cuda.syncthreads()
        half //= 2

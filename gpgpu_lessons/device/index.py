"""Index helpers for fast kernels: unsigned indices (no wraparound code) and clamp-to-edge."""

from numba import cuda, uint64


@cuda.jit(device=True, inline="always")
def at(i):
    """An index known to be >= 0, made unsigned: Numba adds no negative-index wraparound."""
    return uint64(i)


@cuda.jit(device=True, inline="always")
def clamp(i, n):
    """Clamp-to-edge: index i limited to 0..n-1 (unsigned, see at())."""
    return at(min(max(i, 0), n - 1))

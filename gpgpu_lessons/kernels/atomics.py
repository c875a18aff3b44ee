"""Lesson 05, what atomics cost: contention on few addresses, and a histogram three ways.

An atomic read-modify-write is done by the L2 cache (global memory) or the SM (shared memory);
updates to the same address are serialised there. The fewer distinct addresses, the longer
the queue: the contention curve measures it, the histogram shows the two cures (private
copies per block in shared memory, and adding up a warp's equal values before one atomic).
"""
from __future__ import annotations

import numpy as np
from numba import cuda, uint32

from .. import arrays, runtime

THREADS = 256
BINS = 256                     # one bin per 8-bit pixel value
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def atomic_add_spread(values, targets, totals):
    """Thread i adds values[i] into totals[i % targets]: `targets` addresses share the N updates."""
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(totals, i & (targets - 1), values[i])   # targets is a power of two


@cuda.jit(device=True)
def warp_peers(value, valid):
    """The lanes of this warp holding the same 8-bit value, found bit by bit with ballot_sync."""
    peers = cuda.ballot_sync(FULL_MASK, valid)
    for bit in range(8):
        is_set = (value >> bit) & 1 == 1
        ones = cuda.ballot_sync(FULL_MASK, is_set)
        peers &= ones if is_set else ~ones
    return peers & FULL_MASK                     # as 32 unsigned bits, whatever type the ballot gave


@cuda.jit(device=True)
def clear_shared_bins(local):
    """The block's threads set its shared bins to zero, then wait for each other."""
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()


@cuda.jit(device=True)
def flush_shared_bins(local, bins):
    """After a barrier, add the block's non-empty shared bins to the global bins: <= 256 atomics."""
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        if local[b] != 0:
            cuda.atomic.add(bins, b, local[b])


def _histogram_kernel(private, aggregated):
    """Build a 256-bin histogram kernel: bins in global memory or block-private shared memory,
    one atomic per pixel or one per distinct value in a warp."""

    @cuda.jit
    def histogram(pixels, bins):
        """Grid-stride over the pixels; count each value with an atomic in global or shared bins."""
        local = cuda.shared.array(BINS, uint32)
        if private:
            clear_shared_bins(local)
        lane = cuda.threadIdx.x % 32
        padded = (pixels.size + 31) // 32 * 32       # whole warps run every step: full-mask ballots
        for i in range(cuda.grid(1), padded, cuda.gridsize(1)):
            valid = i < pixels.size
            value = pixels[i] if valid else 0
            count = 1
            if aggregated:
                peers = warp_peers(value, valid)
                count = cuda.popc(peers)
                valid = valid and peers & ((1 << lane) - 1) == 0    # the lowest peer speaks for all
            if valid:
                cuda.atomic.add(local if private else bins, value, count)
        if private:
            flush_shared_bins(local, bins)

    return histogram


HISTOGRAMS = {
    "global atomics": (False, False),
    "warp-aggregated, global": (False, True),
    "block-private shared": (True, False),
    "block-private + warp-aggregated": (True, True),
}
histogram_kernels = {name: _histogram_kernel(*flags) for name, flags in HISTOGRAMS.items()}


@cuda.jit
def zero_fill(a):
    """a[:] = 0 on the device (the atomics add into it)."""
    i = cuda.grid(1)
    if i < a.size:
        a[i] = 0


def filled_blocks(n: int) -> int:
    """Grid-stride kernels: enough blocks to fill every SM (2048 threads each), no more than n needs."""
    info = runtime.device_info()
    fill = 1 if info.simulator else info.sm_count * (2048 // THREADS)
    return max(1, min(arrays.blocks_for(n, THREADS), fill))


def atomic_spread(values, targets: int, *, out=None):
    """Add N float32 values into `targets` addresses (value i into address i % targets) with atomics.

    targets must be a power of two between 1 and N. Returns the (targets,) sums: NumPy for
    NumPy input, a device array for device input, or `out` (a float32 device array), unsynchronised.
    """
    d_values, to_host = arrays.device_input(values, name="values", dtypes=np.float32, ndim=1)
    if not isinstance(targets, (int, np.integer)) or targets < 1 or targets & (targets - 1):
        raise ValueError(f"targets must be a power of two >= 1 (the kernel takes i & (targets - 1)), got {targets!r}")
    if targets > d_values.size:
        raise ValueError(f"targets ({targets}) must not exceed the number of values ({d_values.size})")
    d_out = arrays.device_output(out, (int(targets),), np.float32)
    zero_fill[arrays.blocks_for(targets, THREADS), THREADS](d_out)
    atomic_add_spread[arrays.blocks_for(d_values.size, THREADS), THREADS](d_values, int(targets), d_out)
    return d_out if out is not None else arrays.returned(d_out, to_host)


def histogram(pixels, *, variant: str = "block-private + warp-aggregated", out=None):
    """The 256-bin histogram of uint8 pixels (any shape, C-contiguous) as uint32 counts.

    Returns NumPy for NumPy input, a device array for device input, or `out` (a (256,) uint32
    device array) without synchronising.
    """
    if variant not in HISTOGRAMS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(HISTOGRAMS)}")
    if isinstance(pixels, np.ndarray) and pixels.ndim > 1 and pixels.flags.c_contiguous:
        pixels = pixels.ravel()
    d_pixels, to_host = arrays.device_input(pixels, name="pixels", dtypes=np.uint8, ndim=1)
    d_bins = arrays.device_output(out, (BINS,), np.uint32)
    zero_fill[1, BINS](d_bins)
    histogram_kernels[variant][filled_blocks(d_pixels.size), THREADS](d_pixels, d_bins)
    return d_bins if out is not None else arrays.returned(d_bins, to_host)

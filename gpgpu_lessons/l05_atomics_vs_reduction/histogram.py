"""Lesson 05, what atomics cost: contention on few addresses, and a 256-bin histogram four ways.

An atomic read-modify-write is done by the L2 cache (global memory) or the SM (shared memory);
updates to one address are serialised there. The fewer distinct addresses, the longer the
queue: the contention curve measures it; the histogram shows the two cures (private bins per
block in shared memory, and adding up a warp's equal values before one atomic); the lesson
measures on which images each pays.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, uint32

from .. import hardware, launch
from ..device.fill import zero_step
from ..hardware import FULL_MASK

BLOCK = 256  # threads per block
BINS = 256  # one bin per 8-bit pixel value


@cuda.jit
def atomic_add_spread(values, targets, totals):
    """Thread i adds values[i] into totals[i % targets]: `targets` addresses share the N updates."""
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(totals, i & (targets - 1), values[i])  # i % targets: a power of two


@cuda.jit
def histogram_global(pixels, bins):
    """One global atomic per pixel: the lanes of a warp queue on the same few bins in L2."""
    for i in range(cuda.grid(1), pixels.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, pixels[i], 1)


@cuda.jit
def histogram_shared(pixels, bins):
    """Block-private bins in shared memory: atomics stay in the SM; <= 256 global ones per block."""
    local = cuda.shared.array(BINS, uint32)
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    for i in range(cuda.grid(1), pixels.size, cuda.gridsize(1)):
        cuda.atomic.add(local, pixels[i], 1)
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        if local[b] != 0:
            cuda.atomic.add(bins, b, local[b])


@cuda.jit(device=True)
def warp_peers(value, valid):
    """The lanes of this warp holding the same 8-bit value, found bit by bit with ballot_sync."""
    peers = cuda.ballot_sync(FULL_MASK, valid)
    for bit in range(8):
        is_set = (value >> bit) & 1 == 1
        ones = cuda.ballot_sync(FULL_MASK, is_set)
        peers &= ones if is_set else ~ones
    return peers & FULL_MASK  # 32 unsigned bits, whatever type the ballot gave


@cuda.jit
def histogram_warp_aggregated(pixels, bins):
    """Lanes holding one value find each other; the lowest adds their count in one atomic."""
    lane = cuda.threadIdx.x % 32
    padded = (pixels.size + 31) // 32 * 32  # whole warps run every step: full-mask ballots
    for i in range(cuda.grid(1), padded, cuda.gridsize(1)):
        valid = i < pixels.size
        value = pixels[i] if valid else 0
        peers = warp_peers(value, valid)
        if valid and peers & ((1 << lane) - 1) == 0:  # no lower lane holds this value
            cuda.atomic.add(bins, value, cuda.popc(peers))


@cuda.jit
def histogram_shared_warp_aggregated(pixels, bins):
    """Both cures: block-private shared bins, and one shared atomic per distinct value in a warp."""
    local = cuda.shared.array(BINS, uint32)
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    lane = cuda.threadIdx.x % 32
    padded = (pixels.size + 31) // 32 * 32
    for i in range(cuda.grid(1), padded, cuda.gridsize(1)):
        valid = i < pixels.size
        value = pixels[i] if valid else 0
        peers = warp_peers(value, valid)
        if valid and peers & ((1 << lane) - 1) == 0:
            cuda.atomic.add(local, value, cuda.popc(peers))
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        if local[b] != 0:
            cuda.atomic.add(bins, b, local[b])


HISTOGRAMS = {
    "global atomics": histogram_global,
    "warp-aggregated, global": histogram_warp_aggregated,
    "block-private shared": histogram_shared,
    "block-private + warp-aggregated": histogram_shared_warp_aggregated,
}
# The default is the variant that won on the data people have: photographs and random bytes
# (experiments 05_atomics_vs_reduction/histogram and histogram_traced of
# gpgpu_lessons/recorded/<gpu>.json). The eight ballots that find a warp's equal values cost
# more than the shared atomics they save, unless most of a warp's pixels hold one value: the
# lesson measures three kinds of image on every GPU run.
DEFAULT = "block-private shared"

LESSON_IMAGE = (8192, 8192)  # the images the lesson measures on a GPU: 64 MiB, past the L2 cache


@launch.op
def atomic_spread(values, targets: int, *, out=None):
    """Add value i into address i % targets with atomics; targets: a power of two, 1 to N."""
    d_values, to_host = launch.device_input(values, name="values", dtypes=np.float32, ndim=1)
    targets = launch.positive_int(targets, "targets")
    if targets & (targets - 1):
        raise ValueError(
            f"targets must be a power of two (the kernel takes i & (targets - 1)), got {targets}"
        )
    if targets > d_values.size:
        raise ValueError(
            f"targets ({targets}) must not exceed the number of values ({d_values.size})"
        )
    totals = launch.device_output(out, (targets,), np.float32, inputs=(d_values,))
    grid = launch.grid_1d(d_values.size, BLOCK)
    steps = (
        zero_step(totals.device),
        launch.Step(atomic_add_spread, grid, BLOCK, (d_values, targets, totals.device)),
    )
    return launch.Launch(steps, totals.device, to_host, totals.host, out_given=totals.given)


@launch.op
def histogram(pixels, *, variant: str = DEFAULT, out=None):
    """The 256-bin histogram of uint8 pixels (any shape, C-contiguous) as uint32 counts."""
    if variant not in HISTOGRAMS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(HISTOGRAMS)}")
    d_pixels, to_host = launch.device_input(pixels, name="pixels", dtypes=np.uint8, ndim=None)
    flat = d_pixels.reshape(d_pixels.size)
    bins = launch.device_output(out, (BINS,), np.uint32, inputs=(d_pixels,))
    grid = hardware.filled_grid(flat.size, BLOCK)
    steps = (
        zero_step(bins.device),
        launch.Step(HISTOGRAMS[variant], grid, BLOCK, (flat, bins.device)),
    )
    return launch.Launch(steps, bins.device, to_host, bins.host, out_given=bins.given)


HISTOGRAM = ["void(uint8[::1], uint32[::1])"]
SIGNATURES = {
    atomic_add_spread: ["void(float32[::1], int64, float32[::1])"],
    histogram_global: HISTOGRAM,
    histogram_shared: HISTOGRAM,
    histogram_warp_aggregated: HISTOGRAM,
    histogram_shared_warp_aggregated: HISTOGRAM,
}

"""Lesson 05, seed 001: a W x H array where every element is the sum of n sine waves.

out[y, x] = sum_i (mag[i]/n) * sin(2 pi (fc + 100 freq[i]) idx / W + 2 pi phi[i]),  idx = y*W + x.

The seed's four programs as written there (brute force; one block per element with atomics or
with an interleaved shared-memory tree; the same tree on a 1-D grid launched in a host loop),
then simpler, faster ones of ours: a register accumulator, one block per element with a
sequential tree, one warp per element with shuffles. The tuned variants are in `fast`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32

from .. import launch
from ..device.fill import zero_step
from ..device.tree import tree_sum
from ..device.warp import warp_sum

WIDTH, HEIGHT = 1024, 512  # the seed's output size
SEED_THREADS = 1024  # the seed's max_thread_size: threads per block of 2-1, 2-2 and 3
BRUTE_FORCE_THREADS = 512  # the seed's brute force: blocks of `height` (512) threads
HOST_LOOP_BLOCKS = 2**15  # blocks per launch of the seed's host loop (variant 3)
FC = np.float32(10.0)  # the seed uses a constant fc it does not print; we take 10
TWO_PI = np.float32(2 * np.pi)
BLOCK = 256  # threads per block of our variants
SEED_N = (100, 1_000, 10_000, 100_000, 1_000_000)  # the n of seed 001's table
SEED_RTX2070_MS = {  # seed 001's table: RTX 2070, ms, at n = SEED_N (None: not run)
    "1 brute force": (2.457216, 19.241217, 158.047623, 1398.913086, 13832.567383),
    "2-1 atomics": (56.279041, 512.576782, 3783.871826, 36508.042969, None),
    "2-2 shared tree": (113.077759, 85.194466, 714.860535, 7208.444336, 79598.742188),
    "3 host loop": (95.010529, 89.894913, 727.293640, 7305.295410, 86867.156250),
}


@cuda.jit(device=True)
def seed_wave(mag, freq, phi, i, idx, width):
    """Term i at element idx in float32, as the seed writes it (sinf of phases up to 3e5 rad)."""
    phase = TWO_PI * (FC + freq[i] * float32(100)) * float32(idx) / float32(width)
    return (mag[i] / float32(mag.size)) * math.sin(phase + TWO_PI * phi[i])


@cuda.jit
def sine_sum_brute_force(mag, freq, phi, out):
    """Seed 1: one thread per element, n read-modify-writes of out in global memory."""
    idx, width = cuda.grid(1), out.shape[1]
    if idx < out.size:
        y, x = idx // width, idx % width
        out[y, x] = 0
        for i in range(mag.size):
            out[y, x] += seed_wave(mag, freq, phi, i, idx, width)


@cuda.jit
def sine_sum_atomic_blocks(mag, freq, phi, out):
    """Seed 2-1: one block per element on a 2-D grid; every thread atomically adds its waves."""
    x, y, tid = cuda.blockIdx.x, cuda.blockIdx.y, cuda.threadIdx.x
    width = out.shape[1]
    if y >= out.shape[0] or x >= width:
        return
    for done in range(0, mag.size, cuda.blockDim.x):
        if tid + done >= mag.size:
            return
        cuda.atomic.add(out, (y, x), seed_wave(mag, freq, phi, tid + done, y * width + x, width))


@cuda.jit(device=True)
def interleaved_tree_sum(partial, tid, threads):
    """The seed's smSum: partial[0] = sum(partial[:threads]), interleaved, divergent."""
    s = 1
    while s < threads:
        if tid % (2 * s) == 0:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s *= 2


@cuda.jit
def sine_sum_block_tree(mag, freq, phi, offset, out):
    """Seed 2-2 and 3: one block per element; per chunk of waves a tree, then out += its sum."""
    partial = cuda.shared.array(SEED_THREADS, float32)
    tid, threads, width = cuda.threadIdx.x, cuda.blockDim.x, out.shape[1]
    idx = offset + cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    if idx >= out.size:
        return  # the whole block leaves together
    for done in range(0, mag.size, threads):
        i = tid + done
        partial[tid] = seed_wave(mag, freq, phi, i, idx, width) if i < mag.size else float32(0)
        cuda.syncthreads()
        interleaved_tree_sum(partial, tid, threads)
        if tid == 0:
            out[idx // width, idx % width] += partial[0]


@cuda.jit
def sine_sum_register(mag, freq, phi, out):
    """Ours: the brute force with the running sum in a register, one store per element."""
    idx = cuda.grid(1)
    width = out.shape[1]
    if idx >= out.size:
        return
    total = float32(0)
    for i in range(mag.size):
        total += seed_wave(mag, freq, phi, i, idx, width)
    out[idx // width, idx % width] = total


@cuda.jit
def sine_sum_block_sequential(mag, freq, phi, out):
    """Ours: one block per element, each thread sums its waves in a register, then one tree."""
    partial = cuda.shared.array(BLOCK, float32)
    tid, threads = cuda.threadIdx.x, cuda.blockDim.x
    width = out.shape[1]
    idx = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
    total = float32(0)
    for i in range(tid, mag.size, threads):
        total += seed_wave(mag, freq, phi, i, idx, width)
    partial[tid] = total
    tree_sum(partial, tid, threads)  # rung 4's sequential tree (device.tree)
    if tid == 0:
        out[idx // width, idx % width] = partial[0]


@cuda.jit
def sine_sum_warp_shuffle(mag, freq, phi, out):
    """Ours: one warp per element, each lane sums every 32nd wave, shfl_down_sync adds the lanes."""
    idx = cuda.grid(1) // 32
    lane = cuda.threadIdx.x % 32
    width = out.shape[1]
    if idx >= out.size:
        return  # whole warps leave together
    total = float32(0)
    for i in range(lane, mag.size, 32):
        total += seed_wave(mag, freq, phi, i, idx, width)
    total = warp_sum(total)
    if lane == 0:
        out[idx // width, idx % width] = total


SEED_VARIANTS = ("1 brute force", "2-1 atomics", "2-2 shared tree", "3 host loop")
OUR_VARIANTS = ("register accumulator", "block, sequential tree", "warp shuffle")
VARIANTS = SEED_VARIANTS + OUR_VARIANTS
"""The variants `sine_sum(..., variant=)` runs; the tuned ones are in `fast.VARIANTS`."""


def waves(n: int, seed: int = 0):
    """The seed's random inputs: magnitudes, frequencies and phases, uniform in [0, 1), float32."""
    n = launch.positive_int(n, "n (the number of waves)")
    mag, freq, phi = np.random.default_rng(seed).random((3, n), dtype=np.float32)
    return mag, freq, phi


def reference(mag, freq, phi, *, width: int = WIDTH, height: int = HEIGHT, rows=None):
    """(sums, atol): the exact sums in float64 (of the float32 inputs), for all rows or only the
    listed `rows`, and how far the seed's float32 formula may drift from them.

    Phases of up to 2 pi (fc+100) H carry rounding errors of a few ulp, and n such errors of
    random sign grow like sqrt(n).
    """
    rows = np.arange(height) if rows is None else np.asarray(rows)
    idx = (rows[:, None] * width + np.arange(width)[None, :]).astype(np.float64)
    out = np.zeros(idx.shape)
    mag, freq, phi = (np.asarray(v, dtype=np.float64) for v in (mag, freq, phi))
    for i in range(mag.size):
        cycles = (float(FC) + 100 * freq[i]) * idx / width + phi[i]
        out += mag[i] / mag.size * np.sin(2 * np.pi * cycles)
    phase_error = 8 * np.finfo(np.float32).eps * 2 * np.pi * (float(FC) + 100) * height
    return out, float(phase_error * np.mean(mag) / np.sqrt(mag.size) + 1e-5)


def check_task(mag, freq, phi, width, height, out):
    """Check the waves (float32, 1-D, one length), width, height and out.

    Returns (d_mag, d_freq, d_phi, output, to_host): the waves on the device, the checked output.
    """
    width, height = launch.positive_int(width, "width"), launch.positive_int(height, "height")
    checked = [
        launch.device_input(v, name=name, dtypes=np.float32, ndim=1)
        for v, name in ((mag, "mag"), (freq, "freq"), (phi, "phi"))
    ]
    d_mag, d_freq, d_phi = (d for d, _ in checked)
    if not d_mag.size == d_freq.size == d_phi.size:
        raise ValueError(
            f"mag, freq and phi must have the same length, got "
            f"{d_mag.size}, {d_freq.size} and {d_phi.size}"
        )
    output = launch.device_output(out, (height, width), np.float32, inputs=(d_mag, d_freq, d_phi))
    return d_mag, d_freq, d_phi, output, checked[0][1]


@launch.op
def sine_sum(
    mag,
    freq,
    phi,
    *,
    variant: str = "register accumulator",
    width: int = WIDTH,
    height: int = HEIGHT,
    out=None,
    block: int = SEED_THREADS,
    host_loop_blocks: int = HOST_LOOP_BLOCKS,
):
    """Seed 001's (height, width) float32 sums of sine waves, by one textbook variant."""
    # block (a power of two): the seed's threads per block of 2-1, 2-2 and 3 (the sequential
    # tree takes at most BLOCK of them); host_loop_blocks: blocks per launch of variant 3
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    (block,) = launch.block_shape(block)
    if block & (block - 1):
        raise ValueError(f"block must be a power of two (the trees halve it), got {block}")
    host_loop_blocks = launch.positive_int(host_loop_blocks, "host_loop_blocks")
    d_mag, d_freq, d_phi, output, to_host = check_task(mag, freq, phi, width, height, out)
    d_out, size, waves_in = output.device, width * height, (d_mag, d_freq, d_phi)
    one_block_each = launch.grid_2d((height, width), (1, 1))  # (width, height) blocks
    if variant == "1 brute force":
        steps = [
            launch.Step(
                sine_sum_brute_force,
                launch.grid_1d(size, BRUTE_FORCE_THREADS),
                BRUTE_FORCE_THREADS,
                (*waves_in, d_out),
            )
        ]
    elif variant == "2-1 atomics":
        steps = [
            zero_step(d_out),
            launch.Step(sine_sum_atomic_blocks, one_block_each, block, (*waves_in, d_out)),
        ]
    elif variant == "2-2 shared tree":
        steps = [
            zero_step(d_out),
            launch.Step(sine_sum_block_tree, one_block_each, block, (*waves_in, 0, d_out)),
        ]
    elif variant == "3 host loop":  # the seed synchronises after each launch; we queue them
        steps = [zero_step(d_out)] + [
            launch.Step(sine_sum_block_tree, host_loop_blocks, block, (*waves_in, offset, d_out))
            for offset in range(0, size, host_loop_blocks)
        ]
    elif variant == "register accumulator":
        steps = [
            launch.Step(sine_sum_register, launch.grid_1d(size, BLOCK), BLOCK, (*waves_in, d_out))
        ]
    elif variant == "block, sequential tree":
        steps = [
            launch.Step(
                sine_sum_block_sequential, one_block_each, min(block, BLOCK), (*waves_in, d_out)
            )
        ]
    else:
        steps = [
            launch.Step(
                sine_sum_warp_shuffle, launch.grid_1d(32 * size, BLOCK), BLOCK, (*waves_in, d_out)
            )
        ]
    return launch.Launch(tuple(steps), d_out, to_host, output.host, out_given=output.given)


WAVES = "float32[::1], float32[::1], float32[::1]"  # mag, freq, phi
WAVES_TO_OUT = [f"void({WAVES}, float32[:, ::1])"]  # (mag, freq, phi, out): all but the tree's
SIGNATURES = {
    sine_sum_brute_force: WAVES_TO_OUT,
    sine_sum_atomic_blocks: WAVES_TO_OUT,
    sine_sum_block_tree: [f"void({WAVES}, int64, float32[:, ::1])"],  # (..., offset, out)
    sine_sum_register: WAVES_TO_OUT,
    sine_sum_block_sequential: WAVES_TO_OUT,
    sine_sum_warp_shuffle: WAVES_TO_OUT,
}

"""Lesson 05, seed 001: a W x H array where every element is the sum of n sine waves.

out[y, x] = sum_i (mag[i]/n) * sin(2 pi (fc + 100 freq[i]) idx / W + 2 pi phi[i]),  idx = y*W + x.

The seed's four variants as written there (brute force, one block per element with atomics or
an interleaved shared-memory tree, the same tree on a 1-D grid launched in a host loop), then
better ones: a register accumulator, one block or one warp per element with a sequential tree
or warp shuffles, and per-wave constants computed once with the phase reduced to a fraction
of a cycle before the sine, so that fast math is safe; and a recurrence that needs one sine and
cosine per wave for a row of neighbouring outputs, then one FMA per term.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, float64

from .. import arrays
from .reduction import tree_interleaved_divergent, tree_sequential, warp_sum

WIDTH, HEIGHT = 1024, 512      # the seed's output size
SEED_THREADS = 1024            # the seed's max_thread_size: threads per block of variants 2-1, 2-2, 3
HOST_LOOP_BLOCKS = 2**15       # blocks per launch of the seed's host loop (variant 3)
FC = np.float32(10.0)          # the seed uses a constant fc it does not print; we take 10
TWO_PI = np.float32(2 * np.pi)
THREADS = 256                  # threads per block of our variants
OUTPUTS = 4                    # outputs per thread of the reduced-argument kernel (reuse each wave's loads)
# The recurrence kernel's launch, measured on an H200 (.scratch/tune.py):
RECURRENCE_THREADS = 128       # threads per block
RECURRENCE_OUTPUTS = 16        # neighbouring columns per thread
RECURRENCE_WAVES = 2           # waves per loop step (independent recurrences in flight)


@cuda.jit(device=True)
def seed_wave(mag, freq, phi, i, idx, width):
    """Term i at element idx, in float32 exactly as the seed writes it (sinf of a phase of up to 3e5 rad)."""
    return (mag[i] / float32(mag.size)) * math.sin(
        TWO_PI * (FC + freq[i] * float32(100)) * float32(idx) / float32(width) + TWO_PI * phi[i])


@cuda.jit
def sine_sum_brute_force(mag, freq, phi, out):
    """Seed 1: one thread per element, n read-modify-writes of out in global memory."""
    idx = cuda.grid(1)
    width = out.shape[1]
    if idx >= out.size:
        return
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


def _seed_block_tree_kernel(threads):
    """Build seed 2-2/3 for a block size: the shared array's size must be a compile-time constant."""

    @cuda.jit
    def sine_sum_block_tree(mag, freq, phi, offset, out):
        """Seed 2-2 and 3: one block per element; per chunk of waves, an interleaved tree, then out += sum."""
        partial = cuda.shared.array(threads, float32)
        tid = cuda.threadIdx.x
        width = out.shape[1]
        idx = offset + cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
        if idx >= out.size:
            return                                   # the whole block leaves together
        for done in range(0, mag.size, threads):
            partial[tid] = seed_wave(mag, freq, phi, tid + done, idx, width) if tid + done < mag.size else float32(0)
            cuda.syncthreads()
            tree_interleaved_divergent(partial, tid, 1)
            if tid == 0:
                out[idx // width, idx % width] += partial[0]

    return sine_sum_block_tree


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


def _block_sequential_kernel(threads):
    """Build the one-block-per-element sum with a sequential tree for a block size."""

    @cuda.jit
    def sine_sum_block_sequential(mag, freq, phi, out):
        """Ours: one block per element, each thread sums its waves in a register, one sequential tree."""
        partial = cuda.shared.array(threads, float32)
        tid = cuda.threadIdx.x
        width = out.shape[1]
        idx = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x
        if idx >= out.size:
            return
        total = float32(0)
        for i in range(tid, mag.size, threads):
            total += seed_wave(mag, freq, phi, i, idx, width)
        partial[tid] = total
        cuda.syncthreads()
        tree_sequential(partial, tid, 1)
        if tid == 0:
            out[idx // width, idx % width] = partial[0]

    return sine_sum_block_sequential


@cuda.jit
def sine_sum_warp_shuffle(mag, freq, phi, out):
    """Ours: one warp per element, each lane sums every 32nd wave, shfl_down_sync adds the lanes."""
    idx = cuda.grid(1) // 32
    lane = cuda.threadIdx.x % 32
    width = out.shape[1]
    if idx >= out.size:
        return                                       # whole warps leave together
    total = float32(0)
    for i in range(lane, mag.size, 32):
        total += seed_wave(mag, freq, phi, i, idx, width)
    total = warp_sum(total)
    if lane == 0:
        out[idx // width, idx % width] = total


@cuda.jit
def wave_constants(mag, freq, phi, width, spacing, amp, row_cycles, col_cycles, phase, step_cos, step_sin):
    """Once per wave, in float64: amplitude/n, the phase step per row and per column in cycles, and
    the cosine and sine of the step between columns `spacing` apart; zero amplitude past n (padding)."""
    i = cuda.grid(1)
    if i < amp.size:
        n = mag.size
        j = min(i, n - 1)
        cycles = float64(FC) + float64(freq[j]) * 100.0      # cycles per row of `width` elements
        amp[i] = float64(mag[j]) / n if i < n else 0.0
        row_cycles[i] = cycles - math.floor(cycles)           # whole cycles per row drop out
        col_cycles[i] = cycles / width
        phase[i] = phi[j]
        step = cycles * spacing / width
        step_cos[i] = math.cos(2 * math.pi * (step - math.floor(step)))
        step_sin[i] = math.sin(2 * math.pi * (step - math.floor(step)))


def reduced_wave(amp, row_cycles, col_cycles, phase, x, y):
    """One term from per-wave constants: the phase in cycles, whole cycles dropped before the sine."""
    t = row_cycles * y + (col_cycles * x + phase)             # cycles, >= 0: two FMAs
    return amp * math.sin(TWO_PI * (t - math.floor(t)))       # 2 pi times a fraction in [0, 1)


def _reduced_kernel(fastmath):
    """Build the reduced-argument kernel with or without fast math (its device function needs the flag too)."""
    wave = cuda.jit(device=True, fastmath=fastmath)(reduced_wave)

    @cuda.jit(fastmath=fastmath)
    def sine_sum_reduced(amp, row_cycles, col_cycles, phase, out):
        """Ours: per-wave constants, reduced phase, OUTPUTS elements per thread sharing each wave's loads."""
        width = out.shape[1]
        first, stride = cuda.grid(1), cuda.gridsize(1)
        xs = cuda.local.array(OUTPUTS, float32)
        ys = cuda.local.array(OUTPUTS, float32)
        totals = cuda.local.array(OUTPUTS, float32)
        for k in range(OUTPUTS):
            idx = first + k * stride
            xs[k], ys[k], totals[k] = idx % width, idx // width, 0
        for i in range(amp.size):
            a, rc, cc, p = amp[i], row_cycles[i], col_cycles[i], phase[i]
            for k in range(OUTPUTS):
                totals[k] += wave(a, rc, cc, p, xs[k], ys[k])
        for k in range(OUTPUTS):
            idx = first + k * stride
            if idx < out.size:
                out[idx // width, idx % width] = totals[k]

    return sine_sum_reduced


sine_sum_reduced = {fast: _reduced_kernel(fast) for fast in (False, True)}


def _recurrence_kernel(threads, outputs, waves, fastmath):
    """Build the recurrence kernel: block size, neighbouring columns per thread, waves per loop step."""

    @cuda.jit(fastmath=fastmath)
    def sine_sum_recurrence(amp, row_cycles, col_cycles, phase, step_cos, step_sin, out):
        """Ours: per wave one sin and cos per thread, then each next column from the two before:
        sin(u + d) = 2 cos(d) sin(u) - sin(u - d), one FMA per term."""
        width = out.shape[1]
        chunks = (width + outputs - 1) // outputs    # `outputs` neighbouring columns per thread
        g = cuda.grid(1)
        y, x0 = g // chunks, (g % chunks) * outputs
        if y >= out.shape[0]:
            return
        totals = cuda.local.array(outputs, float32)
        for k in range(outputs):
            totals[k] = 0
        for first in range(0, amp.size, waves):     # amp.size: a multiple of `waves` (zero padding)
            for j in range(waves):                  # independent waves: work in flight
                i = first + j
                t = row_cycles[i] * float32(y) + (col_cycles[i] * float32(x0) + phase[i])
                angle = TWO_PI * (t - math.floor(t + float32(0.5)))   # in [-pi, pi)
                a, c_step, twice_c = amp[i], step_cos[i], step_cos[i] + step_cos[i]
                before, c = math.sin(angle), math.cos(angle)
                now = before * c_step + c * step_sin[i]
                totals[0] += a * before
                for k in range(1, outputs):
                    totals[k] += a * now
                    now, before = twice_c * now - before, now
        for k in range(outputs):
            if x0 + k < width:
                out[y, x0 + k] = totals[k]

    return sine_sum_recurrence


sine_sum_recurrence = _recurrence_kernel(RECURRENCE_THREADS, RECURRENCE_OUTPUTS, RECURRENCE_WAVES, True)
"""The recurrence kernel as configured, for show_source."""
@cuda.jit
def zero_fill(out):
    """out[...] = 0 on the device (the seed's += variants need a cleared output)."""
    idx = cuda.grid(1)
    if idx < out.size:
        out[idx // out.shape[1], idx % out.shape[1]] = 0


SEED_VARIANTS = ("1 brute force", "2-1 atomics", "2-2 shared tree", "3 host loop")
OUR_VARIANTS = ("register accumulator", "block, sequential tree", "warp shuffle",
                "reduced argument", "reduced argument, fast math", "recurrence, fast math")
VARIANTS = SEED_VARIANTS + OUR_VARIANTS

_seed_tree_kernels: dict[int, object] = {}
_sequential_kernels: dict[int, object] = {}
_constants: dict[int, tuple] = {}
_recurrence_kernels: dict[tuple, object] = {
    (RECURRENCE_THREADS, RECURRENCE_OUTPUTS, RECURRENCE_WAVES, True): sine_sum_recurrence}


def waves(n: int, seed: int = 0):
    """The seed's random inputs: magnitudes, frequencies and phases, uniform in [0, 1), float32."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (the number of waves) must be a positive integer, got {n!r}")
    mag, freq, phi = np.random.default_rng(seed).random((3, int(n)), dtype=np.float32)
    return mag, freq, phi


def reference(mag, freq, phi, *, width: int = WIDTH, height: int = HEIGHT, rows=None) -> np.ndarray:
    """The exact sum in float64 (from the float32 inputs), for all rows or only the listed `rows`."""
    rows = np.arange(height) if rows is None else np.asarray(rows)
    idx = (rows[:, None] * width + np.arange(width)[None, :]).astype(np.float64)
    out = np.zeros(idx.shape)
    mag, freq, phi = (np.asarray(v, dtype=np.float64) for v in (mag, freq, phi))
    for i in range(mag.size):
        out += mag[i] / mag.size * np.sin(2 * np.pi * (float(FC) + 100 * freq[i]) * idx / width + 2 * np.pi * phi[i])
    return out


def tolerance(mag, *, width: int = WIDTH, height: int = HEIGHT) -> float:
    """How far the seed's float32 formula may drift from float64: phases of up to 2 pi (fc+100) H carry
    rounding errors of a few ulp, and n such errors of random sign grow like sqrt(n)."""
    largest_phase = 2 * np.pi * (float(FC) + 100) * height
    phase_error = 8 * np.finfo(np.float32).eps * largest_phase
    return float(phase_error * np.mean(mag) / np.sqrt(np.size(mag)) + 1e-5)


def _check_waves(mag, freq, phi):
    """Validate the three wave arrays (float32, 1-D, the same length); return them on the device."""
    checked = [arrays.device_input(v, name=name, dtypes=np.float32, ndim=1)[0]
               for v, name in ((mag, "mag"), (freq, "freq"), (phi, "phi"))]
    if not checked[0].size == checked[1].size == checked[2].size:
        raise ValueError(f"mag, freq and phi must have the same length, got "
                         f"{checked[0].size}, {checked[1].size} and {checked[2].size}")
    return checked


def _wave_constants(d_mag, d_freq, d_phi, width, spacing=1, multiple=1):
    """The six per-wave constant arrays, zero-padded to a multiple of `multiple` waves, in a cached
    buffer per length (kept out of timed allocations)."""
    n = -(-d_mag.size // multiple) * multiple
    if n not in _constants:
        _constants[n] = tuple(cuda.device_array(n, dtype=np.float32) for _ in range(6))
    constants = _constants[n]
    wave_constants[arrays.blocks_for(n, THREADS), THREADS](d_mag, d_freq, d_phi, width, spacing, *constants)
    return constants


def launch_recurrence(d_mag, d_freq, d_phi, d_out, *, threads: int = RECURRENCE_THREADS,
                        outputs: int = RECURRENCE_OUTPUTS, waves: int = RECURRENCE_WAVES, fastmath: bool = True):
    """Launch the recurrence kernel for one configuration (device arrays in, d_out written)."""
    key = (threads, outputs, waves, fastmath)
    if key not in _recurrence_kernels:
        _recurrence_kernels[key] = _recurrence_kernel(*key)
    height, width = d_out.shape
    constants = _wave_constants(d_mag, d_freq, d_phi, width, spacing=1, multiple=waves)
    grid = arrays.blocks_for(height * -(-width // outputs), threads)
    _recurrence_kernels[key][grid, threads](*constants, d_out)
    return d_out


def sine_sum(mag, freq, phi, *, variant: str = "reduced argument, fast math", width: int = WIDTH,
             height: int = HEIGHT, out=None, block_threads: int = SEED_THREADS,
             host_loop_blocks: int = HOST_LOOP_BLOCKS):
    """The (height, width) float32 array of sums of sine waves, computed by one variant.

    Returns NumPy unless `out` (a float32 device array of shape (height, width)) is given; then
    it returns `out` without synchronising. block_threads (a power of two) and host_loop_blocks
    are the seed's block size and blocks per host-loop launch; tests make them small.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    for value, name in ((width, "width"), (height, "height"), (host_loop_blocks, "host_loop_blocks")):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    arrays.check_threads(block_threads)
    if block_threads & (block_threads - 1):
        raise ValueError(f"block_threads must be a power of two (the tree halves it), got {block_threads}")
    d_mag, d_freq, d_phi = _check_waves(mag, freq, phi)
    d_out = arrays.device_output(out, (height, width), np.float32)
    size = width * height
    if variant == "1 brute force":
        sine_sum_brute_force[arrays.blocks_for(size, 512), 512](d_mag, d_freq, d_phi, d_out)
    elif variant == "2-1 atomics":
        zero_fill[arrays.blocks_for(size, THREADS), THREADS](d_out)
        sine_sum_atomic_blocks[(width, height), block_threads](d_mag, d_freq, d_phi, d_out)
    elif variant in ("2-2 shared tree", "3 host loop"):
        kernel = _seed_tree_kernels.setdefault(block_threads, _seed_block_tree_kernel(block_threads))
        zero_fill[arrays.blocks_for(size, THREADS), THREADS](d_out)
        if variant == "2-2 shared tree":
            kernel[(width, height), block_threads](d_mag, d_freq, d_phi, 0, d_out)
        else:
            for offset in range(0, size, host_loop_blocks):  # the seed synchronises after each; we queue them
                kernel[host_loop_blocks, block_threads](d_mag, d_freq, d_phi, offset, d_out)
    elif variant == "register accumulator":
        sine_sum_register[arrays.blocks_for(size, THREADS), THREADS](d_mag, d_freq, d_phi, d_out)
    elif variant == "block, sequential tree":
        threads = min(block_threads, THREADS)
        kernel = _sequential_kernels.setdefault(threads, _block_sequential_kernel(threads))
        kernel[(width, height), threads](d_mag, d_freq, d_phi, d_out)
    elif variant == "warp shuffle":
        sine_sum_warp_shuffle[arrays.blocks_for(32 * size, THREADS), THREADS](d_mag, d_freq, d_phi, d_out)
    elif variant == "recurrence, fast math":
        launch_recurrence(d_mag, d_freq, d_phi, d_out)
    else:
        constants = _wave_constants(d_mag, d_freq, d_phi, width)[:4]
        blocks = arrays.blocks_for(arrays.blocks_for(size, OUTPUTS), THREADS)
        sine_sum_reduced[variant.endswith("fast math")][blocks, THREADS](*constants, d_out)
    return d_out if out is not None else d_out.copy_to_host()

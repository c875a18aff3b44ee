"""Lesson 05, reaching the ceiling: the tuned grid-stride sum and the fast sine sums.

The sum (`sum_grid_stride`) reads memory about as fast as cupy.sum (CUB): the lesson's run
compares them (docs/results.md). Beyond the textbook grid stride it has four tricks, each a
small gain (the tuning table of each on and off: TUNING below): several independent loads in
flight per thread, 16-byte loads, the read-only data path (ld.global.nc), and a hand-over by
the last block instead of a launch that zeroes the output.

The sine sums (`sine_sum`) make each of seed 001's terms cheap: per-wave constants computed
once, the phase reduced to a fraction of a cycle so that the fast-math sine is accurate, and a
recurrence that needs one sine and one cosine per wave for a row of neighbouring outputs.

Each kernel reads its tuned sizes as module constants (SUM_ITEMS, ...), which Numba compiles
in as constants; `configured` compiles the same source with other values, under its own name,
for the tests and for `python -m gpgpu_tools.tune grid_stride_sum`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda, float32, float64

from .. import hardware, launch, runtime
from ..device.fill import zero_step
from ..device.handover import add_and_hand_over, scratch
from ..device.vector import load_vector, load_vector_readonly
from ..device.warp import warp_sum
from ..specialise import specialise
from .sine_sum import FC, HEIGHT, TWO_PI, WIDTH, check_task
from .textbook import sum_launch

# The sum's launch: chosen by `python -m gpgpu_tools.tune grid_stride_sum` (TUNING below), recorded
# in gpgpu_lessons/recorded/tuning/grid_stride_sum-<gpu>.json; the lesson's run compares it with
# cupy.sum (experiment 05_atomics_vs_reduction/fast_sum of gpgpu_lessons/recorded/<gpu>.json).
SUM_BLOCK = 256  # threads per block
SUM_WARPS = SUM_BLOCK // 32  # warps per block: the block sum's shared array
SUM_ITEMS = 4  # independent loads in flight per thread per grid-stride step
SUM_VECTOR = 4  # floats per load: 4 = one 16-byte load (when a is 16-byte aligned)
SUM_BLOCKS_PER_SM = 4  # 4 x 256 threads per SM: half of the 2048 threads an SM can hold
SUM_READONLY = True  # load through the read-only data path: ld.global.nc (CUDA C's __ldg)
SUM_HAND_OVER = True  # the last block moves the sum to the output: no zeroing launch

# The sine sums' launches. The recurrence's three: chosen by `python -m gpgpu_tools.tune
# sine_recurrence` (RECURRENCE_TUNING, at the end), recorded in
# gpgpu_lessons/recorded/tuning/sine_recurrence-<gpu>.json. BLOCK and REDUCED_OUTPUTS serve the
# lesson's intermediate step (the reduced argument) and are not tuned.
BLOCK = 256  # threads per block of wave_constants and sine_sum_reduced
REDUCED_OUTPUTS = 4  # outputs per thread of sine_sum_reduced (they share the loads)
RECURRENCE_BLOCK = 128  # threads per block of sine_sum_recurrence
RECURRENCE_OUTPUTS = 16  # neighbouring columns per thread
RECURRENCE_WAVES = 2  # waves per loop step: independent recurrences in flight


# ---- the grid-stride sum -------------------------------------------------------------------


@cuda.jit(device=True)
def load_sum(a, j):
    """The sum of the j-th group of SUM_VECTOR floats, read by ONE load (16 bytes for 4 floats)."""
    if SUM_READONLY:
        x = load_vector_readonly(a, SUM_VECTOR * j, SUM_VECTOR)
    else:
        x = load_vector(a, SUM_VECTOR * j, SUM_VECTOR)
    if SUM_VECTOR == 4:
        return (x[0] + x[1]) + (x[2] + x[3])
    return x[0]


@cuda.jit(device=True)
def block_sum_shuffle(value, warp_sums):
    """Sum a value over a block: shuffles within each warp, then warp 0 shuffles the warps' sums."""
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    value = warp_sum(value)
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()
    if warp == 0:
        value = warp_sums[lane] if lane < warp_sums.size else float32(0)
        value = warp_sum(value)
    return value


@cuda.jit
def sum_grid_stride_tuned(a, total, acc, tickets):
    """SUM_ITEMS loads in flight per thread, SUM_VECTOR floats per load, one atomic per block."""
    warp_sums = cuda.shared.array(SUM_WARPS, float32)
    stride, first = cuda.gridsize(1), cuda.grid(1)
    loads = a.size // SUM_VECTOR  # whole loads; a.size % SUM_VECTOR floats after
    value = float32(0)
    i = first
    while i + (SUM_ITEMS - 1) * stride < loads:  # full steps: SUM_ITEMS independent loads
        for k in range(SUM_ITEMS):
            value += load_sum(a, i + k * stride)
        i += SUM_ITEMS * stride
    while i < loads:  # the ragged tail of whole loads
        value += load_sum(a, i)
        i += stride
    if first < a.size - SUM_VECTOR * loads:  # the last few floats, one per thread
        value += a[SUM_VECTOR * loads + first]
    value = block_sum_shuffle(value, warp_sums)
    if cuda.threadIdx.x == 0:
        if SUM_HAND_OVER:
            add_and_hand_over(value, total, acc, tickets)
        else:
            cuda.atomic.add(total, 0, value)


TUNED_SUM = (SUM_BLOCK, SUM_ITEMS, SUM_VECTOR, SUM_READONLY, SUM_HAND_OVER)
# (block, items, vector, readonly, hand_over) of the other sums the tests run, and of the tuned
# launch on an array that starts off a 16-byte boundary (vector 1): compiled to PTX too.
OTHER_SUMS = (
    (64, 2, 4, True, True),
    (32, 3, 1, False, False),
    (96, 1, 4, True, False),
    (32, 2, 4, True, True),
    (SUM_BLOCK, SUM_ITEMS, 1, SUM_READONLY, SUM_HAND_OVER),
)


@functools.cache
def grid_stride_kernel(block: int, items: int, vector: int, readonly: bool, hand_over: bool):
    """sum_grid_stride_tuned for one launch configuration, named after it (one compile each)."""
    if (block, items, vector, readonly, hand_over) == TUNED_SUM:
        return sum_grid_stride_tuned
    name = (
        f"sum_grid_stride_{block}x{items}_v{vector}"
        f"{'_nc' if readonly else ''}{'_handover' if hand_over else ''}"
    )
    return specialise(
        sum_grid_stride_tuned,
        name,
        device_functions=(load_sum,),
        SUM_WARPS=block // 32,
        SUM_ITEMS=items,
        SUM_VECTOR=vector,
        SUM_READONLY=readonly,
        SUM_HAND_OVER=hand_over,
    )


@launch.op
def sum_grid_stride(
    a,
    *,
    out=None,
    block: int = SUM_BLOCK,
    items: int = SUM_ITEMS,
    vector: int = SUM_VECTOR,
    blocks_per_sm: int = SUM_BLOCKS_PER_SM,
    readonly: bool = SUM_READONLY,
    hand_over: bool = SUM_HAND_OVER,
    blocks: int | None = None,
):
    """Sum a 1-D float32 array at memory speed: a Python float, or written to out[0]."""
    # the options span TUNING["space"]; `blocks` overrides the grid (the tests use it)
    d_a, to_host = launch.device_input(a, name="a", dtypes=np.float32, ndim=1)
    if hand_over:  # the last block stores the total once: it may go straight to host memory
        total = launch.scalar_output(out, np.float32, inputs=(d_a,), like=d_a)
    else:
        total = launch.device_output(out, (1,), np.float32, inputs=(d_a,))
    (block,) = launch.block_shape(block)
    if block % 32:
        raise ValueError(
            f"block must be a multiple of 32 (the block sum adds whole warps), got {block}"
        )
    items = launch.positive_int(items, "items")
    if vector not in (1, 4):
        raise ValueError(f"vector must be 1 or 4 (floats per load), got {vector!r}")
    if vector == 4 and not launch.aligned(d_a, 16):
        vector = 1  # a view that starts off a 16-byte boundary
    blocks_per_sm = launch.positive_int(blocks_per_sm, "blocks_per_sm")
    blocks = (
        hardware.filled_grid(max(1, d_a.size // vector), block, per_sm=blocks_per_sm)
        if blocks is None
        else launch.positive_int(blocks, "blocks")
    )
    kernel = grid_stride_kernel(block, items, vector, bool(readonly), bool(hand_over))
    acc, tickets = scratch(np.float32, like=d_a)  # left at 0 by every launch (device.handover)
    step = launch.Step(kernel, blocks, block, (d_a, total.device, acc, tickets))
    return sum_launch((step,) if hand_over else (zero_step(total.device), step), total, to_host)


@functools.cache
def _tuning_input():
    """The array the tuning times: 2**28 random float32 (1 GiB), made once per process."""
    n = runtime.pick(gpu=2**28, simulator=2**10)
    d_a = cuda.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    return d_a, cuda.device_array(1, np.float32)


def _tuning_case(**params):
    """(Launch, bytes read) of one point of the tuning space."""
    d_a, d_total = _tuning_input()
    return sum_grid_stride.prepare(d_a, out=d_total, **params), d_a.nbytes


TUNING = {
    "family": "grid_stride_sum",
    # each of the four tricks on and off: one load in flight (items 1) up to twice the chosen,
    # 4-byte or 16-byte loads, the read-only path, the hand-over; the chosen block and grid (their
    # neighbours are not searched)
    "space": {
        "block": [SUM_BLOCK],
        "items": [1, 2, 4, 8],
        "vector": [1, 4],
        "blocks_per_sm": [SUM_BLOCKS_PER_SM],
        "readonly": [False, True],
        "hand_over": [False, True],
    },
    "chosen": {
        "block": SUM_BLOCK,
        "items": SUM_ITEMS,
        "vector": SUM_VECTOR,
        "blocks_per_sm": SUM_BLOCKS_PER_SM,
        "readonly": SUM_READONLY,
        "hand_over": SUM_HAND_OVER,
    },
    "case": _tuning_case,
}


# ---- the fast sine sums --------------------------------------------------------------------


@cuda.jit
def wave_constants(
    mag, freq, phi, width, spacing, amp, row_cycles, col_cycles, phase, step_cos, step_sin
):
    """Once per wave, in float64: the amplitude and phase steps the fast sine sums share."""
    # amplitude/n, the phase step per row and per column in cycles, cos and sin of the step
    # between columns `spacing` apart; zero amplitude past n (the padding of the last step)
    i = cuda.grid(1)
    if i < amp.size:
        n = mag.size
        j = min(i, n - 1)
        cycles = float64(FC) + float64(freq[j]) * 100.0  # cycles per row of `width` elements
        amp[i] = float64(mag[j]) / n if i < n else 0.0
        row_cycles[i] = cycles - math.floor(cycles)  # whole cycles per row drop out
        col_cycles[i] = cycles / width
        phase[i] = phi[j]
        step = cycles * spacing / width
        step_cos[i] = math.cos(2 * math.pi * (step - math.floor(step)))
        step_sin[i] = math.sin(2 * math.pi * (step - math.floor(step)))


@cuda.jit(device=True)
def reduced_wave(amp, row_cycles, col_cycles, phase, x, y):
    """One term from per-wave constants: the phase in cycles, whole cycles dropped before sin."""
    t = row_cycles * y + (col_cycles * x + phase)  # cycles, >= 0: two FMAs
    return amp * math.sin(TWO_PI * (t - math.floor(t)))  # 2 pi times a fraction in [0, 1)


@cuda.jit
def sine_sum_reduced(amp, row_cycles, col_cycles, phase, out):
    """Per-wave constants, a reduced phase, REDUCED_OUTPUTS outputs per thread (shared loads)."""
    width = out.shape[1]
    first, stride = cuda.grid(1), cuda.gridsize(1)
    xs = cuda.local.array(REDUCED_OUTPUTS, float32)
    ys = cuda.local.array(REDUCED_OUTPUTS, float32)
    totals = cuda.local.array(REDUCED_OUTPUTS, float32)
    for k in range(REDUCED_OUTPUTS):
        idx = first + k * stride
        xs[k], ys[k], totals[k] = idx % width, idx // width, 0
    for i in range(amp.size):
        a, rc, cc, p = amp[i], row_cycles[i], col_cycles[i], phase[i]
        for k in range(REDUCED_OUTPUTS):
            totals[k] += reduced_wave(a, rc, cc, p, xs[k], ys[k])
    for k in range(REDUCED_OUTPUTS):
        idx = first + k * stride
        if idx < out.size:
            out[idx // width, idx % width] = totals[k]


# the same kernel and device function compiled with fast math: sin.approx, safe on small arguments
sine_sum_reduced_fastmath = specialise(
    sine_sum_reduced, "sine_sum_reduced_fastmath", device_functions=(reduced_wave,), fastmath=True
)


@cuda.jit(fastmath=True)
def sine_sum_recurrence(amp, row_cycles, col_cycles, phase, step_cos, step_sin, out):
    """One sin and cos per wave, then each next column: sin(u + d) = 2 cos d sin u - sin(u - d)."""
    width = out.shape[1]
    chunks = (width + RECURRENCE_OUTPUTS - 1) // RECURRENCE_OUTPUTS  # columns per thread
    g = cuda.grid(1)
    y, x0 = g // chunks, (g % chunks) * RECURRENCE_OUTPUTS
    if y >= out.shape[0]:
        return
    totals = cuda.local.array(RECURRENCE_OUTPUTS, float32)
    for k in range(RECURRENCE_OUTPUTS):
        totals[k] = 0
    for first in range(0, amp.size, RECURRENCE_WAVES):  # amp.size: a multiple of the waves
        for j in range(RECURRENCE_WAVES):  # independent waves: work in flight
            i = first + j
            t = row_cycles[i] * float32(y) + (col_cycles[i] * float32(x0) + phase[i])
            angle = TWO_PI * (t - math.floor(t + float32(0.5)))  # in [-pi, pi)
            a, c_step, twice_c = amp[i], step_cos[i], step_cos[i] + step_cos[i]
            before, c = math.sin(angle), math.cos(angle)
            now = before * c_step + c * step_sin[i]
            totals[0] += a * before
            for k in range(1, RECURRENCE_OUTPUTS):
                totals[k] += a * now
                now, before = twice_c * now - before, now
    for k in range(RECURRENCE_OUTPUTS):
        if x0 + k < width:
            out[y, x0 + k] = totals[k]


# (outputs, waves) of the other recurrence kernels the tests run: compiled to PTX too
OTHER_RECURRENCES = ((8, 2), (3, 4), (1, 1))


@functools.cache
def recurrence_kernel(outputs: int, waves: int):
    """sine_sum_recurrence for `outputs` columns per thread and `waves` per step, so named."""
    if (outputs, waves) == (RECURRENCE_OUTPUTS, RECURRENCE_WAVES):
        return sine_sum_recurrence
    return specialise(
        sine_sum_recurrence,
        f"sine_sum_recurrence_{outputs}x{waves}",
        fastmath=True,
        RECURRENCE_OUTPUTS=outputs,
        RECURRENCE_WAVES=waves,
    )


def constants_step(d_mag, d_freq, d_phi, width: int, multiple: int = 1):
    """(Step, constants): wave_constants into six new arrays, padded to a multiple of `multiple`."""
    n = launch.blocks_for(d_mag.size, multiple) * multiple
    constants = tuple(cuda.device_array(n, dtype=np.float32) for _ in range(6))
    step = launch.Step(
        wave_constants,
        launch.grid_1d(n, BLOCK),
        BLOCK,
        (d_mag, d_freq, d_phi, width, 1, *constants),
    )
    return step, constants


@launch.op
def recurrence(
    mag,
    freq,
    phi,
    *,
    width: int = WIDTH,
    height: int = HEIGHT,
    out=None,
    block: int = RECURRENCE_BLOCK,
    outputs: int = RECURRENCE_OUTPUTS,
    waves: int = RECURRENCE_WAVES,
):
    """Seed 001's (height, width) sums by the recurrence kernel, for one launch configuration."""
    d_mag, d_freq, d_phi, output, to_host = check_task(mag, freq, phi, width, height, out)
    (block,) = launch.block_shape(block)
    outputs, waves = launch.positive_int(outputs, "outputs"), launch.positive_int(waves, "waves")
    step, constants = constants_step(d_mag, d_freq, d_phi, width, multiple=waves)
    grid = launch.grid_1d(height * launch.blocks_for(width, outputs), block)
    kernel = recurrence_kernel(outputs, waves)
    steps = (step, launch.Step(kernel, grid, block, (*constants, output.device)))
    return launch.Launch(steps, output.device, to_host, output.host, out_given=output.given)


VARIANTS = ("reduced argument", "reduced argument, fast math", "recurrence, fast math")
"""The variants `sine_sum(..., variant=)` runs; the seed's and textbook ones are in `sine_sum`."""


@launch.op
def sine_sum(
    mag,
    freq,
    phi,
    *,
    variant: str = "recurrence, fast math",
    width: int = WIDTH,
    height: int = HEIGHT,
    out=None,
):
    """Seed 001's (height, width) float32 array of sums of sine waves, by one fast variant."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(VARIANTS)}")
    if variant == "recurrence, fast math":
        return recurrence.prepare(mag, freq, phi, width=width, height=height, out=out)
    d_mag, d_freq, d_phi, output, to_host = check_task(mag, freq, phi, width, height, out)
    step, constants = constants_step(d_mag, d_freq, d_phi, width)
    kernel = sine_sum_reduced_fastmath if variant.endswith("fast math") else sine_sum_reduced
    grid = launch.grid_1d(launch.blocks_for(width * height, REDUCED_OUTPUTS), BLOCK)
    steps = (step, launch.Step(kernel, grid, BLOCK, (*constants[:4], output.device)))
    return launch.Launch(steps, output.device, to_host, output.host, out_given=output.given)


SUM = ["void(float32[::1], float32[::1], float32[::1], uint32[::1])"]
OUT = "float32[:, ::1]"
SIGNATURES = {
    **{grid_stride_kernel(*config): SUM for config in (TUNED_SUM, *OTHER_SUMS)},
    wave_constants: [
        f"void({', '.join(['float32[::1]'] * 3)}, int64, int64, {', '.join(['float32[::1]'] * 6)})"
    ],
    sine_sum_reduced: [f"void({', '.join(['float32[::1]'] * 4)}, {OUT})"],
    sine_sum_reduced_fastmath: [f"void({', '.join(['float32[::1]'] * 4)}, {OUT})"],
    **{
        recurrence_kernel(*config): [f"void({', '.join(['float32[::1]'] * 6)}, {OUT})"]
        for config in ((RECURRENCE_OUTPUTS, RECURRENCE_WAVES), *OTHER_RECURRENCES)
    },
}


def _recurrence_case(*, n, block, outputs, waves):
    """(Launch, bytes written) of one recurrence configuration on seed 001's output."""
    from .sine_sum import waves as random_waves

    mag, freq, phi = (cuda.to_device(w) for w in random_waves(n))
    out = cuda.device_array((HEIGHT, WIDTH), dtype=np.float32)
    prepared = recurrence.prepare(
        mag, freq, phi, out=out, block=block, outputs=outputs, waves=waves
    )
    return prepared, out.nbytes  # the same bytes for every point: GB/s ranks the times


# The recurrence's launch (RECURRENCE_BLOCK, _OUTPUTS, _WAVES): python -m gpgpu_tools.tune
# sine_recurrence times this space on seed 001's output with n = 10,000 waves
RECURRENCE_TUNING = {
    "family": "sine_recurrence",
    # the chosen block, columns per thread and their neighbours; one recurrence at a time
    # (waves 1) or the chosen two in flight
    "space": {
        "n": [10_000],
        "block": [64, 128, 256],
        "outputs": [8, 16, 32],
        "waves": [1, 2],
    },
    "chosen": {"block": RECURRENCE_BLOCK, "outputs": RECURRENCE_OUTPUTS, "waves": RECURRENCE_WAVES},
    "case": _recurrence_case,
}

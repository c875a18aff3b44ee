"""Exercises of lesson 00 (timing GPU code): a first kernel, bandwidth, and timers to fix."""

from __future__ import annotations

import math

import numpy as np

from . import checks, data
from .fakegpu import FakeGPU, NotReady
from .registry import Case, Exercise

TITLE = "Timing GPU code"

BLOCK = 128


def _saxpy_case(rng, n):
    a = np.float32(rng.uniform(1.5, 2.5))
    x, y = data.signed(rng, n), data.signed(rng, n)
    return Case(
        f"n = {n}",
        {"a": a, "x": x, "y": y, "out": data.empty(n)},
        {"out": a * x + y},
        data.blocks(n, BLOCK),
        BLOCK,
        bytes_moved=12 * n,
    )


def _saxpy_cases(rng, gpu):
    return [_saxpy_case(rng, n) for n in [1, 300] + ([1_000_003] if gpu else [])]


def _saxpy_performance(rng):
    n = 2**25
    a = np.float32(2.0)
    x, y = data.signed(rng, n), data.signed(rng, n)
    return Case(
        "n = 2^25",
        {"a": a, "x": x, "y": y, "out": data.empty(n)},
        {"out": a * x + y},
        data.blocks(n, 256),
        256,
        bytes_moved=12 * n,
    )


SAXPY = Exercise(
    id="00.1",
    name="saxpy",
    title="saxpy, one element per thread",
    statement="""\
Complete `saxpy`: `out = a * x + y` for float32 vectors of `n` elements, one element per thread.

The grader launches `saxpy[blocks, 128](a, x, y, out)` with `blocks = ceil(n / 128)`, on
random data, for `n = 1`, `n = 300` (and a million and three on a GPU): the last block has
threads past the end of the arrays.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def saxpy(a, x, y, out):
    """out[i] = a * x[i] + y[i], one element per thread."""
    i = cuda.grid(1)
    # TODO: compute out[i], only for the threads that have an element
''',
    params=("a", "x", "y", "out"),
    hints=(
        "`i = cuda.grid(1)` is this thread's element. The grid is rounded up to whole blocks of "
        "128 threads, so the last block has threads with `i >= n`: what must they do?",
        "Those threads must do nothing at all, not even read `x[i]`. Compare `i` with the number "
        "of elements (every array has `.size`) before computing.",
        "The last element is `n - 1`: a test that lets `i == n` through writes one element past "
        "the end, and the grader reports which thread did.",
    ),
    cases=_saxpy_cases,
    trace_case=1,
    checks=(checks.Coalesced("load"), checks.Coalesced("store")),
    next="Next: 00.2, how many bytes saxpy moves, and what bandwidth that is.",
    performance=_saxpy_performance,
)


def _expected_gbs(n, ms):
    return 12 * n / (ms * 1e-3) / 1e9


_BYTES = {
    4: "you count one array; saxpy moves three (reads x and y, writes out), 4 bytes each",
    8: "you count 8 bytes per element; saxpy reads x and y and writes out: 3 x 4 bytes",
    16: "you count 16 bytes per element: a is one number, not an array; x, y and out move 4 "
    "bytes each",
    24: "you count 8-byte elements; the vectors are float32 (4 bytes)",
    12: "",
}
_UNITS = {
    1.0: "",
    1e9 / 2**30: "you divide by 2^30 (GiB); GB/s here means 10^9 bytes per second",
    1e-3: "the time is in milliseconds: divide by `ms * 1e-3` seconds, not `ms * 1`",
    1e3: "the time is in milliseconds: divide by `ms * 1e-3` seconds, not `ms * 1e-6`",
    1e9: "divide the bytes per second by 1e9 to get GB/s",
    1e6: "bytes / ms is 1e-3 x bytes per second; GB/s is bytes per second / 1e9",
}


def _diagnose_bandwidth(got, n, ms) -> str:
    """What went wrong, when got is a known mistake (or two) away from the right bandwidth."""
    expected = _expected_gbs(n, ms)
    for count, about_bytes in _BYTES.items():
        for factor, about_units in _UNITS.items():
            if math.isclose(got, expected * count / 12 * factor, rel_tol=1e-3):
                return "; and ".join(p for p in (about_bytes, about_units) if p)
    return "bytes that must move / time in seconds / 1e9"


def _check_bandwidth(fn):
    for n, ms in ((2**25, 0.25), (1000, 0.004), (3, 1.0)):
        got = fn(n, ms)
        if not isinstance(got, (int, float, np.floating, np.integer)):
            return [f"`saxpy_gbs({n}, {ms})` returned {type(got).__name__}; return a number"]
        expected = _expected_gbs(n, ms)
        if not math.isclose(got, expected, rel_tol=1e-6):
            return [
                f"`saxpy_gbs({n}, {ms})` returned {got:.6g}, expected {expected:.6g}: "
                f"{_diagnose_bandwidth(got, n, ms)}."
            ]
    return []


BANDWIDTH = Exercise(
    id="00.2",
    name="saxpy_gbs",
    title="The bandwidth of saxpy",
    statement="""\
Effective bandwidth = the bytes a kernel *must* move / its time. Write `saxpy_gbs(n, ms)`: the
effective bandwidth in GB/s (10^9 bytes per second) of `saxpy` on float32 vectors of `n`
elements that took `ms` milliseconds. (Later lessons compare such numbers with the device copy.)""",
    skeleton='''\
def saxpy_gbs(n, ms):
    """Effective bandwidth in GB/s of saxpy (out = a*x + y, float32) on n elements in ms."""
    bytes_moved = 4 * n  # TODO: what does saxpy read and write per element?
    return bytes_moved / ms  # TODO: units
''',
    params=("n", "ms"),
    kind="function",
    check_function=_check_bandwidth,
    hints=(
        "Count every array element read or written once: x, y and out. `a` is one number.",
        "Three arrays of `n` float32 elements, 4 bytes each. Then the units: `ms` is in "
        "milliseconds, and GB/s is 10^9 bytes per second.",
        "Check with one of the grader's cases: 2^25 elements in 0.25 ms is about 1611 GB/s. A "
        "factor 1000 off: the milliseconds were taken for seconds; 7% low: you divided by 2^30.",
    ),
    next="Next: 00.3, a timer that measures the launch instead of the kernel.",
)


def _timer_call(fn, gpu: FakeGPU, repeat: int):
    """fn(gpu.run, repeat) on the pretend GPU's virtual clock: (the answer, None) or (None, why).
    Whichever way fn reads the clock (time.perf_counter, `from time import ...`, CUDA events),
    it reads the virtual one, so the answer is the same on a busy machine and on an idle one."""
    with gpu.installed(fn):
        try:
            return fn(gpu.run, repeat), None
        except NotReady as error:
            return None, str(error)


def _unit(got, ms) -> str:
    """'seconds' or 'microseconds' when `got` is `ms` milliseconds in that unit, else ''."""
    if math.isclose(got * 1e3, ms, rel_tol=0.2):
        return "seconds"
    if math.isclose(got / 1e3, ms, rel_tol=0.2):
        return "microseconds"
    return ""


def _timer_too_fast(got, kernel_ms) -> str:
    says = f"Your timer says {got:.3g} ms per launch; the kernel takes {kernel_ms:g} ms."
    if _unit(got, kernel_ms) == "seconds":
        return f"{says} That is in seconds: multiply the difference of two clock reads by 1e3."
    return (
        f"{says} A launch only queues the work and returns at once: stop the clock "
        "after `cuda.synchronize()` (or time with CUDA events)."
    )


def _timer_too_slow(got, gpu: FakeGPU, kernel_ms, repeat) -> str:
    says = f"Your timer says {got:.3g} ms per launch; the kernel takes {kernel_ms:g} ms."
    if gpu.compile_timed():
        return (
            f"{says} The first call compiles the kernel (here {gpu.compile_ms:g} ms) and your "
            "timer counts it: call run() once before timing (a warm-up)."
        )
    if math.isclose(got, repeat * kernel_ms, rel_tol=0.2):
        return f"{says} That is all {repeat} launches together: divide by repeat."
    if _unit(got, kernel_ms) == "microseconds":
        return f"{says} That is in microseconds: multiply the seconds by 1e3, not 1e6."
    return (
        f"{says} Something besides the launches is timed (a time.sleep?): start the clock "
        "right before the timed launches and stop it right after `cuda.synchronize()`."
    )


def _check_timer(fn):
    kernel_ms, compile_ms, repeat = 5.0, 200.0, 10
    gpu = FakeGPU([kernel_ms], compile_ms=compile_ms)
    got, problem = _timer_call(fn, gpu, repeat)
    if problem:
        return [problem]
    if not isinstance(got, (int, float, np.floating)):
        return [f"`time_kernel` returned {type(got).__name__}; return the milliseconds per launch"]
    if gpu.launches < repeat:
        return [
            f"`time_kernel(run, {repeat})` launched run() {gpu.launches} times; time "
            f"{repeat} launches"
        ]
    if gpu.reads == 0 and gpu.events == 0:
        return [
            "`time_kernel` reads no wall clock (`time.perf_counter()`, `time.time()`, ...) and "
            "records no CUDA event: time the launches rather than return a number"
        ]
    if got < 0.5 * kernel_ms:
        return [_timer_too_fast(got, kernel_ms)]
    if got > 2 * kernel_ms:
        return [_timer_too_slow(got, gpu, kernel_ms, repeat)]
    return []


TIMER = Exercise(
    id="00.3",
    name="time_kernel",
    title="Fix the timer",
    statement="""\
`time_kernel(run, repeat)` should return the milliseconds per launch of `run()` (a function
that launches a kernel), averaged over `repeat` launches. It has the two classic mistakes of
lesson 00. Find and fix them. The grader gives it a pretend GPU whose kernel takes 5 ms and
whose first call compiles for 200 ms (`cuda.synchronize` and `cuda.event` follow its clock).""",
    skeleton='''\
import time

from numba import cuda


def time_kernel(run, repeat=10):
    """Milliseconds per launch of run(), averaged over repeat launches (fix me)."""
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    return (time.perf_counter() - start) / repeat * 1e3
''',
    params=("run", "repeat"),
    kind="function",
    check_function=_check_timer,
    hints=(
        "What does `run()` return to Python: the end of the kernel, or its launch? And what "
        "happens the very first time a kernel is called?",
        "A launch only queues the work and returns at once: stop the clock only after the GPU has "
        "finished everything queued (the `cuda` module has a function that waits for that).",
        "The first call compiles the kernel (200 ms here): make one call that is not timed, and "
        "let the GPU finish it before the clock starts, so that none of it is counted.",
    ),
    next="Next: 00.4, CUDA events and the median.",
)


def _check_events(fn):
    typical, slow, repeat = 2.0, 14.0, 15
    gpu = FakeGPU([typical, typical, slow, typical, typical], compile_ms=60.0)
    got, problem = _timer_call(fn, gpu, repeat)
    if problem:
        return [problem]
    if not isinstance(got, (int, float, np.floating)):
        return [f"`time_events` returned {type(got).__name__}; return the median in milliseconds"]
    findings = []
    if gpu.events < 2 * min(repeat, 2):
        findings.append(
            "Your function records no CUDA events: make two with `cuda.event()`, "
            "call `start.record()` before and `end.record()` after run()."
        )
    if got < 0.5 * typical:
        why = (
            "that is in seconds: `elapsed_time` gives milliseconds already."
            if _unit(got, typical) == "seconds"
            else "did you record the end event after run(), and wait for it?"
        )
        findings.append(f"Your answer {got:.3g} ms is below the kernel's {typical:g} ms: {why}")
    elif got > 1.5 * typical:
        why = _events_too_slow(got, gpu, typical, slow)
        findings.append(
            f"Your answer {got:.3g} ms is above a typical launch ({typical:g} ms): {why}."
        )
    return findings


def _events_too_slow(got, gpu: FakeGPU, typical, slow) -> str:
    """Why the answer of `time_events` is above a typical launch."""
    if gpu.compile_timed():
        return (
            f"something extra is timed: the first call compiles the kernel (here "
            f"{gpu.compile_ms:g} ms) and your timing counts it; call run() once before timing"
        )
    mean = (3 * slow + 12 * typical) / 15
    if abs(got - mean) < 0.3 * mean:
        return (
            "that is the mean: a few slow runs (another program, clocks ramping up) pull it "
            "up; report the median (`statistics.median`)"
        )
    if _unit(got, typical) == "microseconds":
        return "that is in microseconds: `elapsed_time` gives milliseconds already"
    return "something extra is timed (a time.sleep, or more than one launch per sample?)"


EVENTS = Exercise(
    id="00.4",
    name="time_events",
    title="CUDA events and the median",
    statement="""\
Complete `time_events(run, repeat)`: time each of `repeat` launches of `run()` with two CUDA
events and return the **median** in milliseconds. The grader's pretend GPU runs a 2 ms kernel,
but one launch in five is slowed down to 14 ms by something else on the machine.""",
    skeleton='''\
from numba import cuda


def time_events(run, repeat=15):
    """Median milliseconds of run() over repeat launches, timed with CUDA events."""
    run()  # warm-up: the first call compiles
    samples = []
    for _ in range(repeat):
        # TODO: start = cuda.event(); record it, run(), record an end event,
        #       wait for the end event, keep start.elapsed_time(end)
        pass
    return sum(samples) / max(len(samples), 1)  # TODO: the mean?
''',
    params=("run", "repeat"),
    kind="function",
    check_function=_check_events,
    hints=(
        "An event is a mark in the GPU's queue: record one just before the launch and one just "
        "after it; the time between the two marks is the kernel's own.",
        "An event has `record()`, `synchronize()` (wait until the GPU has passed it) and "
        "`elapsed_time(other)` (milliseconds from it to the other). The GPU must have passed the "
        "end event before you ask for the time.",
        "One slow launch in five pulls the mean up; the median (the middle sample, once sorted) "
        "does not. Python's `statistics` module has it.",
    ),
    next="Next: 00.5, a grid-stride loop: one kernel for any n and any grid.",
)


GRID = 2


def _grid_stride_case(rng, n, grid=GRID, block=64):
    a = np.float32(rng.uniform(1.5, 2.5))
    x, y = data.signed(rng, n), data.signed(rng, n)
    return Case(
        f"n = {n} with {grid} blocks of {block} threads",
        {"a": a, "x": x, "y": y, "out": data.empty(n)},
        {"out": a * x + y},
        grid,
        block,
        bytes_moved=12 * n,
    )


def _grid_stride_cases(rng, gpu):
    cases = [_grid_stride_case(rng, 1000), _grid_stride_case(rng, 5)]
    return cases + ([_grid_stride_case(rng, 1_000_003, 264, 256)] if gpu else [])


def _grid_stride_performance(rng):
    n = 2**25
    x, y = data.signed(rng, n), data.signed(rng, n)
    return Case(
        "n = 2^25 with 1056 blocks of 256 threads",
        {"a": np.float32(2), "x": x, "y": y, "out": data.empty(n)},
        {"out": 2 * x + y},
        1056,
        256,
        bytes_moved=12 * n,
    )


GRID_STRIDE = Exercise(
    id="00.5",
    name="saxpy_grid_stride",
    title="A grid-stride loop",
    statement="""\
Make `saxpy` work for any `n` with a grid of any size: each thread handles elements `i`,
`i + stride`, `i + 2 * stride`, ... where `stride` is the number of threads in the whole grid.
The grader launches it with only 2 blocks of 64 threads (a GPU run also with 264 x 256) on
`n = 1000` and on `n = 5` (fewer elements than threads). Each element is written once.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def saxpy_grid_stride(a, x, y, out):
    """out = a * x + y for any n, with a grid of any size."""
    i = cuda.grid(1)
    stride = 1  # TODO: the number of threads in the grid
    # TODO: out[j] = a * x[j] + y[j] for j = i, i + stride, i + 2 * stride, ... inside the arrays
''',
    params=("a", "x", "y", "out"),
    hints=(
        "`cuda.gridsize(1)` is the number of threads in a 1-D grid (`cuda.blockDim.x * "
        "cuda.gridDim.x`): the stride.",
        "Python's `range` takes a start, a stop and a step: start at this thread's element, stop "
        "at the end of the arrays, step by the whole grid. Its stop keeps every thread inside the "
        "arrays: no separate `if` is needed.",
        "Each element must be written once. A step of the block size (`cuda.blockDim.x`) makes the "
        "blocks redo each other's elements; with `n = 5`, most threads run the loop zero times, "
        "which is right.",
    ),
    cases=_grid_stride_cases,
    trace_case=0,
    checks=(checks.Coalesced("load"), checks.Coalesced("store")),
    next="Next: lesson 01's exercises, where the order of the elements a warp reads matters.",
    performance=_grid_stride_performance,
)

EXERCISES = [SAXPY, BANDWIDTH, TIMER, EVENTS, GRID_STRIDE]

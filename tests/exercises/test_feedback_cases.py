"""Held-out submissions whose feedback pointed the wrong way: each small kernel is answered with
its actual mistake, and a guess at the cause only where the evidence (the store counts, the
tracer, the source) supports it."""

import inspect
import linecache

import numpy as np
import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import solutions
from numba import cuda, float32, int32

from gpgpu_lessons import exercises, watchdog
from gpgpu_lessons.exercises import checks, report, running, tracing
from gpgpu_lessons.trace import trace_kernel

FULL = 0xFFFFFFFF
B = 64
WIDE = B + 2
BINS = 16
SEED = 7


def _line(kernel, text: str) -> int:
    """The number of the first line of the kernel's source that holds `text`."""
    lines, first = inspect.getsourcelines(kernel.py_func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _graded(exercise_id, kernel) -> str:
    answer = exercises.grade(exercise_id, kernel, seed=SEED)
    assert not answer.passed, str(answer)
    return str(answer)


# --- 1. NaN in 05.2 from a kernel without shuffles ---------------------------------------------


@cuda.jit
def warp_sums_atomic(x, sums):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(sums, i // 32, x[i])


@cuda.jit
def warp_sums_first_warp_only(x, sums):
    i = cuda.grid(1)
    if cuda.threadIdx.x == 0:
        total = 0.0
        for k in range(i, min(i + 32, x.size)):
            total += x[k]
        sums[i // 32] = total


@cuda.jit
def warp_sums_early_return(x, sums):
    i = cuda.grid(1)
    if i >= x.size:
        return
    value = x[i]
    for offset in (16, 8, 4, 2, 1):
        value += cuda.shfl_down_sync(FULL, value, offset)
    if cuda.threadIdx.x % 32 == 0:
        sums[i // 32] = value


def test_nan_from_adding_into_an_output_is_not_blamed_on_a_shuffle():
    text = _graded("05.2", warp_sums_atomic)
    assert "got nan" in text and "shuffle" not in text.split("got nan")[1], text
    assert "it was written (32 store(s)) but holds NaN" in text, text
    assert "adding to an element" in text and "with `=`" in text, text


def test_nan_in_a_sum_never_written_says_so_without_shuffles():
    text = _graded("05.2", warp_sums_first_warp_only)
    assert "sums[1]" in text and "it was never written" in text, text
    assert "shuffle" not in text.split("got nan")[1], text


def test_nan_from_a_shuffle_of_a_lane_that_returned_still_names_the_shuffle():
    text = _graded("05.2", warp_sums_early_return)
    assert "it was written, so its sum took in a NaN" in text, text
    assert "NaN is what a shuffle gives in the simulator" in text, text


def test_on_the_gpu_path_nan_without_store_counts_does_not_name_a_shuffle(gpu_path):
    answer = exercises.grade("05.2", warp_sums_atomic, seed=SEED)
    text = str(answer)
    assert not answer.passed and "NaN is the value outputs start with" in text, text
    assert "shuffle gives" not in text and "(`+=`, an atomic) keeps the NaN" in text, text


# --- 2 and 6. barriers that part of a block misses: a loop, a return, a split ------------------


@cuda.jit
def saxpy_barrier_in_grid_stride(a, x, y, out):
    i = cuda.grid(1)
    while i < out.size:
        out[i] = a * x[i] + y[i]
        cuda.syncthreads()
        i += cuda.gridsize(1)


@cuda.jit
def histogram_barrier_in_loop(values, bins):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
        cuda.syncthreads()
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def scan_early_return(a, out):
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    if i >= a.size:
        return
    sums[t] = a[i]
    cuda.syncthreads()
    d = 1
    while d < B:
        v = sums[t - d] if t >= d else 0
        cuda.syncthreads()
        sums[t] += v
        cuda.syncthreads()
        d *= 2
    out[i] = sums[t]


@cuda.jit
def scan_split_by_warps(a, out):
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        v = sums[t - d] if t >= d else 0
        if t < 32:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        sums[t] += v
        cuda.syncthreads()
        d *= 2
    if i < a.size:
        out[i] = sums[t]


def test_a_barrier_in_a_grid_stride_loop_is_a_loop_not_a_branch():
    text = _graded("00.5", saxpy_barrier_in_grid_stride)
    line = _line(saxpy_barrier_in_grid_stride, "while i < out.size")
    assert f"inside the loop at line {line} (`while i < out.size`)" in text, text
    assert "different number of times for different threads" in text, text
    assert "loop's bounds the same for every thread of the block" in text, text
    assert "guard the work inside the loop with an `if`" in text, text
    assert "out of the branch" not in text and "inside an `if`" not in text, text


def test_threads_that_leave_a_loop_early_wait_at_another_barrier():
    text = _graded("05.4", histogram_barrier_in_loop)
    line = _line(histogram_barrier_in_loop, "for j in range")
    assert "wait at different `cuda.syncthreads()` calls" in text, text
    assert f"The loop at line {line} (`for j in range(cuda.grid(1)" in text, text
    assert "loop's bounds the same for every thread of the block" in text, text
    assert "out of the branch" not in text and "sends them apart" not in text, text


def test_an_early_return_before_a_barrier_is_named_as_a_return():
    text = _graded("02.5", scan_early_return)
    back = _line(scan_early_return, "if i >= a.size")
    barrier = _line(scan_early_return, "cuda.syncthreads()")
    assert f"Line {barrier} `cuda.syncthreads()` is not reached by the threads that" in text
    assert f"return early at line {back + 1} (`if i >= a.size: return`)" in text, text
    assert "Do not return before a barrier" in text, text
    assert "inside an `if`" not in text and "hang" not in text, text


def test_a_split_of_whole_warps_is_not_allowed_and_not_said_to_hang():
    text = _graded("02.5", scan_split_by_warps)
    split = _line(scan_split_by_warps, "if t < 32")
    assert "32 thread(s) at line" in text and f"the `if` at line {split}" in text, text
    assert "Each side holds whole warps here, but that does not make it allowed" in text, text
    assert "undefined" in text and "hang" not in text, text


# --- 3. ranks off by one: shifted, not "two lanes on one slot" ----------------------------------


@cuda.jit
def compact_rank_plus_one(x, threshold, out, count):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    keep = i < x.size and x[i] > threshold
    ballot = cuda.ballot_sync(FULL, keep)
    base = 0
    if lane == 0:
        base = cuda.atomic.add(count, 0, cuda.popc(ballot))
    base = cuda.shfl_sync(FULL, base, 0)
    if keep:
        out[base + cuda.popc(ballot & ((1 << lane) - 1)) + 1] = x[i]


@cuda.jit
def compact_one_slot_per_warp(x, threshold, out, count):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    keep = i < x.size and x[i] > threshold
    ballot = cuda.ballot_sync(FULL, keep)
    base = 0
    if lane == 0:
        base = cuda.atomic.add(count, 0, cuda.popc(ballot))
    base = cuda.shfl_sync(FULL, base, 0)
    if keep:
        out[base] = x[i]


@cuda.jit
def scan_one_to_the_left(a, out):
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        v = sums[t - d] if t >= d else 0
        cuda.syncthreads()
        sums[t] += v
        cuda.syncthreads()
        d *= 2
    if i < a.size:
        out[i] = sums[t - 1] if t > 0 else sums[t]


def test_compaction_one_slot_too_far_is_a_shift():
    text = _graded("05.6", compact_rank_plus_one)
    assert "shifted by one from out[:count] (out[0] was never written)" in text, text
    assert "one slot too far" in text and "same slot" not in text, text


def test_two_lanes_on_one_slot_are_said_only_with_two_stores_counted():
    text = _graded("05.6", compact_one_slot_per_warp)
    assert "was written" in text and "times: two lanes wrote to the same slot" in text, text


def test_on_the_gpu_path_without_store_counts_no_slot_is_said_to_be_shared(gpu_path):
    answer = exercises.grade("05.6", compact_one_slot_per_warp, seed=SEED)
    text = str(answer)
    assert not answer.passed and "was never written, though count =" in text, text
    assert "did not each store to a slot of their own" in text and "same slot" not in text, text


def test_a_scan_read_one_place_to_the_left_is_shifted_by_one():
    text = _graded("02.5", scan_one_to_the_left)
    assert "hold the value expected one place to their left" in text, text
    assert "shifted by one place" in text and "same slot" not in text, text


# --- 4. a race explains the wrong values: no pattern guess beside it ----------------------------


@cuda.jit
def smooth_halo_after_the_barrier(a, out):
    tile = cuda.shared.array(WIDE, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    i = start + t
    n = a.size
    m = min(B, n - start)
    tile[t + 1] = a[min(i, n - 1)]
    cuda.syncthreads()
    if t == m - 1:  # the left halo by the last thread, the right one by the first: no barrier
        tile[0] = a[max(start - 1, 0)]
    if t == 0:
        tile[m + 1] = a[min(start + m, n - 1)]
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3


def test_a_race_report_comes_without_a_guess_at_the_pattern():
    answer = exercises.grade("02.2", smooth_halo_after_the_barrier, seed=SEED)
    text, shown = str(answer), "\n".join(answer.shown)
    assert not answer.passed and answer.kinds & report.RACES, text
    assert "A race (RAW) on shared memory" in text, text
    assert "Wrong values in `out`" in shown and "halo" not in shown, text
    assert "partial block" not in shown and "halo" not in answer._repr_html_().split("<ul>")[1]
    assert "halo" not in answer.findings[0] or answer.findings[0].plain  # guessed, not shown


def test_the_pattern_guess_stays_without_a_race():
    guessed = report.Sentence("Wrong values; all of them at a block's edge (the halo).")
    guessed.plain = "Wrong values."
    answer = report.Report("02.2", "t", False, [guessed], kinds={"values"})
    assert "halo" in str(answer)
    answer.kinds.add("RAW")
    assert "halo" not in str(answer) and answer.shown == ["Wrong values."]


# --- 5. a shared array sized when the kernel runs -----------------------------------------------

SHAPE = "a shared array's shape must be a constant known when the kernel compiles"


def test_a_shared_array_sized_by_an_argument_gets_a_module_constant_as_the_fix():
    @cuda.jit
    def dot(x, y, out):
        partial = cuda.shared.array(x.size, float32)
        partial[cuda.threadIdx.x] = x[0] * y[0]
        out[0] = partial[0]

    answer = exercises.grade("05.5", dot, seed=SEED)
    [text] = answer.findings
    assert answer.kinds == {"shape"} and SHAPE in text, text
    assert "such as `B = 64` (the block size the exercise launches with: 64 threads)" in text
    assert "not a value from the kernel's arguments" in text, text
    assert "Write `B = 64` at the top of the cell and `cuda.shared.array(B, float32)`" in text
    assert "= x.size`" not in text, text


def test_a_shared_array_sized_by_a_variable_in_an_expression_keeps_it_off_module_level():
    @cuda.jit
    def smooth(a, out):
        n = cuda.blockDim.x
        tile = cuda.shared.array(n + 2, float32)  # wrong on purpose: expression shape
        tile[cuda.threadIdx.x] = a[0]
        out[0] = tile[0]

    [text] = exercises.grade("02.2", smooth, seed=SEED).findings
    assert SHAPE in text and "`n` is a variable of the kernel" in text, text
    assert "Write `B = 64` and `SIZE = B + 2` at the top of the cell" in text, text
    assert "`SIZE = n + 2`" not in text, text


def test_a_shared_array_sized_by_an_array_of_fixed_size_names_that_size():
    @cuda.jit
    def histogram(values, bins):
        local = cuda.shared.array(bins.size, int32)
        local[0] = 0
        bins[0] = local[0] + values[0]

    [text] = exercises.grade("05.4", histogram, seed=SEED).findings
    assert "`BINS = 16` (`bins.size` is 16 in every case of the exercise)" in text, text
    assert "`cuda.shared.array(BINS, int32)`" in text, text


# --- 7. the endless loop names its counters, not its arrays -------------------------------------


@cuda.jit
def grid_stride_without_step(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        out[i] = a * x[i] + y[i]
    out[0] = stride


@cuda.jit
def loop_with_a_bound(x, n):
    i = cuda.grid(1)
    while i < n and i < len(x):
        x[0] = 1


def test_the_endless_loop_lists_only_the_names_its_body_never_advances():
    file = grid_stride_without_step.py_func.__code__.co_filename
    line = _line(grid_stride_without_step, "while i < out.size")
    why = watchdog.loop_reason(file, line + 1)
    assert why.startswith(f"the loop at line {line} never advances i: nothing in its body"), why
    assert "out" not in why.split(":")[0], why
    line = _line(loop_with_a_bound, "while i < n")
    why = watchdog.loop_reason(file, line + 1)
    assert f"the loop at line {line} never advances i:" in why, why


# --- 8. 16-byte elements: the ideal of their own size -------------------------------------------


@cuda.jit
def copy_complex(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@cuda.jit
def copy_complex_every_other(src, dst):
    i = cuda.grid(1)
    if 2 * i < src.size:
        dst[i] = src[2 * i]


def test_complex128_neighbours_are_coalesced_against_a_16_byte_ideal():
    src = (np.arange(64) + 1j).astype(np.complex128)
    seen = tracing.observe(copy_complex, 1, 64, [src, np.zeros_like(src)])
    [load] = seen.select("global", "load")
    assert load.sectors_per_request == 16 and load.ideal_per_request == 16
    assert checks.Coalesced("load")(seen, copy_complex, None) == []
    assert checks.Coalesced("store")(seen, copy_complex, None) == []
    seen = tracing.observe(copy_complex_every_other, 1, 32, [src, np.zeros(32, np.complex128)])
    [found] = checks.Coalesced("load")(seen, copy_complex_every_other, None)
    assert "reads 32.0 sectors per request; a coalesced read needs 16.0" in found


# --- 9. 05.3: an early return before the ballot -------------------------------------------------


@cuda.jit
def bright_early_return(pixels, threshold, count):
    i = cuda.grid(1)
    if i >= pixels.size:
        return
    mask = cuda.ballot_sync(FULL, pixels[i] > threshold)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(count, 0, cuda.popc(mask))


def test_an_early_return_before_the_ballot_fails_05_3_with_both_lines():
    answer = exercises.grade("05.3", bright_early_return, seed=SEED)
    text = str(answer)
    back = _line(bright_early_return, "if i >= pixels.size") + 1
    ballot = _line(bright_early_return, "ballot_sync")
    assert not answer.passed and answer.kinds == {"NoReturnBefore"}, text
    assert f"Line {back} `if i >= pixels.size: return` returns before the ballot" in text, text
    assert f"at line {ballot} `mask = cuda.ballot_sync(FULL, pixels[i] > threshold)`" in text


# --- 10. a configured kernel is refused however it is passed ------------------------------------

CONFIGURED = r"pass the kernel itself, not `kernel\[grid, block\]`"


def _run_cell(source: str, name: str, scope: dict):
    """Run source as a notebook cell does: its text in linecache under its own name."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    exec(compile(source, name, "exec"), scope)


@pytest.fixture
def reverse():
    kernel = solutions.reference("01.1")
    yield kernel
    kernel.__dict__.pop("_gpgpu_configured", None)


def test_a_configured_kernel_is_refused_in_a_call_by_keyword_and_over_lines(reverse):
    with pytest.raises(exercises.GradingError, match=CONFIGURED):
        exercises.grade("01.1", reverse[4, 32])
    with pytest.raises(exercises.GradingError, match=CONFIGURED):
        exercises.grade("01.1", fn=reverse[4, 32])
    with pytest.raises(exercises.GradingError, match=CONFIGURED):
        exercises.grade(
            "01.1",
            reverse[
                4,
                32,
            ],
        )


def test_a_configured_kernel_under_another_name_is_refused_from_the_source(reverse, monkeypatch):
    monkeypatch.setattr(running, "configured_at", lambda kernel: None)  # the source alone
    launch = reverse[4, 32]
    with pytest.raises(exercises.GradingError, match=CONFIGURED):
        exercises.grade("01.1", launch)
    launch(np.zeros(4, np.float64), np.zeros(4, np.float64))
    table = {("01.1", 1): reverse}
    chosen = table["01.1", 1]  # a subscript of a table, not a launch
    assert exercises.grade("01.1", chosen, seed=SEED).passed


def test_a_kernel_configured_in_an_earlier_cell_is_refused_until_it_is_launched(reverse):
    scope = {"exercises": exercises, "reverse": reverse, "np": np}
    _run_cell("k = reverse[4, 32]\n", "<cell-1>", scope)
    with pytest.raises(exercises.GradingError, match=CONFIGURED):
        _run_cell('exercises.grade("01.1", k)\n', "<cell-2>", scope)
    _run_cell("k(np.zeros(3), np.zeros(3))\n", "<cell-3>", scope)  # a test launch
    _run_cell('answer = exercises.grade("01.1", k, seed=7)\n', "<cell-4>", scope)
    assert scope["answer"].passed


def test_a_kernel_configured_in_a_failed_call_is_welcome_afterwards(reverse):
    with pytest.raises(ValueError, match="there is no exercise"):
        exercises.grade("1.1", reverse[4, 32])
    assert exercises.grade("01.1", reverse, seed=SEED).passed


# --- thread and block indices print as plain integers -------------------------------------------


@cuda.jit
def barrier_in_branch(out):
    t = cuda.threadIdx.x
    if t < 32:
        cuda.syncthreads()
    out[cuda.grid(1)] = t


def test_hazards_print_plain_integers():
    trace = trace_kernel(barrier_in_branch, np.int64(2), 64, np.zeros(128))
    assert trace.hazards and all(type(v) is int for h in trace.hazards for v in h.block)
    assert "np." not in trace.summary()
    text = str(exercises.grade("02.5", scan_early_return, seed=SEED))
    assert "np." not in text and "block (1,)" in text, text

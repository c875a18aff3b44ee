"""The watchdog on graded and traced launches: an endless kernel stops with the line and why,
an interrupt stops a launch within 2 s, and no simulator thread is left running."""

import _thread
import signal
import sys
import threading
import time

import numpy as np
import pytest
from gpgpu_instructor import solutions
from numba import cuda

from gpgpu_lessons import exercises, watchdog
from gpgpu_lessons.exercises import running
from gpgpu_lessons.trace import trace_kernel

LIMIT_S = 1.0
SLACK_S = 6.0  # starting threads that compete with spinning ones for the GIL, on a loaded machine


@cuda.jit
def stride_without_step(a, out):
    """A grid-stride loop that forgot `i += stride`."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        out[i] = 2 * a[i]
    out[0] = stride


@cuda.jit
def spin_forever(out):
    """A loop whose condition is always true."""
    a = 1.0
    while a > -1e30:
        pass
    out[0] = a


@cuda.jit
def spin_on_memory(flag):
    """Waits for a value nobody writes."""
    while flag[0] == 0:
        pass


def _line_of(kernel, text):
    import inspect

    lines, first = inspect.getsourcelines(kernel.py_func)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    """Progress goes to a temporary file, never beside the repository's notebooks."""
    path = tmp_path / "progress.json"
    monkeypatch.setenv("GPGPU_LESSONS_PROGRESS", str(path))
    return path


@pytest.fixture
def no_threads_left():
    before = threading.active_count()
    yield
    deadline = time.monotonic() + 2
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before


def _args():
    rng = np.random.default_rng(0)
    return rng.random(64, dtype=np.float32), np.zeros(64, np.float32)


def test_an_endless_trace_stops_with_the_line_and_why(no_threads_left):
    start = time.perf_counter()
    with pytest.raises(watchdog.LaunchTimeout) as error:
        trace_kernel(stride_without_step, 2, 32, *_args(), limit_s=LIMIT_S)
    assert time.perf_counter() - start < LIMIT_S + SLACK_S
    line = _line_of(stride_without_step, "while i < out.size")
    assert f"the loop at line {line} never advances i" in str(error.value)
    assert error.value.line in (line, line + 1)


def test_an_endless_launch_stops_with_the_line_and_why(no_threads_left):
    out = np.zeros(1, np.float64)
    start = time.perf_counter()
    with pytest.raises(watchdog.LaunchTimeout) as error, watchdog.limit(LIMIT_S, spin_forever):
        spin_forever[2, 32](out)
    assert time.perf_counter() - start < LIMIT_S + SLACK_S
    line = _line_of(spin_forever, "while a >")
    assert f"the loop at line {line} never advances a" in str(error.value)
    assert "after 1 s" in str(error.value)


def test_a_loop_waiting_on_memory_is_named(no_threads_left):
    with pytest.raises(watchdog.LaunchTimeout) as error:
        trace_kernel(spin_on_memory, 1, 32, np.zeros(1, np.int32), limit_s=LIMIT_S)
    line = _line_of(spin_on_memory, "while flag")
    assert f"the loop at line {line} waits for `flag[0] == 0` to change" in str(error.value)


def test_the_grader_names_the_endless_loop(no_threads_left, monkeypatch, progress_file):
    monkeypatch.setenv(watchdog.ENVIRONMENT, str(LIMIT_S))

    @cuda.jit
    def saxpy_grid_stride(a, x, y, out):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < out.size:
            out[i] = a * x[i] + y[i]
        out[0] = stride

    start = time.perf_counter()
    answer = exercises.grade("00.5", saxpy_grid_stride, seed=1)
    assert not answer.passed
    assert "never finished" in str(answer) and "never advances i" in str(answer), str(answer)
    assert time.perf_counter() - start < 3 * (LIMIT_S + SLACK_S)
    assert "timeout" in answer.kinds


def test_the_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(watchdog.ENVIRONMENT, "2.5")
    assert watchdog.default_limit() == 2.5
    monkeypatch.setenv(watchdog.ENVIRONMENT, "soon")
    with pytest.raises(ValueError, match="in seconds"):
        watchdog.default_limit()
    monkeypatch.delenv(watchdog.ENVIRONMENT)
    assert watchdog.default_limit() == watchdog.DEFAULT_S
    with pytest.raises(ValueError, match="in seconds"):
        trace_kernel(spin_forever, 1, 1, np.zeros(1), limit_s="1")


def test_every_reference_solution_runs_far_below_the_default_limit(progress_file):
    """The default leaves a wide margin: each graded launch of a reference takes < 1/10 of it."""
    times = []
    original = watchdog.limit

    def timed(seconds=None, kernel=None):
        class Timed:
            def __enter__(self):
                self.inner = original(seconds, kernel)
                self.start = time.perf_counter()
                return self.inner.__enter__()

            def __exit__(self, *exc):
                times.append(time.perf_counter() - self.start)
                return self.inner.__exit__(*exc)

        return Timed()

    for exercise_id in ("04.2", "05.1"):  # the slowest graded launches (0.4 s, loaded machine)
        watchdog.limit = timed
        try:
            assert exercises.grade(exercise_id, solutions.reference(exercise_id), seed=1).passed
        finally:
            watchdog.limit = original
    assert times and max(times) < watchdog.DEFAULT_S / 10


def _interrupt_after(seconds):
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    return timer


@pytest.fixture
def python_handles_ctrl_c():
    """Ctrl-C raises KeyboardInterrupt, as in a notebook, whatever a test before this one set
    (interrupt_main does nothing where SIGINT is ignored or left to the system)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


# Longer than any interrupt takes to stop a launch: a launch the interrupt failed to stop ends
# here, and the test fails, rather than recording an endless kernel until memory runs out.
BACKSTOP_S = 20.0


@pytest.mark.parametrize("how", ["trace", "grade"])
def test_an_interrupt_stops_the_launch_and_every_thread(
    how, no_threads_left, progress_file, python_handles_ctrl_c
):
    @cuda.jit
    def saxpy_grid_stride(a, x, y, out):
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        while i < out.size:
            out[i] = a * x[i] + y[i]
        out[0] = stride

    timer = _interrupt_after(1.0)
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        if how == "trace":
            trace_kernel(saxpy_grid_stride, 4, 64, 2.0, *_args(), np.zeros(64), limit_s=BACKSTOP_S)
        else:
            with watchdog.limit(BACKSTOP_S):
                exercises.grade("00.5", saxpy_grid_stride, seed=1)
            time.sleep(5)  # not reached: the grade is interrupted
    stopped = time.perf_counter() - start
    timer.join()
    assert stopped < 1.0 + 2.0
    # the next correct grade takes its normal time: nothing is left spinning
    start = time.perf_counter()
    assert exercises.grade("00.1", solutions.reference("00.1"), seed=1).passed
    assert time.perf_counter() - start < 10


@pytest.fixture
def quick_hand_overs():
    """The interpreter asks a running thread for the GIL every 0.5 ms instead of every 5 ms: the
    block's threads start while others spin (31 of them: 8 s at 5 ms, on one core), and nothing
    here is timed. The tests that time a stop keep Python's default, as a student has it."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    yield
    sys.setswitchinterval(before)


def test_a_crashing_thread_ends_the_spinning_ones(no_threads_left, quick_hand_overs):
    @cuda.jit
    def crash_or_spin(out):
        i = cuda.grid(1)
        if i == 0:
            out[100] = 1.0  # out of bounds: the launch raises
        a = 1.0
        while i > 0 and a > 0:
            a += 1.0

    with pytest.raises(IndexError):
        crash_or_spin[1, 32](np.zeros(4))


def test_running_explains_a_timeout():
    error = watchdog.LaunchTimeout("k was stopped after 1 s: the loop at line 7 ...", 7)
    crash = running.explain(error, spin_forever)
    assert crash.kind == "timeout" and crash.line == 7
    assert crash.text.startswith("Your kernel never finished: k was stopped after 1 s")

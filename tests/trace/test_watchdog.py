"""The watchdog on graded and traced launches: an endless kernel stops with the line and why after
its CPU time (a busy machine stops no correct kernel), a bad GPGPU_LAUNCH_LIMIT_S is the setup's
fault, and an interrupt, at any moment, stops a launch and leaves no simulator thread running."""

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

LIMIT_S = 1.0  # of CPU time
GUARD_S = 120.0  # wall-clock guards against a hang: far above what any of these takes, loaded


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


def _simulator_threads() -> list:
    from numba.cuda.simulator.kernel import BlockThread

    return [t for t in threading.enumerate() if isinstance(t, BlockThread)]


@pytest.fixture
def no_threads_left():
    """No simulator thread is left once the test's launches have returned."""
    assert not _simulator_threads()
    yield
    assert not _simulator_threads()


def _args():
    rng = np.random.default_rng(0)
    return rng.random(64, dtype=np.float32), np.zeros(64, np.float32)


def test_an_endless_trace_stops_with_the_line_and_why(no_threads_left):
    with pytest.raises(watchdog.LaunchTimeout) as error:
        trace_kernel(stride_without_step, 2, 32, *_args(), limit_s=LIMIT_S)
    line = _line_of(stride_without_step, "while i < out.size")
    assert f"the loop at line {line} never advances i" in str(error.value)
    assert error.value.line in (line, line + 1)


def test_an_endless_launch_stops_with_the_line_and_why(no_threads_left):
    out = np.zeros(1, np.float64)
    with pytest.raises(watchdog.LaunchTimeout) as error, watchdog.limit(LIMIT_S, spin_forever):
        spin_forever[2, 32](out)
    line = _line_of(spin_forever, "while a >")
    assert f"the loop at line {line} never advances a" in str(error.value)
    assert "after 1 s of CPU time" in str(error.value)


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

    answer = exercises.grade("00.5", saxpy_grid_stride, seed=1)
    assert not answer.passed
    assert "never finished" in str(answer) and "never advances i" in str(answer), str(answer)
    assert "timeout" in answer.kinds


def test_the_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(watchdog.ENVIRONMENT, " 2.5 ")
    assert watchdog.default_limit() == 2.5
    monkeypatch.setenv(watchdog.ENVIRONMENT, "")
    assert watchdog.default_limit() == watchdog.DEFAULT_S
    monkeypatch.delenv(watchdog.ENVIRONMENT)
    assert watchdog.default_limit() == watchdog.DEFAULT_S
    for bad in ("1", "nan", True, -1, float("inf")):
        with pytest.raises(watchdog.BadLimit, match="in seconds"):
            trace_kernel(spin_forever, 1, 1, np.zeros(1), limit_s=bad)


@pytest.mark.parametrize("text", ["abc", "-3", "nan", "inf", "1e999", "30s"])
def test_a_bad_limit_in_the_environment_is_refused_with_the_fix(text, monkeypatch):
    monkeypatch.setenv(watchdog.ENVIRONMENT, text)
    with pytest.raises(watchdog.BadLimit) as error:
        watchdog.default_limit()
    assert isinstance(error.value, ValueError)
    assert str(error.value).startswith(
        f"GPGPU_LAUNCH_LIMIT_S must be a number of seconds >= 0 (0: no limit), got {text!r}"
    )


@pytest.mark.parametrize("exercise_id", ["00.5", "00.3"])
def test_the_grader_blames_a_bad_limit_on_the_setup(exercise_id, monkeypatch, progress_file):
    """A bad GPGPU_LAUNCH_LIMIT_S is no fault of the student: grade raises BadLimit, naming the
    variable, instead of failing the kernel."""
    monkeypatch.setenv(watchdog.ENVIRONMENT, "abc")
    with pytest.raises(watchdog.BadLimit, match="GPGPU_LAUNCH_LIMIT_S must be a number"):
        exercises.grade(exercise_id, solutions.reference(exercise_id), seed=1)
    assert not progress_file.exists()
    monkeypatch.setenv(watchdog.ENVIRONMENT, "0")
    assert exercises.grade(exercise_id, solutions.reference(exercise_id), seed=1).passed


class _Clocks:
    """The watchdog's CPU and wall clocks, moved by hand."""

    def __init__(self, monkeypatch):
        self.cpu = self.wall = 100.0
        monkeypatch.setattr(watchdog, "_cpu_clock", lambda: self.cpu)
        monkeypatch.setattr(watchdog, "_wall_clock", lambda: self.wall)


def test_the_limit_counts_cpu_time_not_the_wall_clock(monkeypatch):
    clocks = _Clocks(monkeypatch)
    with watchdog.limit(2.0, spin_forever):
        clocks.wall += 50.0  # a busy machine: the launch waits, it does not work
        clocks.cpu += 1.9
        watchdog.tick([])
        clocks.cpu += 0.1
        with pytest.raises(watchdog.LaunchTimeout, match="after 2 s of CPU time"):
            watchdog.tick([])


def test_a_launch_that_waits_without_working_stops_at_the_backstop(monkeypatch):
    clocks = _Clocks(monkeypatch)
    with watchdog.limit(2.0, spin_forever):
        clocks.wall += watchdog.BACKSTOP_MIN_S - 1
        watchdog.tick([])
        clocks.wall += 1
        with pytest.raises(watchdog.LaunchTimeout) as error:
            watchdog.tick([])
    assert "spin_forever was still running after 60 s on the clock" in str(error.value)
    assert "at least 60 s" in str(error.value) and "GPGPU_LAUNCH_LIMIT_S" in str(error.value)
    with watchdog.limit(10.0):
        clocks.wall += 99
        watchdog.tick([])  # the backstop is 10 times the limit: 100 s
        clocks.wall += 1
        with pytest.raises(watchdog.LaunchTimeout, match="after 100 s on the clock"):
            watchdog.tick([])
    with watchdog.limit(0):
        clocks.wall += 1e6
        clocks.cpu += 1e6
        watchdog.tick([])  # 0: no limit, and no backstop


def test_a_slow_machine_does_not_stop_a_correct_kernel(monkeypatch, progress_file):
    """The wall clock runs 50 times faster than the real one, as if the machine were that much
    busier: the reference solutions' launches (0.03 s of CPU time at most) pass under a limit of
    0.5 s, which a wall-clock limit would pass after 10 ms."""
    real = watchdog._wall_clock
    start = real()
    monkeypatch.setattr(watchdog, "_wall_clock", lambda: start + 50 * (real() - start))
    monkeypatch.setenv(watchdog.ENVIRONMENT, "0.5")
    for exercise_id in ("00.1", "00.5"):
        answer = exercises.grade(exercise_id, solutions.reference(exercise_id), seed=1)
        assert answer.passed, str(answer)


def test_every_reference_solution_runs_far_below_the_default_limit(progress_file):
    """The default leaves a wide margin: each graded launch of a reference uses < 1/10 of it."""
    times = []
    original = watchdog.limit

    def timed(seconds=None, kernel=None):
        class Timed:
            def __enter__(self):
                self.inner = original(seconds, kernel)
                self.start = time.process_time()
                return self.inner.__enter__()

            def __exit__(self, *exc):
                times.append(time.process_time() - self.start)
                return self.inner.__exit__(*exc)

        return Timed()

    for exercise_id in ("04.2", "05.1"):  # the slowest graded launches (0.4 s, loaded machine)
        watchdog.limit = timed
        try:
            assert exercises.grade(exercise_id, solutions.reference(exercise_id), seed=1).passed
        finally:
            watchdog.limit = original
    assert times and max(times) < watchdog.DEFAULT_S / 10


def _ctrl_c():
    """SIGINT to the main thread, as Ctrl-C or Jupyter's stop button sends it: unlike
    interrupt_main, it also wakes the main thread where it waits (for a thread to start)."""
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


def _interrupt_after(seconds, how=_thread.interrupt_main):
    timer = threading.Timer(seconds, how)
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
# here (CPU seconds), and the test fails, rather than recording an endless kernel until memory
# runs out.
BACKSTOP_S = 20.0


@cuda.jit
def endless_saxpy_grid_stride(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        out[i] = a * x[i] + y[i]
    out[0] = stride


@pytest.mark.parametrize("how", ["trace", "grade"])
def test_an_interrupt_stops_the_launch_and_every_thread(
    how, no_threads_left, progress_file, python_handles_ctrl_c, monkeypatch
):
    monkeypatch.setenv(watchdog.ENVIRONMENT, str(BACKSTOP_S))
    kernel = endless_saxpy_grid_stride
    timer = _interrupt_after(1.0)
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        if how == "trace":
            trace_kernel(kernel, 4, 64, 2.0, *_args(), np.zeros(64), limit_s=BACKSTOP_S)
        else:
            exercises.grade("00.5", kernel, seed=1)
        time.sleep(5)  # not reached: the launch is interrupted
    stopped = time.perf_counter() - start
    timer.join()
    assert stopped < GUARD_S  # a guard: the interrupt, not the limit, ended the launch
    assert not _simulator_threads()
    assert exercises.grade("00.1", solutions.reference("00.1"), seed=1).passed


ROUNDS = 20
ROUND_LIMIT_S = 3.0  # CPU s: a round whose interrupt Python dropped ends at this limit


def _interrupted_grade(timer) -> str:
    """Start the timer that interrupts, and grade the endless kernel: 'interrupted', or how the
    interrupt was lost outside the launch, where Python runs the handler between any two
    bytecodes: in a weakref callback it is printed and dropped ('dropped'), inside ast.parse
    CPython turns it into a SystemError ('mangled')."""
    try:
        timer.start()
        exercises.grade("00.5", endless_saxpy_grid_stride, seed=1)
    except KeyboardInterrupt:
        return "interrupted"
    except SystemError as error:
        if "recursion depth mismatch" not in str(error):
            raise
        return "mangled"
    return "dropped"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_at_any_moment_leaves_no_thread(
    no_threads_left, progress_file, python_handles_ctrl_c, monkeypatch
):
    """Ctrl-C at 20 moments of a grade, from before the first launch to while the block's threads
    start and spin: each time every simulator thread has ended when the grade returns, and the
    next correct grade passes. Half the rounds send SIGINT, which also wakes the main thread while
    it waits in Thread.start (the race that left one thread spinning in 2 of 9 rounds)."""
    monkeypatch.setenv(watchdog.ENVIRONMENT, str(ROUND_LIMIT_S))
    outcomes = []
    for k in range(ROUNDS):
        how = _ctrl_c if k % 2 else _thread.interrupt_main
        timer = threading.Timer(0.012 * k, how)
        outcomes.append(_interrupted_grade(timer))
        timer.join()
        left = _simulator_threads()
        assert not left, f"round {k} ({outcomes[-1]}): {len(left)} simulator threads left"
        assert exercises.grade("00.1", solutions.reference("00.1"), seed=1).passed, f"round {k}"
    assert outcomes.count("interrupted") >= ROUNDS * 3 // 4, outcomes


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

"""The timing exercises (00.3, 00.4) on the pretend GPU's virtual clock: a correct timer passes on
a busy machine, a wrong one fails with the same words every time, and every way of reading the
clock reads the virtual one."""

import contextlib
import re
import statistics
import subprocess
import sys
import threading
import time
from time import monotonic, perf_counter  # bound before any check starts

import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import solutions
from numba import cuda
from wrong_answers import (
    events_first_included,
    events_host_clock,
    events_mean,
    events_not_waited,
    timer_no_sync,
    timer_no_warmup_no_sync,
    timer_sync_no_warmup,
)

from gpgpu_lessons import exercises
from gpgpu_lessons.exercises import fakegpu

BURNERS = 3


@contextlib.contextmanager
def busy_machine():
    """BURNERS processes burn CPU inside the block, and time.sleep sleeps 10 times longer."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BURNERS)]
    real_sleep = time.sleep
    time.sleep = lambda seconds: real_sleep(10 * seconds)
    try:
        yield
    finally:
        time.sleep = real_sleep
        for burner in burners:
            burner.kill()
            burner.wait()


@pytest.mark.parametrize("exercise_id", ["00.3", "00.4"])
def test_the_reference_passes_on_a_busy_machine_with_the_same_words(exercise_id, progress_file):
    idle = exercises.grade(exercise_id, solutions.reference(exercise_id))
    with busy_machine():
        busy = [exercises.grade(exercise_id, solutions.reference(exercise_id)) for _ in range(5)]
    assert idle.passed, str(idle)
    assert all(answer.passed for answer in busy), [str(answer) for answer in busy]
    assert {str(answer) for answer in busy} == {str(idle)}


WRONG_TIMERS = [
    ("00.3", timer_no_warmup_no_sync, r"first call compiles the kernel \(here 200 ms\)"),
    ("00.3", timer_sync_no_warmup, r"first call compiles the kernel \(here 200 ms\)"),
    ("00.3", timer_no_sync, r"returns at once: stop the clock after `cuda.synchronize\(\)`"),
    ("00.4", events_mean, r"that is the mean.*median"),
    ("00.4", events_host_clock, r"records no CUDA events"),
    ("00.4", events_not_waited, r"CUDA_ERROR_NOT_READY"),
    ("00.4", events_first_included, r"the first call compiles the kernel \(here 60 ms\)"),
]


@pytest.mark.parametrize("item", WRONG_TIMERS, ids=[w[1].__name__ for w in WRONG_TIMERS])
def test_a_wrong_timer_fails_with_its_message_every_time(item, progress_file):
    exercise_id, timer, pattern = item
    with busy_machine():
        answers = [exercises.grade(exercise_id, timer) for _ in range(5)]
    texts = {str(answer) for answer in answers}
    assert len(texts) == 1, texts
    assert not any(answer.passed for answer in answers)
    assert re.search(pattern, texts.pop(), re.S), str(answers[0])


# ---- more wrong timers: the message says what each did -------------------------------------------


def timer_total(run, repeat=10):
    run()
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (time.perf_counter() - start) * 1e3


def timer_in_seconds(run, repeat=10):
    run()
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (time.perf_counter() - start) / repeat


def timer_times_a_sleep(run, repeat=10):
    run()
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
        time.sleep(0.02)
    cuda.synchronize()
    return (time.perf_counter() - start) / repeat * 1e3


def timer_launch_only(run, repeat=10):
    run()
    cuda.synchronize()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
        cuda.synchronize()
    return sum(samples) / repeat * 1e3


def timer_measures_nothing(run, repeat=10):
    for _ in range(repeat + 1):
        run()
    return 5.0


def events_in_seconds(run, repeat=15):
    run()
    samples = []
    for _ in range(repeat):
        start, end = cuda.event(), cuda.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3)
    return statistics.median(samples)


MORE_WRONG = [
    ("00.3", timer_total, r"all 10 launches together: divide by repeat"),
    ("00.3", timer_in_seconds, r"That is in seconds: multiply"),
    ("00.3", timer_times_a_sleep, r"Something besides the launches is timed \(a time.sleep\?\)"),
    ("00.3", timer_launch_only, r"returns at once: stop the clock after `cuda.synchronize\(\)`"),
    ("00.3", timer_measures_nothing, r"reads no wall clock .* and records no CUDA event"),
    ("00.4", events_in_seconds, r"that is in seconds: `elapsed_time` gives milliseconds"),
]


@pytest.mark.parametrize("item", MORE_WRONG, ids=[w[1].__name__ for w in MORE_WRONG])
def test_the_message_names_what_the_timer_did(item, progress_file):
    exercise_id, timer, pattern = item
    answers = [exercises.grade(exercise_id, timer) for _ in range(2)]
    assert str(answers[0]) == str(answers[1])
    assert not answers[0].passed and re.search(pattern, str(answers[0])), str(answers[0])


# ---- every way of reading the clock --------------------------------------------------------------


def _timed(clock, scale):
    """A correct time_kernel reading `clock()` (a number of 1/scale seconds)."""

    def time_kernel(run, repeat=10):
        run()
        cuda.synchronize()
        start = clock()
        for _ in range(repeat):
            run()
        cuda.synchronize()
        return (clock() - start) / scale / repeat * 1e3

    return time_kernel


def timer_bound_name(run, repeat=10):
    """`from time import perf_counter` at the top of the module, before the check."""
    run()
    cuda.synchronize()
    start = perf_counter()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (perf_counter() - start) / repeat * 1e3


def timer_imports_inside(run, repeat=10):
    import time as clocks

    run()
    cuda.synchronize()
    start = clocks.monotonic_ns()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (clocks.monotonic_ns() - start) / 1e6 / repeat


def timer_sleeps_instead_of_synchronize(run, repeat=10):
    """Waits for the GPU with time.sleep (6 ms a launch, longer than the kernel's 5 ms)."""
    run()
    time.sleep(1.0)
    start = monotonic()
    for _ in range(repeat):
        run()
    time.sleep(repeat * 0.006)
    return (monotonic() - start) / repeat * 1e3


def _closure_timer():
    from time import perf_counter_ns

    def time_kernel(run, repeat=10):
        run()
        cuda.synchronize()
        start = perf_counter_ns()
        for _ in range(repeat):
            run()
        cuda.synchronize()
        return (perf_counter_ns() - start) / 1e6 / repeat

    return time_kernel


CLOCKS = {
    "time.perf_counter": solutions.reference("00.3"),
    "time.perf_counter_ns": _timed(lambda: time.perf_counter_ns(), 1e9),
    "time.time": _timed(lambda: time.time(), 1),
    "time.time_ns": _timed(lambda: time.time_ns(), 1e9),
    "time.monotonic": _timed(lambda: time.monotonic(), 1),
    "time.monotonic_ns": _timed(lambda: time.monotonic_ns(), 1e9),
    "from time import perf_counter": timer_bound_name,
    "import time inside": timer_imports_inside,
    "time.sleep": timer_sleeps_instead_of_synchronize,
    "a closure's perf_counter_ns": _closure_timer(),
}


@pytest.mark.parametrize("how", list(CLOCKS))
def test_every_way_of_reading_the_clock_reads_the_virtual_one(how, progress_file):
    with busy_machine():
        answer = exercises.grade("00.3", CLOCKS[how])
    assert answer.passed, str(answer)


def test_the_virtual_clock_advances_by_what_the_gpu_and_host_do():
    gpu = fakegpu.FakeGPU([5.0], compile_ms=200.0, launch_ms=0.01)
    with gpu.installed():
        start = time.perf_counter_ns()
        gpu.run()  # 200 ms compiling, 0.01 ms launching; 5 ms of work queued
        launched = time.perf_counter_ns()
        cuda.synchronize()
        done = time.perf_counter_ns()
        time.sleep(30.0)  # virtual: no real waiting
        slept = time.perf_counter_ns()
    read = fakegpu.READ_NS
    assert launched - start == 200_010_000 + read
    assert done - launched == 5_000_000  # the work ends 5 ms after its launch
    assert slept - done == 30 * 10**9 + read


def test_an_event_not_yet_reached_is_not_ready_until_it_is():
    gpu = fakegpu.FakeGPU([2.0], compile_ms=0.0)
    with gpu.installed():
        start, end = cuda.event(), cuda.event()
        start.record()
        gpu.run()
        end.record()
        with pytest.raises(fakegpu.NotReady):
            start.elapsed_time(end)
        polls = 0
        while not end.query():  # each query costs READ_NS: the loop ends
            polls += 1
        assert start.elapsed_time(end) == pytest.approx(2.01)
    assert polls == 2_000_000 // fakegpu.READ_NS - 1  # from the launch's end to the work's


def test_the_same_grade_twice_gives_the_same_text(progress_file):
    for exercise_id, timer in [("00.3", timer_no_sync), ("00.4", events_mean)]:
        first, second = (str(exercises.grade(exercise_id, timer)) for _ in range(2))
        assert first == second


# ---- VIRTUAL_TIME, for a student's source run in a process of its own ----------------------------

SOURCES = {
    "import time": """
import time
from numba import cuda

def time_kernel(run, repeat=10):
    run()
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (time.perf_counter() - start) / repeat * 1e3
""",
    "from time import": """
from time import sleep, time_ns
from numba import cuda

def time_kernel(run, repeat=10):
    run()
    sleep(1)
    start = time_ns()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (time_ns() - start) / 1e6 / repeat
""",
}


def _load_with_virtual_time(source):
    """The source's time_kernel, with `import time` giving fakegpu.VIRTUAL_TIME (as a separate
    process that runs the student's source does)."""
    real = sys.modules["time"]
    sys.modules["time"] = fakegpu.VIRTUAL_TIME
    try:
        namespace = {"__name__": "submission"}
        exec(compile(source, "submission.py", "exec"), namespace)
    finally:
        sys.modules["time"] = real
    assert namespace["time_kernel"].__globals__ is namespace
    return namespace["time_kernel"]


@pytest.mark.parametrize("how", list(SOURCES))
def test_a_source_given_virtual_time_is_graded_the_same_way(how, progress_file):
    timer = _load_with_virtual_time(SOURCES[how])
    with busy_machine():
        answer = exercises.grade("00.3", timer)
    assert answer.passed, str(answer)
    wrong = _load_with_virtual_time(SOURCES["import time"].replace("    cuda.synchronize()\n", ""))
    text = str(exercises.grade("00.3", wrong))
    assert "Your timer says 0.0101 ms per launch" in text and "returns at once" in text, text


def test_virtual_time_reads_the_host_clock_when_no_gpu_is_installed():
    virtual = fakegpu.VIRTUAL_TIME
    assert virtual.__name__ == "time" and virtual.strftime is time.strftime
    before = time.perf_counter_ns()
    read = virtual.perf_counter_ns()
    assert before <= read <= time.perf_counter_ns()
    gpu = fakegpu.FakeGPU([1.0])
    with gpu.installed():
        assert virtual.perf_counter_ns() == gpu.now_ns
        virtual.sleep(2)
        assert virtual.monotonic_ns() == gpu.now_ns
        assert virtual.time_ns() == fakegpu.EPOCH_NS + gpu.now_ns


# ---- everything put back -------------------------------------------------------------------------


def test_other_threads_keep_the_host_clocks():
    gpu = fakegpu.FakeGPU([1.0])
    seen = []

    def elsewhere():
        time.sleep(0.001)
        seen.append(time.perf_counter_ns())

    with gpu.installed():
        now = gpu.now_ns
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join(60)  # a generous guard: a real 1 ms sleep
        assert gpu.now_ns == now and gpu.reads == 0
    assert seen


def interrupted_timer(run, repeat=10):
    run()
    assert perf_counter is not fakegpu._HOST["perf_counter"]  # rebound for the check
    raise KeyboardInterrupt


def test_everything_is_put_back_after_an_interrupt(progress_file):
    saved = {name: getattr(time, name) for name in fakegpu.NAMES}
    synchronize, event = cuda.synchronize, cuda.event
    with pytest.raises(KeyboardInterrupt):
        exercises.grade("00.3", interrupted_timer)
    assert {name: getattr(time, name) for name in fakegpu.NAMES} == saved
    assert (cuda.synchronize, cuda.event) == (synchronize, event)
    assert perf_counter is fakegpu._HOST["perf_counter"]
    assert fakegpu.current() is None
    assert exercises.grade("00.3", timer_bound_name).passed

"""A shared fixture (seeded random data, never zeros), the order in which pytest-xdist hands out
the files, and one core for each process that runs tests."""

import os

import numpy as np
import pytest

import gpgpu_lessons  # noqa: F401  (chooses GPU or simulator before numba is imported)

# The files that take longest, longest first: seconds of `make quick` (pytest's durations, each
# worker on one core of the loaded 2-core machine without a GPU, measured 2026-11-27 after the
# trims of issue 22); for the files whose PTX, browser or slow tests `make quick` leaves out (and
# the notebooks), seconds of `make test CUDA=cu12` first and `make quick`'s in brackets. `make
# test` and `make quick` run pytest -n auto --dist loadfile --no-loadscope-reorder: each worker
# takes the next whole file when it is nearly done, in this order, so the long files start early
# and the short ones (every file not named here, in pytest's order) fill the gaps at the end.
SLOWEST_FIRST = (
    "tests/tools/test_ptx.py",  # 130 s: every kernel compiled to PTX, in one subprocess (0 s)
    "tests/exercises/test_export.py",  # 96 s: otter assign and otter run, end to end (1 s)
    "tests/exercises/test_export_nbgrader.py",  # 65 s: nbgrader autograde, end to end (0 s)
    "tests/exercises/test_hidden_cases.py",  # 116 s, 62 s of CPU (a loaded machine)
    "tests/exercises/test_judge.py",  # 41 s: children grading, one that hangs for 30 s
    "notebooks/04_constant_memory.ipynb",  # 30 s
    "tests/core/test_wrapper_contract.py",  # 25 s
    "notebooks/05_atomics_vs_reduction.ipynb",  # 23 s
    "tests/lessons/test_l04_constant_memory.py",  # 11 s, and about 10 s of PTX in make test
    "tests/trace/test_trace_vs_gpu.py",  # 19 s
    "notebooks/03_bank_conflicts.ipynb",  # 19 s
    "tests/tools/test_slides.py",  # 18 s with Chromium (2 s)
    "notebooks/02_shared_memory.ipynb",  # 15 s
    "tests/tools/test_new_lesson.py",  # 14 s (0 s)
    "tests/lessons/test_shown_kernels_compile.py",  # 14 s (0 s)
    "notebooks/01_coalescing.ipynb",  # 14 s
    "tests/lessons/test_l05_reduction.py",  # 12 s
    "tests/lessons/test_l03_bank_conflicts.py",  # 11 s
    "tests/lessons/test_l04_band.py",  # 10 s
    "tests/exercises/test_wrong_answers.py",  # 10 s
    "tests/lessons/test_l02_shared_memory.py",  # 9 s
    "tests/trace/test_watchdog.py",  # 9 s
    "tests/tools/test_bench.py",  # 8 s
    "tests/lessons/test_l02_flips_i32.py",  # 7 s, and its PTX test in make test (not measured)
    "tests/exercises/test_graders.py",  # 7 s
    "tests/lessons/test_l02_fast_shapes.py",  # 6 s
    "notebooks/00_timing_gpu_code.ipynb",  # 5 s
    "tests/lessons/test_l04_fast_shapes.py",  # 5 s
    "tests/tools/test_bench_as_called.py",  # 4 s
    "tests/lessons/test_l01_coalescing.py",  # 4 s
    "tests/lessons/test_l03_thin_gather.py",  # 4 s
    "tests/lessons/test_l05_atomics.py",  # 4 s
    "tests/core/test_runtime.py",  # 3 s
    "tests/core/test_import_order.py",  # 3 s
    "tests/tools/test_perf_run.py",  # 3 s
    "tests/lessons/test_l05_sine_sum.py",  # 3 s
    "tests/tools/test_deck_limits.py",  # 3 s
)


BROWSER_FIXTURES = {"browser", "decks", "opened"}  # tests/tools/test_slides.py: Chromium, decks

# Every core this process may use (before it keeps to one), for the browser's tests.
ALL_CORES = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def pytest_configure(config):
    """Keep each process that runs tests, and the threads and processes it starts, on one core.

    The simulator runs each CUDA thread as a Python thread, and they hand the GIL to each other
    all the time: between two cores each hand-over waits for the other core to wake up, on one
    core it does not. A simulated launch pinned to one core takes about a third of the wall time
    and three quarters of the CPU time (tests/core/test_wrapper_contract.py, 2-core machine).
    pytest-xdist's workers take the cores in turn (gw0 the first, gw1 the second...); a lone
    pytest the core its process id picks; the controller of the workers keeps them all.
    GPGPU_TESTS_ONE_CORE=0 turns this off."""
    if ALL_CORES is None or os.environ.get("GPGPU_TESTS_ONE_CORE") == "0":
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1...
    if worker is None and getattr(config.option, "dist", "no") != "no":
        return  # the controller: its workers inherit what it may use
    cores = sorted(ALL_CORES)
    turn = int(worker.removeprefix("gw")) if worker else os.getpid()
    try:
        os.sched_setaffinity(0, {cores[turn % len(cores)]})
    except OSError:  # a container that forbids it: the tests run as before, only slower
        return
    config.stash[ONE_CORE] = os.sched_getaffinity(0)


ONE_CORE = pytest.StashKey[set]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Chromium renders and prints decks in several processes: a browser test gets every core
    (the browser it starts keeps them for the session)."""
    pinned = item.config.stash.get(ONE_CORE, None)
    if pinned is None or item.get_closest_marker("browser") is None:
        return (yield)
    os.sched_setaffinity(0, ALL_CORES)
    try:
        return (yield)
    finally:
        os.sched_setaffinity(0, pinned)


def pytest_collection_modifyitems(items):
    """Markers for `make quick` (ptx: compiles for a GPU; browser: builds or opens decks), then
    the files of SLOWEST_FIRST first, in its order; each file's tests keep their order."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "cuda_compiler" in fixtures:
            item.add_marker(pytest.mark.ptx)
        if fixtures & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
    rank = {path: n for n, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(scope="session")
def cuda_compiler():
    """Skip a test that compiles for a real GPU where the CUDA compiler is missing (a student's
    install), but fail where `make test CUDA=cu12` installed it (GPGPU_LESSONS_REQUIRE_PTX=1)."""
    from gpgpu_tools import ptx

    reason = ptx.missing_compiler()
    if reason and os.environ.get("GPGPU_LESSONS_REQUIRE_PTX") == "1":
        pytest.fail(f"{reason}; make test CUDA=cu12 installs it")
    if reason:
        pytest.skip(reason)


@pytest.fixture
def rng():
    """A seeded generator, so a failure can be reproduced."""
    return np.random.default_rng(20261122)

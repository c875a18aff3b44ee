"""Graders: every reference solution passes, crashes are explained, the GPU path rehearses each
launch, and the test data holds the boundary values that catch slips."""

import json
import re

import numpy as np
import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import solutions
from numba import cuda
from wrong_answers import mosaic_divides_by_64, saxpy_no_bounds, timer_no_sync

from gpgpu_lessons import exercises, runtime
from gpgpu_lessons.exercises import performance, registry, rehearsal, running

SEED = 7


@pytest.mark.parametrize("exercise_id", [e.id for e in exercises.catalog()])
def test_the_reference_solution_passes(exercise_id, progress_file):
    answer = exercises.grade(exercise_id, solutions.reference(exercise_id), seed=SEED)
    assert answer.passed, str(answer)
    assert str(answer).splitlines()[0].startswith(f"✓ solved · {exercise_id}")
    assert len(str(answer).splitlines()) <= 3, str(answer)  # one line, and what to try next
    assert "Next" in str(answer) or "last one" in str(answer)
    assert exercise_id in json.loads(progress_file.read_text())


@cuda.jit
def saxpy_divides_by_zero(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i] + 1 // (i - i)


@cuda.jit
def saxpy_calls_numpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = np.linalg.det(x)


def test_a_kernel_that_crashes_is_explained_not_raised():
    answer = exercises.grade("00.1", saxpy_divides_by_zero, seed=SEED)
    assert not answer.passed and "error" in answer.kinds
    assert re.search(
        r"ZeroDivisionError in thread \(0, 0, 0\) of block \(0, 0, 0\) at line \d+", str(answer)
    )
    answer = exercises.grade("00.1", saxpy_calls_numpy, seed=SEED)
    assert not answer.passed and answer.kinds & {"error", "compile"}, str(answer)


def test_a_timer_that_raises_is_explained():
    def broken(run, repeat=10):
        raise RuntimeError("oops")

    answer = exercises.grade("00.3", broken)
    assert not answer.passed and "RuntimeError: oops" in str(answer)


def test_a_wrong_matrix_comes_with_a_picture():
    answer = exercises.grade("02.3", mosaic_divides_by_64, seed=SEED)
    assert answer.picture_png and answer.picture_png.startswith(b"\x89PNG")
    assert "data:image/png;base64," in answer._repr_html_()


def test_the_pretend_gpu_is_removed_after_grading():
    before = cuda.synchronize
    exercises.grade("00.3", timer_no_sync)
    assert cuda.synchronize is before


@pytest.mark.skipif(runtime.is_simulator(), reason="bandwidth is measured on a GPU only")
def test_on_a_gpu_a_pass_reports_its_bandwidth():
    answer = exercises.grade("00.1", solutions.reference("00.1"), seed=SEED)
    assert re.search(r"GB/s, \d+% of the device copy", str(answer)), str(answer)


# --- on a GPU: every launch rehearsed on the simulator first ------------------------------------


@pytest.mark.parametrize("exercise_id", ["00.5", "03.1", "05.6"])
def test_on_a_gpu_a_reference_solution_passes_its_rehearsals(exercise_id, gpu_path):
    answer = exercises.grade(exercise_id, solutions.reference(exercise_id), seed=SEED)
    assert answer.passed, str(answer)
    assert gpu_path == []


@cuda.jit
def saxpy_uses_the_grid_group(a, x, y, out):
    i = cuda.grid(1)
    cuda.cg.this_grid()
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_on_a_gpu_a_kernel_the_simulator_cannot_run_is_not_launched(gpu_path, monkeypatch):
    launched = []
    monkeypatch.setattr(running, "run", lambda *args, **options: launched.append(args))
    answer = exercises.grade("00.1", saxpy_uses_the_grid_group, seed=SEED)
    assert answer.kinds == {"not rehearsed"} and "cooperative groups" in str(answer), str(answer)
    assert launched == []


def test_a_large_launch_is_rehearsed_on_its_first_and_last_blocks():
    exercise = registry.get("00.1")
    large = exercise.cases(np.random.default_rng(SEED), True)[-1]
    assert large.grid == 7813 and rehearsal.sample(large.grid)[0] == [(7812, 0, 0), (0, 0, 0)]
    assert rehearsal.sample((3, 2)) is None  # a small grid: every block
    first_and_last, more = rehearsal.sample((30, 20))
    assert first_and_last == [(29, 19, 0), (0, 0, 0)] and {(29, 0, 0), (0, 19, 0)} <= set(more)
    found = rehearsal.rehearse(exercise, saxpy_no_bounds, large)
    assert not found.safe and not found.complete
    assert re.search(
        r"thread \(\d+, 0, 0\) of block \(7812, 0, 0\).*index 1000003 is out of "
        r"bounds for axis 0 with size 1000003, in `x`",
        found.problems[0][1],
    )
    assert rehearsal.rehearse(exercise, solutions.reference("00.1"), large).safe


@cuda.jit
def saxpy_writes_past_the_end_in_block_one(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
    if cuda.blockIdx.x == 1 and cuda.threadIdx.x == 0:
        out[out.size + 5] = 0


def test_what_a_sampled_rehearsal_misses_the_guard_zones_catch(monkeypatch):
    monkeypatch.setattr(rehearsal, "ALL_BLOCKS_UP_TO", 256)  # sample blocks of a small launch
    exercise = registry.get("00.1")
    n = 2011
    x, y = np.ones(n, np.float32), np.ones(n, np.float32)
    case = registry.Case(
        f"n = {n}",
        {"a": np.float32(2), "x": x, "y": y, "out": np.empty_like(x)},
        {"out": 2 * x + y},
        -(-n // 128),
        128,
    )
    assert 1 not in [block[0] for part in rehearsal.sample(case.grid) for block in part]
    assert rehearsal.rehearse(exercise, saxpy_writes_past_the_end_in_block_one, case).safe
    # on a GPU the store lands in the guard zone; the simulator's view of `out` raises instead
    error = IndexError if runtime.is_simulator() else running.GuardDamaged
    with pytest.raises(error) as caught:
        running.run(
            saxpy_writes_past_the_end_in_block_one,
            case,
            exercise.params,
            count_writes=False,
            simulator=False,
        )
    if not runtime.is_simulator():
        assert "4 bytes past its end (the furthest 24 bytes past it)" in str(caught.value)
    got, _ = running.run(
        solutions.reference("00.1"), case, exercise.params, count_writes=False, simulator=False
    )
    assert np.array_equal(got["out"], 2 * x + y)


def test_a_write_into_a_guard_zone_is_explained():
    guarded = running.Guarded(np.ones((3, 4), np.float32), "out")
    assert guarded.damage() is None and guarded.array.shape == (3, 4)
    guarded.buffer[guarded.pad + 12 + 2] = 0  # what a store to out[3, 2] does on a GPU
    with pytest.raises(running.GuardDamaged) as caught:
        running.check_guards([guarded])
    crash = running.explain(caught.value, saxpy_no_bounds)
    assert crash.kind == "out of bounds"
    assert "`out` (shape (3, 4)): 4 bytes past its end (the furthest 12 bytes past" in crash.text


def test_timed_launches_clear_the_outputs_that_start_at_zero():
    """05.6 reserves slots with an atomic counter: without clearing it, the second timed launch
    would write past the end of `out` (the simulator raises; a GPU would overwrite)."""
    exercise = registry.get("05.6")
    case = exercise.cases(np.random.default_rng(SEED), False)[-1]
    timed = performance.time_kernel(solutions.reference("05.6"), case, exercise.params, "mine")
    assert timed.median_ms > 0


def test_the_large_cases_launch_the_blocks_the_statements_name():
    """A kernel sized for the statement's block (a shared array of 64, say) must fit every case
    a GPU runs; 00.5 and 01.3 announce their larger GPU launches."""
    rng = np.random.default_rng(SEED)
    for exercise in registry.all_exercises():
        if exercise.kind != "kernel" or exercise.id in ("00.5", "01.3"):
            continue
        stated = {str(case.block) for case in exercise.cases(rng, False)}
        assert {str(case.block) for case in exercise.cases(rng, True)} == stated, exercise.id


def _ragged(case) -> bool:
    """An array whose size along x (or y) is not a multiple of the block, or an output with
    fewer elements than threads: the last block has threads with nothing (or less) to do."""
    block = case.block if isinstance(case.block, tuple) else (case.block,)
    threads = int(np.prod(case.grid)) * int(np.prod(block))
    for name, array in case.args.items():
        if not isinstance(array, np.ndarray) or name in ("lut", "taps"):
            continue
        sizes = array.shape[::-1] if array.ndim <= 2 else array.shape[1::-1]
        if any(n % b for n, b in zip(sizes, block)):
            return True
        if name in case.expected and array.size < threads:
            return True
    return False


def _tiny(case) -> bool:
    """An input with at most 5 elements along some axis (one element, one row or column), or
    fewer elements than the grid has threads (most threads idle: only edges)."""
    block = case.block if isinstance(case.block, tuple) else (case.block,)
    threads = int(np.prod(case.grid)) * int(np.prod(block))
    inputs = [
        v
        for k, v in case.args.items()
        if isinstance(v, np.ndarray) and k not in case.expected and k not in ("lut", "taps")
    ]
    return any(min(v.shape) <= 5 or v.size < threads for v in inputs)


@pytest.mark.parametrize(
    "exercise_id", [e.id for e in registry.all_exercises() if e.kind == "kernel"]
)
def test_the_cases_hold_boundary_values(exercise_id):
    """Sizes that are no multiple of the block, tiny inputs (one element, or one row or column),
    and for the thresholds, elements equal to the threshold: where slips show."""
    exercise = registry.get(exercise_id)
    cases = exercise.cases(np.random.default_rng(SEED), False)
    assert any(_ragged(case) for case in cases), exercise_id
    assert any(_tiny(case) for case in cases), exercise_id
    data = {"05.1": ("x", 1.2), "05.3": ("pixels", 200), "05.6": ("x", 0.9)}
    if exercise_id in data:
        name, threshold = data[exercise_id]
        for case in cases:
            values = case.args[name]
            assert (values == case.args["threshold"]).any() and threshold == pytest.approx(
                float(case.args["threshold"])
            ), case.label
            assert (values > case.args["threshold"]).any() or values.size == 1
    if exercise_id == "05.4":
        assert {0, 15, 16, 255} <= set(cases[-1].args["values"].tolist())
    if exercise_id == "04.4":
        assert {0, 255} <= set(cases[-1].args["pixels"].tolist())


def test_grade_checks_its_seed_and_refuses_a_configured_launch():
    with pytest.raises(exercises.GradingError, match=r"^seed must be None or an integer >= 0"):
        exercises.grade("00.1", solutions.reference("00.1"), seed="x")
    with pytest.raises(exercises.GradingError, match=r"seed .* got -1"):
        exercises.grade("00.1", solutions.reference("00.1"), seed=-1)
    kernel = solutions.reference("00.1")
    with pytest.raises(exercises.GradingError, match=r"pass the kernel itself, not `kernel\[grid"):
        exercises.grade("00.1", kernel[2, 128])
    with pytest.raises(exercises.GradingError, match=r"not `kernel\[grid, block\]`"):
        exercises.grade(
            "00.1",
            kernel[2, 128, 0, 0],
            seed=SEED,
        )
    pair = ("00.1", kernel)
    assert exercises.grade(pair[0], pair[1], seed=SEED).passed  # a subscript, not a launch

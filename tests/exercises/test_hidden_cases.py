"""The autograder's hidden cases: one submission, one score, and the slips that luck let through."""

import ast
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import hidden, solutions
from numba import cuda, float32, int32
from wrong_answers import BETWEEN_BLOCKS, WRONG, _expected, _name

from gpgpu_lessons.exercises import grader, registry, submission

SEEDS = [(7, 1001), (2026, 31337)]  # (public seed, hidden seed)
PUBLIC, SECRET = SEEDS[0]
KERNELS = [e.id for e in registry.all_exercises() if e.kind == "kernel"]
FULL = 0xFFFFFFFF
B = 64
BINS = 16


def _grade(exercise_id, fn, public=PUBLIC, secret=SECRET):
    """The autograder's grading: the public cases of `public`, then the hidden ones of `secret`."""
    return grader.grade(exercise_id, fn, seed=public, hidden=hidden.cases(exercise_id, secret))


# --- the hidden cases themselves ----------------------------------------------------------------


def test_every_kernel_exercise_has_hidden_cases_and_no_function_exercise():
    assert sorted(hidden.HIDDEN_IDS) == sorted(KERNELS)
    for exercise in registry.all_exercises():
        if exercise.kind == "function":
            assert hidden.cases(exercise.id, 1) is None, exercise.id
    with pytest.raises(ValueError, match="there is no exercise"):
        hidden.cases("05.9", 1)


@pytest.mark.parametrize("exercise_id", KERNELS)
def test_the_hidden_cases_are_drawn_from_their_seed_and_keep_to_the_statement(exercise_id):
    """The same cases at every call for one seed, other data for another; the public cases'
    parameters, dtypes and blocks (00.5's statement alone allows any grid); labelled hidden."""
    exercise = registry.get(exercise_id)
    build = hidden.cases(exercise_id, SECRET)
    first, again = build(False), build(False)
    other = hidden.cases(exercise_id, SECRET + 1)(False)
    assert len(first) >= 5 and len(first) == len(again)
    for a, b in zip(first, again):
        assert (a.label, a.grid, a.block) == (b.label, b.grid, b.block)
        for name, value in a.args.items():
            if name not in a.expected:  # the outputs are empty arrays, whatever they hold
                np.testing.assert_array_equal(value, b.args[name])
    assert any(
        isinstance(v, np.ndarray) and v.size > 4 and not np.array_equal(v, c.args[k])
        for a, c in zip(first, other)
        for k, v in a.args.items()
        if k not in a.expected
    )
    public = exercise.cases(np.random.default_rng(PUBLIC), False)
    dtypes = {k: np.asarray(v).dtype for k, v in public[0].args.items()}
    for case in first:
        assert case.label.endswith("(hidden)")
        assert {k: np.asarray(v).dtype for k, v in case.args.items()} == dtypes, case.label
        assert exercise_id == "00.5" or case.block == public[0].block, case.label
        threads = np.prod(case.grid) * np.prod(case.block)
        assert threads <= 1024, f"{case.label}: {threads} threads; the simulator is slow"
    if exercise_id in ("05.1", "05.6"):  # the data's range, [0.5, 1.5)
        for case in first:
            assert 0.5 <= case.args["x"].min() and case.args["x"].max() < 1.5, case.label


@pytest.mark.parametrize("seeds", SEEDS, ids=[f"{p}-{s}" for p, s in SEEDS])
@pytest.mark.parametrize("exercise_id", KERNELS)
def test_the_reference_passes_its_hidden_cases(exercise_id, seeds):
    report = _grade(exercise_id, solutions.reference(exercise_id), *seeds)
    assert report.passed, str(report)


def test_the_public_cases_of_the_thresholds_hold_ties_neighbours_and_edges():
    """05.1, 05.3, 05.6: values equal to the threshold, right below and above it, the last
    element above it, and (floats) values within 1e-3 of the data's edges 0.5 and 1.5."""
    for exercise_id, name in (("05.1", "x"), ("05.3", "pixels"), ("05.6", "x")):
        case = registry.get(exercise_id).cases(np.random.default_rng(PUBLIC), False)[-1]
        values, threshold = case.args[name], case.args["threshold"]
        if values.dtype.kind == "f":
            below, above = np.nextafter(threshold, -np.inf), np.nextafter(threshold, np.inf)
            assert (values < 0.501).any() and (values >= 1.499).any(), case.label
        else:
            below, above = threshold - 1, threshold + 1
        for value in (threshold, below, above):
            assert (values == value).any(), (case.label, value)
        assert values[-1] == above, case.label


# --- wrong answers: those that failed still fail -------------------------------------------------

GRADED = [w for w in WRONG + BETWEEN_BLOCKS if registry.get(w[0]).kind == "kernel"]


@pytest.mark.parametrize("item", GRADED, ids=[_name(w) for w in GRADED])
def test_a_wrong_answer_still_fails_with_what_it_was_told(item):
    """Still wrong (test_wrong_answers: without them too), and for what it was told."""
    with_hidden = _grade(item[0], item[1])
    assert not with_hidden.passed, str(with_hidden)
    assert with_hidden.kinds & _expected(item, False)[0], str(with_hidden)


def _submitted():
    """lesson05_submissions.WRONG, read from the source (no need to import the course export)."""
    tree = ast.parse((Path(__file__).parent / "lesson05_submissions.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "WRONG":
            return ast.literal_eval(node.value)
    raise AssertionError("lesson05_submissions.py has no WRONG")


def _gradeable(source):
    """The exercise whose kernel the source defines, or None (a syntax error, another name)."""
    try:
        names = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    except SyntaxError:
        return None
    return next((e.id for e in registry.lesson_exercises("05") if e.name in names), None)


# the others (a syntax error, a kernel under another name) leave no kernel to grade: they fail
# in the course graders whatever the cases
SUBMITTED = {name: source for name, source in _submitted().items() if _gradeable(source)}
HEADER = "import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n\n"


@pytest.mark.parametrize("name", sorted(SUBMITTED))
def test_a_submission_gets_the_same_score_with_the_hidden_cases(name, monkeypatch):
    """A wrong submission still fails, on what it failed before; a right one still passes."""
    monkeypatch.setenv("GPGPU_LAUNCH_LIMIT_S", "1")  # count_endless never ends
    vetted = submission.vet(HEADER + SUBMITTED[name])  # as the course's judge runs a cell: the
    if not vetted.ok:  # forgeries in it never run here (test_judge grades the refused ones)
        pytest.skip(f"the judge refuses {name} before any case: {vetted.problems[0]}")
    exercise = registry.get(_gradeable(SUBMITTED[name]))
    kernel = submission.load(vetted, f"<submitted {name}>").get(exercise.name)
    if kernel is None:
        pytest.skip(f"{name} defines {exercise.name} only in a statement the judge leaves out")
    without = grader.grade(exercise.id, kernel, seed=PUBLIC)
    with_hidden = _grade(exercise.id, kernel)
    assert with_hidden.passed == without.passed, str(with_hidden)
    assert with_hidden.passed or with_hidden.kinds & without.kinds, str(with_hidden)


# --- lucky kernels of 05.1: wrong on a narrow range of values or sizes ---------------------------


@cuda.jit
def count_misses_top_band(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold and x[i] < 1.498:  # wrong for x in [1.498, 1.5)
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def count_off_by_an_epsilon(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold + 1e-6:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def count_band_below(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and (x[i] > threshold or threshold - 0.002 <= x[i] < threshold):
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def count_greater_equal(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] >= threshold:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def count_skips_last(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size - 1 and x[i] > threshold:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def count_right_for_full_blocks(x, threshold, count):
    i = min(cuda.grid(1), x.size - 1)  # the threads past the end count the last element
    if x[i] > threshold:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def count_above_literal(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > float32(1.2):  # the statement's threshold, not the argument
        cuda.atomic.add(count, 0, 1)


# before the public cases held neighbours and edges, these passed 20, 30, 20, 0, 24, 24 and 30 of
# 30 public seeds (0 to 29); now the public cases catch all but the last, the hidden ones all
LUCKY = [
    count_misses_top_band,
    count_off_by_an_epsilon,
    count_band_below,
    count_greater_equal,
    count_skips_last,
    count_right_for_full_blocks,
    count_above_literal,
]
CAUGHT_AT_HOME = {k.__name__ for k in LUCKY} - {"count_above_literal"}


@pytest.mark.parametrize("kernel", LUCKY, ids=[k.__name__ for k in LUCKY])
def test_a_lucky_kernel_gets_one_score_for_any_seed(kernel):
    """20 gradings with the same seeds: 20 equal failing reports; 20 public seeds with the same
    hidden seed: 20 failures, in the public cases where they now catch it."""
    reports = {str(_grade("05.1", kernel)) for _ in range(20)}
    assert len(reports) == 1, reports
    assert reports.pop().startswith("✗ not yet")
    for public in range(100, 120):
        report = _grade("05.1", kernel, public=public)
        assert not report.passed, f"public seed {public}:\n{report}"
        found_in_hidden = "(hidden)" in report.findings[0]
        assert found_in_hidden == (kernel.__name__ not in CAUGHT_AT_HOME), str(report)


def test_the_hidden_cases_alone_catch_every_lucky_kernel(monkeypatch):
    """Without the public cases' ties, neighbours and edges, the hidden cases still catch each."""
    exercise = registry.get("05.1")
    only_hidden = hidden.cases("05.1", SECRET)
    monkeypatch.setitem(
        registry._EXERCISES,
        "05.1",
        dataclasses.replace(exercise, cases=lambda rng, gpu: only_hidden(gpu)),
    )
    assert grader.grade("05.1", solutions.reference("05.1")).passed
    for kernel in LUCKY:
        assert not grader.grade("05.1", kernel).passed, kernel.__name__


@cuda.jit
def bright_one_above(pixels, threshold, count):
    i = cuda.grid(1)
    mask = cuda.ballot_sync(FULL, i < pixels.size and pixels[i] > threshold + 1)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(count, 0, cuda.popc(mask))


@cuda.jit
def compact_off_by_an_epsilon(x, threshold, out, count):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    keep = i < x.size and x[i] > threshold + 1e-6
    ballot = cuda.ballot_sync(FULL, keep)
    base = 0
    if lane == 0:
        base = cuda.atomic.add(count, 0, cuda.popc(ballot))
    base = cuda.shfl_sync(FULL, base, 0)
    if keep:
        out[base + cuda.popc(ballot & ((1 << lane) - 1))] = x[i]


@pytest.mark.parametrize(
    "exercise_id, kernel", [("05.3", bright_one_above), ("05.6", compact_off_by_an_epsilon)]
)
def test_the_public_cases_catch_a_comparison_off_by_a_hair(exercise_id, kernel):
    """Right above the threshold: 201 for 05.3 (a random pixel is 201 one time in 255), the
    next float for 05.6 (random data never is): every public seed catches it now."""
    for public in range(10):
        assert not grader.grade(exercise_id, kernel, seed=public).passed, public


# --- what only the hidden cases catch ------------------------------------------------------------


@cuda.jit
def saxpy_stride_of_two_blocks(a, x, y, out):
    for j in range(cuda.grid(1), out.size, 2 * cuda.blockDim.x):  # the public grid's threads
        out[j] = a * x[j] + y[j]


@cuda.jit
def warp_sums_lane_zero_inside_only(x, sums):
    i = cuda.grid(1)
    value = x[i] if i < x.size else 0.0
    for offset in (16, 8, 4, 2, 1):
        value += cuda.shfl_down_sync(FULL, value, offset)
    if cuda.threadIdx.x % 32 == 0 and i < x.size:  # a warp past the end never writes its 0
        sums[i // 32] = value


@cuda.jit
def bright_literal_threshold(pixels, threshold, count):
    i = cuda.grid(1)
    mask = cuda.ballot_sync(FULL, i < pixels.size and pixels[i] > 200)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(count, 0, cuda.popc(mask))


@cuda.jit
def histogram_stride_of_two_blocks(values, bins):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, 2 * cuda.blockDim.x):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def dot_stride_of_two_blocks(x, y, out):
    partial = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for j in range(cuda.grid(1), x.size, 2 * B):
        acc += x[j] * y[j]
    partial[t] = acc
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            partial[t] += partial[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])


ONLY_HIDDEN = [
    ("00.5", saxpy_stride_of_two_blocks, r"for n = 7 with 1 blocks of 1 threads \(hidden\)"),
    ("05.1", count_above_literal, r"threshold 1\.\d+, half within 1e-3 of it \(hidden\)"),
    ("05.2", warp_sums_lane_zero_inside_only, r"n = 1 \(hidden\).*never written"),
    ("05.3", bright_literal_threshold, r"threshold 254 \(hidden\)"),
    ("05.4", histogram_stride_of_two_blocks, r"with (1|3|5) blocks of 64 \(hidden\)"),
    ("05.5", dot_stride_of_two_blocks, r"with (1|3|5) blocks of 64 \(hidden\)"),
]


@pytest.mark.parametrize("item", ONLY_HIDDEN, ids=[_name(w) for w in ONLY_HIDDEN])
def test_the_hidden_cases_catch_what_the_public_ones_miss(item):
    """Kernels right on the public cases of every seed (their grid, their threshold, their
    sizes), wrong on hidden ones: a grid-stride loop over the public grid, a literal threshold,
    a warp past the end of x that writes nothing."""
    exercise_id, kernel, pattern = item
    for public in range(5):
        report = grader.grade(exercise_id, kernel, seed=public)
        assert report.passed, f"public seed {public}:\n{report}"
    for public, secret in SEEDS:
        report = _grade(exercise_id, kernel, public, secret)
        assert not report.passed and report.kinds == {"values"}, str(report)
        assert re.search(pattern, str(report), re.S), str(report)

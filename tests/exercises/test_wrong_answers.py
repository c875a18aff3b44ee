"""Every typical wrong answer of the corpus (wrong_answers.py) is rejected with the finding meant
for it, in the simulator and on the grader's GPU path (each launch rehearsed first)."""

import re

import numpy as np
import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from wrong_answers import BETWEEN_BLOCKS, TRACED, WRONG, _expected, _name

from gpgpu_lessons import exercises
from gpgpu_lessons.exercises import grader, tracing

SEED = 7


@pytest.mark.parametrize("item", WRONG, ids=[_name(w) for w in WRONG])
def test_a_typical_wrong_answer_gets_the_feedback_meant_for_it(item, progress_file):
    exercise_id, answer_fn = item[:2]
    kinds, pattern = _expected(item, grader.on_gpu())
    if kinds <= TRACED and not tracing.available():
        pytest.skip("needs the kernel tracer")
    answer = exercises.grade(exercise_id, answer_fn, seed=SEED)
    text = str(answer)
    assert not answer.passed, text
    assert answer.kinds & kinds, f"expected one of {kinds}, got {answer.kinds}:\n{text}"
    assert re.search(pattern, text, re.S), text
    assert not progress_file.exists()


@pytest.mark.parametrize("item", BETWEEN_BLOCKS, ids=[_name(w) for w in BETWEEN_BLOCKS])
def test_a_race_between_blocks_is_rejected(item, progress_file):
    """Block-private results merged with a plain `+=`: right values in the simulator (it runs
    blocks one after another), a race on a GPU. The cases launch 2 blocks, the tracer samples
    both."""
    exercise_id, answer_fn, _, pattern = item
    exercise = exercises.registry.get(exercise_id)
    assert exercise.trace_blocks is None or exercise.trace_blocks >= 2
    assert all(
        np.prod(case.grid) >= 2 for case in exercise.cases(np.random.default_rng(SEED), False)
    )
    answer = exercises.grade(exercise_id, answer_fn, seed=SEED)
    assert not answer.passed, str(answer)
    assert re.search(pattern, str(answer), re.S), str(answer)


def test_every_exercise_has_at_least_three_wrong_answers_tested():
    counted = {}
    for exercise_id, *_ in WRONG + BETWEEN_BLOCKS:
        counted[exercise_id] = counted.get(exercise_id, 0) + 1
    assert {e.id for e in exercises.catalog()} == set(counted)
    assert min(counted.values()) >= 3, counted


# --- on a GPU: every launch rehearsed on the simulator first ------------------------------------


REHEARSED = [
    w
    for w in WRONG
    if w[2] & {"out of bounds", "barrier", "deadlock"}
    or _name(w) in ("00.5-saxpy_block_stride", "00.5-saxpy_no_loop")
]


@pytest.mark.parametrize("item", REHEARSED, ids=[_name(w) for w in REHEARSED])
def test_on_a_gpu_the_rehearsal_stops_a_kernel_before_it_goes_out_of_bounds(item, gpu_path):
    kinds, pattern = _expected(item, gpu=True)
    answer = exercises.grade(item[0], item[1], seed=SEED)
    assert not answer.passed and answer.kinds & kinds, f"expected {kinds}:\n{answer}"
    assert re.search(pattern, str(answer), re.S), str(answer)
    assert gpu_path == []

"""The autograder's hidden cases: more cases per kernel exercise, run after the public ones."""

# The public cases come from the seed recorded in the exported assignment, so that a student who
# grades at home sees what the autograder sees; the hidden ones come from a seed that only the
# autograder holds, and aim where slips hide: sizes one off a multiple of the block, one element,
# one row or one column, primes, other grids where the statement allows them, values equal to a
# threshold and right next to it, dense bands within 1e-3 of every threshold and of the edges of
# the data's range. They keep to what each statement promises (its launch rules, dtypes and value
# ranges): a correct kernel passes them all. They are small, on a GPU too, where the grader
# rehearses each launch on the simulator first.
#
#     from gpgpu_instructor import hidden
#     grader.grade("05.1", kernel, seed=PUBLIC, hidden=hidden.cases("05.1", HIDDEN_SEED))
#
# lessonNN.py maps each exercise id to a function (rng, gpu) -> list[Case] built with the
# lesson's own case helpers.

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

from gpgpu_lessons.exercises import registry

_BUILDERS: dict[str, Callable] = {}
for _lesson in registry.LESSONS:
    _BUILDERS.update(importlib.import_module(f"{__name__}.lesson{_lesson}").HIDDEN)

HIDDEN_IDS: tuple[str, ...] = tuple(_BUILDERS)


def cases(exercise_id: str, seed: int) -> Callable[[bool], list[registry.Case]] | None:
    """The hidden cases of an exercise for `grade(hidden=...)`, drawn from seed; None if none."""
    exercise = registry.get(exercise_id)  # an unknown id: a ValueError that lists the ids
    build = _BUILDERS.get(exercise.id)
    if build is None:
        return None

    def hidden(gpu: bool) -> list[registry.Case]:
        """The cases, drawn afresh from the seed at each call (the same ones every time)."""
        built = build(np.random.default_rng(seed), gpu)
        for case in built:
            case.label = f"{case.label} (hidden)"
        return built

    return hidden

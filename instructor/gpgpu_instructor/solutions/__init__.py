"""Reference solutions, one module per lesson: instructors and the graders' tests only.

Not in the student's wheel: where this package is installed, `exercises.solution(id)` shows a
solution and `python -m gpgpu_instructor solutions OUT.ipynb` writes the solutions deck.
"""

from __future__ import annotations

import importlib
import inspect
import os


def _module(exercise_id: str):
    return importlib.import_module(f"{__name__}.lesson{exercise_id.split('.')[0]}")


def reference(exercise_id: str):
    """The reference kernel (or function) of an exercise."""
    return _module(exercise_id).REFERENCES[exercise_id]


def source(exercise_id: str) -> str:
    """The reference solution's source, after the constants and device functions it uses."""
    module = _module(exercise_id)
    solution = reference(exercise_id)
    function = getattr(solution, "py_func", solution)
    parts = []
    for extra in getattr(module, "SHOWN_WITH", {}).get(exercise_id, ()):
        parts.append(
            extra if isinstance(extra, str) else inspect.getsource(getattr(extra, "py_func", extra))
        )
    parts.append(inspect.getsource(function))
    return "\n\n".join(part.strip("\n") for part in parts) + "\n"


def grade_job(job: tuple[str, int, bool]) -> tuple[str, int, bool, str]:
    """Grade one reference solution: job = (exercise id, seed, time it on a GPU); returns
    (id, seed, passed, the grader's answer). No progress is kept (an instructor's check)."""
    exercise_id, seed, timing = job
    from gpgpu_lessons.exercises import grader, performance, progress_file

    os.environ[progress_file.VARIABLE] = os.devnull
    compare = performance.compare
    if not timing:
        performance.compare = lambda exercise, fn, rng: ("(not timed)", [])
    try:
        answer = grader.grade(exercise_id, reference(exercise_id), seed=seed)
    finally:
        performance.compare = compare
    return exercise_id, seed, answer.passed, str(answer)

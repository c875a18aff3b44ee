"""What an exercise is (statement, skeleton, test cases, checks, hints) and where to find one."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def discover(folder=Path(__file__).parent) -> tuple[str, ...]:
    """The lessons that have exercises: every lessonNN.py in the folder, found by scanning (a new
    lesson's module needs no edit here). Each defines TITLE and EXERCISES."""
    names = (info.name for info in pkgutil.iter_modules([str(folder)]))
    return tuple(sorted(m.group(1) for m in map(re.compile(r"lesson(\d\d)$").match, names) if m))


LESSONS = discover()


def lesson_module(lesson):
    """The module of one lesson's exercises ("03" or 3)."""
    key = str(lesson).zfill(2)
    if key not in LESSONS:
        raise ValueError(f"there is no lesson {lesson!r}; the lessons are {', '.join(LESSONS)}")
    return importlib.import_module(f"{__package__}.lesson{key}")


def lesson_title(lesson) -> str:
    """A lesson's title, as its exercise module gives it ("Bank conflicts")."""
    return lesson_module(lesson).TITLE


@dataclass
class Case:
    """One run of a student's kernel: its arguments, its launch and what NumPy says it must give.

    `args` maps each parameter name to a NumPy array (copied to the device) or a scalar;
    `expected` maps each output's name to the array it must hold afterwards. Outputs start as
    a poison value (NaN for floats) unless `zeros` names them (kernels that accumulate with
    atomics). `verify`, when given, replaces the element-wise comparison: it gets the outputs
    and returns None (right) or a sentence saying what is wrong.
    """

    label: str
    args: dict[str, Any]
    expected: dict[str, np.ndarray]
    grid: Any
    block: Any
    zeros: tuple[str, ...] = ()
    rtol: float = 1e-5
    atol: float = 1e-6
    write_once: bool | tuple[str, ...] = True  # outputs whose elements one thread writes, once
    verify: Callable[[dict[str, np.ndarray]], str | None] | None = None
    bytes_moved: int | None = None  # for the bandwidth on a GPU


@dataclass(frozen=True)
class Exercise:
    """An exercise: a statement, a skeleton to complete, and what its grader runs and checks.

    `kind` is "kernel" (the student completes a @cuda.jit kernel that the grader launches on
    `cases`) or "function" (a plain Python function, graded by `check_function`). `checks` are
    tracer checks (exercises.checks) that a kernel with the right values must also pass;
    `trace_case` picks the case that is traced, `trace_blocks` how many of its blocks.
    `performance`, on a GPU, builds a large case that is timed against the copy ceiling and the
    reference solution.
    """

    id: str
    name: str
    title: str
    statement: str
    skeleton: str
    params: tuple[str, ...]
    hints: tuple[str, ...]
    cases: Callable[[np.random.Generator, bool], list[Case]] | None = None
    checks: tuple = ()
    trace_case: int = -1
    trace_blocks: int | None = 2  # blocks the tracer samples (None: all)
    kind: str = "kernel"
    check_function: Callable[[Callable], list[str]] | None = None
    figure: Callable[[], Any] | None = None
    next: str = ""
    performance: Callable[[np.random.Generator], Case] | None = None
    needs_shared: bool = False

    @property
    def lesson(self) -> str:
        return self.id.split(".")[0]


_EXERCISES: dict[str, Exercise] = {}


def _load() -> dict[str, Exercise]:
    """Import the lesson modules once, in order, and index their exercises by id."""
    if not _EXERCISES:
        for lesson in LESSONS:
            for exercise in lesson_module(lesson).EXERCISES:
                if exercise.id in _EXERCISES:
                    raise RuntimeError(f"two exercises have the id {exercise.id}")
                _EXERCISES[exercise.id] = exercise
    return _EXERCISES


def all_exercises() -> list[Exercise]:
    """Every exercise, lesson by lesson, warm-up first."""
    return list(_load().values())


def get(exercise_id) -> Exercise:
    """The exercise with this id ("03.2"), or a ValueError that lists the ones that exist."""
    exercises = _load()
    if not isinstance(exercise_id, str):
        raise TypeError(f'an exercise id is a string such as "03.2", got {exercise_id!r}')
    key = exercise_id.strip()
    if key in exercises:
        return exercises[key]
    lesson = key.split(".")[0].zfill(2)
    same_lesson = [e.id for e in exercises.values() if e.lesson == lesson]
    if same_lesson:
        raise ValueError(
            f"there is no exercise {exercise_id!r}; lesson {lesson} has {', '.join(same_lesson)}"
        )
    raise ValueError(
        f'there is no exercise {exercise_id!r}; ids look like "03.2" (lesson 03, '
        f"exercise 2): exercises.catalog() lists them all"
    )


def lesson_exercises(lesson) -> list[Exercise]:
    """The exercises of one lesson ("03" or 3)."""
    key = lesson_module(lesson).__name__[-2:]
    return [e for e in all_exercises() if e.lesson == key]

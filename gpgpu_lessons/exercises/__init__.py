"""Graded exercises for the lessons: statements, skeleton kernels, graders, hints and progress.

    from gpgpu_lessons import exercises
    exercises.catalog()                   # every exercise: id, lesson, name, title
    exercises.statement("03.2")           # the task (and exercises.figure("03.2") where it helps)
    exercises.grade("03.2", my_kernel)    # runs it against NumPy: what is wrong, and why it is slow
    exercises.hint("03.2"); exercises.hint("03.2", level=2)
    exercises.progress()                  # solved / not yet, kept beside the notebooks

Modules: `registry` (what an exercise is; the index), `lesson00` ... `lesson05`, `grader`,
`running` (one launch, its crashes explained; guard zones around the arrays on a GPU),
`rehearsal` (on a GPU, every launch runs on the simulator first, so that an index out of bounds
is reported before it can take the GPU down), `report` (the answer), `checks` and `tracing`
(what the kernel tracer says), `performance` (bandwidth on a GPU), `fakegpu` (a pretend GPU for
timing code), `progress_file`, `cells` (the notebook cells), `figures`; for the course's
grade, `submission` (what a submitted cell may hold), `judge` (a notebook graded from its
source, in processes of its own), `compiling` (a kernel compiled for a GPU, no GPU needed) and
`course` (the otter-grader plugin and the nbgrader preprocessor). Reference solutions are in the
instructor's package (`gpgpu_instructor`), not here: `solution(id)` shows one where it is
installed.
"""

from __future__ import annotations

from typing import NamedTuple

from . import progress_file as _progress
from . import registry as _catalog
from .cells import notebook_cells
from .grader import GradingError, grade

__all__ = [
    "catalog",
    "statement",
    "figure",
    "grade",
    "require",
    "hint",
    "progress",
    "solution",
    "notebook_cells",
    "GradingError",
]


class Entry(NamedTuple):
    """One row of the catalogue."""

    id: str
    lesson: str
    name: str
    title: str


class Table(list):
    """A list of rows that shows as a table: aligned text in a terminal, Markdown in a notebook."""

    header: tuple[str, ...] = ()

    def __str__(self) -> str:
        widths = [max(len(str(v)) for v in column) for column in zip(self.header, *self)]
        lines = [
            "  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip()
            for row in [self.header, *self]
        ]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in self]
        return "\n".join(lines)


def catalog(lesson=None) -> Table:
    """Every exercise (or one lesson's): id, lesson, name to complete, title."""
    chosen = _catalog.all_exercises() if lesson is None else _catalog.lesson_exercises(lesson)
    table = Table(Entry(e.id, e.lesson, e.name, e.title) for e in chosen)
    table.header = Entry._fields
    return table


class Progress(NamedTuple):
    """One row of the progress table."""

    id: str
    title: str
    status: str


def progress() -> Table:
    """Every exercise, 'solved (date)' or 'not yet', from the progress file beside the notebooks."""
    solved = _progress.load()
    table = Table(
        Progress(
            e.id,
            e.title,
            f"solved {solved[e.id].get('solved', '')}".strip() if e.id in solved else "not yet",
        )
        for e in _catalog.all_exercises()
    )
    table.header = Progress._fields
    return table


class Markdown(str):
    """A string that a notebook shows as Markdown and a terminal as plain text (no quotes)."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        return str(self)


def statement(exercise_id) -> Markdown:
    """The task of an exercise, with its heading and how to grade it."""
    from .cells import statement_markdown

    return Markdown(statement_markdown(_catalog.get(exercise_id)))


def require(exercise_id, fn, *, seed=None) -> None:
    """Grade fn and raise AssertionError with the grader's answer unless it is solved: the test
    cell of the course graders (otter-grader, nbgrader), whose report shows that answer."""
    import inspect

    from .grader import configured_at_call_site

    if configured_at_call_site(inspect.currentframe().f_back):
        raise GradingError("pass the kernel itself, not `kernel[grid, block]`")
    answer = grade(exercise_id, fn, seed=seed)
    if not answer.passed:
        raise AssertionError("\n" + str(answer))


class Picture:
    """A matplotlib Figure that a notebook shows as a PNG (no pyplot state involved)."""

    def __init__(self, figure):
        self.figure = figure

    def _repr_png_(self) -> bytes:
        import io

        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()

    def __repr__(self) -> str:
        return "<exercise picture: shown as an image in a notebook; .figure is the Figure>"


def figure(exercise_id) -> Picture | None:
    """The exercise's picture (shown as an image in a notebook), or None where it has none."""
    exercise = _catalog.get(exercise_id)
    return Picture(exercise.figure()) if exercise.figure else None


def hint(exercise_id, level: int = 1) -> Markdown:
    """A hint: level 1 points the way, each higher level says more precisely what to do and what
    goes wrong, never the code itself (the reference solution stays with the instructor)."""
    exercise = _catalog.get(exercise_id)
    count = len(exercise.hints)
    if isinstance(level, bool) or not isinstance(level, int) or level < 1:
        raise ValueError(f"level must be an integer >= 1, got {level!r}")
    shown = min(level, count)
    text = exercise.hints[shown - 1]
    if shown < count:
        more = f' (more: `exercises.hint("{exercise.id}", level={shown + 1})`)'
        return Markdown(f"**Hint {shown}/{count} for {exercise.id}:** {text}{more}")
    return Markdown(
        f"**Hint {shown}/{count} for {exercise.id}, the last one:** {text} (there are no more "
        f'hints: `exercises.grade("{exercise.id}", {exercise.name})` says what is still wrong, '
        "and the reference solution stays with the instructor)"
    )


def solution(exercise_id) -> Markdown:
    """The reference solution's source, where the instructor's package is installed."""
    exercise = _catalog.get(exercise_id)
    try:
        from gpgpu_instructor import solutions
    except ImportError:
        raise PermissionError(
            "the reference solutions are not in the student package: try "
            f'exercises.hint("{exercise.id}"). Instructors install the instructor package '
            "(gpgpu-lessons-instructor, instructor/ in the repository; docs/grading.md)"
        ) from None
    return Markdown(f"```python\n{solutions.source(exercise.id)}```")

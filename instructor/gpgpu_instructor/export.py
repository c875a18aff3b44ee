"""The exercises in the course graders' formats: otter-grader (Gradescope), nbgrader (JupyterHub).

    python -m gpgpu_lessons.exercises export --otter DIR      # DIR/lessonNN/lessonNN.ipynb
    python -m gpgpu_lessons.exercises export --nbgrader DIR   # DIR/source/lessonNN/lessonNN.ipynb

One assignment per lesson, one question per exercise (`POINTS` each): its statement, a cell with
the skeleton for the student (the reference solution in the instructor's version), and a test that
calls `exercises.require`, which grades the kernel and fails with the grader's answer, so the
feedback reaches the student's report. docs/grading.md says how to grade a class with each tool.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

from gpgpu_lessons.exercises import registry
from gpgpu_lessons.exercises.cells import statement_markdown

POINTS = 1


def _imports(exercise: registry.Exercise) -> str:
    """The reference solution module's imports, so that the solution runs in a cell of its own."""
    module = importlib.import_module(f"{__package__}.solutions.lesson{exercise.lesson}")
    lines = inspect.getsource(module).splitlines()
    kept = [
        line
        for line in lines
        if line.startswith(("import ", "from ")) and not line.startswith("from __future__")
    ]
    return "\n".join(kept) + "\n\n"


def _solution(exercise: registry.Exercise) -> str:
    from . import solutions

    return _imports(exercise) + solutions.source(exercise.id)


def _test_code(exercise: registry.Exercise) -> str:
    return (
        "from gpgpu_lessons import exercises\n\n"
        f'exercises.require("{exercise.id}", {exercise.name})'
    )


def question_name(exercise: registry.Exercise) -> str:
    """`q05_1` for exercise 05.1."""
    return "q" + exercise.id.replace(".", "_")


def _cell(kind: str, source: str, **metadata) -> dict:
    cell = {"cell_type": kind, "metadata": metadata, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(cells: list[dict]) -> dict:
    for n, cell in enumerate(cells):
        cell["id"] = f"cell{n:03d}"
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _intro(lesson: str) -> str:
    return (
        f"# Lesson {lesson} · {registry.lesson_title(lesson)}: graded exercises\n\n"
        "Complete each kernel in its cell and run the test below it. The grader runs your "
        "kernel on Numba's CUDA simulator (no GPU needed) on random data and awkward shapes, and "
        "says what is wrong, where, and what the kernel does to memory."
    )


def otter_notebook(lesson) -> dict:
    """A lesson's exercises as an otter-grader master notebook (`otter assign` input)."""
    key = str(lesson).zfill(2)
    config = (
        "# ASSIGNMENT CONFIG\n"
        f"name: lesson{key}\n"
        "export_cell: false\n"
        "check_all_cell: false\n"
        "run_tests: false\n"
        "init_cell: true\n"
        "generate: true\n"
        "requirements: null\n"
    )
    cells = [
        _cell("raw", config),
        _cell("markdown", _intro(key)),
        _cell("code", "from gpgpu_lessons import exercises"),
    ]
    for exercise in registry.lesson_exercises(key):
        prompt = "''' # BEGIN PROMPT\n" + exercise.skeleton + "''' # END PROMPT\n"
        cells += [
            _cell("raw", f"# BEGIN QUESTION\nname: {question_name(exercise)}\npoints: {POINTS}"),
            _cell("markdown", statement_markdown(exercise, "##")),
            _cell("raw", "# BEGIN SOLUTION"),
            _cell(
                "code",
                "# BEGIN SOLUTION NO PROMPT\n" + _solution(exercise) + "# END SOLUTION\n" + prompt,
            ),
            _cell("raw", "# END SOLUTION"),
            _cell("raw", "# BEGIN TESTS"),
            _cell("code", _test_code(exercise)),
            _cell("raw", "# END TESTS"),
            _cell("raw", "# END QUESTION"),
        ]
    return _notebook(cells)


def nbgrader_notebook(lesson) -> dict:
    """A lesson's exercises as an nbgrader source notebook (`nbgrader generate_assignment` input).

    The skeleton is what the student gets: the answer cell holds the skeleton, then the reference
    solution in a `### BEGIN SOLUTION` region, which redefines the function (so the instructor's
    version passes `nbgrader validate`) and which the release replaces by the course's code stub
    (nothing: `nbgrader_config.py`), leaving the skeleton."""
    key = str(lesson).zfill(2)

    def nbgrader(grade_id, *, solution=False, grade=False, locked=False, points=None):
        meta = {
            "grade": grade,
            "grade_id": grade_id,
            "locked": locked,
            "schema_version": 3,
            "solution": solution,
            "task": False,
        }
        if points is not None:
            meta["points"] = points
        return {"nbgrader": meta}

    cells = [
        _cell("markdown", _intro(key), **nbgrader("intro", locked=True)),
        _cell("code", "from gpgpu_lessons import exercises", **nbgrader("setup", locked=True)),
    ]
    for exercise in registry.lesson_exercises(key):
        name = question_name(exercise)
        statement = statement_markdown(exercise, "##")
        cells += [
            _cell("markdown", statement, **nbgrader(f"{name}_statement", locked=True)),
            _cell(
                "code",
                exercise.skeleton
                + "\n### BEGIN SOLUTION\n"
                + _solution(exercise)
                + "### END SOLUTION\n",
                **nbgrader(f"{name}_answer", solution=True),
            ),
            _cell(
                "code",
                _test_code(exercise),
                **nbgrader(f"{name}_test", grade=True, locked=True, points=POINTS),
            ),
        ]
    return _notebook(cells)


NBGRADER_CONFIG = """\
# nbgrader configuration written by `python -m gpgpu_lessons.exercises export --nbgrader`
c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "gpgpu-lessons"
c.ClearSolutions.code_stub = {{"python": ""}}
c.ExecutePreprocessor.timeout = {timeout}
"""


def write(kind: str, folder, lessons=None, timeout: int = 600) -> list[Path]:
    """Write every lesson's assignment for `kind` ("otter" or "nbgrader") under folder."""
    folder = Path(folder)
    written = []
    for lesson in lessons or registry.LESSONS:
        key = str(lesson).zfill(2)
        if kind == "otter":
            path = folder / f"lesson{key}" / f"lesson{key}.ipynb"
            notebook = otter_notebook(key)
        elif kind == "nbgrader":
            path = folder / "source" / f"lesson{key}" / f"lesson{key}.ipynb"
            notebook = nbgrader_notebook(key)
        else:
            raise ValueError(f'kind is "otter" or "nbgrader", got {kind!r}')
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    if kind == "nbgrader":
        config = folder / "nbgrader_config.py"
        config.write_text(NBGRADER_CONFIG.format(root=str(folder.resolve()), timeout=timeout))
        written.append(config)
    return written

"""The exercises in the course graders' formats: otter-grader (Gradescope), nbgrader (JupyterHub).

    python -m gpgpu_instructor export --otter DIR      # DIR/lessonNN/lessonNN.ipynb, ...
    python -m gpgpu_instructor export --nbgrader DIR   # DIR/source/lessonNN/lessonNN.ipynb, ...

One assignment per lesson, one question per exercise (`POINTS` each): its statement, a cell with
the skeleton for the student (the reference solution in the instructor's version), and a test
that calls `exercises.require` on the public cases of the assignment's seed, for the student's
own checks. The grade itself comes from `gpgpu_lessons.exercises.course`: the assignment names
it (an otter plugin; nbgrader's autograde preprocessor), and the export writes beside the
autograder, never into the student's files, what it reads: the seeds and the hidden cases
(`Settings`), and for otter the student package as a wheel that the autograder's image installs.
docs/grading.md says how to grade a class with each tool.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import secrets
import shutil
from pathlib import Path

from gpgpu_lessons.exercises import registry
from gpgpu_lessons.exercises.cells import statement_markdown
from gpgpu_lessons.exercises.course import SETTINGS, Settings, question_name

from . import wheel

POINTS = 1
PLUGIN = "gpgpu_lessons.exercises.course.otter.Judge"
HIDDEN = Path(__file__).parent / "hidden"  # lessonNN.py: HIDDEN, each exercise's hidden cases


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


def _test_code(exercise: registry.Exercise, seed: int) -> str:
    return (
        "from gpgpu_lessons import exercises\n\n"
        f'exercises.require("{exercise.id}", {exercise.name}, seed={seed})'
    )


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


def otter_notebook(lesson, seed: int, autograder_files=()) -> dict:
    """A lesson's exercises as an otter-grader master notebook (`otter assign` input): the
    plugin grades; each question shows as one result with the grader's words."""
    key = str(lesson).zfill(2)
    files = "".join(f"  - {name}\n" for name in autograder_files)
    config = (
        "# ASSIGNMENT CONFIG\n"
        f"name: lesson{key}\n"
        "export_cell: false\n"
        "check_all_cell: false\n"
        "run_tests: false\n"
        "init_cell: true\n"
        "requirements: requirements.txt\n"
        f"autograder_files:\n{files}"
        f"plugins:\n  - {PLUGIN}\n"
        "generate:\n"
        "  show_hidden: true\n"
        "  show_all_public: true\n"
        "  force_public_test_summary: false\n"
    )
    cells = [
        _cell("raw", config),
        _cell("markdown", _intro(key)),
        _cell("code", "from gpgpu_lessons import exercises"),
    ]
    for exercise in registry.lesson_exercises(key):
        prompt = "''' # BEGIN PROMPT\n" + exercise.skeleton + "''' # END PROMPT\n"
        cells += [
            _cell("raw", f"# BEGIN QUESTION\nname: {question_name(exercise.id)}\npoints: {POINTS}"),
            _cell("markdown", statement_markdown(exercise, "##")),
            _cell("raw", "# BEGIN SOLUTION"),
            _cell(
                "code",
                "# BEGIN SOLUTION NO PROMPT\n" + _solution(exercise) + "# END SOLUTION\n" + prompt,
            ),
            _cell("raw", "# END SOLUTION"),
            _cell("raw", "# BEGIN TESTS"),
            _cell("code", _test_code(exercise, seed)),
            _cell("raw", "# END TESTS"),
            _cell("raw", "# END QUESTION"),
        ]
    return _notebook(cells)


def nbgrader_notebook(lesson, seed: int) -> dict:
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
        name = question_name(exercise.id)
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
                _test_code(exercise, seed),
                **nbgrader(f"{name}_test", grade=True, locked=True, points=POINTS),
            ),
        ]
    return _notebook(cells)


NBGRADER_CONFIG = """\
# nbgrader configuration written by `python -m gpgpu_instructor export --nbgrader`
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from gpgpu_lessons.exercises.course.nbgrader import Judge

HERE = os.path.dirname(os.path.abspath(__file__))  # the course folder, wherever it is

c = get_config()  # noqa: F821
c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = "gpgpu-lessons"
c.ClearSolutions.code_stub = {"python": ""}
c.OverwriteCells.add_missing_cells = True  # a deleted test cell comes back, and is graded
# Nothing of a student's notebook runs: Judge grades each exercise from its cell's source in
# processes of its own (it takes the place of nbgrader's Execute) and writes the test cells.
c.Autograde.autograde_preprocessors = [
    Judge,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
c.Judge.folder = os.path.join(HERE, "autograder")
"""


def _settings(folder: Path, lesson: str, seed: int) -> list[Path]:
    """The autograder's files for one lesson in folder: the settings and the hidden cases."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = Settings(lesson, seed, hidden_seed=secrets.randbelow(2**31), points=POINTS)
    written = []
    source = HIDDEN / f"lesson{lesson}.py"
    if source.exists():
        settings.hidden = f"hidden_lesson{lesson}.py"
        shutil.copyfile(source, folder / settings.hidden)
        written.append(folder / settings.hidden)
    path = folder / SETTINGS
    path.write_text(json.dumps(dataclasses.asdict(settings), indent=1) + "\n")
    return [path, *written]


def write(kind: str, folder, lessons=None, seed: int | None = None) -> list[Path]:
    """Write every lesson's assignment for `kind` ("otter" or "nbgrader") under folder; `seed`
    draws the public cases (default: a new one), the hidden ones get a seed of their own."""
    if kind not in ("otter", "nbgrader"):
        raise ValueError(f'kind is "otter" or "nbgrader", got {kind!r}')
    folder = Path(folder)
    seed = secrets.randbelow(2**31) if seed is None else seed
    written = []
    for lesson in lessons or registry.LESSONS:
        key = str(lesson).zfill(2)
        if kind == "otter":
            master = folder / f"lesson{key}"
            files = _settings(master, key, seed)
            files.append(wheel.build(master))
            (master / "requirements.txt").write_text(wheel.requirement(files[-1].name) + "\n")
            path = master / f"lesson{key}.ipynb"
            notebook = otter_notebook(key, seed, [f.name for f in files])
        else:
            written += _settings(folder / "autograder" / f"lesson{key}", key, seed)
            path = folder / "source" / f"lesson{key}" / f"lesson{key}.ipynb"
            notebook = nbgrader_notebook(key, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    if kind == "nbgrader":
        config = folder / "nbgrader_config.py"
        config.write_text(NBGRADER_CONFIG)
        written.append(config)
    return written

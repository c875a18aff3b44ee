"""The catalogue, statements, skeletons, hints, progress, solutions and notebook cells, and the
clear messages for calls the grader cannot run."""

import json
import sys
from pathlib import Path

import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import solutions
from gpgpu_instructor.deck import solutions_notebook
from numba import cuda
from wrong_answers import saxpy_no_loop

from gpgpu_lessons import exercises
from gpgpu_lessons.exercises import cells, registry

SEED = 7
ROOT = Path(__file__).resolve().parents[2]


def test_the_catalogue_has_at_least_four_exercises_per_lesson_and_thirty_in_all():
    rows = exercises.catalog()
    assert len(rows) >= 30
    for lesson in registry.LESSONS[:6]:  # the published lessons (make new-lesson starts with one)
        assert len(exercises.catalog(lesson)) >= 4, lesson
    assert rows[0] == ("00.1", "00", "saxpy", "saxpy, one element per thread")
    assert "03.1  03      transpose_padded" in str(rows)


# --- bad calls ---------------------------------------------------------------------------------


def plain_saxpy(a, x, y, out):
    out[:] = a * x + y


@cuda.jit(device=True)
def device_saxpy(a, x):
    return a * x


@cuda.jit
def saxpy_three(a, x, out):
    pass


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: exercises.grade("00.1", plain_saxpy),
            r"plain Python function, not a kernel: put `@cuda.jit`",
        ),
        (lambda: exercises.grade("00.1", device_saxpy), r"device function"),
        (
            lambda: exercises.grade("00.1", saxpy_three),
            r"takes 3 parameter\(s\) \(a, x, out\); "
            r"exercise 00.1 launches it as `saxpy\(a, x, y, out\)`",
        ),
        (lambda: exercises.grade("00.1", 42), r"grades a @cuda.jit kernel"),
        (
            lambda: exercises.grade("00.2", solutions.reference("00.1")),
            r"plain Python function .* not a @cuda.jit kernel",
        ),
        (lambda: exercises.grade("00.2", lambda n: n), r"calls it as `saxpy_gbs\(n, ms\)`"),
    ],
    ids=[
        "plain-function",
        "device-function",
        "wrong-signature",
        "not-callable",
        "kernel-for-a-function",
        "function-signature",
    ],
)
def test_bad_calls_get_clear_messages(call, message):
    with pytest.raises(exercises.GradingError, match=message):
        call()


@pytest.mark.parametrize(
    "exercise_id, message",
    [("03.9", r"lesson 03 has 03.1, 03.2"), ("9.1", r"ids look like"), (3.2, r"a string")],
)
def test_unknown_exercises_are_named(exercise_id, message):
    with pytest.raises((ValueError, TypeError), match=message):
        exercises.grade(exercise_id, saxpy_no_loop)


# --- hints, progress, solutions ----------------------------------------------------------------


def test_hints_come_in_levels():
    first = exercises.hint("03.1")
    assert first.startswith("**Hint 1/3 for 03.1:**") and "level=2" in first
    last = exercises.hint("03.1", level=3)
    assert "second dimension" in last and "no more hints" in last
    assert exercises.hint("03.1", level=9) == last
    with pytest.raises(ValueError, match="level must be an integer >= 1"):
        exercises.hint("03.1", level=0)
    assert all(2 <= len(e.hints) <= 3 for e in registry.all_exercises())


def test_progress_lists_every_exercise_solved_or_not_yet(progress_file):
    assert {row.status for row in exercises.progress()} == {"not yet"}
    exercises.grade("00.2", solutions.reference("00.2"))
    rows = {row.id: row.status for row in exercises.progress()}
    assert rows["00.2"].startswith("solved ") and rows["00.1"] == "not yet"
    assert len(rows) == len(exercises.catalog())


def test_progress_lives_beside_the_notebooks(tmp_path, monkeypatch):
    from gpgpu_lessons.exercises import progress_file as progress

    monkeypatch.delenv("GPGPU_LESSONS_PROGRESS")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path)
    assert progress.path() == tmp_path / "notebooks" / ".progress.json"
    (tmp_path / "notebooks" / "00_timing.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path / "notebooks")
    assert progress.path() == tmp_path / "notebooks" / ".progress.json"


def test_solutions_come_from_the_instructor_package(monkeypatch):
    shown = exercises.solution("03.1")
    assert "TILE, ROWS = 32, 8" in shown and "(TILE, PADDED)" in shown
    monkeypatch.setitem(sys.modules, "gpgpu_instructor", None)  # a student's install
    with pytest.raises(PermissionError, match="not in the student package"):
        exercises.solution("03.1")


def test_every_reference_kernel_is_in_its_module_signatures():
    import importlib

    for lesson in registry.LESSONS:
        module = importlib.import_module(f"gpgpu_instructor.solutions.lesson{lesson}")
        kernels = [k for k in module.REFERENCES.values() if hasattr(k, "py_func")]
        assert set(kernels) == set(module.SIGNATURES), lesson


def test_statements_skeletons_and_figures():
    for e in registry.all_exercises():
        text = exercises.statement(e.id)
        assert text.startswith(f"## Exercise {e.id} · {e.title}") and f'grade("{e.id}"' in text
        assert f"def {e.name}(" in e.skeleton
        if e.kind == "kernel":
            assert "@cuda.jit" in e.skeleton
    assert exercises.figure("03.1")._repr_png_().startswith(b"\x89PNG")
    assert exercises.figure("00.1") is None


# --- notebook cells ----------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", list(registry.LESSONS))
def test_notebook_cells_follow_the_slide_conventions(lesson):
    import nbformat
    from gpgpu_tools import slides

    title = {
        "cell_type": "markdown",
        "id": "title0",
        "metadata": {"slideshow": {"slide_type": "slide"}},
        "source": f"# Lesson {lesson} · Sample\n\nGoals:\n- one\n- two",
    }
    nb = {
        "cells": [title, *exercises.notebook_cells(lesson)],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    notebook = nbformat.reads(json.dumps(nb), as_version=4)
    nbformat.validate(notebook)
    assert slides.problems(notebook, f"{lesson}_sample.ipynb") == []
    for cell in nb["cells"][1:]:
        assert cell["metadata"]["slideshow"]["slide_type"]
        if "@cuda.jit" in "".join(cell["source"]):
            assert cell["metadata"]["tags"] == ["exercise"]


def test_append_replaces_earlier_exercise_cells(tmp_path):
    path = tmp_path / "03_sample.ipynb"
    path.write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["# Lesson 03"]}
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    added = cells.append(path)
    assert cells.append(path) == added
    notebook = json.loads(path.read_text())
    assert len(notebook["cells"]) == 1 + added
    assert path.read_text().endswith("}\n")


def test_the_solutions_deck(tmp_path):
    path = solutions_notebook(tmp_path / "solutions.ipynb")
    text = path.read_text()
    assert text.count("```python") == len(exercises.catalog())


@pytest.mark.parametrize("exercise_id", ["01.3", "03.1", "05.3"])
def test_a_skeleton_runs_and_is_not_yet_solved(exercise_id, tmp_path, monkeypatch):
    """Skeletons run from a file (as a notebook cell would) and get 'not yet', never an error."""
    import importlib.util

    exercise = registry.get(exercise_id)
    path = tmp_path / f"skeleton_{exercise_id.replace('.', '_')}.py"
    path.write_text(exercise.skeleton)  # the skeleton alone: it imports what it uses
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    answer = exercises.grade(exercise_id, getattr(module, exercise.name), seed=SEED)
    assert not answer.passed and "grader" not in answer.kinds, str(answer)


def _free_names(source: str) -> set[str]:
    """Names a piece of code reads but neither defines, imports, binds nor gets from builtins."""
    import ast
    import builtins

    tree = ast.parse(source)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return read - bound


@pytest.mark.parametrize("exercise_id", [e.id for e in registry.all_exercises()])
def test_every_skeleton_runs_alone_in_a_fresh_namespace(exercise_id):
    """A skeleton cell run first after a restart: it imports every name it uses (float32 too,
    which a kernel's body reads only when it compiles), and defines the function to grade."""
    exercise = registry.get(exercise_id)
    assert _free_names(exercise.skeleton) == set(), exercise_id
    namespace = {}
    exec(compile(exercise.skeleton, f"<skeleton {exercise_id}>", "exec"), namespace)
    assert callable(namespace[exercise.name])
    assert _free_names("x = float32(1) + undefined_name") == {"float32", "undefined_name"}


def test_the_last_hint_says_it_is_the_last_and_promises_no_answer():
    """The hints guide; the code of the answer stays with the instructor (test_no_answers.py)."""
    for e in registry.all_exercises():
        count = len(e.hints)
        last = exercises.hint(e.id, level=count)
        assert f"Hint {count}/{count} for {e.id}, the last one:" in last
        assert f'no more hints: `exercises.grade("{e.id}", {e.name})`' in last
        assert "reference solution stays with the instructor" in last
        before = exercises.hint(e.id, level=count - 1)
        assert "the last one" not in before and f"level={count})" in before
        for level in range(1, count + 1):
            assert "answer" not in exercises.hint(e.id, level=level), (e.id, level)


def test_catalogue_and_statement_print_readably_in_a_plain_repl():
    """In a terminal, Python shows repr(): a table and the statement's text, not raw reprs."""
    table = repr(exercises.catalog("03"))
    assert table.splitlines()[0].split() == ["id", "lesson", "name", "title"]
    assert "Entry(" not in table and table == str(exercises.catalog("03"))
    shown = repr(exercises.statement("03.1"))
    assert shown.startswith("## Exercise 03.1 · A padded tile\n\n") and "\\n" not in shown
    assert repr(exercises.hint("03.1")).startswith("**Hint 1/3 for 03.1:**")
    assert exercises.catalog("03")._repr_markdown_().startswith("| id | lesson | name | title |")
    assert "Correct" not in repr(exercises.progress()) and "not yet" in repr(exercises.progress())


def test_lessons_are_discovered_not_listed(tmp_path):
    for name in ("lesson06.py", "lesson07.py", "helpers.py", "lesson8.py"):
        (tmp_path / name).write_text("")
    assert registry.discover(tmp_path) == ("06", "07")
    assert registry.LESSONS[:6] == ("00", "01", "02", "03", "04", "05")
    assert registry.lesson_title("03") == "Bank conflicts"
    with pytest.raises(ValueError, match="there is no lesson '09'; the lessons are 00, 01"):
        registry.lesson_exercises("09")


def test_appending_keeps_the_stored_outputs_of_unchanged_cells(tmp_path):
    import shutil

    from gpgpu_lessons.exercises import cells as notebook_cells

    source = sorted((ROOT / "notebooks").glob("01_*.ipynb"))[0]
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    notebook_cells.append(copy)
    assert copy.read_text() == source.read_text()  # up to date: nothing changes
    notebook = json.loads(copy.read_text())
    skeleton = next(c for c in notebook["cells"] if "exercise" in c["metadata"].get("tags", []))
    skeleton["source"] = ["# an old skeleton"]
    copy.write_text(json.dumps(notebook))
    notebook_cells.append(copy)
    after = json.loads(copy.read_text())["cells"]
    index = next(k for k, c in enumerate(after) if c["id"] == skeleton["id"])
    assert "".join(after[index]["source"]) == registry.get("01.1").skeleton.rstrip("\n")
    grading = next(c for c in after[index + 1 :] if c["cell_type"] == "code")
    assert grading["outputs"] == []  # its grading cell: graded anew
    later = [c for c in after[index + 1 :] if c["cell_type"] == "code" and c["outputs"]]
    assert later, "the other exercises' cells keep their outputs"

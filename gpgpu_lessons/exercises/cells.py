"""The exercises as notebook cells, to append at the end of each lesson.

`notebook_cells("03")` returns the cells (nbformat dicts) of lesson 03's exercises: an opening
slide that lists them, then per exercise a statement slide (heading, task, how to grade, its
picture where it has one), a subslide with the skeleton in a cell tagged `exercise`, and a
subslide with the grading cell (its answer can be long, or a picture). Every
cell has slide metadata; shown code stays within a slide (<= 22 lines of <= 100 characters).
The skeletons are unsolved: their grading cells print "not yet" and never raise, so nbval passes.

    python -m gpgpu_lessons.exercises append notebooks/        # append to every lesson notebook
    python -m gpgpu_instructor solutions build/solutions.ipynb  # the instructors' deck
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from . import registry

MARKER = "exercises-appended"  # metadata key on appended cells, so appending twice replaces them


def statement_markdown(exercise: registry.Exercise, heading: str = "##") -> str:
    """The statement with its heading and the line that says how to grade it."""
    call = f'exercises.grade("{exercise.id}", {exercise.name})'
    return (
        f"{heading} Exercise {exercise.id} · {exercise.title}\n\n{exercise.statement}\n\n"
        f'Grade it with `{call}`; a hint: `exercises.hint("{exercise.id}")`.'
    )


def _cell_id(*parts: str) -> str:
    return hashlib.sha1("/".join(parts).encode()).hexdigest()[:8]


def cell(kind: str, source: str, slide_type: str, key: str, tags=()) -> dict:
    """A notebook cell (nbformat dict) with slide metadata and the mark of appended cells."""
    metadata = {"slideshow": {"slide_type": slide_type}, MARKER: True}
    if tags:
        metadata["tags"] = list(tags)
    lines = source.splitlines(keepends=True)
    if lines and lines[-1].endswith("\n"):
        lines[-1] = lines[-1][:-1]
    made = {
        "cell_type": kind,
        "id": _cell_id(key, kind, slide_type),
        "metadata": metadata,
        "source": lines,
    }
    if kind == "code":
        made.update(execution_count=None, outputs=[])
    return made


def notebook_cells(lesson) -> list[dict]:
    """The cells of one lesson's exercises, ready to append to its notebook."""
    exercises = registry.lesson_exercises(lesson)
    key = str(lesson).zfill(2)
    names = ", ".join(f"{e.id} {e.title}" for e in exercises)
    cells = [
        cell(
            "markdown",
            f"## Exercises · lesson {key}\n\nFrom a warm-up to a hard one: {names}. "
            "Complete each skeleton, run it, then its grading cell: the grader runs your kernel "
            "on random data and awkward shapes, and says what is wrong, where, and what the "
            "kernel does to memory. `exercises.progress()` lists what you solved.",
            "slide",
            f"{key}/intro",
        ),
        cell(
            "code",
            f'from gpgpu_lessons import exercises\n\nexercises.catalog("{key}")',
            "-",
            f"{key}/catalog",
        ),
    ]
    for exercise in exercises:
        cells.append(cell("markdown", statement_markdown(exercise), "slide", exercise.id))
        if exercise.figure is not None:
            cells.append(
                cell("code", f'exercises.figure("{exercise.id}")', "-", f"{exercise.id}/figure")
            )
        cells.append(
            cell(
                "markdown",
                f"### {exercise.id} · your `{exercise.name}`",
                "subslide",
                f"{exercise.id}/yours",
            )
        )
        cells.append(
            cell("code", exercise.skeleton, "-", f"{exercise.id}/skeleton", tags=("exercise",))
        )
        cells.append(
            cell(
                "markdown",
                f"### {exercise.id} · what the grader says",
                "subslide",
                f"{exercise.id}/verdict",
            )
        )
        cells.append(
            cell(
                "code",
                f'exercises.grade("{exercise.id}", {exercise.name})',
                "-",
                f"{exercise.id}/grade",
            )
        )
    return cells


def write_notebook(path: Path, notebook: dict) -> None:
    """Write a notebook as the repository stores them (indented JSON, UTF-8 text)."""
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def _unchanged(cell: dict, old: dict | None) -> dict | None:
    """The old cell where it is the same cell with the same source and tags, else None."""
    same = (
        old is not None
        and old["cell_type"] == cell["cell_type"]
        and "".join(old["source"]) == "".join(cell["source"])
        and old["metadata"].get("tags") == cell["metadata"].get("tags")
        and old["metadata"].get("slideshow") == cell["metadata"].get("slideshow")
    )
    return old if same else None


def append(notebook_path, lesson=None) -> int:
    """Append (or replace) a lesson's exercise cells at the end of its notebook; return how many.

    A cell whose source did not change stays as it was, its stored outputs (a GPU run's) too; a
    changed one, and the cells of its exercise after it, start without."""
    path = Path(notebook_path)
    lesson = lesson if lesson is not None else path.name[:2]
    notebook = json.loads(path.read_text())
    kept = [c for c in notebook["cells"] if not c.get("metadata", {}).get(MARKER)]
    before = {c.get("id"): c for c in notebook["cells"] if c.get("metadata", {}).get(MARKER)}
    added, changed = [], False
    for cell in notebook_cells(lesson):
        if cell["metadata"]["slideshow"]["slide_type"] == "slide":
            changed = False  # an exercise's first cell: what follows is graded anew if it changed
        old = None if changed else _unchanged(cell, before.get(cell["id"]))
        changed = changed or old is None
        added.append(old or cell)
    notebook["cells"] = kept + added
    write_notebook(path, notebook)
    return len(added)

"""The instructors' solutions deck: every statement followed by its reference solution."""

from __future__ import annotations

from pathlib import Path

from gpgpu_lessons.exercises import registry
from gpgpu_lessons.exercises.cells import cell, statement_markdown, write_notebook

from . import solutions


def solutions_notebook(path) -> Path:
    """Write the instructors' deck: every statement followed by its reference solution."""
    cells = [
        cell(
            "markdown",
            "# Solutions · every exercise\n\nFor instructors:\n- each "
            "statement, then its reference solution\n- not for the students' folder",
            "slide",
            "solutions/title",
        )
    ]
    for exercise in registry.all_exercises():
        cells.append(
            cell("markdown", statement_markdown(exercise), "slide", f"solutions/{exercise.id}")
        )
        cells.append(
            cell(
                "markdown",
                f"```python\n{solutions.source(exercise.id)}```",
                "subslide",
                f"solutions/{exercise.id}/answer",
            )
        )
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_notebook(path, notebook)
    return path

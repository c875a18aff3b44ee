"""Numbers that speaker notes or slides quote from a measurement are the recorded run's.

Each claim names the words around a measured number in a notebook's Markdown or notes, and the
recorded table cell it comes from. The record is the one of the GPU whose run the notebook's
stored outputs come from (its first cell names it). A note that changes its number, or a new GPU
run that changes the measurement, fails here until the two agree again. Notes quote few measured
numbers on purpose: most say what a figure shows, and the figure draws the record."""

import json
import re
from pathlib import Path

import pytest

from gpgpu_lessons import results

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NCU = "03_bank_conflicts/ncu_counters"
LOADS, STORES = "shared ld wavefronts / instr", "shared st wavefronts / instr"

# (notebook, the words with the number, experiment, row label, column)
CLAIMS = [
    ("03_bank_conflicts", "recorded run: {} wavefronts per load", NCU, "seed padded 16x16", LOADS),
    ("03_bank_conflicts", "wavefronts per load and {} per store", NCU, "seed padded 16x16", STORES),
    ("03_bank_conflicts", "({} for the padded loads", NCU, "padded 32x8", LOADS),
    ("03_bank_conflicts", "(ncu: {} per load", NCU, "wide 32x16 (64x64 tile)", LOADS),
    (
        "03_bank_conflicts",
        "per load, {} per store). 8-byte",
        NCU,
        "wide 32x16 (64x64 tile)",
        STORES,
    ),
]


def text_of(notebook: str) -> str:
    cells = json.loads((NOTEBOOKS / f"{notebook}.ipynb").read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def gpu_of(notebook: str) -> str:
    """The GPU whose run the notebook's stored outputs come from."""
    cells = json.loads((NOTEBOOKS / f"{notebook}.ipynb").read_text())["cells"]
    first = next(c for c in cells if c["cell_type"] == "code")
    printed = "".join("".join(o.get("text", "")) for o in first.get("outputs", []))
    return re.search(r"running on the GPU \(([^)]+)\)", printed).group(1)


@pytest.mark.parametrize("notebook, words, key, row, column", CLAIMS)
def test_a_quoted_measurement_is_the_recorded_one(notebook, words, key, row, column):
    pattern = re.escape(words).replace(r"\{\}", r"(\d+\.\d+)")
    found = re.search(pattern, text_of(notebook))
    assert found, f"{notebook}: no Markdown or note says {words.format('N')!r} any more"
    quoted = found.group(1)
    run = next(r for r in results.recorded(key) if r.gpu == gpu_of(notebook))
    table = run.data
    value = table["rows"][[r[0] for r in table["rows"]].index(row)][table["columns"].index(column)]
    decimals = len(quoted.split(".")[1])
    assert f"{value:.{decimals}f}" == quoted, (
        f"{notebook}: the note says {quoted}, {run.label}'s {key} {row!r} {column!r} is {value}"
    )


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_exercise_cell_is_a_graded_one(path):
    """Exercise cells come from the exercise modules only (no ungraded duplicate of a task)."""
    cells = json.loads(path.read_text())["cells"]
    exercise_cells = [c for c in cells if "exercise" in c["metadata"].get("tags", [])]
    assert exercise_cells, f"{path.name} has no exercise"
    stray = [c for c in exercise_cells if not c["metadata"].get("exercises-appended")]
    assert not stray, f"{path.name}: an exercise cell not written by `exercises append`"
    names = re.findall(r"^def (\w+)", "\n".join("".join(c["source"]) for c in exercise_cells), re.M)
    assert len(names) == len(set(names)), f"{path.name}: one exercise function defined twice"

"""No shared or local array in the repository has a shape a GPU cannot compile (issue 22: plain
Numba everywhere): every size an integer or a module-level name, in the package, the tools, the
tests, the templates, the notebooks' code cells and the exercises' skeletons. Read as Python
(AST), not by pattern. The only exceptions, each marked: the corpus of wrong answers and the
grader's own test of the check."""

import ast
import functools
import json
import re
from pathlib import Path

from gpgpu_lessons.exercises import registry, shapes

ROOT = Path(__file__).resolve().parents[2]
MARK = "# wrong on purpose: expression shape"
FOLDERS = ("gpgpu_lessons", "tools", "tests", "templates")


def _code_cell(lines: list[str]) -> str:
    """A notebook cell's code, its IPython magics and shell lines left out."""
    return "".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def _sources():
    """(where, Python source) of every file and notebook code cell to read."""
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text()
    for path in sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("templates/**/*.ipynb")]):
        cells = json.loads(path.read_text())["cells"]
        for number, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                yield f"{path.relative_to(ROOT)} cell {number}", _code_cell(cell["source"])
    for exercise in registry.all_exercises():
        if exercise.kind == "kernel":
            yield f"exercise {exercise.id}'s skeleton", exercise.skeleton


@functools.cache
def _calls() -> tuple:
    """(where, line number, the call's first line, marked) of every refused array call: the
    repository read once for the tests that share it."""
    found = []
    for where, source in _sources():
        tree = ast.parse(re.sub(r"\{\{(\w+)\}\}", r"\1", source))  # a template's {{NAME}}
        lines = source.splitlines()
        for call, _, _ in shapes.bad_shapes(tree):
            text = lines[call.lineno - 1]
            found.append((where, call.lineno, text.strip(), MARK in text))
    return tuple(found)


def test_no_array_shape_is_an_expression():
    found = [f"{where}:{line}: {text}" for where, line, text, marked in _calls() if not marked]
    assert not found, "shapes a GPU cannot compile (use a module constant):\n" + "\n".join(found)


def test_the_marked_exceptions_are_the_grader_tests():
    marked = {where for where, *_, is_marked in _calls() if is_marked}
    assert marked == {
        "tests/exercises/wrong_answers.py",
        "tests/exercises/test_array_shapes.py",
        "tests/exercises/test_feedback_cases.py",
    }


def test_the_scan_sees_an_expression_inside_a_tuple_and_not_a_constant():
    tree = ast.parse(
        "a = cuda.shared.array((TILE, TILE + 1), float32)\n"
        "b = cuda.local.array(2 * B, int32)\n"
        "c = cuda.shared.array(shape=cuda.blockDim.x, dtype=float32)\n"
        "d = cuda.shared.array((TILE, PADDED), float32)\n"
        "e = cuda.local.array(64, float32)\n"
        "f = cuda.shared.array(config.TILE, float32)\n"
    )
    assert [call.lineno for call, *_ in shapes.bad_shapes(tree)] == [1, 2, 3]

"""Conventions every lesson notebook keeps (nbval itself runs the notebooks)."""

import ast
import builtins
import inspect
import json
import re
import textwrap
import types
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def cells(path):
    return json.loads(path.read_text())["cells"]


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def source(cell):
    return "".join(cell["source"])


def test_there_are_lessons():
    assert NOTEBOOKS, "no notebooks found"
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(len(NOTEBOOKS))], (
        "notebooks are numbered 00, 01, ... in teaching order"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_kernels_live_in_the_package(path):
    for cell in cells(path):
        if cell["cell_type"] == "code" and "exercise" not in tags(cell):
            assert "@cuda.jit" not in source(cell), (
                f"{path.name}: a @cuda.jit outside an exercise cell"
            )
            assert not re.search(r"cuda\.jit\(", source(cell)), (
                f"{path.name}: cuda.jit outside an exercise cell"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_code_cell_chooses_the_mode(path):
    first = next(c for c in cells(path) if c["cell_type"] == "code")
    assert source(first).startswith("import gpgpu_lessons"), (
        f"{path.name}: start with 'import gpgpu_lessons'"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_correctness_is_checked_in_both_modes(path):
    checked = [c for c in cells(path) if "nbval-check-output" in tags(c)]
    assert checked, f"{path.name}: no cell tagged nbval-check-output"
    for cell in checked:
        assert "matches NumPy" in json.dumps(cell.get("outputs", [])) or not cell.get("outputs"), (
            f"{path.name}: a checked cell should print mode-independent check lines"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_has_an_exercise(path):
    assert any("exercise" in tags(c) for c in cells(path)), f"{path.name}: no cell tagged exercise"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_outputs_come_from_a_gpu_run(path):
    first = next(c for c in cells(path) if c["cell_type"] == "code")
    printed = "".join("".join(o.get("text", "")) for o in first.get("outputs", []))
    assert "running on the GPU (" in printed, (
        f"{path.name}: commit the outputs of a GPU run (make gpu-run, then make gpu-unpack)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_use_only_public_names(path):
    for cell in cells(path):
        if cell["cell_type"] == "code":
            private = re.findall(r"\b\w+\._[A-Za-z]\w*", source(cell))
            assert not private, (
                f"{path.name}: private names {private}; make them public in the package"
            )


def _imports(path) -> dict:
    """The namespace the notebook's import statements build (nothing else of it runs)."""
    namespace: dict = {}
    for cell in cells(path):
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(source(cell))
        except SyntaxError:  # IPython magics
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                exec(compile(ast.Module([node], []), path.name, "exec"), namespace)
    return namespace


def _shown(path) -> list:
    """Every function a notebook shows with show_source(...), resolved from its imports."""
    namespace, shown = _imports(path), []
    for cell in cells(path):
        if cell["cell_type"] != "code" or "show_source" not in source(cell):
            continue
        for node in ast.walk(ast.parse(source(cell))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "show_source"
            ):
                for arg in node.args:
                    assert isinstance(arg, (ast.Name, ast.Attribute)), (
                        f"{path.name}: show_source({ast.unparse(arg)}): show a kernel by its name"
                    )
                    shown.append(eval(ast.unparse(arg), namespace))
    return shown


def _python_function(kernel):
    return getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel


def _free_names(function) -> set[str]:
    """Names a function's body reads that it does not define itself."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    local = {a.arg for a in ast.walk(definition) if isinstance(a, ast.arg)}
    local |= {
        n.name for n in ast.walk(definition) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
    }
    for node in ast.walk(definition):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
    used = {
        n.id
        for n in ast.walk(definition)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return used - local - set(dir(builtins))


def _is_constant(value) -> bool:
    """A module constant or Numba name: numbers, strings, tuples, arrays, dtypes, types, modules."""
    import numba
    import numpy as np

    if isinstance(
        value,
        (
            int,
            float,
            complex,
            str,
            bool,
            np.ndarray,
            np.generic,
            np.dtype,
            numba.core.types.Type,
            types.ModuleType,
        ),
    ):
        return True
    return isinstance(value, tuple) and all(_is_constant(v) for v in value)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_kernels_are_self_contained(path):
    """Each name in a slide's kernel is a module constant, a Numba name or shown in the lesson."""
    shown = [_python_function(k) for k in _shown(path)]
    assert shown, f"{path.name}: shows no kernel source"
    shown_ids = {id(f) for f in shown}
    for function in shown:
        for name in sorted(_free_names(function)):
            value = function.__globals__.get(name)
            assert name in function.__globals__, (
                f"{path.name}: {function.__name__} uses {name}, undefined"
            )
            assert _is_constant(value) or id(_python_function(value)) in shown_ids, (
                f"{path.name}: {function.__name__} uses {name}, "
                "which is neither a module constant, "
                "a Numba name, nor a function shown in this lesson"
            )

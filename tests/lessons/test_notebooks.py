"""Conventions every lesson notebook keeps (nbval itself runs the notebooks)."""

import json
import re
from pathlib import Path

import pytest
from shown_kernels import free_names, is_constant, python_function, shown_functions

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
            # cuda.jit(module.kernel.py_func) compiles a package kernel's code again: allowed
            recompiled = re.sub(r"cuda\.jit\(\w+\.\w+\.py_func\)", "", source(cell))
            assert not re.search(r"cuda\.jit\(", recompiled), (
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
    if json.loads(path.read_text())["metadata"].get("gpgpu_lessons", {}).get("draft"):
        pytest.skip(f"{path.name} is a draft from make new-lesson: make gpu-run stores its outputs")
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shown_kernels_are_self_contained(path):
    """Each name in a slide's kernel is a module constant, a Numba name or shown in the lesson."""
    shown = [python_function(k) for k in shown_functions(path)]
    assert shown, f"{path.name}: shows no kernel source"
    shown_ids = {id(f) for f in shown}
    for function in shown:
        for name in sorted(free_names(function)):
            value = function.__globals__.get(name)
            assert name in function.__globals__, (
                f"{path.name}: {function.__name__} uses {name}, undefined"
            )
            assert is_constant(value) or id(python_function(value)) in shown_ids, (
                f"{path.name}: {function.__name__} uses {name}, "
                "which is neither a module constant, "
                "a Numba name, nor a function shown in this lesson"
            )

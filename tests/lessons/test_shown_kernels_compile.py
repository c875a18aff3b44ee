"""Every kernel a slide shows compiles with stock numba-cuda: a student who copies the slide (its
kernel, the device functions and constants it shows) into plain Numba gets the same kernel.

Textbook kernels compile in a process that never imports gpgpu_lessons. The fast kernels' wide
accesses are the one exception (docs/importing.md): they import the intrinsics of
gpgpu_lessons.device.vector by name, and that process checks that importing them registered no
compiler rewrite. Needs the CUDA compiler (make test CUDA=cu12)."""

import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numba
import numpy as np
import pytest
from shown_kernels import free_names, python_function, shown_functions

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


VECTOR = "gpgpu_lessons.device.vector"  # wide loads and stores: Numba has no float32x4

# Runs every script in one fresh process (no GPU: device functions are compiled for the cc that
# compile_ptx names), then says which modules of the package were imported and whether any of
# them registered a compiler rewrite.
RUNNER = """
import json, sys, types
import numba.cuda.dispatcher as dispatcher
dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(7, 5))
results = {}
for name, script in json.load(sys.stdin).items():
    try:
        exec(compile(script, name, "exec"), {"__name__": name})
        results[name] = "ok"
    except Exception as error:
        results[name] = f"{type(error).__name__}: {error}"[-3000:]
from numba.cuda.core.rewrites import rewrite_registry
rewrites = [r for group in rewrite_registry.rewrites.values() for r in group]
print(json.dumps({
    "results": results,
    "package_modules": sorted(m for m in sys.modules if m.startswith("gpgpu_lessons")),
    "package_rewrites": [repr(r) for r in rewrites if r.__module__.startswith("gpgpu_lessons")],
}))
"""


def definition(name: str, value) -> str:
    """One line of a standalone script that gives `name` the value a kernel reads."""
    if isinstance(value, types.ModuleType):
        return f"import {value.__name__} as {name}"
    if getattr(numba, name, None) is value:
        return f"from numba import {name}"
    if isinstance(value, numba.core.types.Type) and getattr(numba, str(value), None) is value:
        return f"from numba import {value} as {name}"
    if isinstance(value, np.ndarray):
        return f"{name} = numpy.array({value.tolist()!r}, dtype=numpy.{value.dtype})"
    if isinstance(value, np.generic):
        return f"{name} = numpy.{type(value).__name__}({value.item()!r})"
    if isinstance(value, (bool, int, float, str, tuple)):
        return f"{name} = {value!r}"
    raise AssertionError(f"{name} = {value!r}: no plain-Python spelling for a standalone script")


def standalone(kernel) -> str:
    """A script of the kernel as the slides show it: constants, device functions, the kernel."""
    lines, functions, seen = ["import numpy", "from numba import cuda"], [], set()
    aliases = []

    def add(function):
        if function.__name__ in seen:
            return
        seen.add(function.__name__)
        for name in sorted(free_names(function)):
            value = function.__globals__[name]
            if getattr(value, "__module__", "") == VECTOR:
                lines.append(f"from {VECTOR} import {name}")
            elif python_function(value) is not value or inspect.isfunction(value):
                function_of = python_function(value)  # a device function shown in the lesson
                add(function_of)
                if function_of.__name__ != name:  # the module binds it under another name
                    jitted = inspect.getsource(function_of).lstrip().startswith("@")
                    wrap = "{}" if jitted else "cuda.jit(device=True)({})"
                    aliases.append(f"{name} = {wrap.format(function_of.__name__)}")
            elif name != "cuda":
                lines.append(definition(name, value))
        functions.append(textwrap.dedent(inspect.getsource(function)))

    add(python_function(kernel))
    body = "\n\n".join(functions[:-1] + aliases + functions[-1:])
    return "\n".join(dict.fromkeys(lines)) + "\n\n\n" + body


def shown_kernels() -> list:
    """(notebook, kernel, signature) for every shown kernel that its module registers."""
    found = {}
    for path in NOTEBOOKS:
        for kernel in shown_functions(path):
            function = python_function(kernel)
            registry = getattr(importlib.import_module(function.__module__), "SIGNATURES", {})
            if kernel in registry:
                found.setdefault(function.__qualname__ + function.__module__, (path, kernel))
    return [(path, kernel, registry_signature(kernel)) for path, kernel in found.values()]


def registry_signature(kernel) -> str:
    function = python_function(kernel)
    return importlib.import_module(function.__module__).SIGNATURES[kernel][0]


CASES = shown_kernels()
IDS = [f"{p.stem[:2]}-{python_function(k).__name__}" for p, k, _ in CASES]


def compile_all(cases) -> dict:
    """Compile each case's standalone script for sm_75 in one process without the simulator."""
    scripts = {}
    for (_, kernel, signature), case_id in cases:
        name = python_function(kernel).__name__
        scripts[case_id] = (
            standalone(kernel)
            + f"\n\nptx, _ = cuda.compile_ptx({name}.py_func, {signature!r}, cc=(7, 5))\n"
            + "assert '.entry' in ptx\n"
        )
    env = {"PATH": "/usr/bin:/bin", "GPGPU_LESSONS_COMPILE_ONLY": "1", "GPGPU_LESSONS_QUIET": "1"}
    if "PYTHONPATH" in os.environ:  # where this Python finds numba (a GPU run's wheels: gpurun)
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(scripts),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {**json.loads(done.stdout), "scripts": scripts}


def is_textbook(kernel) -> bool:
    return python_function(kernel).__module__.endswith(".textbook")


@pytest.fixture(scope="module")
def compiled(cuda_compiler):
    """Textbook kernels in one process, the others (which may use device.vector) in another."""
    cases = list(zip(CASES, IDS))
    return {
        "textbook": compile_all([c for c in cases if is_textbook(c[0][1])]),
        "other": compile_all([c for c in cases if not is_textbook(c[0][1])]),
    }


def test_the_slides_show_kernels():
    assert len(CASES) >= 20, IDS


def test_textbook_kernels_need_nothing_from_the_package(compiled):
    assert compiled["textbook"]["package_modules"] == []
    assert not any(f"from {VECTOR}" in s for s in compiled["textbook"]["scripts"].values())


def test_the_package_registers_no_compiler_rewrite(compiled):
    assert compiled["other"]["package_rewrites"] == []
    assert set(compiled["other"]["package_modules"]) <= {
        "gpgpu_lessons",
        "gpgpu_lessons.runtime",
        "gpgpu_lessons.device",
        VECTOR,
    }


@pytest.mark.parametrize("path, kernel, signature", CASES, ids=IDS)
def test_a_shown_kernel_compiles_with_stock_numba(path, kernel, signature, compiled, request):
    case_id = request.node.callspec.id
    group = compiled["textbook" if is_textbook(kernel) else "other"]
    assert group["results"][case_id] == "ok", (
        f"{path.name}: {group['results'][case_id]}\n{group['scripts'][case_id]}"
    )

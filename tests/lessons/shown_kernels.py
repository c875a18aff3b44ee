"""What a notebook shows on slides: the functions given to show_source, and the names they use."""

import ast
import builtins
import inspect
import json
import textwrap
import types


def cells(path):
    return json.loads(path.read_text())["cells"]


def source(cell):
    return "".join(cell["source"])


def imports(path) -> dict:
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


def shown_functions(path) -> list:
    """Every function a notebook shows with show_source(...), resolved from its imports."""
    namespace, shown = imports(path), []
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


def python_function(kernel):
    return getattr(kernel, "py_func", None) or getattr(kernel, "fn", None) or kernel


def free_names(function) -> set[str]:
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


def is_constant(value) -> bool:
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
    return isinstance(value, tuple) and all(is_constant(v) for v in value)

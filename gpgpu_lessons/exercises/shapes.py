"""Shared and local array shapes a GPU can compile: each size an integer or a module-level name.

Numba compiles `cuda.shared.array(shape, dtype)` (and `cuda.local.array`) only when every size
is a constant it knows at compile time: an integer literal, or a global (a module constant,
`SIZE = B + 2` at the top of the cell is fine). An expression inside the call (`B + 2`,
`(TILE, TILE + 1)`) or a variable of the kernel fails to compile on a GPU, while the simulator,
which runs Python, accepts it. `refused(kernel)` finds those calls in the kernel's source and
in the device functions it calls, so the grader says so before running anything.
"""

from __future__ import annotations

import ast
import copy
import inspect
import linecache
import textwrap
import tokenize
from collections.abc import Iterator

_SPACES = ("shared", "local")


def _space(call: ast.Call) -> str | None:
    """'shared' or 'local' for a `cuda.shared.array(...)` / `shared.array(...)` call, else None."""
    function = call.func
    if not (isinstance(function, ast.Attribute) and function.attr == "array"):
        return None
    owner = function.value
    name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
    return name if name in _SPACES else None


def _shape(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "shape"), None)


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (`cuda` for `cuda.blockDim.x`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _constant(size: ast.expr) -> bool:
    """An integer literal, a name or a module attribute (`config.TILE`, not `cuda.blockDim.x`)."""
    if isinstance(size, ast.Constant):
        return isinstance(size.value, int) and not isinstance(size.value, bool)
    if isinstance(size, ast.Attribute):
        return _root(size) != "cuda"
    return isinstance(size, ast.Name)


def bad_shapes(
    tree: ast.AST, variables: frozenset[str] = frozenset()
) -> Iterator[tuple[ast.Call, str, str | None]]:
    """(call, 'shared' or 'local', the offending variable or None) for every array call whose
    shape reads a name among `variables` (the kernel's parameters and locals: `n`, `x.size`,
    `n + 2`), or holds something other than integers and names."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (space := _space(node)) is None:
            continue
        shape = _shape(node)
        if shape is None:
            continue
        sizes = shape.elts if isinstance(shape, ast.Tuple) else [shape]
        names = [n.id for size in sizes for n in ast.walk(size) if isinstance(n, ast.Name)]
        variable = next((name for name in names if name in variables), None)
        if variable is not None:
            yield node, space, variable
        elif not all(_constant(size) for size in sizes):
            yield node, space, None


def _variables(function: ast.AST) -> frozenset[str]:
    """A function's parameters and the names it assigns (nothing for another node)."""
    if not isinstance(function, ast.FunctionDef):
        return frozenset()
    names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    names |= {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    return frozenset(names)


def _flat(source: str, node: ast.AST) -> str:
    """A node's source on one line."""
    return " ".join(ast.get_source_segment(source, node).split())


def _with_size(call: ast.Call, replaced, name: str = "SIZE") -> str:
    """The call with `replaced` (its shape, one size or several of it, or a variable's name)
    written `name` (the call's nodes are changed: it is read before)."""
    chosen = replaced if isinstance(replaced, list) else [replaced]

    class Swap(ast.NodeTransformer):
        def visit(self, node):
            if any(node is r or (isinstance(node, ast.Name) and node.id == r) for r in chosen):
                return ast.Name(name)
            return self.generic_visit(node)

    return ast.unparse(Swap().visit(call))


def _reads(size: ast.expr, names) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(size))


def _exercise_of(kernel):
    """The kernel exercise whose kernel has this name (the skeleton's), or None."""
    from . import registry

    name = getattr(kernel, "__name__", "")
    found = [e for e in registry.all_exercises() if e.kind == "kernel" and e.name == name]
    return found[0] if len(found) == 1 else None


def _array_size(size: ast.expr, parameters) -> tuple[str, int] | None:
    """(parameter, axis) for a size read from a parameter array: `x.size` (axis -1 for all of
    it), `x.shape[k]`, `len(x)` (axis 0); else None."""
    if isinstance(size, ast.Attribute) and size.attr == "size":
        owner, axis = size.value, -1
    elif isinstance(size, ast.Call) and getattr(size.func, "id", None) == "len" and size.args:
        owner, axis = size.args[0], 0
    elif (
        isinstance(size, ast.Subscript)
        and isinstance(size.value, ast.Attribute)
        and size.value.attr == "shape"
        and isinstance(size.slice, ast.Constant)
        and isinstance(size.slice.value, int)
    ):
        owner, axis = size.value.value, size.slice.value
    else:
        return None
    if isinstance(owner, ast.Name) and owner.id in parameters:
        return owner.id, axis
    return None


def _suggestion(kernel, size: ast.expr, parameters, taken) -> tuple[str, int, str]:
    """(name, value, why) of the module-level constant to offer for a size the kernel computes
    when it runs: the one value a parameter array's size has in every case of the exercise,
    else the block size the exercise launches with (64 where the exercise is not known)."""
    exercise = _exercise_of(kernel)
    name = "SIZE" if exercise is None or "B" in taken else "B"
    if exercise is None or exercise.cases is None:
        return name, 64, "a number, for example the block size you launch with"
    import numpy as np

    cases = exercise.cases(np.random.default_rng(0), False)
    read = _array_size(size, parameters)
    if read is not None:
        parameter, axis = read
        arrays = [c.args.get(parameter) for c in cases]
        values = {
            (a.size if axis == -1 else a.shape[axis])
            for a in arrays
            if isinstance(a, np.ndarray) and (axis == -1 or axis < a.ndim)
        }
        if len(values) == 1 and len(arrays) == len(cases) and parameter.upper() not in taken:
            (value,) = values
            return (
                parameter.upper(),
                int(value),
                f"`{ast.unparse(size)}` is {value} in every case of the exercise",
            )
    block = cases[0].block
    shape = tuple(int(b) for b in (block if isinstance(block, (tuple, list)) else (block,)))
    launched = " x ".join(map(str, shape))
    return name, shape[0], f"the block size the exercise launches with: {launched} threads"


def _message(
    source: str,
    call: ast.Call,
    line: int,
    space: str,
    variable: str | None,
    kernel=None,
    parameters: frozenset[str] = frozenset(),
) -> str:
    """The sentence for one refused call: where, why, and the call rewritten with a constant."""
    text, shape = _flat(source, call), _shape(call)
    sizes = shape.elts if isinstance(shape, ast.Tuple) else [shape]
    bad = [size for size in sizes if not _constant(size)]
    launch = next(
        (
            _flat(source, node)
            for node in ast.walk(bad[0] if len(bad) == 1 else shape)
            if isinstance(node, ast.Attribute) and _root(node) == "cuda"
        ),
        None,
    )
    if variable is None and launch is None:
        replaced = bad[0] if len(bad) == 1 else shape
        return (
            f"line {line}: `{text}`: a {space} array's size must be a constant Numba knows when "
            f"it compiles: an integer or a module-level name. Write `SIZE = "
            f"{_flat(source, replaced)}` at the top of the cell and "
            f"`{_with_size(call, replaced)}` (the simulator accepts the expression, a GPU does "
            "not)."
        )
    # a size known only when the kernel runs: its arguments, its locals, the launch
    if variable is not None:
        replaced = [size for size in sizes if _reads(size, {variable})]
        read = " and ".join(f"`{_flat(source, size)}`" for size in replaced)
        what = (
            f"`{variable}` is a variable of the kernel (one of its parameters): {read} comes "
            "with each launch"
            if variable in parameters
            else f"`{variable}` is a variable of the kernel: {read} is computed when it runs"
        )
    else:
        replaced = [size for size in sizes if not _constant(size)]
        what = f"`{launch}` is known only when the kernel runs"
    core = _core(replaced[0], variable, parameters)
    taken = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    name, value, why = _suggestion(kernel, core, parameters, taken)
    cores = [_core(size, variable, parameters) for size in replaced]
    derived = [size for size, c in zip(replaced, cores) if c is not size]
    constants, other = f"`{name} = {value}`", "SIZE" if name != "SIZE" else "TOTAL"
    if len(derived) == 1:  # `n + 2`: the expression becomes a module constant too
        expression = _swapped(derived[0], {id(cores[replaced.index(derived[0])]): name})
        constants += f" and `{other} = {expression}`"
    elif derived:
        name = other = "SIZE"
        constants = "the sizes as module constants (`SIZE = ...`)"
    swaps = {id(size): name if core is size else other for size, core in zip(replaced, cores)}
    rewritten = _swapped(call, swaps)
    return (
        f"line {line}: `{text}`: a {space} array's shape must be a constant known when the "
        f"kernel compiles, a module-level constant such as `{name} = {value}` ({why}), not a "
        f"value from the kernel's arguments or its launch: {what}. Write {constants} at the "
        f"top of the cell and `{rewritten}` (the simulator accepts "
        f"{'a variable' if variable else 'it'}, a GPU does not)."
    )


def _core(size: ast.expr, variable: str | None, parameters) -> ast.expr:
    """The part of a size that is known only when the kernel runs: the launch's `cuda.blockDim.x`,
    a parameter array's `x.size`, or the variable itself (the size itself when it is one)."""
    for node in ast.walk(size):
        if variable is None and isinstance(node, ast.Attribute) and _root(node) == "cuda":
            return node
        if variable is not None and _array_size(node, parameters) is not None:
            if _array_size(node, parameters)[0] == variable:
                return node
        if isinstance(node, ast.Name) and node.id == variable:
            return node
    return size


def _swapped(node: ast.AST, names: dict) -> str:
    """The source of node with the nodes whose id is in `names` written as those names (the
    node itself is left as it is)."""
    memo: dict = {}
    copied = copy.deepcopy(node, memo)
    chosen = {id(memo[key]): name for key, name in names.items() if key in memo}

    class Swap(ast.NodeTransformer):
        def visit(self, node):
            if id(node) in chosen:
                return ast.Name(chosen[id(node)])
            return self.generic_visit(node)

    return ast.unparse(Swap().visit(copied))


def _device_functions(function, tree: ast.AST) -> list:
    """The jitted functions (device functions) this one calls by a global name."""
    names = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    found = []
    for name in sorted(names):
        value = function.__globals__.get(name)
        if value is not None and inspect.isfunction(getattr(value, "py_func", None)):
            found.append(value.py_func)
    return found


def _parameters(function: ast.AST) -> frozenset[str]:
    if not isinstance(function, ast.FunctionDef):
        return frozenset()
    return frozenset(a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg))


def parsed(function) -> tuple[ast.AST | None, int, str]:
    """(the function's definition, parsed; the number of its first line; its source, dedented),
    or (None, 0, '') when its source cannot be read (node lines count from 1 at that line)."""
    function = getattr(function, "py_func", function)
    if not inspect.isfunction(function):
        return None, 0, ""
    lines, first = _source_lines(function)
    if not lines:
        return None, 0, ""
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, 0, ""
    return (tree.body[0] if tree.body else tree), first, source


def _source_lines(function) -> tuple[list[str], int]:
    """The function's source lines and the number of the first, read as the grader reads lines
    (linecache: a notebook cell's too), without `inspect.getsourcelines`' search of every
    loaded module for the file."""
    code = function.__code__
    lines = linecache.getlines(code.co_filename, function.__globals__)
    if not lines or code.co_firstlineno > len(lines):
        return [], 0
    try:
        return inspect.getblock(lines[code.co_firstlineno - 1 :]), code.co_firstlineno
    except (IndexError, SyntaxError, tokenize.TokenError):
        return [], 0


def refused(kernel) -> str | None:
    """The message for the first shape a GPU cannot compile in the kernel (or a device function
    it calls), or None when every shape is an integer or a module-level name."""
    todo, seen = [getattr(kernel, "py_func", kernel)], set()
    while todo:
        function = todo.pop(0)
        if function in seen or not inspect.isfunction(function):
            continue
        seen.add(function)
        definition, first, source = parsed(function)
        if definition is None:
            continue
        for call, space, variable in bad_shapes(definition, _variables(definition)):
            return _message(
                source,
                call,
                first + call.lineno - 1,
                space,
                variable,
                kernel,
                _parameters(definition),
            )
        todo.extend(_device_functions(function, definition))
    return None

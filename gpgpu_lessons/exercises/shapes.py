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
    shape holds something other than integers and names, or a name among `variables` (the
    kernel's parameters and locals)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (space := _space(node)) is None:
            continue
        shape = _shape(node)
        if shape is None:
            continue
        sizes = shape.elts if isinstance(shape, ast.Tuple) else [shape]
        if not all(_constant(size) for size in sizes):
            yield node, space, None
            continue
        names = [size.id for size in sizes if isinstance(size, ast.Name)]
        variable = next((name for name in names if name in variables), None)
        if variable is not None:
            yield node, space, variable


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


def _with_size(call: ast.Call, replaced: ast.expr) -> str:
    """The call with `replaced` (its shape, one size of it, or a variable's name) written
    `SIZE` (the call's nodes are changed: it is read before)."""

    class Swap(ast.NodeTransformer):
        def visit(self, node):
            if node is replaced or (isinstance(node, ast.Name) and node.id == replaced):
                return ast.Name("SIZE")
            return self.generic_visit(node)

    return ast.unparse(Swap().visit(call))


def _message(source: str, call: ast.Call, line: int, space: str, variable: str | None) -> str:
    """The sentence for one refused call: where, why, and the call rewritten with `SIZE`."""
    text, shape = _flat(source, call), _shape(call)
    sizes = shape.elts if isinstance(shape, ast.Tuple) else [shape]
    bad = [size for size in sizes if not _constant(size)]
    replaced = variable or (bad[0] if len(bad) == 1 else shape)
    launch = next(
        (
            _flat(source, node)
            for node in ast.walk(replaced if variable is None else shape)
            if isinstance(node, ast.Attribute) and _root(node) == "cuda"
        ),
        None,
    )
    if variable is None and launch is None:
        write = (
            f"Write `SIZE = {_flat(source, replaced)}` at the top of the cell and "
            f"`{_with_size(call, replaced)}`"
        )
        accepts = "the expression"
    else:
        what = (
            f"`{variable}` is a variable of the kernel"
            if variable
            else f"`{launch}` is known only when the kernel runs"
        )
        write = (
            f"{what}: set the size at the top of the cell (`SIZE = 64`, a number) and write "
            f"`{_with_size(call, replaced)}`"
        )
        accepts = "a variable" if variable else "it"
    return (
        f"line {line}: `{text}`: a {space} array's size must be a constant Numba knows when it "
        f"compiles: an integer or a module-level name. {write} (the simulator accepts "
        f"{accepts}, a GPU does not)."
    )


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
        lines, first = _source_lines(function)
        if not lines:
            continue
        source = textwrap.dedent("".join(lines))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        definition = tree.body[0] if tree.body else tree
        for call, space, variable in bad_shapes(definition, _variables(definition)):
            return _message(source, call, first + call.lineno - 1, space, variable)
        todo.extend(_device_functions(function, definition))
    return None

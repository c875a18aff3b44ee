"""A submission's source: found in a notebook, checked against what a kernel cell may hold, loaded.

The course graders grade the source of the cell that defines an exercise's function, never the
student's running notebook. `vet` reads that source with Python's parser and lets through what
a cell of kernels needs and nothing else:

- at the top of the cell: imports of numba, numpy and math (and time and statistics for the
  timing exercises), constants computed from literals with NumPy, and functions. Anything else
  there (a test launch, a print, a call to the grader) is left out, and the answer says so;
- inside a function: its parameters and locals, the cell's own names, and the CUDA, math and
  NumPy names a kernel can use. Anything else (an import of os, an attribute that starts with
  `_`, a call to a plain Python function from a kernel, a Python list in a kernel) is refused
  with its line: a GPU could not compile it, and it could reach the grader itself.

`load` runs what passed in a fresh namespace whose builtins are those the check allows, under
the cell's own line numbers, so the grader's answers point at the student's lines.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
from dataclasses import dataclass, field

import numpy as np

NUMBA_TYPES = frozenset(
    "boolean float16 float32 float64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
    "complex64 complex128 void intp uintp".split()
)
NUMPY_NAMES = NUMBA_TYPES - {"void", "boolean"} | frozenset(
    "array asarray arange linspace zeros ones full eye outer dot where clip round floor ceil "
    "sqrt exp log log2 log10 sin cos tan abs minimum maximum sum prod cumsum concatenate stack "
    "pi e inf nan bool_ float_ int_ uint dtype float32 uint8 sign hypot arctan2 power".split()
)
CUDA_NAMES = frozenset(
    "grid gridsize threadIdx blockIdx blockDim gridDim laneid warpsize syncthreads "
    "syncthreads_count syncthreads_and syncthreads_or syncwarp shared local const atomic "
    "shfl_sync shfl_up_sync shfl_down_sync shfl_xor_sync ballot_sync all_sync any_sync eq_sync "
    "match_any_sync match_all_sync activemask lanemask_lt popc brev clz ffs fma cbrt selp "
    "threadfence threadfence_block threadfence_system jit array array_like x y z add sub max "
    "min inc dec exch cas compare_and_swap and_ or_ xor nanmax nanmin synchronize event "
    "event_elapsed_time cg this_grid nanosleep fp16 libdevice".split()
)
CUDA_LIBRARIES = frozenset({"fp16", "libdevice"})  # cuda.fp16.hadd, cuda.libdevice.exp, ...
STATISTICS_NAMES = frozenset(
    "mean fmean median median_low median_high mode stdev pstdev variance pvariance quantiles "
    "geometric_mean harmonic_mean".split()
)
TIME_NAMES = frozenset(
    "perf_counter perf_counter_ns time time_ns monotonic monotonic_ns sleep process_time".split()
)
MODULES = {"numba": "numba", "numba.cuda": "cuda", "numpy": "numpy", "math": "math"}
TIMING_MODULES = {"time": "time", "statistics": "statistics"}

KERNEL_BUILTINS = frozenset("range len min max abs float int bool round print complex".split())
FUNCTION_BUILTINS = KERNEL_BUILTINS | frozenset(
    "sum sorted list tuple dict enumerate zip reversed isinstance map filter any all divmod "
    "pow str Exception RuntimeError ValueError TypeError ZeroDivisionError".split()
)
VALUE_ATTRS = frozenset("shape size ndim dtype T real imag x y z sync".split())  # g.sync()
VALUE_METHODS = frozenset("round astype reshape copy sum cumsum max min mean ravel".split())
FUNCTION_METHODS = VALUE_METHODS | frozenset(
    "record synchronize elapsed_time query wait append extend sort pop insert index count "
    "clear reverse".split()
)
_TIMING_IMPORTS = {("time", n) for n in TIME_NAMES} | {("statistics", n) for n in STATISTICS_NAMES}
JIT_OPTIONS = frozenset("device fastmath debug lineinfo opt inline cache max_registers".split())

_KERNEL_NODES = (
    ast.Assign, ast.AugAssign, ast.For, ast.While, ast.If, ast.Break, ast.Continue, ast.Pass,
    ast.Return, ast.Expr, ast.Assert, ast.Name, ast.Load, ast.Store, ast.Constant, ast.Attribute,
    ast.Subscript, ast.Slice, ast.Tuple, ast.Call, ast.keyword, ast.BinOp, ast.UnaryOp,
    ast.BoolOp, ast.Compare, ast.IfExp, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
    ast.expr_context,
)  # fmt: skip
_FUNCTION_NODES = _KERNEL_NODES + (
    ast.List, ast.ListComp, ast.GeneratorExp, ast.Dict, ast.comprehension, ast.Lambda,
    ast.arguments, ast.arg, ast.Try, ast.ExceptHandler, ast.Import, ast.ImportFrom, ast.alias,
    ast.JoinedStr, ast.FormattedValue, ast.Raise, ast.Starred,
)  # fmt: skip
_CONSTANT_NODES = (
    ast.Name, ast.Load, ast.Constant, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple,
    ast.List, ast.Call, ast.keyword, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)  # fmt: skip
_WHAT = {
    ast.List: "builds a Python list; a kernel has no lists: use `cuda.local.array(N, float32)`",
    ast.ListComp: "builds a Python list; a kernel has no lists: use `cuda.local.array`",
    ast.Dict: "builds a dict; a kernel has none",
    ast.DictComp: "builds a dict; a kernel has none",
    ast.Set: "builds a set; a kernel has none",
    ast.SetComp: "builds a set; a kernel has none",
    ast.GeneratorExp: "builds a generator; a kernel has none: write the loop",
    ast.Lambda: "defines a lambda; a kernel calls device functions (`@cuda.jit(device=True)`)",
    ast.FunctionDef: "defines a function inside a function; define device functions at the top "
    "of the cell with `@cuda.jit(device=True)`",
    ast.Import: "imports inside a kernel; import at the top of the cell",
    ast.ImportFrom: "imports inside a kernel; import at the top of the cell",
    ast.Global: "uses `global`; a kernel writes only to arrays it is given",
    ast.Nonlocal: "uses `nonlocal`",
    ast.Try: "uses try/except; a kernel cannot catch exceptions",
    ast.With: "uses `with`; a kernel has no context managers",
    ast.JoinedStr: "builds an f-string; a kernel has no strings",
    ast.Delete: "uses `del`",
    ast.Raise: "raises an exception; a kernel cannot",
    ast.Starred: "unpacks with `*`",
    ast.NamedExpr: "uses `:=`; write the assignment on its own line",
    ast.ClassDef: "defines a class",
    ast.Yield: "yields; a kernel is not a generator",
    ast.YieldFrom: "yields; a kernel is not a generator",
    ast.Await: "awaits; a kernel is not a coroutine",
    ast.AnnAssign: "annotates a variable; write `x = float32(0)` instead",
}


@dataclass
class Problem:
    """Something in the cell that a GPU could not compile or the grader will not run."""

    line: int
    text: str

    def __str__(self) -> str:
        return f"Line {self.line} {self.text}."


@dataclass
class Vetted:
    """A cell's source as the grader runs it: `program` keeps only what passed (at its lines)."""

    source: str
    program: str = ""
    left_out: list[tuple[int, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    plain: set[str] = field(default_factory=set)  # plain Python functions (left out of kernels)

    @property
    def ok(self) -> bool:
        return not self.problems

    def left_out_note(self) -> str | None:
        """One sentence on what at the top of the cell the grader did not run, or None."""
        if not self.left_out:
            return None
        lines = ", ".join(f"line {n} `{text}`" for n, text in self.left_out[:3])
        more = f" and {len(self.left_out) - 3} more" if len(self.left_out) > 3 else ""
        return (
            f"(The grader runs only the imports, constants and functions of your cell; it left "
            f"out {lines}{more}.)"
        )


@dataclass
class _Names:
    """What each name at the top of the cell is: a module, a type, a function, a constant."""

    modules: dict[str, str] = field(default_factory=dict)  # alias -> numba, cuda, numpy, ...
    types: set[str] = field(default_factory=set)  # numba/numpy scalar types
    imported: dict[str, str] = field(default_factory=dict)  # name -> "math", "time", "cuda"
    kernels: set[str] = field(default_factory=set)
    devices: set[str] = field(default_factory=set)
    plain: set[str] = field(default_factory=set)
    constants: set[str] = field(default_factory=set)
    left_out: dict[str, int] = field(default_factory=dict)  # name -> line that was left out

    def known(self) -> set[str]:
        return (
            set(self.modules)
            | self.types
            | set(self.imported)
            | self.kernels
            | self.devices
            | self.plain
            | self.constants
        )


def _first_line(source_lines: list[str], node: ast.AST) -> str:
    text = source_lines[node.lineno - 1].strip()
    return text if len(text) <= 60 else text[:57] + "..."


def _modules(timing: bool) -> dict[str, str]:
    return {**MODULES, **TIMING_MODULES} if timing else MODULES


def _import(node, names: _Names, timing: bool) -> bool:
    """Record an allowed import; False when the grader leaves it out."""
    modules = _modules(timing)
    if isinstance(node, ast.Import):
        if not all(alias.name in modules for alias in node.names):
            return False
        for alias in node.names:
            if alias.asname is None and alias.name == "numba.cuda":
                names.modules["numba"] = "numba"
            else:
                names.modules[alias.asname or alias.name] = modules[alias.name]
        return True
    if node.level or node.module not in modules or any(a.name == "*" for a in node.names):
        return False
    kind = modules[node.module]
    for alias in node.names:
        bound = alias.asname or alias.name
        if kind == "numba" and alias.name == "cuda":
            names.modules[bound] = "cuda"
        elif kind == "numba" and alias.name in NUMBA_TYPES:
            names.types.add(bound)
        elif kind == "numpy" and alias.name in NUMBA_TYPES:
            names.types.add(bound)
        elif kind == "math" or (kind, alias.name) in _TIMING_IMPORTS:
            names.imported[bound] = kind
        elif kind == "cuda" and alias.name in CUDA_NAMES:
            names.imported[bound] = "cuda"
        else:
            return False
    return True


def _jit_decorator(node: ast.expr, names: _Names) -> str | None:
    """'kernel', 'device', or None when the decorator is not `cuda.jit` with constant options."""
    call = node if isinstance(node, ast.Call) else None
    target = call.func if call else node
    chain = _chain(target)
    if not chain:
        return None
    ok = (len(chain) == 2 and names.modules.get(chain[0]) == "cuda" and chain[1] == "jit") or (
        len(chain) == 3 and names.modules.get(chain[0]) == "numba" and chain[1:] == ["cuda", "jit"]
    )
    ok = ok or (len(chain) == 1 and names.imported.get(chain[0]) == "cuda" and chain[0] == "jit")
    if not ok:
        return None
    device = False
    if call:
        if any(not isinstance(a, ast.Constant) for a in call.args):
            return None
        for keyword in call.keywords:
            if keyword.arg not in JIT_OPTIONS or not isinstance(keyword.value, ast.Constant):
                return None
            if keyword.arg == "device":
                device = bool(keyword.value.value)
    return "device" if device else "kernel"


def _chain(node: ast.expr) -> list[str] | None:
    """['cuda', 'threadIdx', 'x'] for `cuda.threadIdx.x`; None unless names all the way down."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


class _Checker:
    """Walk one function (or one constant expression) and collect the problems with lines."""

    def __init__(self, names: _Names, kind: str, local: set[str]):
        self.names, self.kind, self.local = names, kind, local
        self.problems: list[Problem] = []
        self.allowed = _CONSTANT_NODES if kind == "constant" else _KERNEL_NODES
        if kind == "function":
            self.allowed = _FUNCTION_NODES
        self.builtins = FUNCTION_BUILTINS if kind in ("function", "constant") else KERNEL_BUILTINS

    def say(self, node, text: str) -> None:
        self.problems.append(Problem(getattr(node, "lineno", 0), text))

    def check(self, nodes) -> list[Problem]:
        for node in nodes:
            self.visit(node)
        return self.problems

    def visit(self, node) -> None:
        if not isinstance(node, self.allowed):
            what = _WHAT.get(type(node), f"uses `{type(node).__name__}`, which a kernel cannot")
            self.say(node, what)
            return
        if isinstance(node, ast.Attribute) and not self.attribute(node):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            self.name(node)
        if isinstance(node, ast.Call) and not self.call(node):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scratch = _Names()
            if not _import(node, scratch, timing=True):
                self.say(node, "imports a module the grader does not run")
                return
            self.names.modules.update(scratch.modules)
            self.names.imported.update(scratch.imported)
            self.names.types |= scratch.types
            return
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def name(self, node: ast.Name) -> None:
        name = node.id
        if name in self.local or name in self.names.known() or name in self.builtins:
            return
        if name in self.names.left_out:
            self.say(
                node,
                f"uses `{name}`, which line {self.names.left_out[name]} defines with a statement "
                "the grader does not run (it imports only numba, numpy and math, and computes "
                "constants from literals, NumPy and math)",
            )
        elif name in dir(builtins):
            self.say(node, f"uses `{name}`, which a kernel cannot use")
        else:
            self.say(node, f"uses `{name}`, which this cell does not define")

    def attribute(self, node: ast.Attribute) -> bool:
        """Check `a.b.c` as a whole; False when a problem was said (do not look inside)."""
        if node.attr.startswith("_"):
            self.say(node, f"uses the attribute `{node.attr}`: names that start with `_` are "
                     "not available to a kernel")  # fmt: skip
            return False
        chain = _chain(node)
        if chain and chain[0] not in self.local:
            if chain[0] not in self.names.known():
                self.name(ast.copy_location(ast.Name(chain[0], ast.Load()), node))
                return False
            module = self.names.modules.get(chain[0])
            if module is not None:
                if not self.module_attribute(module, chain[1:]):
                    self.say(node, f"uses `{'.'.join(chain)}`, which a kernel cannot use")
                return False
        if node.attr not in VALUE_ATTRS | self.methods():
            self.say(node, f"uses `.{node.attr}`, which a kernel cannot use")
            return False
        return True

    def methods(self) -> frozenset:
        if self.kind == "function":
            return FUNCTION_METHODS
        return VALUE_METHODS if self.kind == "constant" else frozenset()

    def module_attribute(self, module: str, rest: list[str]) -> bool:
        if not rest:
            return True
        if module == "numba":
            if rest[0] == "cuda":
                return self.module_attribute("cuda", rest[1:])
            return len(rest) == 1 and rest[0] in NUMBA_TYPES
        if module == "cuda":
            if rest[0] in CUDA_LIBRARIES:
                return len(rest) <= 2
            return all(part in CUDA_NAMES for part in rest) and len(rest) <= 2
        if module == "numpy":
            return len(rest) == 1 and rest[0] in NUMPY_NAMES
        if module in ("time", "statistics"):
            return len(rest) == 1 and (module, rest[0]) in _TIMING_IMPORTS
        return len(rest) == 1  # math: functions and constants only

    def call(self, node: ast.Call) -> bool:
        """Check what is called; False when a problem was said."""
        func = node.func
        if isinstance(func, ast.Name) and self.kind == "constant":
            if func.id in self.names.kernels | self.names.devices | self.names.plain:
                self.say(node, f"calls `{func.id}` to compute a constant")
                return False
        if isinstance(func, ast.Name) and self.kind in ("kernel", "device"):
            name = func.id
            if name in self.names.plain:
                self.say(
                    node,
                    f"calls `{name}`, a plain Python function: a GPU kernel can only call "
                    f"device functions (put `@cuda.jit(device=True)` above `def {name}`)",
                )
                return False
            if name in self.names.kernels:
                self.say(
                    node,
                    f"calls the kernel `{name}` from a kernel: a kernel can only call device "
                    f"functions (`@cuda.jit(device=True)` above `def {name}`)",
                )
                return False
            if name in self.local and name not in self.names.known():
                self.say(node, f"calls `{name}`, a local variable")
                return False
        return True


def _locals(function: ast.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns."""
    args = function.args
    found = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    found |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
    return found


def _constant(node: ast.Assign, names: _Names) -> bool:
    targets = []
    for target in node.targets:
        elements = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(e, ast.Name) for e in elements):
            return False
        targets += [e.id for e in elements]
    if _Checker(names, "constant", set()).check([node.value]):
        return False
    names.constants.update(targets)
    return True


def _function_kind(node: ast.FunctionDef, names: _Names) -> str | None:
    """'kernel', 'device', 'plain', or None when a decorator is not `cuda.jit`."""
    if not node.decorator_list:
        return "plain"
    if len(node.decorator_list) > 1:
        return None
    return _jit_decorator(node.decorator_list[0], names)


def vet(source: str, timing: bool = False) -> Vetted:
    """Check a cell's source (a SyntaxError propagates); `timing`: the timing exercises' plain
    Python functions may also use time and statistics, lists and method calls."""
    tree = ast.parse(source)
    lines = source.splitlines()
    result = Vetted(source)
    names = _Names()
    kept = [False] * (len(lines) + 1)
    functions = []
    for node in tree.body:
        keep = False
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep = _import(node, names, timing)
            if not keep:
                for alias in node.names:
                    names.left_out[(alias.asname or alias.name).split(".")[0]] = node.lineno
        elif isinstance(node, ast.Assign):
            keep = _constant(node, names)
            if not keep:
                for target in node.targets:
                    for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                        if isinstance(element, ast.Name):
                            names.left_out[element.id] = node.lineno
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            keep = True  # a docstring
        elif isinstance(node, ast.Pass):
            keep = True
        elif isinstance(node, ast.FunctionDef):
            kind = _function_kind(node, names)
            if kind is None:
                result.problems.append(
                    Problem(node.lineno, f"decorates `{node.name}` with something other than "
                            "`@cuda.jit` (the grader runs only kernels and device functions)")
                )  # fmt: skip
                continue
            {"kernel": names.kernels, "device": names.devices, "plain": names.plain}[kind].add(
                node.name
            )
            keep = kind != "plain" or timing  # a kernel's cell runs no plain Python function
            if keep:
                functions.append((node, kind))
        if keep:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            for n in range(start, node.end_lineno + 1):
                kept[n] = True
        else:
            result.left_out.append((node.lineno, _first_line(lines, node)))
    result.plain = set(names.plain)
    for node, kind in functions:
        checked = "function" if kind == "plain" else kind
        checker = _Checker(names, checked, _locals(node))
        result.problems += checker.check(node.body)
        for default in node.args.defaults + node.args.kw_defaults:
            if default is not None:
                result.problems += _Checker(names, "constant", set()).check([default])
    result.problems.sort(key=lambda p: p.line)
    result.program = (
        "\n".join(line if kept[n] else "" for n, line in enumerate(lines, start=1)) + "\n"
    )
    return result


def _guarded_import(modules: dict[str, object]):
    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        if level or name not in modules:
            raise ImportError(f"the grader does not import {name!r}")
        module = modules[name]
        if name == "numba.cuda" and not fromlist:
            return modules["numba"]
        return module

    return guarded


def load(vetted: Vetted, filename: str, timing_module=None) -> dict:
    """Run a vetted cell in a fresh namespace and return it; `timing_module` stands for `time`
    (the pretend GPU's clock) when the timing exercises are graded."""
    import math
    import statistics
    import time

    import numba
    from numba import cuda

    modules = {"numba": numba, "numba.cuda": cuda, "numpy": np, "math": math}
    modules.update(time=timing_module or time, statistics=statistics)
    allowed = FUNCTION_BUILTINS | {"True", "False", "None"}
    safe = {name: getattr(builtins, name) for name in allowed if hasattr(builtins, name)}
    safe["__import__"] = _guarded_import(modules)
    lines = vetted.source.splitlines(keepends=True)  # what the student wrote, at its lines
    linecache.cache[filename] = (len(vetted.source), None, lines, filename)
    namespace = {"__builtins__": safe, "__name__": "submission"}
    exec(compile(vetted.program, filename, "exec"), namespace)
    return namespace


def kernel_problems(kernel) -> list[Problem]:
    """The problems `vet` finds inside one kernel's own lines, read from its cell or file: what
    the notebook's grader says before the course's, which would refuse the same."""
    code = getattr(getattr(kernel, "py_func", None), "__code__", None)
    if code is None:
        return []
    lines = linecache.getlines(code.co_filename, kernel.py_func.__globals__)
    if not lines:
        return []
    try:
        vetted = vet("".join(lines))
    except SyntaxError:
        return []
    last = code.co_firstlineno + len(inspect.getsourcelines(kernel.py_func)[0])
    return [p for p in vetted.problems if code.co_firstlineno <= p.line < last]

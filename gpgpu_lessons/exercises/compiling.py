"""What passes compiles on a GPU: a student's kernels compiled to PTX, without a GPU.

The simulator runs kernels that a GPU's compiler refuses: a call of a plain Python function, a
Python list, a bool given to `cuda.syncthreads_count`. Where the CUDA compiler wheels are
installed (`pip install -e ".[cu12]"`, no GPU or driver needed), `compile_problems` compiles a
cell's kernels with Numba's real CUDA target for compute capability 7.5 (a T4, the oldest GPU
students have: what it accepts, the newer ones accept too), in a fresh child process (this one
runs the simulator), and says in one sentence per kernel what a GPU would refuse, with the line
of the cell. `argument_types` gives the argument types a launch with a case's values has.

The child runs the cell's statements one by one under the cell's line numbers, leaving out the
bare expressions (a test launch, a print), compiles each kernel for each argument-type tuple and
stops at its first failure; after TIME_LIMIT_S it is killed, and what it had not said about a
kernel, or a crash, becomes a sentence too. `available()` says whether NVVM and libdevice can be
found here (as numba-cuda finds them, without importing numba.cuda); where not, show SKIPPED.

    problems = compiling.compile_problems(source, "<exercise 03.2>", {"transpose": [types]})
    # {"transpose": None} or {"transpose": "Line 9 calls `helper`, a plain Python function: ..."}
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

COMPUTE_CAPABILITY = (7, 5)
TIME_LIMIT_S = 120.0

SKIPPED = (
    "Not compiled for a GPU here: the CUDA compiler wheels are not installed "
    "(the course's autograder compiles it)."
)

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


@functools.cache
def available() -> bool:
    """True when this environment can compile CUDA kernels to PTX without a GPU."""
    try:
        metadata.version("numba-cuda")
        from cuda import pathfinder  # the package numba-cuda finds NVVM with, not numba.cuda

        pathfinder.load_nvidia_dynamic_lib("nvvm")
        if not pathfinder.find_bitcode_lib("device"):
            return False
    except Exception:  # no numba-cuda, no cuda-pathfinder, no NVVM or libdevice
        return False
    return True


# ---- argument types --------------------------------------------------------------------------


def _type_text(numba_type) -> str:
    """A numba type as text that numba's signature parser reads back: 'float32[:, ::1]'."""
    from numba.core import types

    if isinstance(numba_type, types.Array):
        dtype = _type_text(numba_type.dtype)
        if numba_type.mutable and numba_type.aligned and numba_type.ndim >= 1:
            dims = [":"] * numba_type.ndim
            if numba_type.layout == "C":
                dims[-1] = "::1"
            elif numba_type.layout == "F":
                dims[0] = "::1"
            text = f"{dtype}[{', '.join(dims)}]"
        else:
            extra = "" if numba_type.mutable else ", readonly=True"
            extra += "" if numba_type.aligned else ", aligned=False"
            text = f"Array({dtype}, {numba_type.ndim}, {numba_type.layout!r}{extra})"
    elif isinstance(numba_type, types.Boolean):
        text = "boolean"
    elif isinstance(numba_type, types.Number):
        text = str(numba_type)
    else:
        raise TypeError(f"a kernel argument of type {numba_type} cannot be compiled here")
    try:
        parsed = eval(text, {}, dict(vars(types)))  # the namespace of numba's signature strings
    except Exception:
        parsed = None
    if parsed != numba_type:
        raise TypeError(f"a kernel argument of type {numba_type} cannot be compiled here")
    return text


def argument_types(values) -> tuple:
    """The numba types (as text) of the values a launch passes, as numba's dispatcher types them."""
    import numba

    found = []
    for value in values:
        try:
            found.append(_type_text(numba.typeof(value)))
        except (TypeError, ValueError):  # numba cannot type it, or a kernel cannot take it
            raise TypeError(
                f"a {type(value).__name__} cannot be passed to a kernel: pass NumPy arrays of "
                "numbers, NumPy scalars or Python numbers"
            ) from None
    return tuple(found)


def _signature_text(types) -> str:
    """'void(float32[::1], int64)' from a tuple of type texts (or numba types)."""
    return "void(" + ", ".join(t if isinstance(t, str) else _type_text(t) for t in types) + ")"


# ---- the child process -----------------------------------------------------------------------

_CHILD = r'''
import ast, builtins, json, linecache, os, sys, types, warnings

warnings.simplefilter("ignore")
job_path, result_path = sys.argv[1], sys.argv[2]
with open(job_path, encoding="utf-8") as f:
    jobs = json.load(f)
answers = []  # one dict of results per cell, the cell being compiled last
finished = [0]  # how many cells are done

def save():
    with open(result_path + ".part", "w", encoding="utf-8") as f:
        json.dump({"answers": answers, "finished": finished[0]}, f)
    os.replace(result_path + ".part", result_path)

def cell_line(tb, filename):
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line

def numba_line(tb, filename):
    """The line of the innermost compiler frame that holds a location in the cell."""
    line = None
    while tb is not None:
        for name in ("self", "inst", "stmt", "loc", "expr"):
            value = tb.tb_frame.f_locals.get(name)
            loc = value if type(value).__name__ == "Loc" else getattr(value, "loc", None)
            if type(loc).__name__ == "Loc" and loc.filename == filename and loc.line:
                line = loc.line
                break
        tb = tb.tb_next
    return line

def failure(error, filename, stage):
    tb = error.__traceback__
    return {
        "stage": stage,
        "error": type(error).__name__,
        "numba": type(error).__module__.startswith("numba"),
        "message": str(error)[:20000],
        "line": cell_line(tb, filename),
        "numba_line": numba_line(tb, filename),
    }

from gpgpu_lessons import runtime  # compile-only mode: the environment asks for it
runtime.compile_for(tuple(jobs[0]["cc"]))
from numba import cuda
from numba.cuda.dispatcher import CUDADispatcher

def compile_cell(job, results):
    source, filename = job["source"], job["filename"]
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    stopped = None
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as error:
        stopped = {"stage": "syntax", "error": "SyntaxError", "message": error.msg or "",
                   "line": error.lineno, "numba": False, "numba_line": None}
        tree = ast.Module(body=[], type_ignores=[])

    module = types.ModuleType("_student_cell")
    module.__file__ = filename
    sys.modules[module.__name__] = module
    for statement in tree.body:
        if stopped is not None:
            break
        if isinstance(statement, ast.Expr):  # a launch, a print, a call: not what a cell defines
            continue
        try:
            code = compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec")
            exec(code, module.__dict__)
        except BaseException as error:
            stopped = failure(error, filename, "exec")
            if stopped["line"] is None:
                stopped["line"] = statement.lineno

    options = ("debug", "lineinfo", "fastmath", "opt", "launch_bounds")
    for name, signatures in job["kernels"].items():
        kernel = module.__dict__.get(name)
        if kernel is None:
            results[name] = stopped or {"stage": "missing"}
        elif not isinstance(kernel, CUDADispatcher):
            results[name] = {"stage": "not kernel", "type": type(kernel).__name__}
        elif kernel.targetoptions.get("device"):
            results[name] = {"stage": "device"}
        else:
            results[name] = None
            given = {k: v for k, v in kernel.targetoptions.items() if k in options}
            for signature in signatures:
                results[name] = {"stage": "compiling", "signature": signature}
                save()
                try:
                    cuda.compile_ptx(kernel.py_func, signature, cc=tuple(job["cc"]), **given)
                except Exception as error:
                    results[name] = failure(error, filename, "compile")
                    results[name]["signature"] = signature
                    break
                results[name] = None
        save()
    save()

for job in jobs:
    results = {}
    answers.append(results)
    compile_cell(job, results)
    finished[0] += 1
    save()
'''


def _child_environment() -> dict:
    """This process's environment for a compile-only child: Numba's real CUDA target, no GPU."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CUDA_ENABLE_NRT"}
    env.update(
        NUMBA_ENABLE_CUDASIM="0",
        GPGPU_LESSONS_COMPILE_ONLY="1",
        GPGPU_LESSONS_QUIET="1",
        NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING="1",
        PYTHONPATH=os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p),
    )
    return env


def _run_child(jobs: list[dict], limit_s: float) -> tuple[list[dict], dict, str | None]:
    """(the results of the cells it finished, those of the cell it was at, None) from the
    child, or with why it stopped: 'timeout' or 'exit N'."""
    with tempfile.TemporaryDirectory(prefix="gpgpu-compile-") as folder:
        job_path, result_path = Path(folder, "job.json"), Path(folder, "result.json")
        job_path.write_text(json.dumps(jobs), encoding="utf-8")
        stopped = None
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, str(job_path), str(result_path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # the cell's prints; no pipe a stray process could hold
                stderr=subprocess.DEVNULL,
                env=_child_environment(),
                timeout=limit_s,
                check=False,
            )
            if done.returncode != 0:
                stopped = f"exit {done.returncode}"
        except subprocess.TimeoutExpired:  # subprocess.run has killed it
            stopped = "timeout"
        try:
            said = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            said = {"answers": [], "finished": 0}
    done = said["answers"][: said["finished"]]
    at = said["answers"][said["finished"]] if len(said["answers"]) > said["finished"] else {}
    return done, at, stopped


def compile_problems(
    source: str, filename: str, kernels: dict[str, list[tuple]]
) -> dict[str, str | None]:
    """Per kernel name, None when it compiles for a GPU with every argument-type tuple, else why."""
    return compile_cells([(source, filename, kernels)])[0]


def compile_cells(cells: list[tuple[str, str, dict]]) -> list[dict[str, str | None]]:
    """compile_problems for several cells (source, filename, kernels) in one child process: a
    cell that stops the child loses only its own kernels, and a new child compiles the rest."""
    jobs = [
        {
            "source": source,
            "filename": filename,
            "cc": list(COMPUTE_CAPABILITY),
            "kernels": {
                name: [_signature_text(types) for types in tuples]
                for name, tuples in kernels.items()
            },
        }
        for source, filename, kernels in cells
    ]
    answers: list[dict] = []
    while len(answers) < len(cells):
        done, at, stopped = _run_child(jobs[len(answers) :], TIME_LIMIT_S * len(jobs))
        for found in done:
            answers.append(_answers(cells[len(answers)], found, None))
        if len(answers) < len(cells):  # the child stopped at this cell: it loses its kernels
            answers.append(_answers(cells[len(answers)], at, stopped or "exit 0"))
    return answers


def _answers(cell: tuple[str, str, dict], results: dict, stopped: str | None) -> dict:
    """One cell's sentences from what its child said about each kernel."""
    source, filename, kernels = cell
    answers = {}
    for name, tuples in kernels.items():
        found = results.get(name, {"stage": "not reached"})
        if found is None:
            answers[name] = None
        elif found["stage"] in ("compiling", "not reached"):
            answers[name] = _stopped_sentence(name, stopped)
        else:
            answers[name] = _sentence(name, found, source, filename, len(tuples) > 1)
    return answers


# ---- sentences -------------------------------------------------------------------------------


def _stopped_sentence(name: str, stopped: str | None) -> str:
    """Why the child said nothing about a kernel: it ran out of time or stopped."""
    if stopped == "timeout":
        return (
            f"`{name}` was not checked for a GPU: compiling the cell took more than "
            f"{TIME_LIMIT_S:g} s (does the cell run a long loop outside the kernels?)"
        )
    status = f" ({stopped.replace('exit', 'exit status')})" if stopped else ""
    return (
        f"`{name}` was not checked for a GPU: the compiler process stopped{status} before "
        "it could say why"
    )


def _sentence(name: str, found: dict, source: str, filename: str, several: bool) -> str:
    """The sentence for what the child found about one kernel."""
    stage = found["stage"]
    if stage == "missing":
        return f"`{name}` is not defined in the cell"
    if stage == "not kernel":
        return f"`{name}` is not a kernel: put `@cuda.jit` above `def {name}`"
    if stage == "device":
        return (
            f"`{name}` is a device function (`@cuda.jit(device=True)`), not a kernel: "
            f"use `@cuda.jit` above `def {name}`"
        )
    if stage == "syntax":
        return f"Line {found['line']} is not valid Python: {_clean(found['message'])}"
    if stage == "exec" and not found["numba"]:
        where = f"Line {found['line']}" if found.get("line") else "The cell"
        first = _clean(found["message"].strip().splitlines()[0] if found["message"] else "")
        return f"{where} fails when the cell runs: {found['error']}: {first}".rstrip(": ")
    sentence = explain(found["message"], filename, source, found.get("numba_line"))
    if several and found.get("signature"):
        arguments = found["signature"].removeprefix("void")
        sentence += f" (with the arguments {arguments})"
    return sentence


_OPERATORS = {
    "setitem": "`x[i] = value`",
    "getitem": "`x[i]`",
    "add": "`+`",
    "iadd": "`+=`",
    "sub": "`-`",
    "isub": "`-=`",
    "mul": "`*`",
    "imul": "`*=`",
    "truediv": "`/`",
    "floordiv": "`//`",
    "mod": "`%`",
    "pow": "`**`",
    "lt": "`<`",
    "le": "`<=`",
    "gt": "`>`",
    "ge": "`>=`",
    "eq": "`==`",
    "ne": "`!=`",
}
_NO_IMPLEMENTATION = re.compile(
    r"No implementation of function Function\(<(?:built-in function |intrinsic |function )?"
    r"([\w.]+)[^\n]* found for signature:\s*>>> [\w.]+(\(.*\))"
)
_RETURNS = re.compile(r"No conversion from [\w\[\]()., ]+ to none for '[$\w.]*return")
_PLAIN_FUNCTION = re.compile(
    r"Untyped global name '(\w+)': Cannot determine Numba type of <class 'function'>"
)
_PREDICATE = re.compile(r">>> (syncthreads_count|syncthreads_and|syncthreads_or)\((.*)\)")
_LIST = re.compile(
    r"\blist\((?:\w|undefined)|\bList\(|build_list|reflected list|global name 'list'"
)
_GLOBAL_LIST = re.compile(r"global\((\w+): \[")


def _message_line(message: str, filename: str) -> int | None:
    """The first line of the cell that numba's message names."""
    name = re.escape(filename)
    found = re.search(rf'File "{name}", line (\d+)', message) or re.search(
        rf"at {name} \((\d+)\)", message
    )
    return int(found.group(1)) if found else None


def explain(message: str, filename: str, source: str = "", line: int | None = None) -> str:
    """One sentence, with the cell's line, for a numba compile error's message."""
    line = _message_line(message, filename) or line
    where = f"Line {line}" if line else "The kernel"
    if found := _PLAIN_FUNCTION.search(message):
        helper = found.group(1)
        defined = _def_line(source, helper)
        at = f" on line {defined}" if defined else ""
        return (
            f"{where} calls `{helper}`, a plain Python function: a GPU kernel can only call "
            f"device functions (`@cuda.jit(device=True)` above `def {helper}`{at})"
        )
    if found := _PREDICATE.search(message):
        function, given = found.groups()
        given = "bool" if given.startswith(("bool", "Literal[bool]")) else given
        article = "an" if given[:1] in "aeiou" else "a"
        return (
            f"{where} passes {article} {given} to `cuda.{function}`; on a GPU it takes an int32 "
            f"predicate: `cuda.{function}(int32(x > 0))` (`from numba import int32`)"
        )
    if _RETURNS.search(message):
        return (
            f"{where} returns a value; a kernel returns nothing: write the result into an "
            "output array"
        )
    if _LIST.search(message):
        if found := _GLOBAL_LIST.search(message):
            constant = found.group(1)
            return (
                f"{where} reads `{constant}`, a Python list, and a kernel has no lists: make it "
                f"a tuple (`{constant} = (...)`) or pass a NumPy array"
            )
        built = _list_line(source, line) or line
        where = f"Line {built}" if built else "The kernel"
        return (
            f"{where} builds a Python list; a kernel has no lists: use "
            "`cuda.local.array(N, float32)` (N a constant) or a tuple"
        )
    return f"{where} does not compile for a GPU: {_first_line(message)}"


def _first_line(message: str) -> str:
    """The first line of numba's message that says what is wrong, without internal paths."""
    if found := _NO_IMPLEMENTATION.search(message):
        function, arguments = found.groups()
        if function.startswith(("shared.", "local.", "const.")):
            function = f"cuda.{function}"
        what = _OPERATORS.get(function, f"`{function}`")
        return f"Numba has no {what} for the types {arguments}"
    for text in message.splitlines():
        text = text.strip()
        if not text or text.startswith(("Failed in ", "During:", "File ", "^", "<source")):
            continue
        return _clean(text)
    return "numba gave no reason"


def _clean(text: str) -> str:
    """A line of a message without terminal colours, paths, addresses or a trailing colon."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    text = re.sub(r"\s+object at 0x[0-9a-fA-F]+", "", text)
    text = re.sub(
        r"(?:[A-Za-z]:)?(?:[\\/][\w.+~-]+){2,}", lambda m: re.split(r"[\\/]", m.group())[-1], text
    )
    text = text.strip().rstrip(":.").strip()
    return text if len(text) <= 300 else text[:297] + "..."


def _def_line(source: str, name: str) -> int | None:
    """The line of `def name` in the cell, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.lineno
    return None


def _list_line(source: str, line: int | None) -> int | None:
    """The line of the last list built at or before `line` in the function that holds it."""
    if line is None:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    functions = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0)
    ]
    if not functions:
        return None
    innermost = max(functions, key=lambda node: node.lineno)
    built = [
        node.lineno
        for node in ast.walk(innermost)
        if isinstance(node, (ast.List, ast.ListComp))
        or isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "list"
    ]
    return max((n for n in built if n <= line), default=None)

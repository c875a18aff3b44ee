"""Grade one attempt: check the call, run the kernel on the cases, trace it, and say what happened.

Order of the questions, each answered in plain words (the first failing one ends the grading):
1. is it a kernel with the right parameters (a bad call raises TypeError with the fix), whose
   shared and local array shapes a GPU can compile (`shapes`);
2. does it run (out of bounds, a crash, a stuck warp: which thread, which line); on a GPU each
   launch is rehearsed on the simulator first (`rehearsal`), so that an index out of bounds is
   reported before it can take the GPU down;
3. are the values right on every case (first wrong index, how many, expected vs got, a picture);
4. is each output element written by one thread (counted on the simulator);
5. does the tracer see a race, a barrier in a branch, an uninitialised read;
6. does it do what the exercise asks (coalesced, no bank conflicts, constant broadcast, ...);
and, on a GPU, how fast it is against the device copy and the reference solution.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import tokenize

import numpy as np

from .. import runtime, watchdog
from . import (
    checks,
    progress_file,
    registry,
    rehearsal,
    report,
    running,
    shapes,
    submission,
    tracing,
)


class GradingError(TypeError):
    """A call the grader cannot run: not a kernel, a device function, wrong parameters."""


def _kernel_type(fn) -> str:
    """'kernel', 'device', 'configured', 'function' or 'other'."""
    if runtime.is_simulator():
        from numba.cuda.simulator.kernel import FakeCUDAKernel

        if isinstance(fn, FakeCUDAKernel):
            return "device" if fn._device else "kernel"
    else:
        from numba.cuda.dispatcher import CUDADispatcher

        if isinstance(fn, CUDADispatcher):
            return "device" if fn.targetoptions.get("device") else "kernel"
        if type(fn).__name__ == "_LaunchConfiguration":
            return "configured"
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return "function"
    return "other"


def configured_at_call_site(frame) -> bool:
    """True when the call in this frame passes `kernel[grid, block]` as its second argument
    or as `fn=` (a subscript by 2 to 4 values: grid, block, stream, shared bytes), or passes a
    name set to such a subscript before (`k = reverse[4, 32]`, then `grade("01.1", k)`).

    The simulator's `kernel[grid, block]` returns the kernel itself (configured), so the object
    alone cannot tell; the caller's source can (a notebook cell's too: IPython keeps it in
    linecache): the call, the caller's code before it, and the statement that configured the
    kernel, which `running.configured_at` remembers until the kernel is launched (an earlier
    cell). A subscript of something else than a kernel (a table of kernels) is no launch.
    """
    try:
        info = inspect.getframeinfo(frame, context=0)
        lines = linecache.getlines(info.filename, frame.f_globals)
        where = getattr(info, "positions", None)
        if where is not None and where.lineno and where.end_lineno and lines:
            chunk = "".join(lines[where.lineno - 1 : where.end_lineno]).encode()
            end = len(chunk) - len(lines[where.end_lineno - 1].encode()) + where.end_col_offset
            text = chunk[where.col_offset : end].decode()
        else:
            text = lines[info.lineno - 1].strip()
        calls = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)]
    except (IndexError, SyntaxError, TypeError, ValueError, UnicodeDecodeError):
        return False
    for call in calls:
        for argument in [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "fn")]:
            if isinstance(argument, ast.Name):
                name = argument.id
                argument = _assigned(frame, lines, name, before=info.lineno)
                if argument is None:
                    argument = _configured_by(_look_up(frame, [name]), name)
            if _launch_subscript(argument, frame):
                return True
    return False


def _look_up(frame, path):
    """The value of a name (and attributes after it) in the frame, or None."""
    value = frame.f_locals.get(path[0], frame.f_globals.get(path[0]))
    for name in path[1:]:
        value = getattr(value, name, None)
    return value


def _launch_subscript(node, frame) -> bool:
    """True for `kernel[grid, block]` (2 to 4 values) whose `kernel` is a kernel, or cannot be
    looked up (`make()[4, 32]`)."""
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Tuple)
        and 2 <= len(node.slice.elts) <= 4
    ):
        return False
    path, base = [], node.value
    while isinstance(base, ast.Attribute):
        path.insert(0, base.attr)
        base = base.value
    if not isinstance(base, ast.Name):
        return True
    return _kernel_type(_look_up(frame, [base.id, *path])) in ("kernel", "configured")


def _scope(tree, local: bool):
    """The nodes of the caller's scope: its function's (local) or the module's top level, not
    those of other functions, classes or lambdas."""
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        for child in ast.iter_child_nodes(node):
            inside = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            if isinstance(child, ast.Lambda) or (inside and not (local and node is tree)):
                continue
            nodes.append(child)
            yield child


def _assignment(tree, name: str, first: int, local: bool, test):
    """The value of the last `name = ...` of the scope whose (absolute) line passes test."""
    found = None
    for node in _scope(tree, local):
        if (
            isinstance(node, ast.Assign)
            and test(node.lineno + first - 1, (node.end_lineno or node.lineno) + first - 1)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    return None if found is None else found.value


def _assigned(frame, lines, name: str, before: int):
    """The value last assigned to `name` before line `before` in the caller's code: its
    function when `name` is one of its locals, else the file's (the cell's) top level."""
    code = frame.f_code
    local = code.co_name != "<module>" and name in code.co_varnames
    try:
        if local:
            block = inspect.getblock(lines[code.co_firstlineno - 1 :])
            tree, first = ast.parse(textwrap.dedent("".join(block))), code.co_firstlineno
        else:
            tree, first = ast.parse("".join(lines)), 1
    except (IndexError, SyntaxError, ValueError, tokenize.TokenError):
        return None
    return _assignment(tree, name, first, local, lambda start, end: start < before)


def _configured_by(kernel, name: str):
    """The value of `name = kernel[grid, block]` where the simulator last configured this
    kernel (an earlier cell; running.configured_at), or None."""
    where = running.configured_at(kernel) if kernel is not None else None
    if where is None:
        return None
    try:
        tree = ast.parse("".join(linecache.getlines(where[0])))
    except (SyntaxError, ValueError):
        return None
    return _assignment(tree, name, 1, False, lambda start, end: start <= where[1] <= end)


def _check_seed(seed) -> None:
    if seed is None or (isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0):
        return
    raise GradingError(f"seed must be None or an integer >= 0 (the random data), got {seed!r}")


def _parameters(function) -> list[str]:
    signature = inspect.signature(function)
    return [p.name for p in signature.parameters.values()]


def check_call(exercise: registry.Exercise, fn, configured: bool = False) -> None:
    """Raise GradingError (a TypeError) with the fix when fn cannot be graded for this exercise;
    `configured`: the caller wrote `fn[grid, block]` (what the simulator cannot tell)."""
    kind = _kernel_type(fn)
    if configured and kind == "kernel":
        kind = "configured"
    name = getattr(fn, "__name__", type(fn).__name__)
    wanted = f"{exercise.name}({', '.join(exercise.params)})"
    if exercise.kind == "function":
        if kind in ("kernel", "device", "configured"):
            raise GradingError(
                f"exercise {exercise.id} grades a plain Python function "
                f"`{wanted}`, not a @cuda.jit kernel: remove the decorator"
            )
        if kind != "function":
            raise GradingError(
                f"exercise {exercise.id} grades your function `{wanted}`; got "
                f"{type(fn).__name__} {fn!r}"
            )
        required = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if len(required) > len(exercise.params) or len(_parameters(fn)) < len(exercise.params):
            raise GradingError(
                f"`{name}` takes ({', '.join(_parameters(fn))}); exercise "
                f"{exercise.id} calls it as `{wanted}`"
            )
        return
    if kind == "configured":
        raise GradingError(
            "pass the kernel itself, not `kernel[grid, block]`: the grader "
            f'chooses the launch, e.g. exercises.grade("{exercise.id}", '
            f"{exercise.name})"
        )
    if kind == "function":
        raise GradingError(
            f"`{name}` is a plain Python function, not a kernel: put `@cuda.jit` "
            f"on the line above `def {name}(...)` and run that cell again"
        )
    if kind == "device":
        raise GradingError(
            f"`{name}` is a device function (`@cuda.jit(device=True)`): it cannot "
            "be launched. Grade the kernel that calls it (plain `@cuda.jit`)"
        )
    if kind != "kernel":
        raise GradingError(
            f"exercise {exercise.id} grades a @cuda.jit kernel `{wanted}`; got "
            f"{type(fn).__name__} {fn!r}"
        )
    params = _parameters(fn.py_func)
    if len(params) != len(exercise.params):
        raise GradingError(
            f"`{name}` takes {len(params)} parameter(s) ({', '.join(params)}); "
            f"exercise {exercise.id} launches it as `{wanted}` with "
            f"{len(exercise.params)}: keep the skeleton's parameters"
        )


def _trace(exercise, fn, case) -> tuple[tracing.Observation | None, str | None]:
    """(the tracer's facts about one case, None) or (None, why there are none)."""
    args = [running.start_values(case, name) for name in exercise.params]
    try:
        with running.quiet():
            return tracing.observe(
                fn, case.grid, case.block, args, blocks=exercise.trace_blocks
            ), None
    except tracing.Unavailable as error:
        return None, str(error)


def _fail(result: report.Report, finding: str, kind: str) -> report.Report:
    result.findings.append(finding)
    result.kinds.add(kind)
    return result


def _add_hazards(result: report.Report, observation, fn) -> bool:
    """Add the tracer's hazards to the report; True when there were any."""
    found = checks.hazards(observation, fn)
    for kind, sentence in found:
        _fail(result, sentence, kind)
    return bool(found)


def _explain_with_trace(result, exercise, fn, case) -> None:
    """After wrong values: the races the tracer sees explain them. Where it sees some, they take
    the place of the wrong values, which a race makes differ from run to run (one submission,
    one answer: the tracer's findings do not depend on the schedule)."""
    try:
        observation, _ = _trace(exercise, fn, case)
    except Exception:
        return
    found = [] if observation is None else checks.hazards(observation, fn)
    if any("race" in kind for kind, _ in found):
        result.findings = [f"Wrong values on {case.label}, and the tracer sees why:"]
        result.picture_png = None
    for kind, sentence in found:
        _fail(result, sentence, kind)


def _check_values(result, case, got, writes) -> bool:
    """Compare one case's outputs with NumPy; add the findings; True when they are right."""
    if case.verify is not None:
        sentence = case.verify(got)
        if sentence:
            _fail(result, f"Wrong values for {case.label}: {sentence}.", "values")
            return False
        return True
    for name, expected in case.expected.items():
        counts = None if writes is None else writes.get(name)
        sentence, wrong = report.describe_values(
            name,
            got[name],
            expected,
            rtol=case.rtol,
            atol=case.atol,
            writes=counts,
            block=case.block,
            case_label=case.label,
        )
        if sentence:
            _fail(result, sentence, "values")
            result.picture_png = report.picture(wrong, counts, f"{name}, {case.label}")
            return False
    return True


def on_gpu() -> bool:
    """True when kernels run on a GPU: each launch is then rehearsed on the simulator first."""
    return not runtime.is_simulator()


def _grade_kernel(
    exercise: registry.Exercise, fn, rng, result: report.Report, hidden=None
) -> report.Report:
    refused = shapes.refused(fn)  # what a GPU cannot compile fails in the simulator too
    if refused is not None:
        return _fail(result, refused, "shape")
    problems = submission.kernel_problems(fn)
    if problems:
        _fail(result, "A GPU could not compile your kernel:", "compile")
        for problem in problems:
            _fail(result, str(problem), "compile")
        return result
    gpu = on_gpu()
    cases = exercise.cases(rng, gpu)
    traced = cases[exercise.trace_case]
    if hidden is not None:  # the autograder's own cases, after the public ones
        cases = cases + list(hidden(gpu))
    for case in cases:
        rehearsed = None
        if gpu:  # an out-of-bounds kernel must not reach the GPU: it could lose the context
            rehearsed = rehearsal.rehearse(exercise, fn, case)
            for kind, sentence in rehearsed.problems:
                _fail(result, sentence, kind)
            if not rehearsed.safe:
                return result
        try:
            got, writes = running.run(
                fn, case, exercise.params, count_writes=not gpu, simulator=not gpu
            )
        except Exception as error:
            crash = running.explain(error, fn)
            return _fail(result, f"{crash.text} (on {case.label})", crash.kind)
        if rehearsed is not None and rehearsed.complete:
            writes = rehearsed.observation.stores
        if not _check_values(result, case, got, writes):
            if rehearsed is None:
                _explain_with_trace(result, exercise, fn, case)
            else:
                _add_hazards(result, rehearsed.observation, fn)
            return result
        for name, counts in (writes or {}).items():
            sentence = report.describe_writes(name, counts)
            if sentence:
                return _fail(result, f"{sentence} (on {case.label})", "written twice")
    try:
        observation, missing = _trace(exercise, fn, traced)
    except Exception as error:
        crash = running.explain(error, fn)
        return _fail(result, f"{crash.text} (traced on {traced.label})", crash.kind)
    if observation is None:
        result.notes.append(
            f"(Values checked; the memory-access checks need the kernel tracer: {missing}.)"
        )
    elif _add_hazards(result, observation, fn):
        result.findings.insert(0, "The values are right on every case, but:")
        return result
    for check in exercise.checks:
        if observation is not None or not getattr(check, "needs_trace", True):
            for sentence in check(observation, fn, traced):
                _fail(result, sentence, type(check).__name__)
    if result.findings:
        result.findings.insert(
            0, "The values are right, but the kernel does not do what the exercise asks:"
        )
        return result
    if gpu and exercise.performance is not None:
        from . import performance

        sentence, problems = performance.compare(exercise, fn, rng)
        for kind, problem in problems:
            _fail(result, problem, kind)
        if problems:
            return result
        result.notes.append(sentence)
    result.passed = True
    return result


def grade(exercise_id, fn, *, seed=None, hidden=None) -> report.Report:
    """Grade fn for an exercise and return the report (shown by the notebook, or print it).

    `hidden`, from the course's autograder: a function of `gpu` (bool) returning more cases
    (registry.Case) to run after the exercise's own, which `seed` draws."""
    exercise = registry.get(exercise_id)
    _check_seed(seed)
    watchdog.default_limit()  # a bad GPGPU_LAUNCH_LIMIT_S raises BadLimit: the setup's fault
    check_call(exercise, fn, configured_at_call_site(inspect.currentframe().f_back))
    rng = np.random.default_rng(seed)
    result = report.Report(exercise.id, exercise.title, passed=False)
    try:
        if exercise.kind == "function":
            try:
                findings = exercise.check_function(fn)
            except Exception as error:
                findings = [f"Your function raised {type(error).__name__}: {error}"]
            for finding in findings:
                _fail(result, finding, "values")
            result.passed = not findings
        else:
            _grade_kernel(exercise, fn, rng, result, hidden)
    except Exception as error:  # never let a grader bug take the notebook down
        result.passed = False
        _fail(
            result,
            f"The grader itself failed ({type(error).__name__}: {error}); this is a "
            "bug of the exercise, not necessarily of your kernel: please report it.",
            "grader",
        )
    if result.passed:
        progress_file.record(exercise.id)
        sentence = "Correct"
        if exercise.kind == "kernel":
            sentence += " on every case"
            if exercise.checks and not any(n.startswith("(Values checked") for n in result.notes):
                sentence += ", and it does what the exercise asks"
        result.findings.insert(0, sentence + ". " + (exercise.next or ""))
        if exercise.kind == "kernel" and not on_gpu() and SAY_NOT_COMPILED:
            result.notes.append(NOT_COMPILED)
    return result


# A kernel graded here ran in the simulator only: the course's judge also compiles it for a GPU
# (exercises.judge, which says so itself and turns this off).
NOT_COMPILED = (
    "(Checked in the simulator; the course's autograder also compiles it for a GPU, which "
    "refuses a few things the simulator runs.)"
)
SAY_NOT_COMPILED = True

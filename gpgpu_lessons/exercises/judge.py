"""Grade a submitted notebook from its source, in processes of the grader's own.

The course graders (`course`) call `grade_notebook`. It finds the cell that defines each
exercise's function (the last one, as running the notebook top to bottom would) and grades it
in a child process that runs the simulator and nothing of the student's notebook: the child
checks the cell (`submission.vet`), runs only what passed, grades it on the cases of the
assignment's seed and the autograder's hidden cases, and writes each verdict to a pipe that the
cell cannot reach. Nothing the notebook patches or imports reaches a grade. A child that dies or
runs past the time limit loses only the exercise it was grading; a new child grades the rest.
Where the CUDA compiler wheels are installed, a kernel that passed is also compiled for a GPU
(`compiling`); where they are not, the verdict says that this check was skipped.
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import os
import re
import selectors
import subprocess
import sys
import textwrap
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import registry

MEMORY_BYTES = 6 << 30  # a child's address space: a kernel's huge array fails, not the machine
WIDTH = 88  # feedback is wrapped to this many characters


@dataclass
class Verdict:
    """One exercise's grade: passed or not, and the grader's words for the student."""

    id: str
    passed: bool
    text: str
    types: dict | None = None  # kernel name -> argument types of each case (for compiling)


@dataclass
class Job:
    """What a child grades: one exercise's cell."""

    id: str
    source: str
    filename: str
    seed: int
    hidden: str | None = None
    hidden_seed: int | None = None


def code_cells(notebook) -> list[str]:
    """The sources of a notebook's code cells (a path, or a notebook as nbformat's dict)."""
    if isinstance(notebook, (str, Path)):
        notebook = json.loads(Path(notebook).read_text(encoding="utf-8"))
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            cells.append("".join(source) if isinstance(source, list) else str(source))
    return cells


def _python(source: str) -> str:
    """A cell as Python: IPython's magics (`%time`, `!pip`) become calls, lines kept in place."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:
        return source


def find_cell(cells: list[str], name: str) -> tuple[int, str] | None:
    """(index, source) of the last code cell that defines `name` at its top level, or None."""
    found = None
    defines = re.compile(rf"^(async\s+)?def\s+{re.escape(name)}\s*\(", re.MULTILINE)
    for index, source in enumerate(cells):
        python = _python(source)
        try:
            tree = ast.parse(python)
        except SyntaxError:
            if defines.search(python):
                found = (index, python)
            continue
        if any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body):
            found = (index, python)
    return found


def _missing(exercise: registry.Exercise, cells: list[str]) -> str:
    """Why no cell defines the exercise's function, in words."""
    what = "function" if exercise.kind == "function" else "kernel"
    graded = {e.name for e in registry.lesson_exercises(exercise.lesson)}
    others = sorted({node.name for source in cells for node in _top_functions(source)} - graded)
    near = difflib.get_close_matches(exercise.name, others, n=1, cutoff=0.6)
    hint = f" (your notebook defines `{near[0]}`: keep the skeleton's name)" if near else ""
    return (
        f"No cell of your notebook defines the {what} `{exercise.name}` that exercise "
        f"{exercise.id} grades{hint}."
    )


def _top_functions(source: str) -> list[ast.FunctionDef]:
    try:
        return [n for n in ast.parse(_python(source)).body if isinstance(n, ast.FunctionDef)]
    except SyntaxError:
        return []


def syntax_error(source: str) -> str | None:
    """'a syntax error on line N: ...' for a cell Python cannot parse, else None."""
    try:
        ast.parse(source)
    except SyntaxError as error:
        text = (error.text or "").strip()
        shown = f" (`{text}`)" if text else ""
        return f"a syntax error on line {error.lineno}: {error.msg}{shown}"
    return None


def wrap(text: str, width: int = WIDTH) -> str:
    """Wrap the grader's words to the page: bullets keep a hanging indent, code lines stay."""
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("- "):
            follow = indent + "  "
        else:
            follow = indent
        out += textwrap.wrap(
            line,
            width,
            subsequent_indent=follow,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [""]
    return "\n".join(out)


def _child_env() -> dict:
    env = dict(os.environ)
    env.update(
        NUMBA_ENABLE_CUDASIM="1",
        GPGPU_LESSONS_PROGRESS=os.devnull,
        PYTHONHASHSEED="0",
        MPLBACKEND="Agg",
        PYTHONDONTWRITEBYTECODE="",
    )
    return env


def _limit_memory() -> None:  # runs in the child before it starts (POSIX)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass


def exercise_limit_s() -> float:
    """How long one exercise's grading may take on the clock before its child is stopped: a last
    resort, generous enough for a machine at any load (the watchdog stops each launch first, by
    the CPU time it uses, and one that waits for ever after 10 times its limit)."""
    from .. import watchdog

    return max(3600.0, 100 * (watchdog.default_limit() or watchdog.DEFAULT_S))


TIMED_OUT, ENDED = "timed out", "ended"


def _read_line(selector, stream, buffer: bytearray, deadline: float) -> bytes | str:
    """The next line the child writes, or TIMED_OUT, or ENDED (it closed the pipe)."""
    while b"\n" not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            return TIMED_OUT
        chunk = os.read(stream, 1 << 16)
        if not chunk:
            return ENDED
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


def _stopped(job: Job, child: subprocess.Popen, timed_out: bool, limit_s: float) -> Verdict:
    """The verdict of an exercise whose child ended before it answered."""
    exercise = registry.get(job.id)
    if timed_out:
        why = (
            f"its grading did not finish within {limit_s:.0f} s (a kernel or function that "
            "never returns?)"
        )
    elif child.returncode is not None and child.returncode < 0:
        why = f"the process grading it was ended by signal {-child.returncode} (out of memory?)"
    else:
        why = f"the process grading it ended (exit status {child.returncode})"
    cell = job.filename.strip("<>").split(":")[0]  # "code cell 7"
    text = (
        f"✗ not yet · {exercise.id} {exercise.title}\n- The cell that defines "
        f"`{exercise.name}` ({cell}): {why}."
    )
    return Verdict(job.id, False, text)


def _wait(child: subprocess.Popen) -> None:
    """Give a child that closed its pipe a moment to exit, so that its status is known."""
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


def run_jobs(jobs: list[Job], limit_s: float | None = None) -> list[Verdict]:
    """Grade each job in child processes, one child for as many jobs as it lives through."""
    limit_s = exercise_limit_s() if limit_s is None else limit_s
    verdicts: list[Verdict] = []
    pending = list(jobs)
    while pending:
        read, write = os.pipe()
        child = subprocess.Popen(
            [sys.executable, "-m", __name__, "child", str(write)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(write,),
            env=_child_env(),
            preexec_fn=_limit_memory if os.name == "posix" else None,
        )
        os.close(write)
        selector = selectors.DefaultSelector()
        selector.register(read, selectors.EVENT_READ)
        buffer = bytearray()
        try:
            child.stdin.write(json.dumps([asdict(j) for j in pending]).encode())
            child.stdin.close()
        except BrokenPipeError:
            pass
        try:
            while pending:
                line = _read_line(selector, read, buffer, time.monotonic() + limit_s)
                if line in (TIMED_OUT, ENDED):
                    if line == ENDED:
                        _wait(child)
                    child.kill()
                    child.wait()
                    verdicts.append(_stopped(pending.pop(0), child, line == TIMED_OUT, limit_s))
                    break
                verdicts.append(Verdict(**json.loads(line)))
                pending.pop(0)
        finally:
            selector.close()
            os.close(read)
            if child.poll() is None:
                child.kill()
            child.wait()
    return verdicts


def jobs_for(
    notebook, lesson, *, seed: int, hidden: str | None = None, hidden_seed: int | None = None
) -> tuple[list[Job], list[Verdict]]:
    """The jobs for a notebook's exercises of one lesson, and the verdicts found without a
    child (no cell defines the function; a syntax error)."""
    cells = code_cells(notebook)
    jobs, verdicts = [], []
    for exercise in registry.lesson_exercises(lesson):
        found = find_cell(cells, exercise.name)
        head = f"✗ not yet · {exercise.id} {exercise.title}\n- "
        if found is None:
            verdicts.append(Verdict(exercise.id, False, head + _missing(exercise, cells)))
            continue
        index, source = found
        error = syntax_error(source)
        if error:
            text = f"The cell that defines `{exercise.name}` (code cell {index + 1}) has {error}."
            verdicts.append(Verdict(exercise.id, False, head + text))
            continue
        filename = f"<code cell {index + 1}: {exercise.name}>"
        jobs.append(Job(exercise.id, source, filename, seed, hidden, hidden_seed))
    return jobs, verdicts


def grade_notebook(
    notebook, lesson, *, seed: int, hidden: str | None = None, hidden_seed: int | None = None
) -> list[Verdict]:
    """Every exercise of a lesson graded from a submitted notebook, in the lesson's order."""
    from .. import watchdog

    watchdog.default_limit()  # a bad GPGPU_LAUNCH_LIMIT_S is the grader's setup, said at once
    jobs, verdicts = jobs_for(notebook, lesson, seed=seed, hidden=hidden, hidden_seed=hidden_seed)
    verdicts += run_jobs(jobs)
    verdicts = _compiled(jobs, verdicts)
    order = [e.id for e in registry.lesson_exercises(lesson)]
    verdicts.sort(key=lambda v: order.index(v.id))
    for verdict in verdicts:
        verdict.text = wrap(verdict.text)
    return verdicts


def _compiled(jobs: list[Job], verdicts: list[Verdict]) -> list[Verdict]:
    """Compile for a GPU each kernel that passed, with the types its cases launch, where the
    compiler is installed (one compiler process for them all); where not, say on each that this
    check was skipped."""
    from . import compiling, submission

    passed = [v for v in verdicts if v.passed and v.types]
    if passed and not compiling.available():
        for verdict in passed:
            verdict.text += f"\n  ({compiling.SKIPPED})"
        return verdicts
    sources = {job.id: job for job in jobs}
    cells = []
    for verdict in passed:
        job = sources[verdict.id]
        program = submission.vet(job.source).program  # only what the grader ran, nothing else
        types = {name: [tuple(t) for t in tuples] for name, tuples in verdict.types.items()}
        cells.append((program, job.filename, types))
    for verdict, problems in zip(passed, compiling.compile_cells(cells)):
        refused = [sentence for sentence in problems.values() if sentence]
        if refused:
            exercise = registry.get(verdict.id)
            verdict.passed = False
            verdict.text = (
                f"✗ not yet · {exercise.id} {exercise.title}\n- It is right in the simulator, "
                "but a GPU could not compile it:\n" + "\n".join(f"- {r}" for r in refused)
            )
    return verdicts


# --- the child ----------------------------------------------------------------------------


@functools.cache
def _hidden_module(path: str):
    """The autograder's file of hidden cases, run once per child however many jobs use it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpgpu_hidden_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hidden_cases(job: Job):
    """The autograder's cases for this exercise (a function of gpu), or None."""
    if not job.hidden:
        return None
    import numpy as np

    make = getattr(_hidden_module(job.hidden), "HIDDEN", {}).get(job.id)
    if make is None:
        return None
    return lambda gpu: make(np.random.default_rng(job.hidden_seed), gpu)


def grade_job(job: Job) -> Verdict:
    """Grade one exercise's cell in this process (the child): check, load, grade."""
    from . import grader, submission

    exercise = registry.get(job.id)
    head = f"✗ not yet · {exercise.id} {exercise.title}\n- "
    timing = exercise.kind == "function"
    vetted = submission.vet(job.source, timing=timing)
    where = f"in the cell that defines `{exercise.name}`"
    if vetted.problems:
        listed = "\n- ".join(str(p) for p in vetted.problems)
        text = f"{head}Your cell cannot be graded: a GPU could not compile it ({where}):\n- "
        return Verdict(job.id, False, text + listed)
    if not timing and exercise.name in vetted.plain:
        return Verdict(
            job.id,
            False,
            f"{head}`{exercise.name}` is a plain Python function, not a kernel: put "
            f"`@cuda.jit` on the line above `def {exercise.name}(...)`.",
        )
    try:
        namespace = submission.load(vetted, job.filename, _virtual_time() if timing else None)
    except Exception as error:
        line = _line_of(error, job.filename)
        at = f" at line {line}" if line else ""
        return Verdict(
            job.id,
            False,
            f"{head}Running your cell failed{at} ({where}): {type(error).__name__}: {error}",
        )
    fn = namespace.get(exercise.name)
    answer = grader.grade(job.id, fn, seed=job.seed, hidden=_hidden_cases(job))
    text = str(answer)
    note = vetted.left_out_note()
    if note:
        text += "\n  " + note
    return Verdict(job.id, answer.passed, text, _argument_types(exercise, fn, job))


def _argument_types(exercise, fn, job) -> dict | None:
    """{kernel name: the distinct argument types its cases launch it with}, for compiling."""
    if exercise.kind != "kernel":
        return None
    import numpy as np

    from . import compiling, running

    cases = exercise.cases(np.random.default_rng(job.seed), False)
    hidden = _hidden_cases(job)
    cases += list(hidden(False)) if hidden else []
    seen = []
    for case in cases:
        types = list(
            compiling.argument_types([running.start_values(case, p) for p in exercise.params])
        )
        if types not in seen:
            seen.append(types)
    return {exercise.name: seen}


def _virtual_time():
    from . import fakegpu

    return getattr(fakegpu, "VIRTUAL_TIME", None)


def _line_of(error: BaseException, filename: str) -> int | None:
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    if frames:
        return frames[-1].lineno
    if isinstance(error, SyntaxError) and error.filename == filename:
        return error.lineno
    return None


def child(fd: int) -> int:
    """Read jobs (JSON) from stdin, grade each, write one verdict line each to fd."""
    jobs = [Job(**job) for job in json.loads(sys.stdin.read())]
    import gpgpu_lessons  # noqa: F401 (chooses the simulator, adds the warp intrinsics)

    from . import grader

    grader.SAY_NOT_COMPILED = False  # the parent compiles, or says that it could not

    with os.fdopen(fd, "w", encoding="utf-8") as out:
        for job in jobs:
            try:
                verdict = grade_job(job)
            except Exception as error:  # a bug of the grader: the student loses nothing silently
                exercise = registry.get(job.id)
                verdict = Verdict(
                    job.id,
                    False,
                    f"✗ not yet · {exercise.id} {exercise.title}\n- The grader itself failed "
                    f"({type(error).__name__}: {error}); please tell your instructor.",
                )
            out.write(json.dumps(asdict(verdict)) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "child":
        sys.exit(child(int(sys.argv[2])))
    sys.exit("usage: python -m gpgpu_lessons.exercises.judge child FD (the graders start it)")

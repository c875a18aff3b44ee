"""Solutions stay with the instructor: the student package holds no reference solution, no hint
that is the answer, and no skeleton that holds another exercise's answer.

What counts as an exercise's *fix*: the code lines of its reference solution
(`solutions.source(id)`: the constants it is shown with, then the function) that the student
has to write. Each logical line is read with Python's tokenizer and normalised: comments and
whitespace dropped, and each constant that the solution defines as a plain number (`B = 64`,
`FULL_MASK = 0xFFFFFFFF`) replaced by its value, so that `B // 2` and `64 // 2` read alike. A line
is not part of the fix when it is

- a docstring, an `import` or `from` line, a decorator or the `def` line;
- a line of the exercise's skeleton, or written out anywhere in its skeleton or statement
  (a comment or a docstring that says `dst[i] = src[n - 1 - i]` already gave it away);
- trivial: `else:`, `return`, `pass`, `break`, `continue`, `cuda.syncthreads()` (a barrier is
  named by the statements and taught by the lessons; where it goes is the fix);
- code that the skeletons of an earlier lesson hand out (`t = cuda.threadIdx.x`,
  `acc = float32(0)`): a course's bookkeeping, not this exercise's answer.

The rules, for every exercise:

- no hint of any exercise holds a fix line: neither as the code in backticks (each statement of
  it, `a; b` and `if c: d` split up) nor, for fix lines of 12 characters or more, anywhere in the
  hint's text;
- no skeleton of another exercise of the same lesson (the same notebook) holds half or more of
  its fix lines (a shared line of bookkeeping, the guard or a mask, is fine), except where
  STARTS_FROM says why; a later lesson may start from an earlier lesson's solved exercise, as
  04.5 builds on 02.4's tile;
- no file of the student package (the source tree, and the wheel that pip builds from a copy of
  it) is a solutions module, and none holds a reference function: its source from the `def` line
  on, or its code lines one after another (a copy with other comments or docstring).
"""

from __future__ import annotations

import importlib
import inspect
import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
import zipfile
from functools import cache
from pathlib import Path

import pytest
from gpgpu_instructor import solutions

from gpgpu_lessons.exercises import registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "gpgpu_lessons"
TRIVIAL = {"else:", "return", "pass", "break", "continue", "cuda.syncthreads()"}
LONG = 12  # fix lines at least this long are looked for anywhere in a hint's text
HEADERS = re.compile(r"(if|elif|while|for|with|else)\b")
# A skeleton that starts from another exercise's answer on purpose, and why.
STARTS_FROM = {
    ("05.3", "05.1"): "05.3 asks to do better than one atomic per element, 05.1's answer",
}
EXERCISES = registry.all_exercises()
IDS = [e.id for e in EXERCISES]


# --- reading code and text -------------------------------------------------------------------


@cache
def constants(exercise_id: str) -> dict[str, str]:
    """The constants of the reference solution defined as a plain number: {name: value}."""
    pattern = r"^([A-Z][A-Z0-9_]*) = (0x[0-9A-Fa-f]+|\d+)\s*(?:#.*)?$"
    return dict(re.findall(pattern, solutions.source(exercise_id), re.M))


def squeeze(text: str, names: dict[str, str]) -> str:
    """Text with the constants replaced by their values, and no whitespace at all."""
    for name, value in names.items():
        text = re.sub(rf"\b{name}\b", value, text)
    return re.sub(r"\s+", "", text)


def logical_lines(source: str, names: dict[str, str], defs: bool = False) -> list[tuple]:
    """The logical lines of some code, docstrings left out, and `import`, `from`, decorator and
    `def` lines too unless `defs`: (normalised, as written), in order."""
    lines, tokens = [], []
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT}
    left_out = ("import", "from", "class", "@") + (() if defs else ("def",))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in skipped or token.type == tokenize.ENDMARKER:
            continue
        if token.type != tokenize.NEWLINE:
            tokens.append(token)
            continue
        first = tokens[0]
        bare_string = len(tokens) == 1 and first.type == tokenize.STRING
        if not bare_string and first.string not in left_out:
            text = "".join(names.get(t.string, t.string) for t in tokens)
            lines.append((re.sub(r"\s+", "", text), source.splitlines()[first.start[0] - 1]))
        tokens = []
    return lines


def code_lines(source: str, names: dict[str, str]) -> dict[str, str]:
    """The normalised code lines of some code: {normalised: as written}, in order."""
    lines = {}
    for line, shown in logical_lines(source, names):
        lines.setdefault(line, shown)
    return lines


def statements(code: str) -> list[str]:
    """One snippet of code split into its statements: `a; b` and `if c: d` give two each."""
    pieces, depth, start = [], 0, 0
    for k, char in enumerate(code + ";"):
        depth += (char in "([{") - (char in ")]}")
        if char == ";" and depth == 0:
            pieces.append(code[start:k].strip())
            start = k + 1
    found = []
    for piece in filter(None, pieces):
        found.append(piece)
        if HEADERS.match(piece):
            depth = 0
            for k, char in enumerate(piece):
                depth += (char in "([{") - (char in ")]}")
                if char == ":" and depth == 0 and piece[k + 1 :].strip():
                    found[-1] = piece[: k + 1]
                    found += statements(piece[k + 1 :])
                    break
    return found


# --- the fix of each exercise --------------------------------------------------------------


@cache
def given_before(lesson: str, exercise_id: str) -> frozenset[str]:
    """The code lines that the skeletons of the lessons before this one hand out."""
    names = constants(exercise_id)
    return frozenset(
        line for e in EXERCISES if e.lesson < lesson for line in code_lines(e.skeleton, names)
    )


@cache
def fix(exercise_id: str) -> dict[str, str]:
    """The fix lines of an exercise: {normalised: as written in the reference solution}."""
    exercise = registry.get(exercise_id)
    names = constants(exercise_id)
    skeleton = code_lines(exercise.skeleton, names)
    said = squeeze(exercise.skeleton, names) + "\n" + squeeze(exercise.statement, names)
    return {
        line: shown
        for line, shown in code_lines(solutions.source(exercise_id), names).items()
        if line not in skeleton
        and line not in TRIVIAL
        and line not in given_before(exercise.lesson, exercise_id)
        and line not in said
    }


def leaks_in_hint(hint: str, exercise_id: str) -> list[str]:
    """The fix lines of an exercise that a hint gives."""
    names = constants(exercise_id)
    quoted = {
        squeeze(s, names) for code in re.findall(r"`([^`]+)`", hint) for s in statements(code)
    }
    text = squeeze(hint.replace("`", ""), names)
    return [
        shown.strip()
        for line, shown in fix(exercise_id).items()
        if line in quoted or (len(line) >= LONG and line in text)
    ]


def shared_with_skeleton(skeleton: str, exercise_id: str) -> list[str]:
    """The fix lines of an exercise that a skeleton holds as code."""
    held = code_lines(skeleton, constants(exercise_id))
    return [shown.strip() for line, shown in fix(exercise_id).items() if line in held]


def reference_function(exercise_id: str):
    solution = solutions.reference(exercise_id)
    return getattr(solution, "py_func", solution)


def leaks_in_files(folder: Path) -> list[str]:
    """Reference functions found in the .py files under a folder: their source from the `def`
    line on (whitespace aside), or its code lines one after another (the docstring and the
    comments aside)."""
    functions = {}
    for exercise_id in IDS:
        source = inspect.getsource(reference_function(exercise_id))
        source = source[source.index("def ") :]
        lines = "\n".join(line for line, _ in logical_lines(source, {}, defs=True))
        functions[exercise_id] = (squeeze(source, {}), f"\n{lines}\n")
    found = []
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text()
        lines = "\n".join(line for line, _ in logical_lines(text, {}, defs=True))
        squeezed, lines = squeeze(text, {}), f"\n{lines}\n"
        for exercise_id, (source, body) in functions.items():
            if source in squeezed or body in lines:
                found.append(f"{path.relative_to(folder)}: the reference of {exercise_id}")
    return found


def solution_files(paths) -> list[str]:
    return [p for p in map(str, paths) if re.search(r"solutions|gpgpu_instructor", p, re.I)]


# --- hints and skeletons -------------------------------------------------------------------


def hint_problems(hints_of: dict[str, tuple[str, ...]]) -> list[str]:
    """Each hint that gives a fix line of any exercise."""
    return [
        f"hint {level} of {hinted} gives {owner}'s `{line}`"
        for hinted, hints in hints_of.items()
        for level, hint in enumerate(hints, 1)
        for owner in IDS
        for line in leaks_in_hint(hint, owner)
    ]


def skeleton_problems(skeletons: dict[str, str]) -> list[str]:
    """Each skeleton that holds half or more of the fix of another exercise of its lesson."""
    problems = []
    for holder, skeleton in skeletons.items():
        for owner in IDS:
            if owner == holder or owner[:2] != holder[:2] or (holder, owner) in STARTS_FROM:
                continue
            held = shared_with_skeleton(skeleton, owner)
            if held and 2 * len(held) >= len(fix(owner)):
                shown = "; ".join(f"`{line}`" for line in held)
                problems.append(f"the skeleton of {holder} holds {owner}'s fix: {shown}")
    return problems


def test_no_hint_gives_a_fix_line():
    assert hint_problems({e.id: e.hints for e in EXERCISES}) == []


def test_no_skeleton_holds_another_exercise_s_fix():
    assert skeleton_problems({e.id: e.skeleton for e in EXERCISES}) == []
    for holder, owner in STARTS_FROM:  # each exception is still needed
        assert shared_with_skeleton(registry.get(holder).skeleton, owner), (holder, owner)


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_skeleton_is_not_its_solution(exercise_id):
    exercise = registry.get(exercise_id)
    names = constants(exercise_id)
    reference = code_lines(inspect.getsource(reference_function(exercise_id)), names)
    assert list(code_lines(exercise.skeleton, names)) != list(reference)


def test_the_checks_find_a_leak():
    """A hint that says the answer, a skeleton that holds a padded tile, a module with a
    reference kernel in it: each is found."""
    assert leaks_in_hint("Guard it: `if i < out.size:`.", "00.1") == ["if i < out.size:"]
    assert leaks_in_hint("`while offset > 0: value += x`; then `offset //= 2`", "05.2") == [
        "while offset > 0:",
        "offset //= 2",
    ]
    assert leaks_in_hint("The sum: buf[t]  +=  buf[t + s] for t < s.", "03.3") == [
        "buf[t] += buf[t + s]"
    ]
    assert leaks_in_hint("`s = 64 // 2`", "03.3") == ["s = B // 2"]
    assert leaks_in_hint("Compare `i` with the length of the array.", "00.1") == []
    rotate = registry.get("03.4").skeleton
    padded = rotate.replace("(TILE, TILE)", "(TILE, PADDED)").replace(
        "TILE, ROWS = 32, 8\n", "TILE, ROWS = 32, 8\nPADDED = TILE + 1\n"
    )
    assert skeleton_problems({"03.4": padded}) == [
        "the skeleton of 03.4 holds 03.1's fix: `PADDED = TILE + 1`; "
        "`tile = cuda.shared.array((TILE, PADDED), float32)`"
    ]


def test_the_checks_find_a_reference_kernel_in_a_file(tmp_path):
    (tmp_path / "copied.py").write_text(solutions.source("03.2"))
    source = inspect.getsource(reference_function("05.6")).replace('"""', '"""Edited. ', 1)
    (tmp_path / "edited.py").write_text("# a comment\n" + source.replace("    ", "  "))
    assert leaks_in_files(tmp_path) == [
        "copied.py: the reference of 03.2",
        "edited.py: the reference of 05.6",
    ]


# --- the package a student installs --------------------------------------------------------


def test_the_student_package_holds_no_solution():
    """The packages that pyproject.toml selects (setuptools' `packages.find`), the modules
    importable from them, and the code of their files."""
    import setuptools

    tomllib = pytest.importorskip("tomllib", reason="tomllib comes with Python 3.11+")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    find = config["packages"]["find"]
    packages = setuptools.find_packages(
        where=str(ROOT / find.get("where", ["."])[0]),
        include=find.get("include", ["*"]),
        exclude=find.get("exclude", ()),
    )
    assert "gpgpu_lessons.exercises" in packages
    assert solution_files(packages) == []
    assert solution_files(p.relative_to(ROOT) for p in PACKAGE.rglob("*")) == []
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("gpgpu_lessons.exercises.solutions")
    assert leaks_in_files(PACKAGE) == []


def build_wheel(tmp_path: Path) -> Path:
    """The student wheel, built from a copy of the working tree (the build writes build/ and
    egg-info beside the sources). The environment's setuptools first; where it is older than the
    one pyproject.toml needs, pip's isolated build environment (from the package index)."""
    source = tmp_path / "source"
    ignored = shutil.ignore_patterns(
        ".git", ".venv*", "build", "*.egg-info", "__pycache__", ".whl", "gpu-run-out", ".*cache"
    )
    shutil.copytree(ROOT, source, ignore=ignored)
    outputs = []
    for isolation in (["--no-build-isolation"], []):
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation]
        done = subprocess.run(
            [*command, "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True
        )
        wheels = sorted((tmp_path / "dist").glob("gpgpu_lessons-*.whl"))
        if done.returncode == 0 and wheels:
            return wheels[0]
        outputs.append(f"$ {' '.join(command)}\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    pytest.fail("the student wheel does not build:\n" + "\n".join(outputs))


DUMP = """\
import json, sys
sys.path.insert(0, sys.argv[1])
import gpgpu_lessons
from gpgpu_lessons.exercises import registry
print(json.dumps({"file": gpgpu_lessons.__file__, "exercises": [
    {"id": e.id, "hints": e.hints, "skeleton": e.skeleton} for e in registry.all_exercises()]}))
"""


@pytest.mark.slow
def test_the_student_wheel_holds_no_solution(tmp_path):
    wheel = build_wheel(tmp_path)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(unpacked)
    assert "gpgpu_lessons/exercises/lesson03.py" in names
    assert solution_files(names) == []
    assert leaks_in_files(unpacked) == []
    # The wheel's own exercises: its hints and skeletons, as a student's Python reads them.
    done = subprocess.run(
        [sys.executable, "-c", DUMP, str(unpacked)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    dumped = json.loads(done.stdout.splitlines()[-1])
    assert Path(dumped["file"]).is_relative_to(unpacked)
    assert [e["id"] for e in dumped["exercises"]] == IDS
    assert hint_problems({e["id"]: tuple(e["hints"]) for e in dumped["exercises"]}) == []
    assert skeleton_problems({e["id"]: e["skeleton"] for e in dumped["exercises"]}) == []

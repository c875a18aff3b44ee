"""Submissions of lesson 05 for the course graders' end-to-end tests (test_export.py: otter;
test_export_nbgrader.py: nbgrader): the answers a class hands in, and the score and feedback
each must get."""

import json
from pathlib import Path

from gpgpu_instructor import export

from gpgpu_lessons.exercises import registry

LESSON = "05"
HEADER = "import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n\n"
WRONG = {
    "count_greater_equal": """
@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] >= threshold:
        cuda.atomic.add(count, 0, 1)
""",
    "count_racy": """
@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        count[0] += 1
""",
    "warp_sums_raises": """
@cuda.jit
def warp_sums(x, sums):
    i = cuda.grid(1)
    sums[i // 32] = x[i] + 1 // (i - i)
""",
    "compact_syntax_error": """
@cuda.jit
def compact(x, threshold, out, count)
    pass
""",
    "bright_renamed": """
@cuda.jit
def count_bright_pixels(pixels, threshold, count):
    pass
""",
    "count_endless": """
@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    while i < x.size:
        if x[i] > threshold:
            cuda.atomic.add(count, 0, 1)
""",
    "dot_plain_merge": """
B = 64


@cuda.jit
def dot(x, y, out):
    part = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[j] * y[j]
    part[t] = acc
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            part[t] += part[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] += part[0]
""",
    "histogram_plain_merge": """
BINS = 16


@cuda.jit
def histogram(values, bins):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        bins[t] += local[t]
""",
    "count_exits": """
import os


@cuda.jit
def count_above(x, threshold, count):
    os._exit(0)
""",
    "count_dunder": """
@cuda.jit
def count_above(x, threshold, count):
    g = cuda.grid.__globals__
    g["x"] = 1
""",
    "count_forges_in_cell": """
from gpgpu_lessons import exercises

exercises.require = lambda *args, **kwargs: None
exercises.grade = lambda *args, **kwargs: None


@cuda.jit
def count_above(x, threshold, count):
    pass
""",
    "count_imports_solution": """
from gpgpu_instructor.solutions.lesson05 import count_above
""",
    "count_execs_solution": """
import inspect
from gpgpu_instructor.solutions import lesson05

exec(inspect.getsource(lesson05))
""",
    "count_plain_helper": """
def above(value, threshold):
    return value > threshold


@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and above(x[i], threshold):
        cuda.atomic.add(count, 0, 1)
""",
    "count_list": """
@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    seen = [0]
    if i < x.size and x[i] > threshold:
        cuda.atomic.add(count, 0, 1)
""",
    "count_lucky": """
@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold + 0.002:
        cuda.atomic.add(count, 0, 1)
""",
    "count_with_test_code": """
@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        cuda.atomic.add(count, 0, 1)


counter = np.zeros(1, np.int32)
count_above[1, 32](np.arange(32, dtype=np.float32), 3.0, counter)
print(counter)
""",
}


def answer_cells(notebook) -> dict[str, dict]:
    """exercise id -> the student's code cell that defines its function."""
    found = {}
    for exercise in registry.lesson_exercises(LESSON):
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code" and f"def {exercise.name}(" in "".join(cell["source"]):
                found[exercise.id] = cell
    return found


FORGERIES = {
    "patch_require": "from gpgpu_lessons import exercises\n\n"
    "exercises.require = lambda *args, **kwargs: None\n",
    "patch_grade": "from gpgpu_lessons import exercises\n"
    "from gpgpu_lessons.exercises import report\n\n"
    "exercises.grade = lambda i, f, **k: report.Report(i, '', passed=True)\n",
    "exit": "import os\n\nos._exit(0)\n",
    "raise_exit": "raise SystemExit(0)\n",
    "sys_modules": "import sys\n\nsys.modules['gpgpu_lessons.exercises'] = None\n",
}


def code_cell(source: str) -> dict:
    """A code cell as a student adds one."""
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}  # fmt: skip


def submitted_notebook(
    student: Path, answers: dict, shuffle=False, first=(), before_tests=()
) -> dict:
    """The student notebook with some answers replaced: "ref" (the reference solution), a key of
    WRONG, or None (the skeleton left as it is). shuffle: execution counts and a stale output as a
    session with cells run out of order leaves them (the graders run the notebook top to bottom)."""
    notebook = json.loads(student.read_text())
    notebook["cells"][1:1] = [code_cell(FORGERIES[name]) for name in first]
    cells = answer_cells(notebook)
    for exercise_id, choice in answers.items():
        if choice == "ref":
            source = export._solution(registry.get(exercise_id))
        else:
            source = HEADER + WRONG[choice]
        cells[exercise_id]["source"] = source
    for name in before_tests:  # right after the last answer cell, before its test
        last = notebook["cells"].index(cells[IDS[-1]])
        notebook["cells"].insert(last + 1, code_cell(FORGERIES[name]))
    if shuffle:
        counts = list(range(len(notebook["cells"]), 0, -1))
        for cell, count in zip(notebook["cells"], counts):
            if cell["cell_type"] == "code":
                cell["execution_count"] = count
                stale = {"name": "stdout", "output_type": "stream", "text": "stale output\n"}
                cell["outputs"] = [stale]
    return notebook


IDS = [e.id for e in registry.lesson_exercises(LESSON)]
ALL = dict.fromkeys(IDS, "ref")
BLANK = {}
# name: (answers, forgery cells first, forgery cells before the tests, expected score, text the
# student's report must show). What an instructor would give: forgeries score what the answers
# earn; an uncompilable, exiting or lucky kernel loses its exercise only.
SUBMISSIONS = {
    "all_correct": (ALL, (), (), 6, "✓ solved · 05.6"),
    "all_blank": (BLANK, (), (), 0, "✗ not yet · 05.1"),
    "out_of_order": (ALL, (), (), 6, "✓ solved · 05.1"),
    "half_done": (dict.fromkeys(IDS[:3], "ref"), (), (), 3, "✗ not yet · 05.4"),
    "greater_equal": ({**ALL, "05.1": "count_greater_equal"}, (), (), 5, "'above' means `>`"),
    "racy": ({**ALL, "05.1": "count_racy"}, (), (), 5, "A race (W"),
    "raises": ({**ALL, "05.2": "warp_sums_raises"}, (), (), 5, "ZeroDivisionError"),
    "syntax_error": ({**ALL, "05.6": "compact_syntax_error"}, (), (), 5, "syntax error on line"),
    "renamed": ({**ALL, "05.3": "bright_renamed"}, (), (), 5, "`count_bright_pixels`"),
    "one_wrong_two_blank": (
        {**dict.fromkeys(IDS[:4], "ref"), "05.1": "count_greater_equal"},
        (),
        (),
        3,
        "'above' means `>`",
    ),
    "endless": ({**ALL, "05.1": "count_endless"}, (), (), 5, "never"),
    "forged_require": (BLANK, ("patch_require",), ("patch_require",), 0, "✗ not yet · 05.2"),
    "forged_grade": (BLANK, ("patch_grade",), ("patch_grade",), 0, "✗ not yet · 05.3"),
    "forged_in_cell": ({**BLANK, "05.1": "count_forges_in_cell"}, (), (), 0, "left out"),
    "exits_after_answers": (ALL, (), ("exit",), 6, "✓ solved · 05.6"),
    "exits_first": (ALL, ("exit", "raise_exit"), (), 6, "✓ solved · 05.1"),
    "hides_the_package": (ALL, ("sys_modules",), ("sys_modules",), 6, "✓ solved · 05.2"),
    "kernel_exits": ({**ALL, "05.1": "count_exits"}, (), (), 5, "`_exit`"),
    "kernel_dunder": ({**ALL, "05.1": "count_dunder"}, (), (), 5, "`__globals__`"),
    "imports_solution": ({**ALL, "05.1": "count_imports_solution"}, (), (), 5, "No cell"),
    "execs_solution": ({**ALL, "05.1": "count_execs_solution"}, (), (), 5, "No cell"),
    "plain_helper": ({**ALL, "05.1": "count_plain_helper"}, (), (), 5, "a plain Python function"),
    "python_list": ({**ALL, "05.1": "count_list"}, (), (), 5, "Python list"),
    "lucky": ({**ALL, "05.1": "count_lucky"}, (), (), 5, "✗ not yet · 05.1"),
    "test_code_in_cell": ({**ALL, "05.1": "count_with_test_code"}, (), (), 6, "left out"),
}

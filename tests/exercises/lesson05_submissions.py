"""Submissions of lesson 05 for the course graders' end-to-end tests (test_export.py: otter;
test_export_nbgrader.py: nbgrader): the answers a class hands in, and the score and feedback
each must get."""

import json
from pathlib import Path

from gpgpu_lessons.exercises import export, registry

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
}


def answer_cells(notebook) -> dict[str, dict]:
    """exercise id -> the student's code cell that defines its function."""
    found = {}
    for exercise in registry.lesson_exercises(LESSON):
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code" and f"def {exercise.name}(" in "".join(cell["source"]):
                found[exercise.id] = cell
    return found


def submitted_notebook(student: Path, answers: dict, shuffle=False) -> dict:
    """The student notebook with some answers replaced: "ref" (the reference solution), a key of
    WRONG, or None (the skeleton left as it is). shuffle: execution counts and a stale output as a
    session with cells run out of order leaves them (the graders run the notebook top to bottom)."""
    notebook = json.loads(student.read_text())
    cells = answer_cells(notebook)
    for exercise_id, choice in answers.items():
        if choice == "ref":
            source = export._solution(registry.get(exercise_id))
        else:
            source = HEADER + WRONG[choice]
        cells[exercise_id]["source"] = source
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
SUBMISSIONS = {
    # name: (answers, expected score, text the student's report must show)
    "all_correct": (ALL, 6, "q05_6"),
    "all_blank": ({}, 0, "✗ not yet · 05.1"),
    "out_of_order": (ALL, 6, "q05_1"),
    "half_done": (dict.fromkeys(IDS[:3], "ref"), 3, "✗ not yet · 05.4"),
    "greater_equal": ({**ALL, "05.1": "count_greater_equal"}, 5, "'above' means `>`"),
    "racy": ({**ALL, "05.1": "count_racy"}, 5, "A race (W"),
    "raises": ({**ALL, "05.2": "warp_sums_raises"}, 5, "ZeroDivisionError"),
    "syntax_error": ({**ALL, "05.6": "compact_syntax_error"}, 5, "NameError"),
    "renamed": ({**ALL, "05.3": "bright_renamed"}, 5, "name 'count_bright' is not defined"),
    "one_wrong_two_blank": (
        {**dict.fromkeys(IDS[:4], "ref"), "05.1": "count_greater_equal"},
        3,
        "'above' means `>`",
    ),
}

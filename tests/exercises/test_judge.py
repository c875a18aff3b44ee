"""The course's judge: a cell is vetted (what a GPU compiles and nothing that reaches the
grader), graded in child processes from its source, and the same submission gets the same
verdict every time; a child that dies or hangs loses only the exercise it was grading."""

import json
import os
import sys

import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import export, solutions

from gpgpu_lessons.exercises import judge, registry, submission

HEADER = "from numba import cuda\nimport numpy as np\n\n"
LUCKY = (
    HEADER
    + """@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold + 0.002:
        cuda.atomic.add(count, 0, 1)
"""
)
ENDLESS = (
    HEADER
    + """@cuda.jit
def count_above(x, threshold, count):
    i = cuda.grid(1)
    while i < x.size:
        pass
"""
)


def _notebook(*sources) -> dict:
    return {"cells": [{"cell_type": "code", "source": s} for s in sources]}


def test_every_reference_solution_and_skeleton_passes_the_vetting():
    for exercise in registry.all_exercises():
        timing = exercise.kind == "function"
        for source in (export._solution(exercise), exercise.skeleton):
            vetted = submission.vet(source, timing=timing)
            assert vetted.ok, (exercise.id, [str(p) for p in vetted.problems])


@pytest.mark.parametrize(
    "body, said",
    [
        ("    import os", "imports inside a kernel"),
        ("    x.__class__", "`__class__`"),
        ("    g = cuda.grid.__globals__", "`__globals__`"),
        ("    values = [1, 2]", "Python list"),
        ("    out[0] = helper(x[0])", "a plain Python function"),
        ("    out[0] = eval('1')", "`eval`"),
        ("    out[0] = open('f')", "`open`"),
        ("    out[0] = np.load('f')", "`np.load`"),
        ("    out[0] = x.ctypes", "`.ctypes`"),
        ("    global out", "`global`"),
        ("    out[0] = (lambda v: v)(1)", "lambda"),
        ("    out[0] = len(f'{x}')", "f-string"),
        ("    out[0] = SECRET", "`SECRET`"),
        ("    out[0] = os.getpid()", "`os`"),
    ],
)
def test_the_vetting_refuses_what_a_gpu_cannot_compile_with_its_line(body, said):
    source = (
        "import os\nimport numpy as np\nfrom numba import cuda\n\n"
        "SECRET = open('/etc/passwd').read()\n\n\ndef helper(v):\n    return v\n\n\n"
        f"@cuda.jit\ndef k(x, out):\n{body}\n"
    )
    vetted = submission.vet(source)
    assert vetted.problems, body
    assert said in str(vetted.problems[0]) and vetted.problems[0].line == 14, vetted.problems


def test_the_vetting_leaves_out_test_code_and_says_so():
    source = LUCKY + "\ncount = np.zeros(1, np.int32)\ncount_above[1, 32](count, 1.0, count)\n"
    vetted = submission.vet(source)
    assert vetted.ok and [n for n, _ in vetted.left_out] == [11]  # the array is a constant
    assert "line 11 `count_above[1, 32](count, 1.0, count)`" in vetted.left_out_note()
    assert "count_above[1, 32]" not in vetted.program
    assert vetted.program.count("\n") == source.count("\n")  # the cell's lines stay in place


def test_a_loaded_cell_has_only_the_builtins_it_may_use():
    vetted = submission.vet(HEADER + "N = 4\n")
    namespace = submission.load(vetted, "<cell>")
    assert namespace["N"] == 4 and "open" not in namespace["__builtins__"]
    with pytest.raises(ImportError, match="does not import 'os'"):
        namespace["__builtins__"]["__import__"]("os")


def test_the_judge_grades_every_reference_solution_of_a_lesson():
    cells = [export._solution(e) + "\nprint('a test')\n" for e in registry.lesson_exercises("05")]
    verdicts = judge.grade_notebook(_notebook(*cells), "05", seed=5)
    assert [v.id for v in verdicts] == [e.id for e in registry.lesson_exercises("05")]
    assert all(v.passed for v in verdicts), [v.text for v in verdicts]


def test_the_judge_grades_the_last_cell_that_defines_the_function():
    reference = export._solution(registry.get("05.1"))
    verdicts = judge.grade_notebook(_notebook(LUCKY, reference), "05", seed=5)
    assert verdicts[0].passed
    verdicts = judge.grade_notebook(_notebook(reference, LUCKY), "05", seed=5)
    assert not verdicts[0].passed


def test_a_syntax_error_is_called_one_with_its_line():
    broken = HEADER + "@cuda.jit\ndef count_above(x, threshold, count)\n    pass\n"
    (verdict, *_) = judge.grade_notebook(_notebook(broken), "05", seed=5)
    assert "syntax error on line 5" in verdict.text and "NameError" not in verdict.text


def test_a_narrow_range_mistake_fails_the_same_way_every_time():
    job = judge.Job("05.1", LUCKY, "<code cell 1: count_above>", seed=11)
    verdicts = judge.run_jobs([job] * 20)
    assert len(verdicts) == 20 and not any(v.passed for v in verdicts)
    assert len({v.text for v in verdicts}) == 1, verdicts[0].text
    again = judge.grade_notebook(_notebook(LUCKY), "05", seed=11)
    assert again == judge.grade_notebook(_notebook(LUCKY), "05", seed=11)


SITECUSTOMIZE = """
import os, sys
marker = os.path.join(os.path.dirname(__file__), "died")
if sys.argv[1:2] == ["child"] and not os.path.exists(marker):
    open(marker, "w").close()
    os._exit(3)
"""


def test_a_child_that_dies_loses_only_its_exercise(tmp_path, monkeypatch):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    reference = export._solution(registry.get("05.1"))
    jobs = [judge.Job("05.1", reference, "<cell 1>", seed=1)] * 2
    first, second = judge.run_jobs(jobs)
    assert not first.passed and "exit status 3" in first.text
    assert second.passed, second.text


def test_a_child_that_hangs_is_stopped_and_the_rest_graded(monkeypatch):
    monkeypatch.setenv("GPGPU_LAUNCH_LIMIT_S", "0")  # no watchdog: the backstop must stop it
    reference = export._solution(registry.get("05.1"))
    jobs = [judge.Job("05.1", ENDLESS, "<cell 1>", 1), judge.Job("05.1", reference, "<c 2>", 1)]
    hung, graded = judge.run_jobs(jobs, limit_s=30)
    assert not hung.passed and "did not finish within 30 s" in hung.text
    assert graded.passed, graded.text


def test_a_bad_launch_limit_is_the_graders_setup_not_the_student(monkeypatch):
    monkeypatch.setenv("GPGPU_LAUNCH_LIMIT_S", "abc")
    with pytest.raises(ValueError, match="GPGPU_LAUNCH_LIMIT_S"):
        judge.grade_notebook(_notebook(LUCKY), "05", seed=1)


def test_feedback_is_wrapped_and_holds_no_path():
    (verdict, *_) = judge.grade_notebook(_notebook(LUCKY), "05", seed=2)
    assert max(len(line) for line in verdict.text.splitlines()) <= judge.WIDTH
    assert "site-packages" not in verdict.text and "Traceback" not in verdict.text
    json.dumps(verdict.__dict__)  # travels as JSON from the child


def test_a_reference_imported_from_the_instructor_package_is_not_graded():
    cell = "from gpgpu_instructor.solutions.lesson05 import count_above\n"
    (verdict, *_) = judge.grade_notebook(_notebook(cell), "05", seed=2)
    assert not verdict.passed and "No cell" in verdict.text
    assert solutions.reference("05.1") is not None

"""Export to the course graders: `export --otter` writes master notebooks that `otter assign` turns
into student notebooks and an autograder zip, and `otter run` grades submissions on CPU with the
expected scores and the grader's feedback in the report (end to end: marked slow). One submission
goes through the `otter run` command; the others through the function it calls, in one Python."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from lesson05_submissions import ALL, LESSON, SUBMISSIONS, submitted_notebook
from wrong_answers import count_greater_equal

from gpgpu_lessons.exercises import export, registry, solutions

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_export_writes_one_otter_notebook_per_lesson(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "gpgpu_lessons.exercises", "export", "--otter", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    paths = sorted(tmp_path.glob("lesson*/lesson*.ipynb"))
    assert [p.parent.name for p in paths] == [f"lesson{k}" for k in registry.LESSONS]
    assert [w for w in out.stdout.split() if w.endswith(".ipynb")] == [str(p) for p in paths]
    notebook = json.loads(paths[3].read_text())
    sources = ["".join(c["source"]) for c in notebook["cells"]]
    assert sources[0].startswith("# ASSIGNMENT CONFIG\nname: lesson03\n")
    assert sum(s.startswith("# BEGIN QUESTION\n") for s in sources) == 5
    assert any('exercises.require("03.2", mirror_distance)' in s for s in sources)
    assert any(s.startswith("# BEGIN SOLUTION NO PROMPT\n") and "PROMPT\n" in s for s in sources)


def test_export_writes_an_nbgrader_course(tmp_path):
    paths = export.write("nbgrader", tmp_path, ["05"])
    assert paths == [tmp_path / "source/lesson05/lesson05.ipynb", tmp_path / "nbgrader_config.py"]
    notebook = json.loads(paths[0].read_text())
    graded = [c for c in notebook["cells"] if c["metadata"]["nbgrader"]["grade"]]
    assert len(graded) == 6 and all(c["metadata"]["nbgrader"]["points"] == 1 for c in graded)
    answers = [c for c in notebook["cells"] if c["metadata"]["nbgrader"]["solution"]]
    assert all("### BEGIN SOLUTION\n" in "".join(c["source"]) for c in answers)


def test_require_fails_with_the_graders_answer():
    from gpgpu_lessons import exercises

    assert exercises.require("05.1", solutions.reference("05.1")) is None
    with pytest.raises(AssertionError, match=r"✗ not yet · 05.1"):
        exercises.require("05.1", count_greater_equal)


# --- otter end to end: assign once, then grade submissions of lesson 05 ------------------------


@pytest.fixture(scope="module")
def otter_assignment(tmp_path_factory):
    """`export --otter`, then `otter assign` on lesson 05: the student notebook and the zip."""
    if shutil.which("otter", path=str(BIN)) is None:
        pytest.skip("otter-grader is not installed (the `course` extra)")
    folder = tmp_path_factory.mktemp("otter")
    export.write("otter", folder, [LESSON])
    master = folder / f"lesson{LESSON}"
    subprocess.run(
        [str(BIN / "otter"), "assign", f"lesson{LESSON}.ipynb", "dist"],
        cwd=master,
        check=True,
        capture_output=True,
    )
    (zipfile,) = (master / "dist/autograder").glob("*.zip")
    return master / "dist/student" / f"lesson{LESSON}.ipynb", zipfile


def _submission(student: Path, folder: Path, name: str, answers: dict, shuffle=False) -> Path:
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(submitted_notebook(student, answers, shuffle)))
    return path


LIMIT_S = 5  # the watchdog's limit per launch (GPGPU_LAUNCH_LIMIT_S): the endless kernel's cost
ENV = {**os.environ, "GPGPU_LESSONS_PROGRESS": os.devnull, "GPGPU_LAUNCH_LIMIT_S": str(LIMIT_S)}
# name: (answers, expected score, text the report must show); the last two have tests of their own
OTTER_SUBMISSIONS = {
    **SUBMISSIONS,
    "endless": ({**ALL, "05.1": "count_endless"}, 5, "never advances"),
    "between_blocks": ({**ALL, "05.4": "histogram_plain_merge"}, 5, "between blocks"),
}
TIMED = "all_correct"  # graded by the `otter run` command itself: one student's whole lesson

# The others in one Python, by the function `otter run` calls (otter.run.main: a fresh kernel per
# submission, as the command has): starting Otter costs about 4 s, once instead of 11 times.
GRADE_EACH = """
import json, sys, time, traceback
from otter.run import main
zipfile, jobs = sys.argv[1], json.loads(sys.argv[2])
for submission, out in jobs:
    start = time.perf_counter()
    try:
        main(submission, autograder=zipfile, output_dir=out)
    except Exception:
        open(out + "/error.txt", "w").write(traceback.format_exc())
    open(out + "/seconds.txt", "w").write(str(time.perf_counter() - start))
"""


@pytest.fixture(scope="module")
def otter_graded(otter_assignment, tmp_path_factory) -> dict[str, Path]:
    """Every submission graded: name -> the folder of its results.json and seconds.txt."""
    student, zipfile = otter_assignment
    folder = tmp_path_factory.mktemp("submissions")
    jobs = {}  # name -> (the submission, its results folder)
    for name, (answers, _, _) in OTTER_SUBMISSIONS.items():
        submission = _submission(student, folder, name, answers, shuffle=name == "out_of_order")
        jobs[name] = (str(submission), str(folder / f"{name}_results"))
        Path(jobs[name][1]).mkdir()
    submission, out = jobs.pop(TIMED)
    start = time.perf_counter()
    subprocess.run(
        [str(BIN / "otter"), "run", "-a", str(zipfile), "-o", out, submission],
        check=True,
        capture_output=True,
        timeout=120,
        env=ENV,
    )
    Path(out, "seconds.txt").write_text(str(time.perf_counter() - start))
    subprocess.run(
        [sys.executable, "-c", GRADE_EACH, str(zipfile), json.dumps(list(jobs.values()))],
        check=True,
        capture_output=True,
        timeout=60 * len(jobs),
        env=ENV,
    )
    return {name: folder / f"{name}_results" for name in OTTER_SUBMISSIONS}


def _graded(otter_graded, name: str) -> tuple[float, str, float]:
    """(score, the report's text, seconds) of one graded submission."""
    out = otter_graded[name]
    assert not (out / "error.txt").exists(), (out / "error.txt").read_text()
    tests = json.loads((out / "results.json").read_text())["tests"]
    score = sum(t.get("score") or 0 for t in tests if t["name"].startswith("q"))
    seconds = float((out / "seconds.txt").read_text())
    return score, json.dumps(tests, ensure_ascii=False), seconds


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_otter_grades_a_submission(name, otter_graded):
    _, expected, shown = SUBMISSIONS[name]
    score, report, seconds = _graded(otter_graded, name)
    how = "otter run" if name == TIMED else "otter.run.main"
    print(f"{how}, lesson {LESSON}, {name}: {score:g}/6 in {seconds:.1f} s")
    assert score == expected, report
    assert shown in report
    assert seconds < 60  # the budget is 20 s on one core; here two cores are shared


@pytest.mark.slow
def test_otter_grades_an_endless_kernel(otter_graded):
    score, report, seconds = _graded(otter_graded, "endless")
    assert score == 5 and "never advances" in report
    assert seconds < 45


@pytest.mark.slow
def test_otter_rejects_a_race_between_blocks(otter_graded):
    score, report, _ = _graded(otter_graded, "between_blocks")
    assert score == 5 and "between blocks" in report

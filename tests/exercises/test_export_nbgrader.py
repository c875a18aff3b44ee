"""Export to nbgrader, end to end on CPU (marked slow): `export --nbgrader` writes a course that
`nbgrader generate_assignment` releases and `nbgrader autograde` grades into the gradebook with
the expected scores, and `nbgrader generate_feedback` puts the grader's answer in the student's
feedback. docs/grading.md quotes these commands."""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lesson05_submissions import ALL, LESSON, SUBMISSIONS, submitted_notebook

from gpgpu_lessons.exercises import export

BIN = Path(sys.executable).parent
ASSIGNMENT = f"lesson{LESSON}"
LIMIT_S = 5  # the watchdog's limit per launch (GPGPU_LAUNCH_LIMIT_S): the endless kernel's cost

# name: (answers, expected score, text the student's feedback must show); otter's, less one mix
NBGRADER_SUBMISSIONS = {
    **{k: v for k, v in SUBMISSIONS.items() if k != "one_wrong_two_blank"},
    "all_correct": (ALL, 6, "Score: 6.0 / 6.0"),
    "out_of_order": (ALL, 6, "Score: 6.0 / 6.0"),
    "endless": ({**ALL, "05.1": "count_endless"}, 5, "never advances"),
    "between_blocks": ({**ALL, "05.5": "dot_plain_merge"}, 5, "between blocks"),
    "tampered_tests": ({}, 0, "✗ not yet · 05.1"),  # test cells emptied: nbgrader restores them
}
TIMED = "all_correct"  # graded alone first: the time of one student's whole lesson


def _nbgrader(*args, cwd: Path, timeout=300) -> subprocess.CompletedProcess:
    """Run nbgrader in the course folder, the venv first on PATH (it calls `alembic`), the
    watchdog's limit short and the progress file out of the way."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "GPGPU_LAUNCH_LIMIT_S": str(LIMIT_S),
        "GPGPU_LESSONS_PROGRESS": os.devnull,
    }
    return subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _submit(course: Path, name: str, answers: dict) -> None:
    """Place a submission where `nbgrader collect` puts it: submitted/<student>/<assignment>/."""
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = submitted_notebook(released, answers, shuffle=name == "out_of_order")
    if name == "tampered_tests":
        for cell in notebook["cells"]:
            if cell["metadata"].get("nbgrader", {}).get("grade"):
                cell["source"] = "pass"
    folder = course / "submitted" / name / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook))


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """export, generate_assignment, the roster, every submission, autograde, generate_feedback:
    the course folder and the seconds `nbgrader autograde` took for the student TIMED alone."""
    if shutil.which("nbgrader", path=str(BIN)) is None:
        pytest.skip("nbgrader is not installed (the `course` extra)")
    course = tmp_path_factory.mktemp("nbgrader")
    export.write("nbgrader", course, [LESSON])
    _nbgrader("generate_assignment", ASSIGNMENT, cwd=course)
    roster = course / "students.csv"
    roster.write_text("id\n" + "\n".join(NBGRADER_SUBMISSIONS) + "\n")
    _nbgrader("db", "student", "import", str(roster), cwd=course)
    for name, (answers, _, _) in NBGRADER_SUBMISSIONS.items():
        _submit(course, name, answers)
    start = time.perf_counter()
    _nbgrader("autograde", ASSIGNMENT, "--student", TIMED, cwd=course)
    seconds = time.perf_counter() - start
    _nbgrader("autograde", ASSIGNMENT, cwd=course)  # the others (graded ones are skipped)
    _nbgrader("generate_feedback", ASSIGNMENT, cwd=course)
    return course, seconds


def _scores(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            name: gradebook.find_submission(ASSIGNMENT, name).score for name in NBGRADER_SUBMISSIONS
        }


def _feedback_text(course: Path, name: str) -> str:
    """The student's feedback page as text: tags (the traceback's colours) dropped, unescaped."""
    page = course / "feedback" / name / ASSIGNMENT / f"{ASSIGNMENT}.html"
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))


@pytest.mark.slow
def test_nbgrader_releases_the_skeletons(graded_course):
    course, _ = graded_course
    released = json.loads((course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    text = "".join("".join(c["source"]) for c in released["cells"])
    assert "BEGIN SOLUTION" not in text and "cuda.atomic.add(out, 0, partial[0])" not in text
    assert "count[0] += 1  # TODO" in text


@pytest.mark.slow
def test_nbgrader_grades_a_class(graded_course):
    course, seconds = graded_course
    scores = _scores(course)
    for name, (_, expected, shown) in NBGRADER_SUBMISSIONS.items():
        feedback = _feedback_text(course, name)
        assert scores[name] == expected, f"{name}: {scores[name]}\n{feedback}"
        assert shown in feedback, f"{name}: {shown!r} not in\n{feedback}"
    print(f"nbgrader autograde, lesson {LESSON}, {TIMED} alone: {seconds:.1f} s")
    assert seconds < 60  # the budget is 20 s on one core; here two cores are shared

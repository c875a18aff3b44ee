"""Export to nbgrader, end to end on CPU (marked slow): `python -m gpgpu_instructor export
--nbgrader` writes a course that `nbgrader generate_assignment` releases and `nbgrader autograde`
grades into the gradebook with the expected scores: its Judge preprocessor grades each exercise
from the submission's source, and nothing of the student's notebook runs, so forgeries and exits
change nothing; `nbgrader generate_feedback` puts the grader's answer in the student's feedback.
The course folder is moved before grading: its config holds no absolute path. docs/grading.md
quotes these commands."""

import html
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpgpu_instructor import export
from lesson05_submissions import LESSON, SUBMISSIONS, submitted_notebook

BIN = Path(sys.executable).parent
ASSIGNMENT = f"lesson{LESSON}"
LIMIT_S = 5  # the watchdog's limit per launch (GPGPU_LAUNCH_LIMIT_S): the endless kernel's cost
HANG_S = 1800  # a guard against a hang only

# name: (score, text the student's feedback must show); the lesson's submissions, and two that
# change the test cells, which nbgrader puts back from the source before the judge grades them
NBGRADER_SUBMISSIONS = {
    **{name: (expected, shown) for name, (*_, expected, shown) in SUBMISSIONS.items()},
    "all_correct": (6, "Score: 6.0 / 6.0"),
    "tampered_tests": (0, "✗ not yet · 05.1"),
    "deleted_tests": (6, "✓ solved · 05.4"),
}
TIMED = "all_correct"  # graded alone first: the time of one student's whole lesson


def _nbgrader(*args, cwd: Path, timeout=HANG_S) -> subprocess.CompletedProcess:
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


def _submit(course: Path, name: str) -> None:
    """Place a submission where `nbgrader collect` puts it: submitted/<student>/<assignment>/."""
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    answers, first, before_tests, _, _ = SUBMISSIONS.get(name, SUBMISSIONS["all_blank"])
    if name in ("all_correct", "deleted_tests"):
        answers = SUBMISSIONS["all_correct"][0]
    notebook = submitted_notebook(released, answers, name == "out_of_order", first, before_tests)
    graded = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    if name == "tampered_tests":
        for cell in graded:
            cell["source"] = "from gpgpu_lessons import exercises\nexercises.require = print"
    if name == "deleted_tests":
        notebook["cells"] = [c for c in notebook["cells"] if c not in graded]
    folder = course / "submitted" / name / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook))


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """export, generate_assignment, the roster, every submission, autograde, generate_feedback:
    the course folder and the seconds `nbgrader autograde` took for the student TIMED alone."""
    if shutil.which("nbgrader", path=str(BIN)) is None:
        pytest.skip("nbgrader is not installed (the `course` extra)")
    exported = tmp_path_factory.mktemp("exported")
    export.write("nbgrader", exported, [LESSON])
    course = tmp_path_factory.mktemp("moved") / "course"  # the config must hold no absolute path
    shutil.move(exported, course)
    _nbgrader("generate_assignment", ASSIGNMENT, cwd=course)
    roster = course / "students.csv"
    roster.write_text("id\n" + "\n".join(NBGRADER_SUBMISSIONS) + "\n")
    _nbgrader("db", "student", "import", str(roster), cwd=course)
    for name in NBGRADER_SUBMISSIONS:
        _submit(course, name)
    start, cpu = time.perf_counter(), _cpu_of_children()
    _nbgrader("autograde", ASSIGNMENT, "--student", TIMED, cwd=course)
    seconds = f"{time.perf_counter() - start:.1f} s, {_cpu_of_children() - cpu:.1f} s CPU"
    _nbgrader("autograde", ASSIGNMENT, cwd=course)  # the others (graded ones are skipped)
    _nbgrader("generate_feedback", ASSIGNMENT, cwd=course)
    return course, seconds


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _scores(course: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            name: gradebook.find_submission(ASSIGNMENT, name).score for name in NBGRADER_SUBMISSIONS
        }


def _feedback_text(course: Path, name: str) -> str:
    """The student's feedback page as text: styles, scripts and tags dropped, unescaped."""
    page = (course / "feedback" / name / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


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
    for name, (expected, shown) in NBGRADER_SUBMISSIONS.items():
        feedback = _feedback_text(course, name)
        assert scores[name] == expected, f"{name}: {scores[name]}\n{feedback}"
        assert shown in feedback, f"{name}: {shown!r} not in\n{feedback}"
        assert "Traceback" not in feedback and "site-packages" not in feedback, feedback
    print(f"nbgrader autograde, lesson {LESSON}, {TIMED} alone: {seconds}")


def test_export_writes_an_nbgrader_course(tmp_path):
    paths = export.write("nbgrader", tmp_path, [LESSON])
    assert tmp_path / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb" in paths
    notebook = json.loads((tmp_path / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    graded = [c for c in notebook["cells"] if c["metadata"]["nbgrader"]["grade"]]
    assert len(graded) == 6 and all(c["metadata"]["nbgrader"]["points"] == 1 for c in graded)
    answers = [c for c in notebook["cells"] if c["metadata"]["nbgrader"]["solution"]]
    assert all("### BEGIN SOLUTION\n" in "".join(c["source"]) for c in answers)
    assert not list((tmp_path / "source").rglob("*.json")), "settings belong to the autograder"
    config = (tmp_path / "nbgrader_config.py").read_text()
    assert str(tmp_path) not in config and "add_missing_cells = True" in config
    assert (tmp_path / "autograder" / ASSIGNMENT / "gpgpu-settings.json").is_file()

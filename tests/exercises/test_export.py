"""Export to the course graders: `export --otter` writes master notebooks that `otter assign` turns
into student notebooks and an autograder zip, and `otter run` grades submissions on CPU with the
expected scores and the grader's feedback in the report (end to end: marked slow)."""

import json
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


def _otter_run(submission: Path, zipfile: Path, timeout=120) -> tuple[float, str, float]:
    """(score, the report's text, seconds) of `otter run` on one submission."""
    out = submission.parent / (submission.stem + "_results")
    out.mkdir()
    start = time.perf_counter()
    subprocess.run(
        [str(BIN / "otter"), "run", "-a", str(zipfile), "-o", str(out), str(submission)],
        check=True,
        capture_output=True,
        timeout=timeout,
        env={**__import__("os").environ, "GPGPU_LESSONS_PROGRESS": "/dev/null"},
    )
    seconds = time.perf_counter() - start
    tests = json.loads((out / "results.json").read_text())["tests"]
    score = sum(t.get("score") or 0 for t in tests if t["name"].startswith("q"))
    return score, json.dumps(tests, ensure_ascii=False), seconds


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_otter_grades_a_submission(name, otter_assignment, tmp_path):
    student, zipfile = otter_assignment
    answers, expected, shown = SUBMISSIONS[name]
    submission = _submission(student, tmp_path, name, answers, shuffle=name == "out_of_order")
    score, report, seconds = _otter_run(submission, zipfile)
    print(f"otter run, lesson {LESSON}, {name}: {score:g}/6 in {seconds:.1f} s")
    assert score == expected, report
    assert shown in report
    assert seconds < 60  # the budget is 20 s on one core; here two cores are shared


@pytest.mark.slow
def test_otter_grades_an_endless_kernel(otter_assignment, tmp_path):
    student, zipfile = otter_assignment
    submission = _submission(student, tmp_path, "endless", {**ALL, "05.1": "count_endless"})
    score, report, _ = _otter_run(submission, zipfile, timeout=45)
    assert score == 5 and "never advances" in report


@pytest.mark.slow
def test_otter_rejects_a_race_between_blocks(otter_assignment, tmp_path):
    student, zipfile = otter_assignment
    answers = {**ALL, "05.4": "histogram_plain_merge"}
    submission = _submission(student, tmp_path, "between_blocks", answers)
    score, report, _ = _otter_run(submission, zipfile)
    assert score == 5 and "between blocks" in report

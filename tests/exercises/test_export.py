"""Export to otter-grader, end to end on CPU: `python -m gpgpu_instructor export --otter` writes
master notebooks that `otter assign` turns into a student notebook and an autograder zip, whose
plugin grades each exercise from the submission's source (the student's notebook never runs), so
that forgeries, exits and lucky kernels get the score an instructor would give, on every regrade.
The zip installs the package itself: one test unpacks it into a fresh environment and grades as
Gradescope's run_autograder does. One submission goes through the `otter run` command; the others
through the function it calls, in one Python (slow: marked)."""

import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from exercise_fixtures import *  # noqa: F403 (the fixtures)
from gpgpu_instructor import export, solutions
from lesson05_submissions import LESSON, SUBMISSIONS, submitted_notebook
from wrong_answers import count_greater_equal

from gpgpu_lessons.exercises import registry

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SEED = 20261207
HANG_S = 1800  # a guard against a hang only: the graders stop each kernel long before


def test_export_writes_one_otter_notebook_per_lesson(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "gpgpu_instructor", "export", "--otter", str(tmp_path)],
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
    assert f"  - {export.PLUGIN}\n" in sources[0]
    assert sum(s.startswith("# BEGIN QUESTION\n") for s in sources) == 5
    seed = json.loads((paths[3].parent / "gpgpu-settings.json").read_text())["seed"]
    assert any(f'exercises.require("03.2", mirror_distance, seed={seed})' in s for s in sources)
    assert any(s.startswith("# BEGIN SOLUTION NO PROMPT\n") and "PROMPT\n" in s for s in sources)


def test_the_student_command_points_to_the_instructor_package(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "gpgpu_lessons.exercises", "export", "--otter", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(list(tmp_path.glob("lesson*/lesson*.ipynb"))) == len(registry.LESSONS), out


def test_the_wheel_holds_the_student_package_only(tmp_path):
    from gpgpu_instructor import wheel

    built = wheel.build(tmp_path)
    names = zipfile.ZipFile(built).namelist()
    assert "gpgpu_lessons/exercises/judge.py" in names
    assert any(n.endswith(".dist-info/METADATA") for n in names)
    assert not [n for n in names if "instructor" in n or "__pycache__" in n or "/." in n]


def test_require_fails_with_the_graders_answer():
    from gpgpu_lessons import exercises

    assert exercises.require("05.1", solutions.reference("05.1"), seed=3) is None
    with pytest.raises(AssertionError, match=r"✗ not yet · 05.1"):
        exercises.require("05.1", count_greater_equal, seed=3)


# --- otter end to end: assign once, then grade submissions of lesson 05 ------------------------


@pytest.fixture(scope="module")
def otter_assignment(tmp_path_factory):
    """`export --otter`, then `otter assign` on lesson 05: the student folder and the zip."""
    if shutil.which("otter", path=str(BIN)) is None:
        pytest.skip("otter-grader is not installed (the `course` extra)")
    folder = tmp_path_factory.mktemp("otter")
    export.write("otter", folder, [LESSON], seed=SEED)
    master = folder / f"lesson{LESSON}"
    subprocess.run(
        [str(BIN / "otter"), "assign", f"lesson{LESSON}.ipynb", "dist"],
        cwd=master,
        check=True,
        capture_output=True,
        timeout=HANG_S,
    )
    (zipped,) = (master / "dist/autograder").glob("*.zip")
    return master / "dist/student", zipped


def _submission(student: Path, folder: Path, name: str) -> Path:
    answers, first, before_tests, _, _ = SUBMISSIONS[name]
    notebook = submitted_notebook(
        student / f"lesson{LESSON}.ipynb", answers, name == "out_of_order", first, before_tests
    )
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(notebook))
    return path


LIMIT_S = 5  # the watchdog's limit per launch (GPGPU_LAUNCH_LIMIT_S): the endless kernel's cost
ENV = {**os.environ, "GPGPU_LESSONS_PROGRESS": os.devnull, "GPGPU_LAUNCH_LIMIT_S": str(LIMIT_S)}
TIMED = "all_correct"  # graded by the `otter run` command itself: one student's whole lesson
# What otter itself can get wrong: its kernel, its results, its tests. The judge's verdicts on the
# other submissions are the same in both graders: test_export_nbgrader grades every one.
OTTER = (
    TIMED,
    "all_blank",
    "out_of_order",
    "greater_equal",
    "racy",
    "syntax_error",
    "endless",
    "forged_require",
    "forged_grade",
    "forged_in_cell",
    "exits_after_answers",
    "exits_first",
    "hides_the_package",
    "lucky",
)
REGRADED = ("lucky", "racy")  # graded three times each

# The others in one Python, by the function `otter run` calls (otter.run.main: a fresh kernel per
# submission, as the command has): starting Otter costs about 4 s, once instead of many times.
GRADE_EACH = """
import json, sys, traceback
from otter.run import main
zipfile, jobs = sys.argv[1], json.loads(sys.argv[2])
for submission, out in jobs:
    try:
        main(submission, autograder=zipfile, output_dir=out)
    except Exception:
        open(out + "/error.txt", "w").write(traceback.format_exc())
"""


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope="module")
def otter_graded(otter_assignment, tmp_path_factory) -> dict[str, Path]:
    """Every submission graded: name (or name#k for a regrade) -> the folder of results.json."""
    student, zipped = otter_assignment
    folder = tmp_path_factory.mktemp("submissions")
    jobs = {}
    for name in OTTER:
        submission = _submission(student, folder, name)
        for k in range(3 if name in REGRADED else 1):
            key = name if k == 0 else f"{name}#{k}"
            jobs[key] = (str(submission), str(folder / f"{key}_results"))
            Path(jobs[key][1]).mkdir()
    submission, out = jobs.pop(TIMED)
    start, cpu = time.perf_counter(), _cpu_of_children()
    subprocess.run(
        [str(BIN / "otter"), "run", "-a", str(zipped), "-o", out, submission],
        check=True,
        capture_output=True,
        timeout=HANG_S,
        env=ENV,
    )
    seconds = f"{time.perf_counter() - start:.1f} s, {_cpu_of_children() - cpu:.1f} s CPU"
    Path(out, "seconds.txt").write_text(seconds)
    subprocess.run(
        [sys.executable, "-c", GRADE_EACH, str(zipped), json.dumps(list(jobs.values()))],
        check=True,
        capture_output=True,
        timeout=HANG_S,
        env=ENV,
    )
    return {key: folder / f"{key}_results" for key in [TIMED, *jobs]}


def _tests(out: Path) -> list[dict]:
    assert not (out / "error.txt").exists(), (out / "error.txt").read_text()
    return json.loads((out / "results.json").read_text())["tests"]


def _score(tests: list[dict]) -> float:
    return sum(t.get("score") or 0 for t in tests)


@pytest.mark.slow
@pytest.mark.parametrize("name", OTTER)
def test_otter_grades_a_submission(name, otter_graded):
    *_, expected, shown = SUBMISSIONS[name]
    tests = _tests(otter_graded[name])
    report = "\n\n".join(t["output"] for t in tests)
    if name == TIMED:
        seconds = (otter_graded[name] / "seconds.txt").read_text()
        print(f"otter run, lesson {LESSON}, {name}: {_score(tests):g}/6 in {seconds}")
    assert _score(tests) == expected, report
    assert shown in report, report


@pytest.mark.slow
def test_otter_results_are_one_entry_per_exercise_in_plain_words(otter_graded):
    for name in OTTER:
        tests = _tests(otter_graded[name])
        assert [t["name"] for t in tests] == [f"q05_{k}" for k in range(1, 7)], name
        for test in tests:
            assert test["visibility"] == "visible" and test["max_score"] == 1
            text = test["output"]
            assert "Traceback" not in text and "site-packages" not in text, text
            assert str(ROOT) not in text and max(map(len, text.splitlines())) <= 100, text


@pytest.mark.slow
@pytest.mark.parametrize("name", REGRADED)
def test_otter_regrades_give_the_same_score_and_words(name, otter_graded):
    first = _tests(otter_graded[name])
    for k in (1, 2):
        assert _tests(otter_graded[f"{name}#{k}"]) == first


# --- the zip as Gradescope runs it: a fresh environment, the zip's setup, run_autograder --------


def _fresh_environment(folder: Path) -> Path:
    """A new venv that sees this one's third-party packages but not gpgpu-lessons (an editable
    install here) nor the instructor's package: the grading image before the zip's setup."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = folder.glob("lib/python*/site-packages")
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "third_party.pth").write_text("\n".join(ours) + "\n")
    return folder / "bin" / "python"


RUN_AUTOGRADER = """
import sys
from otter.run.run_autograder import main
main(sys.argv[1])
"""


@pytest.mark.slow
def test_the_autograder_zip_installs_itself_and_grades(otter_assignment, tmp_path):
    student, zipped = otter_assignment
    autograder = tmp_path / "autograder"
    with zipfile.ZipFile(zipped) as archive:
        archive.extractall(autograder / "source")
    python = _fresh_environment(tmp_path / "venv")
    # setup.sh builds the environment from environment.yml: its pip requirements, the wheel
    # among them, at the paths the image has (autograder_dir stands for /autograder here)
    environment = (autograder / "source" / "environment.yml").read_text()
    wheels = [
        line.split("@ file://", 1)[1].replace("/autograder", str(autograder))
        for line in environment.splitlines()
        if "@ file://" in line
    ]
    assert len(wheels) == 1 and Path(wheels[0]).is_file(), environment
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-index",
         "--no-deps", "--ignore-installed", wheels[0]],
        check=True,
        timeout=HANG_S,
    )  # fmt: skip
    where = subprocess.run(
        [str(python), "-c", "import gpgpu_lessons; print(gpgpu_lessons.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert str(tmp_path / "venv") in where and str(ROOT) not in where
    (autograder / "submission").mkdir()
    (autograder / "results").mkdir()
    (autograder / "submission_metadata.json").write_text("{}")
    shutil.copy(_submission(student, tmp_path, "forged_require"), autograder / "submission")
    config = json.loads((autograder / "source" / "otter_config.json").read_text())
    config["autograder_dir"] = str(autograder)
    (autograder / "source" / "otter_config.json").write_text(json.dumps(config))
    subprocess.run(
        [str(python), "-c", RUN_AUTOGRADER, str(autograder)],
        cwd=autograder / "source",
        check=True,
        capture_output=True,
        timeout=HANG_S,
        env=ENV,
    )
    tests = json.loads((autograder / "results" / "results.json").read_text())["tests"]
    assert [t["name"] for t in tests] == [f"q05_{k}" for k in range(1, 7)]
    assert _score(tests) == 0 and "✗ not yet · 05.6" in tests[-1]["output"]


@pytest.mark.slow
def test_the_student_gets_no_solution_and_no_hidden_case(otter_assignment):
    student, _ = otter_assignment
    assert [p.name for p in student.iterdir()] == [f"lesson{LESSON}.ipynb"]
    text = (student / f"lesson{LESSON}.ipynb").read_text()
    assert "cuda.atomic.add(out, 0, partial[0])" not in text and "HIDDEN" not in text

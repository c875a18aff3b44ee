"""`make new-lesson` writes a lesson whose tests pass: generated into a copy of the repository,
its own tests, the notebook conventions, the exercise catalogue, the deck limits, lint and its
notebook (nbval) run there. Bad names and taken numbers are refused."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpgpu_tools import new_lesson

ROOT = Path(__file__).resolve().parents[2]


def copy_of_the_repository(target: Path) -> Path:
    """The files git tracks or would track (no .venv, no build), copied into target."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.slow
def test_a_new_lesson_passes_its_tests(tmp_path):
    root = copy_of_the_repository(tmp_path / "repo")
    paths = (root, root / "tools", root / "instructor")  # the copy, not the editable installs
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}
    made = subprocess.run(
        [sys.executable, "-m", "gpgpu_tools.new_lesson", "06", "warp_votes", "--root", str(root)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert (root / "notebooks" / "06_warp_votes.ipynb").is_file()
    tests = [
        "tests/lessons/test_l06_warp_votes.py",
        "tests/lessons/test_notebooks.py",
        "tests/exercises/test_catalogue.py",
        "tests/core/test_layering.py",
        "tests/tools/test_lint.py",
        "notebooks/06_warp_votes.ipynb",
    ]
    tests += [
        "tests/tools/test_deck_limits.py::test_the_lecture_path_keeps_the_limits[06_warp_votes]",
        "tests/exercises/test_graders.py::test_the_reference_solution_passes[06.1]",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]


@pytest.mark.parametrize(
    "number, name, message",
    [("6", "topic", "two digits"), ("06", "Topic", "lower_case"), ("00", "topic", "exists")],
)
def test_bad_numbers_and_names_are_refused(number, name, message):
    with pytest.raises(SystemExit, match=message):
        new_lesson.check(ROOT, number, name)

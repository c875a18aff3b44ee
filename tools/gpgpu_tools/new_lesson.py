"""A new lesson from templates/lesson/: `python -m gpgpu_tools.new_lesson 06 topic`.

Writes the lesson package `gpgpu_lessons/lNN_NAME/` (a textbook kernel and its wrapper, and
the bench family that `python -m gpgpu_tools.bench` finds in its bench.py), the
notebook `notebooks/NN_NAME.ipynb` (slide metadata, notes on every slide, an Appendix and a
Sources slide; marked as a draft until a GPU run stores its outputs), an exercise module
`gpgpu_lessons/exercises/lessonNN.py` with its reference solution (in the instructor package,
`instructor/gpgpu_instructor/solutions/lessonNN.py`), and
`tests/lessons/test_lNN_NAME.py`; then it appends the exercise cells to the notebook. Its tests
pass as written; CONTRIBUTING.md says what to fill in.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "templates" / "lesson"
NAME = re.compile(r"[a-z][a-z0-9_]*[a-z0-9]")


def targets(root: Path, number: str, name: str) -> dict[str, Path]:
    """Each template file and where it goes."""
    package = root / "gpgpu_lessons" / f"l{number}_{name}"
    return {
        "__init__.py": package / "__init__.py",
        "textbook.py": package / "textbook.py",
        "bench.py": package / "bench.py",
        "notebook.ipynb": root / "notebooks" / f"{number}_{name}.ipynb",
        "exercises.py": root / "gpgpu_lessons" / "exercises" / f"lesson{number}.py",
        "solutions.py": root
        / "instructor"
        / "gpgpu_instructor"
        / "solutions"
        / f"lesson{number}.py",
        "test_lesson.py": root / "tests" / "lessons" / f"test_l{number}_{name}.py",
    }


def check(root: Path, number: str, name: str) -> None:
    """Refuse a number or name that is malformed or already taken, naming the fix."""
    if not re.fullmatch(r"\d\d", number):
        raise SystemExit(f"N must be two digits (N=06), got {number!r}")
    if not NAME.fullmatch(name):
        raise SystemExit(f"NAME must be lower_case_with_underscores (NAME=topic), got {name!r}")
    taken = sorted(p.name for p in (root / "notebooks").glob(f"{number}_*.ipynb"))
    if taken:
        raise SystemExit(f"lesson {number} exists already ({taken[0]}): choose another N")
    clash = [str(p.relative_to(root)) for p in targets(root, number, name).values() if p.exists()]
    if clash:
        raise SystemExit(f"these files exist already: {', '.join(clash)}")


def create(root: Path, number: str, name: str, title: str) -> list[Path]:
    """Write the lesson's files from the template; return them."""
    check(root, number, name)
    written = []
    for template, target in targets(root, number, name).items():
        text = (TEMPLATE / template).read_text()
        text = text.replace("{{N}}", number).replace("{{NAME}}", name).replace("{{TITLE}}", title)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    subprocess.run(
        [sys.executable, "-m", "gpgpu_lessons.exercises", "append", str(root / "notebooks")],
        cwd=root,
        check=True,
        env={"GPGPU_LESSONS_QUIET": "1", "NUMBA_ENABLE_CUDASIM": "1", "PATH": "/usr/bin:/bin"}
        | {"PYTHONPATH": str(root)},
    )
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.new_lesson", description=__doc__.split("\n")[0]
    )
    parser.add_argument("number", metavar="N", help="two digits: 06")
    parser.add_argument("name", metavar="NAME", help="lower_case: warp_shuffles")
    parser.add_argument("--title", help="the lesson's title (default: NAME in words)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this)")
    args = parser.parse_args(argv)
    title = args.title or args.name.replace("_", " ").capitalize()
    for path in create(args.root, args.number, args.name, title):
        print(f"wrote {path.relative_to(args.root)}")
    print("next: CONTRIBUTING.md, 'Writing a lesson'; then make quick")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

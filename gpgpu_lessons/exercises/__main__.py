"""python -m gpgpu_lessons.exercises append DIR | list.

`append` puts each lesson's exercise cells at the end of its notebook; `list` prints the
catalogue. The instructor's commands (export to the course graders, the solutions deck, grading
the reference solutions) are in the instructor package: `python -m gpgpu_instructor`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import cells, registry

INSTRUCTOR = ("export", "solutions", "references")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in INSTRUCTOR:
        try:
            from gpgpu_instructor.__main__ import main as instructor_main
        except ImportError:
            print(
                f"`{argv[0]}` is an instructor's command: install the instructor package "
                "(pip install -e instructor/ in the repository; docs/grading.md), then run "
                f"python -m gpgpu_instructor {' '.join(argv)}",
                file=sys.stderr,
            )
            return 2
        return instructor_main(argv)
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_lessons.exercises",
        description="The lessons' exercises: append their cells to the notebooks, or list them "
        "(the instructor's commands: python -m gpgpu_instructor).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser(
        "append",
        help="append each lesson's exercise cells to its notebook (replacing ones appended before)",
    )
    add.add_argument("folder", type=Path, help="the folder of the NN_topic.ipynb notebooks")
    commands.add_parser("list", help="print the catalogue")
    args = parser.parse_args(argv)
    if args.command == "append":
        for lesson in registry.LESSONS:
            found = sorted(args.folder.glob(f"{lesson}_*.ipynb"))
            if len(found) != 1:
                print(
                    f"lesson {lesson}: expected one {lesson}_*.ipynb in {args.folder}, found "
                    f"{len(found)}",
                    file=sys.stderr,
                )
                return 1
            print(f"{found[0]}: {cells.append(found[0], lesson)} exercise cells")
        return 0
    for exercise in registry.all_exercises():
        print(f"{exercise.id}  {exercise.name:28s} {exercise.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

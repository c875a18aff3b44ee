"""python -m gpgpu_lessons.exercises append NOTEBOOKS_DIR | solutions OUT.ipynb | list."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import cells, registry


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu_lessons.exercises",
                                     description="The lessons' exercises: append their cells to "
                                                 "the notebooks, or write the solutions deck.")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("append", help="append each lesson's exercise cells to its notebook "
                                             "(replacing ones appended before)")
    add.add_argument("folder", type=Path, help="the folder of the NN_topic.ipynb notebooks")
    deck = commands.add_parser("solutions", help="write the instructors' solutions notebook")
    deck.add_argument("out", type=Path)
    commands.add_parser("list", help="print the catalogue")
    args = parser.parse_args(argv)
    if args.command == "append":
        for lesson in registry.LESSONS:
            found = sorted(args.folder.glob(f"{lesson}_*.ipynb"))
            if len(found) != 1:
                print(f"lesson {lesson}: expected one {lesson}_*.ipynb in {args.folder}, found "
                      f"{len(found)}", file=sys.stderr)
                return 1
            print(f"{found[0]}: {cells.append(found[0], lesson)} exercise cells")
    elif args.command == "solutions":
        print(cells.solutions_notebook(args.out))
    else:
        for exercise in registry.all_exercises():
            print(f"{exercise.id}  {exercise.name:28s} {exercise.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

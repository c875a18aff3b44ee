"""python -m gpgpu_lessons.exercises append DIR | solutions OUT.ipynb | list | references | export.

`references` grades every reference solution (several processes at once with --jobs), then, on a
GPU, times each one at its timing shape against the device copy, one after the other (kernels
timed side by side on one GPU slow each other down), e.g.
`python -m gpgpu_lessons.exercises references --seeds 1 2 3 --jobs 8`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import cells, registry


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_lessons.exercises",
        description="The lessons' exercises: append their cells to "
        "the notebooks, or write the solutions deck.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser(
        "append",
        help="append each lesson's exercise cells to its notebook (replacing ones appended before)",
    )
    add.add_argument("folder", type=Path, help="the folder of the NN_topic.ipynb notebooks")
    deck = commands.add_parser("solutions", help="write the instructors' solutions notebook")
    deck.add_argument("out", type=Path)
    commands.add_parser("list", help="print the catalogue")
    export = commands.add_parser(
        "export", help="write the exercises as otter-grader assignments or an nbgrader course"
    )
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--otter", type=Path, metavar="DIR", help="one master notebook per lesson")
    target.add_argument("--nbgrader", type=Path, metavar="DIR", help="an nbgrader course folder")
    export.add_argument("--lessons", nargs="+", help="lessons to export (default: all)")
    refs = commands.add_parser(
        "references",
        help="grade every reference solution and print the answers (on a GPU, then time each "
        "one against the device copy)",
    )
    refs.add_argument("--seeds", type=int, nargs="+", default=[7], help="random data seeds")
    refs.add_argument("--jobs", type=int, default=1, help="processes grading at once")
    refs.add_argument("--no-timing", action="store_true", help="leave out the timing on a GPU")
    refs.add_argument("ids", nargs="*", help="exercise ids (default: all)")
    args = parser.parse_args(argv)
    if args.command == "references":
        return _references(args)
    if args.command == "export":
        from . import export as exporter

        kind, folder = ("otter", args.otter) if args.otter else ("nbgrader", args.nbgrader)
        for path in exporter.write(kind, folder, args.lessons):
            print(path)
        return 0
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
    elif args.command == "solutions":
        print(cells.solutions_notebook(args.out))
    else:
        for exercise in registry.all_exercises():
            print(f"{exercise.id}  {exercise.name:28s} {exercise.title}")
    return 0


def _references(args) -> int:
    from . import grader, performance, solutions

    ids = args.ids or [e.id for e in registry.all_exercises()]
    jobs = [(i, seed, False) for i in ids for seed in args.seeds]
    if args.jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            answers = pool.map(solutions.grade_job, jobs, chunksize=1)
    else:
        answers = [solutions.grade_job(job) for job in jobs]
    failed = 0
    for exercise_id, seed, passed, text in answers:
        failed += not passed
        print(f"[{exercise_id} seed {seed}] {text}")
    print(f"{len(answers) - failed} of {len(answers)} reference gradings passed")
    if not args.no_timing and grader.on_gpu():
        for exercise_id in ids:
            exercise = registry.get(exercise_id)
            if exercise.performance is not None:
                print(f"[{exercise_id} timed] {performance.reference_line(exercise)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

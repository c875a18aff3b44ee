"""python -m gpgpu_instructor export | solutions OUT.ipynb | references.

`export` writes the course graders' assignments (docs/grading.md); `solutions` the instructors'
deck; `references` grades every reference solution (several processes at once with --jobs),
then, on a GPU, times each one at its timing shape against the device copy, one after the other
(kernels timed side by side on one GPU slow each other down), e.g.
`python -m gpgpu_instructor references --seeds 1 2 3 --jobs 8`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpgpu_lessons.exercises import registry


def parser() -> argparse.ArgumentParser:
    """The command line: export, solutions, references."""
    main_parser = argparse.ArgumentParser(
        prog="python -m gpgpu_instructor",
        description="The instructor's commands: export the course graders' assignments, write "
        "the solutions deck, grade the reference solutions.",
    )
    commands = main_parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser(
        "export", help="write the exercises as otter-grader assignments or an nbgrader course"
    )
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--otter", type=Path, metavar="DIR", help="one master notebook per lesson")
    target.add_argument("--nbgrader", type=Path, metavar="DIR", help="an nbgrader course folder")
    export.add_argument("--lessons", nargs="+", help="lessons to export (default: all)")
    export.add_argument(
        "--seed", type=int, default=None, help="the public cases' seed (default: a new one)"
    )
    deck = commands.add_parser("solutions", help="write the instructors' solutions notebook")
    deck.add_argument("out", type=Path)
    refs = commands.add_parser(
        "references",
        help="grade every reference solution and print the answers (on a GPU, then time each "
        "one against the device copy)",
    )
    refs.add_argument("--seeds", type=int, nargs="+", default=[7], help="random data seeds")
    refs.add_argument("--jobs", type=int, default=1, help="processes grading at once")
    refs.add_argument("--no-timing", action="store_true", help="leave out the timing on a GPU")
    refs.add_argument("ids", nargs="*", help="exercise ids (default: all)")
    return main_parser


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.command == "export":
        from . import export

        kind, folder = ("otter", args.otter) if args.otter else ("nbgrader", args.nbgrader)
        for path in export.write(kind, folder, args.lessons, seed=args.seed):
            print(path)
        return 0
    if args.command == "solutions":
        from .deck import solutions_notebook

        print(solutions_notebook(args.out))
        return 0
    return _references(args)


def _references(args) -> int:
    from gpgpu_lessons.exercises import grader, performance

    from . import solutions

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

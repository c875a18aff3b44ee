"""`python -m gpgpu_tools.bench`: check and time the fast kernels on every shape of the sweep."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from gpgpu_lessons import results, runtime
from gpgpu_lessons.formats import format_seconds

from . import record, report
from .families import FAMILIES
from .run import run


def parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.bench",
        description="Check every fast kernel against NumPy on a sweep of awkward shapes, time it "
        "beside the same run's device copy and CuPy, and compare with the recorded GPUs. In the "
        "simulator: check at tiny sizes and show the recorded GPUs' tables.",
    )
    parser.add_argument(
        "--families",
        default=",".join(FAMILIES),
        help=f"comma-separated, from {','.join(FAMILIES)} (default: all)",
    )
    parser.add_argument(
        "--sizes",
        choices=("small", "full"),
        default="full",
        help="full: the whole sweep (a few minutes on an H200); small: a quick look",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("bench-results"), help="folder for the JSON and the plot"
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="also write the run to gpgpu_lessons/recorded/bench/<gpu>.json, the recorded "
        "result later runs (and the simulator) compare with",
    )
    args = parser.parse_args(argv)
    args.families = [name.strip() for name in args.families.split(",") if name.strip()]
    unknown = [name for name in args.families if name not in FAMILIES]
    if unknown or not args.families:
        parser.error(f"unknown families {unknown}; choose from {','.join(FAMILIES)}")
    return args


def only(bench: record.Bench, families: list[str]) -> record.Bench:
    """A recorded run cut down to the families asked for."""
    return dataclasses.replace(
        bench,
        families=[name for name in bench.families if name in families],
        results=[r for r in bench.results if r.family in families],
        host_costs=[c for c in bench.host_costs if c.family in families],
    )


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.record and runtime.MODE != runtime.GPU:
        print("--record needs a GPU: this machine runs the simulator", file=sys.stderr)
        return 2
    started = time.perf_counter()
    bench = run(args.families, args.sizes)
    print()
    print(report.table(bench))
    if runtime.MODE == runtime.GPU:
        print()
        print(report.worst_table(bench))
    if bench.host_costs:
        print()
        print(report.host_table(bench))
    recorded = [only(b, args.families) for b in record.recorded()]
    recorded = [b for b in recorded if b.results]
    if runtime.MODE != runtime.GPU:
        print()
        print(
            "The simulator times nothing: every kernel above ran and was checked. "
            "The recorded GPU runs measured:"
        )
        for shipped in recorded:
            print()
            print(
                f"{shipped.gpu}, {shipped.date}, {shipped.sizes} sweep "
                f"(device copy {shipped.ceiling.gbs:,.0f} GB/s, {format_seconds(shipped.seconds)}):"
            )
            print(report.table(shipped))
            print()
            print(report.worst_table(shipped))
            if shipped.host_costs:
                print()
                print(report.host_table(shipped))
    print()
    print(report.comparison(bench if runtime.MODE == runtime.GPU else None, recorded))
    if runtime.MODE == runtime.GPU:
        stem = f"bench-{results.slug(bench.gpu)}"
        summary = report.summary(bench)
        written = [record.save(bench, args.out / f"{stem}.json", summary)]
        report.plot(bench, args.out / f"{stem}.png")
        written.append(args.out / f"{stem}.png")
        if args.record:
            written.append(record.save(bench, record.recorded_path(bench.gpu), summary))
        print()
        print("Written: " + ", ".join(str(p) for p in written))
    failed = sum(not r.ok for r in bench.results)
    print()
    print(
        f"{len(bench.results)} checks, {failed} failed; the bench took "
        f"{format_seconds(time.perf_counter() - started)}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

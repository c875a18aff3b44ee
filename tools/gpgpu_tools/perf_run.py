"""One GPU run for issue 25: what a call costs, what users get, and the CUDA C yardstick.

``python -m gpgpu_tools.perf_run --out DIR`` (about 4 minutes on an H200) runs, in order:

1. the host cost of every bench family's wrapper at small, middle and large sizes beside its
   prepare(), its prepared Launch, a bare ``kernel[grid, block](...)`` and CuPy's call
   (bench.run.host_costs_of), and what Numba's dispatcher costs per launch, six ways
   (bench.dispatch), for each family's first kernel at the small size and lesson 00's empty
   kernel;
2. the bench's `small` sweep with both clocks per shape: the prepared launch's GPU time and
   the wrapper called back to back, each beside CuPy's (bench.run.run, host costs off: step 1
   has them);
3. the CUDA C yardstick (cuda_c.yardstick).

It writes DIR/perf-<gpu>.json (1), DIR/bench-<gpu>.json (2) and DIR/yardstick-<gpu>.json (3),
and prints the short tables last. In the simulator every part runs at tiny sizes, checks its
kernels and times nothing (the dispatcher's ways: the bare launch only).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from gpgpu_lessons import results, runtime
from gpgpu_lessons.formats import format_seconds

from .bench import dispatch, record, report
from .bench import run as bench_run
from .bench.families import FAMILIES
from .bench.progress import Progress
from .cuda_c import yardstick


def host_part(names, progress: Progress) -> dict:
    """Step 1: the host-cost table and the dispatcher's ways."""
    from numba import cuda  # after gpgpu_lessons, which chooses the GPU or the simulator

    cp = bench_run.cupy_module()
    gpu = runtime.MODE == runtime.GPU
    costs = bench_run.host_costs_of(names, cp, progress) if gpu else []
    ways = {"empty kernel": dispatch.alternatives(dispatch.empty_kernel_step())}
    for name in names:
        family = FAMILIES[name]
        shape = bench_run.host_shape(family, bench_run.HOST_SIZES["small"] if gpu else 64)
        inputs = family.make(shape, 1)
        out = cuda.device_array(*family.output(shape))
        prepared = family.kernels[0].prepare(inputs, out)
        progress.step(f"dispatcher's ways, {name}")
        ways[name] = dispatch.alternatives(prepared.steps[0])
    return {"host_costs": costs, "dispatch": ways}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu_tools.perf_run", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("perf-results"))
    parser.add_argument("--sizes", choices=("small", "full"), default="small")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: host,bench,c")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    skip = {part.strip() for part in args.skip.split(",") if part.strip()}
    started = time.perf_counter()
    names = list(FAMILIES)
    info = runtime.device_info()
    slug = results.slug(info.name)
    texts, written = [], []
    if "host" not in skip:
        progress = Progress(len(names) * (1 + len(bench_run.HOST_SIZES)), sys.stderr)
        found = host_part(names, progress)
        progress.done()
        costs = record.Bench(info.name, "", args.sizes, names, 0.0, host_costs=found["host_costs"])
        texts += [report.host_table(costs), dispatch.table(found["dispatch"])]
        path = args.out / f"perf-{slug}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        content = {
            "gpu": info.name,
            "device": info.as_dict(),
            "host_costs": [vars(c) for c in found["host_costs"]],
            "dispatch_us_per_call": found["dispatch"],
        }
        path.write_text(json.dumps(content, indent=1) + "\n")
        written.append(path)
    failed = 0
    if "bench" not in skip:
        bench = bench_run.run(names, args.sizes, stream=sys.stderr, host=False)
        failed += sum(not r.ok for r in bench.results)
        texts += [report.table(bench), report.worst_table(bench)]
        if runtime.MODE == runtime.GPU:
            written.append(
                record.save(bench, args.out / f"bench-{slug}.json", report.summary(bench))
            )
    if "c" not in skip:
        measured = yardstick.measure(runtime.pick(gpu=yardstick.SIDE, simulator=64))
        failed += not all(measured["numba_checked"].values())
        texts.append(yardstick.text(measured))
        written.append(yardstick.save(measured, args.out))
    print("\n\n".join(t for t in texts if t))
    print()
    print("Written: " + ", ".join(str(p) for p in written))
    print(f"{failed} failed; the run took {format_seconds(time.perf_counter() - started)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

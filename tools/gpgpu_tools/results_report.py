"""Render docs/results.md from the recorded GPU runs: `python -m gpgpu_tools.results_report`.

Every number in docs/results.md is computed here from the JSON in gpgpu_lessons/recorded/ (the
lessons' run, the bench and the tracer's verification): the GPU, the date, the sizes and the
units come from the record. Nothing else holds these numbers: the README points to the page, and
tests/tools/test_results_report.py fails when the committed page differs from what this renders
(`--check` says the same on the command line). After a GPU run, render it again and commit it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from gpgpu_lessons import results
from gpgpu_lessons.timing import Timing

from .bench import record as bench_record
from .bench import report as bench_report
from .bench.shapes import shape_text

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "results.md"
TRACE_DIR = results.RECORDED_DIR / "trace"
AWKWARD = ("odd sides", "primes", "777 x N")  # the bench's awkward, not degenerate, shapes


# ---- reading a record ------------------------------------------------------------------------


class Run:
    """One recorded lessons' run (gpgpu_lessons/recorded/<gpu>.json), read by experiment and id."""

    def __init__(self, path: Path):
        self.path = path
        self.content = json.loads(path.read_text())
        self.experiments = self.content["experiments"]

    def data(self, key: str) -> dict:
        if key not in self.experiments:
            raise KeyError(f"{self.path.name} has no experiment {key!r}")
        return results.with_ids(self.experiments[key])

    def size(self, key: str) -> str:
        return self.data(key).get("size") or "size not recorded"

    def timing(self, key: str, id: str) -> Timing:
        """One variant of a variants experiment, by its recorded id."""
        found = results.Shown(self.data(key), "", False).by_id()
        if id not in found:
            raise KeyError(f"{key} has no variant {id!r} (it has {', '.join(found)})")
        return found[id]

    def ceiling(self, key: str) -> Timing:
        return Timing.from_dict(self.data(key)["ceiling"])

    def series(self, key: str, id: str) -> list[Timing]:
        """One series of a sweep, by its recorded id."""
        data = self.data(key)
        label = {v: k for k, v in data["ids"].items()}[id]
        return [Timing.from_dict(t) for t in data["series"][label]]

    def table(self, key: str) -> dict:
        """{first cell: row} of a recorded table."""
        return {row[0]: row for row in self.data(key)["rows"]}


# ---- numbers for people ----------------------------------------------------------------------


def duration(ms: float) -> str:
    """A median time in ms for people: '42.6 ms', '11.4 µs' (three significant digits)."""
    return f"{ms:.3g} ms" if ms >= 1 else f"{ms * 1e3:.3g} µs"


def gbs(t: Timing) -> str:
    return f"{t.gbs:,.0f} GB/s"


def times(ratio: float) -> str:
    return f"{ratio:.2f}x"


def faster(a: Timing, b: Timing) -> float:
    """How many times faster a is than b (time of b over time of a)."""
    return b.median_ms / a.median_ms


# ---- the highlights: one function per row ----------------------------------------------------

Row = tuple[str, str, str]  # lesson, what was measured (with its recorded size), the result


def _first_call(run: Run) -> Row:
    key = "00_timing/first_call"
    first, later = run.timing(key, "first-call-compile-run"), run.timing(key, "later-calls")
    return (
        "00",
        f"first call of a new kernel (JIT) vs later calls, {run.size(key)}",
        f"{duration(first.median_ms)} vs {duration(later.median_ms)}",
    )


def _launch_cost(run: Run) -> Row:
    key = "00_timing/launch_overhead"
    ids = (
        "one-launch-between-two-events",
        "launches-back-to-back-each",
        "host-time-to-issue-one-launch",
    )
    found = [run.timing(key, i) for i in ids]
    return (
        "00",
        "launch of an empty kernel: " + " / ".join(t.name for t in found) + f", {run.size(key)}",
        " / ".join(duration(t.median_ms) for t in found),
    )


def _best_copy(run: Run) -> Row:
    key = "01_coalescing/copy_variants"
    data = run.data(key)
    baselines = ("device-to-device-copy-same-arrays", "cupy-copy")
    kernels = [run.timing(key, i) for i in results.ids(data) if i not in baselines]
    best = max(kernels, key=lambda t: t.gbs)
    device, cupy = (run.timing(key, i) for i in baselines)
    return (
        "01",
        f"best copy kernel ({best.name}) vs the device copy of the same arrays and CuPy's copy, "
        f"{run.size(key)}",
        f"{gbs(best)}: {times(best.gbs / device.gbs)} and {times(best.gbs / cupy.gbs)}",
    )


def _best_dot(run: Run) -> Row:
    key = "01_coalescing/dot_variants"
    best, cupy = run.timing(key, "best-fast-dot"), run.timing(key, "cupy-dot")
    return (
        "01",
        f"{best.name} vs {cupy.name}, {run.size(key)}",
        f"{best.gbs:,.0f} vs {gbs(cupy)} ({times(best.gbs / cupy.gbs)})",
    )


def _stride(run: Run) -> Row:
    key = "01_coalescing/stride_sweep"
    x = run.data(key)["x"]
    sweep = dict(zip(x, run.series(key, "copy-strided-float32")))
    return (
        "01",
        f"copy with stride 32 vs stride 1 between neighbouring threads, {run.size(key)}",
        f"{faster(sweep[1], sweep[32]):.1f}x slower",
    )


def _image_basics(run: Run) -> Row:
    key = "02_shared_memory/image_basics"
    ids = ("negative-words", "horizontal-flip-words", "vertical-flip-words")
    roof = run.ceiling(key)
    return (
        "02",
        f"negative / horizontal / vertical flip, words, vs {roof.name}, {run.size(key)}",
        " / ".join(times(run.timing(key, i).gbs / roof.gbs) for i in ids),
    )


def _mosaic(run: Run) -> Row:
    key = "02_shared_memory/mosaic"
    tree = run.timing(key, "shared-parallel-tree")
    seed = run.timing(key, "1-thread-per-block-seed-1")
    return (
        "02",
        f"mosaic: {tree.name} vs {seed.name}, {run.size(key)}",
        f"{duration(tree.median_ms)} vs {duration(seed.median_ms)} ({faster(tree, seed):.1f}x)",
    )


def _textbook_transposes(run: Run) -> Row:
    key = "03_bank_conflicts/textbook_8192"
    found = [run.timing(key, i) for i in ("naive-32x8", "tiled-32x8", "padded-32x8")]
    roof = run.ceiling(key)
    return (
        "03",
        "textbook transposes "
        + " / ".join(t.name for t in found)
        + f" vs {roof.name}, {run.size(key)}",
        " / ".join(times(t.gbs / roof.gbs) for t in found),
    )


def _fast_transpose(run: Run) -> Row:
    key = "03_bank_conflicts/fast_8192"
    best = run.timing(key, "wide-32x16-64x64-tile-8-b")
    cupy = run.timing(key, "cupy-ascontiguousarray-a-t")
    roof = run.ceiling(key)
    return (
        "03",
        f"fast transpose ({best.name}) vs {roof.name} and {cupy.name}, {run.size(key)}",
        f"{times(best.gbs / roof.gbs)} and {times(faster(best, cupy))}",
    )


def _fast_filter(run: Run) -> Row:
    key = "04_constant_memory/fast_5x5"
    best, roof = run.timing(key, "fast-tiled-constant"), run.ceiling(key)
    return (
        "04",
        f"5x5 filter, {best.name}, vs {roof.name}, {run.size(key)}",
        times(best.gbs / roof.gbs),
    )


def _lookup(run: Run) -> Row:
    key = "04_constant_memory/lookup_table"
    constant, global_ = run.timing(key, "constant-noise"), run.timing(key, "global-noise")
    return (
        "04",
        f"per-pixel lookup table: {constant.name} vs {global_.name}, {run.size(key)}",
        f"{faster(global_, constant):.1f}x slower",
    )


def _fast_sum(run: Run) -> Row:
    key = "05_atomics_vs_reduction/fast_sum"
    tuned, cupy = run.timing(key, "tuned-grid-stride"), run.timing(key, "cupy-sum-cub")
    return (
        "05",
        f"{tuned.name} sum vs {cupy.name}, {run.size(key)}",
        f"{tuned.gbs:,.0f} vs {gbs(cupy)} ({times(faster(tuned, cupy))})",
    )


def _sum_crossover(run: Run) -> Row:
    key = "05_atomics_vs_reduction/sum_curve"
    x = run.data(key)["x"]
    ours, cupy = run.series(key, "fast-sum-grid-stride"), run.series(key, "cupy-sum")
    ratios = [faster(a, b) for a, b in zip(ours, cupy)]
    start = len(ratios)  # the first size from which every larger one reaches 0.95x
    while start and ratios[start - 1] >= 0.95:
        start -= 1
    below = ratios[:start]
    reached = f"{results_count(x[start])} ({times(ratios[start])})" if start < len(x) else "never"
    under = (
        f"{min(below):.2f}-{max(below):.2f}x ({duration(ours[0].median_ms)} vs "
        f"{duration(cupy[0].median_ms)} a call at {results_count(x[0])})"
        if below
        else "none"
    )
    return (
        "05",
        f"the tuned sum vs cupy.sum by size ({run.size(key)}): at least 0.95x from / below",
        f"{reached} / {under}",
    )


def _host_cost(run: Run) -> Row:
    key = "05_atomics_vs_reduction/sum_host_cost"
    rows = run.data(key)["rows"]
    return (
        "05",
        "host time of one call: " + " / ".join(f"`{r[0]}`" for r in rows) + f", {run.size(key)}",
        " / ".join(f"{r[1]:.1f}" for r in rows) + " µs",
    )


def results_count(n: int) -> str:
    """'2^25' for powers of two, else '33,554,435'."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


HIGHLIGHTS: tuple[Callable[[Run], Row], ...] = (
    _first_call,
    _launch_cost,
    _best_copy,
    _best_dot,
    _stride,
    _image_basics,
    _mosaic,
    _textbook_transposes,
    _fast_transpose,
    _fast_filter,
    _lookup,
    _fast_sum,
    _sum_crossover,
    _host_cost,
)


# ---- sections --------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def lessons_section(run: Run) -> list[str]:
    c = run.content
    device = c["device"]
    software = ", ".join(f"{k} {v}" for k, v in c["software"].items())
    lines = [
        f"## Lessons: {c['gpu']}, {c['date']}",
        "",
        f"One `make gpu-run` on an {c['gpu']} ({device['sm_count']} SMs, "
        f"{device['l2_bytes'] / 2**20:.0f} MiB L2, "
        f"{device['theoretical_bandwidth_gbs']:,.0f} GB/s theoretical; {software}), recorded in "
        f"`gpgpu_lessons/recorded/{run.path.name}`. Every ratio is two measurements of that run; "
        "times are medians of CUDA-event samples.",
        "",
    ]
    return lines + _table(["lesson", "measurement", "result"], [list(f(run)) for f in HIGHLIGHTS])


def _spread(ratios: list[float] | None) -> str:
    if not ratios:
        return "-"
    low, high = min(ratios), max(ratios)
    return times(low) if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}x"


def bench_section(bench: bench_record.Bench, path: Path, run: Run | None) -> list[str]:
    worst = bench_report.worst(bench)
    rows = []
    for name, r in worst.items():
        ratios = (
            [times(bench_report.of_copy(bench, r)), times(bench_report.of_cupy(r))]
            if r.fast is not None and r.ok
            else ["-", "-"]
        )
        verdict = {True: "yes", False: "no", None: "-"}[bench_report.meets(bench, r)]
        rows.append([name, shape_text(r.shape), r.label, *ratios, verdict if r.ok else "FAILED"])
    awkward: dict[tuple, dict[str, list[float]]] = {}
    for r in bench.results:
        kind, _, label = r.label.rpartition(", ")
        if r.ok and r.fast is not None and label in AWKWARD:
            colour = "RGB" if kind == "RGB" else "one channel"
            ratios = awkward.setdefault((r.family, r.kernel), {}).setdefault(colour, [])
            ratios.append(bench_report.of_copy(bench, r))
    odd = [
        [f"{family}: {kernel}", *(_spread(found.get(c)) for c in ("one channel", "RGB"))]
        for (family, kernel), found in awkward.items()
    ]
    lines = [
        f"## Bench: {bench.gpu}, {bench.date}",
        "",
        f"`python -m gpgpu_tools.bench --record` ({bench.sizes} sizes, {len(bench.results)} "
        f"shapes checked, {sum(not r.ok for r in bench.results)} failed), recorded in "
        f"`gpgpu_lessons/recorded/bench/{path.name}`. Ratios: a kernel's bandwidth over the "
        f"bench's own {bench.ceiling.name} ({gbs(bench.ceiling)}), and CuPy's time over the "
        "kernel's (above 1: the kernel is faster).",
        "",
        "Worst shape of each family:",
        "",
        *_table(["family", "worst shape", "why", "of the copy", "of CuPy", "meets target"], rows),
        "",
        f"Awkward shapes ({', '.join(AWKWARD)}) against the copy, lowest-highest:",
        "",
        *_table(["family: kernel", "one channel", "RGB"], odd),
    ]
    if run is not None and "03_bank_conflicts/textbook_8192" in run.experiments:
        lesson = run.ceiling("03_bank_conflicts/textbook_8192")
        higher = 100 * (lesson.gbs / bench.ceiling.gbs - 1)
        side = "higher" if higher >= 0 else "lower"
        lines += [
            "",
            f"The bench's own device copy ran at {gbs(bench.ceiling)}, lesson 03's at "
            f"{gbs(lesson)}: the bench's ratios to the copy read {abs(higher):.0f} % {side} than "
            "they would against lesson 03's copy.",
        ]
    return lines


def trace_section(path: Path) -> list[str]:
    record = json.loads(path.read_text())
    ncu = record["ncu"]
    cases = sorted({row["case"] for row in ncu})
    lines = [
        f"## The tracer against the GPU's tools: {record['gpu']}, {record['date']}",
        "",
        f"`{record['how']}`, recorded in `gpgpu_lessons/recorded/trace/{path.name}` and read by "
        "`tests/trace/test_trace_vs_gpu.py` (which lists why each disagreement is the compiler's "
        "choice).",
        "",
    ]
    if all("agree" in row for row in ncu):
        disagree = [row for row in ncu if not row["agree"]]
        lines.append(
            f"- Nsight Compute: {len(ncu) - len(disagree)} of {len(ncu)} counters on "
            f"{len(cases)} small kernels agree with the tracer (within 5 %)"
            + (":" if disagree else ".")
        )
        lines += [
            f"  - `{r['case']}` `{r['metric']}`: tracer {r['tracer']:g}, Nsight Compute "
            f"{r['ncu']:g}"
            for r in disagree
        ]
    else:
        lines.append(f"- Nsight Compute: {len(ncu)} counters on {len(cases)} small kernels.")
    races = record["races"]
    if not races:
        return lines + ["- compute-sanitizer's racecheck: not run on this GPU."]
    flagged = [r["case"] for r in races if r["racecheck"]]
    line = f"- compute-sanitizer's racecheck flags {len(flagged)} of {len(races)} kernels"
    if all("tracer" in r for r in races):
        same = sum(bool(set(r["tracer"]) - {"barrier"}) == bool(r["racecheck"]) for r in races)
        line += f"; the tracer's verdict (race or none) is the same on {same} of {len(races)}"
    lines.append(line + ".")
    return lines


def narrow_flips_section(path: Path) -> list[str]:
    """Lesson 02's fast flips on short rows and odd shapes, each kernel beside the copy ceiling."""
    c = json.loads(path.read_text())

    def others(r: dict) -> dict:  # every kernel timed beside the wrapper's ('general': one of them)
        return {
            w: o for w, o in {**r["others"], **r.get("candidates", {})}.items() if w != "general"
        }

    ways = sorted(dict.fromkeys(w for r in c["rows"] for w in others(r)))
    rows = [
        [
            " x ".join(map(str, r["shape"])),
            "horizontal" if r["horizontal"] else "vertical",
            r["kernel"],
            times(r["of_ceiling"]),
            times(r["of_copy"]),
            *(times(others(r)[w]["of_ceiling"]) if w in others(r) else "-" for w in ways),
        ]
        for r in c["rows"]
    ]
    return [
        f"## Lesson 02's flips on odd and narrow images: {c['device']}",
        "",
        "`python -m gpgpu_tools.narrow_flips` (uint8, prepared launches back to back), recorded in "
        f"`gpgpu_lessons/recorded/narrow_flips/{path.name}`. x ceiling: over the same run's "
        f"float32 device-to-device copy of 512 MiB ({c['ceiling_gbs']:,.0f} GB/s), the bench's "
        "yardstick; x copy: over a copy of the same bytes, which itself runs slower on odd byte "
        "counts. The wrapper's kernel first, then each kernel it may take instead (x ceiling).",
        "",
        *_table(["shape", "flip", "the wrapper's kernel", "x ceiling", "x copy", *ways], rows),
    ]


def yardstick_section(path: Path) -> list[str]:
    """Lesson 03's textbook kernels beside the same algorithms in CUDA C, one run."""
    c = json.loads(path.read_text())
    rows = [
        [
            r["kernel"],
            f"{r['numba_ms']:.3f}",
            r["c_kernel"],
            f"{r['c_ms']:.3f}",
            times(r["numba_over_c"]),
            times(r["numba_x_memcpy"]),
            times(r["c_x_memcpy"]),
        ]
        for r in c["table"]
    ]
    header = [
        "Numba kernel",
        "ms",
        "CUDA C twin",
        "ms",
        "Numba / C",
        "Numba x memcpy",
        "C x memcpy",
    ]
    return [
        f"## Textbook kernels beside CUDA C: {c['gpu']}, {c['date']}",
        "",
        f"`python -m gpgpu_tools.perf_run` (its `cuda_c` yardstick, built with nvcc on the GPU), "
        f"{c['side']} x {c['side']} {c['dtype']}, {c['threads'][0]} x {c['threads'][1]} threads, "
        f"recorded in `gpgpu_lessons/recorded/yardstick/{path.name}`; memcpy = cudaMemcpy device "
        "to device in the same run. Rows marked clamped or whole-row are other spellings of the "
        "same kernel (tools/gpgpu_tools/cuda_c/spellings.py).",
        "",
        *_table(header, rows),
    ]


def host_cost_section(path: Path) -> list[str]:
    """What one call costs the host: the wrapper, its prepared launch, a bare launch, CuPy."""
    c = json.loads(path.read_text())
    rows = [
        [
            r["kernel"],
            r["size"],
            f"{r['elements']:,}",
            f"{r['wrapper_us']:.1f}",
            f"{r['prepare_us']:.1f}",
            f"{r['launch_us']:.1f}",
            f"{r['bare_us']:.1f}",
            times(r["wrapper_us"] / r["bare_us"]),
            f"{r['cupy_us']:.1f}",
        ]
        for r in c["host_costs"]
    ]
    header = [
        "kernel",
        "size",
        "elements",
        "wrapper",
        "prepare()",
        "prepared launch",
        "bare launch",
        "wrapper / bare",
        "CuPy",
    ]
    return [
        f"## What one call costs the host: {c['gpu']}",
        "",
        "`python -m gpgpu_tools.perf_run`, microseconds per call back to back with device arrays "
        f"in and out, recorded in `gpgpu_lessons/recorded/perf/{path.name}`.",
        "",
        *_table(header, rows),
    ]


def render(folder: Path | None = None) -> str:
    """docs/results.md as the records in `folder` (the package's by default) say it."""
    folder = Path(folder or results.RECORDED_DIR)
    parts = [
        "# Measured results",
        "",
        "<!-- Generated by `python -m gpgpu_tools.results_report` from gpgpu_lessons/recorded/; "
        "do not edit by hand: tests/tools/test_results_report.py fails when this page drifts. -->",
        "",
        "Every number below comes from the recorded GPU runs in `gpgpu_lessons/recorded/`, "
        "one section per record.",
    ]
    runs = {p.stem: Run(p) for p in sorted(folder.glob("*.json"))}
    for run in runs.values():
        parts += ["", *lessons_section(run)]
    for path in sorted((folder / "bench").glob("*.json")):
        bench = bench_record.load(path)
        parts += ["", *bench_section(bench, path, runs.get(path.stem))]
    for path in sorted((folder / "trace").glob("*.json")):
        parts += ["", *trace_section(path)]
    for path in sorted((folder / "yardstick").glob("*.json")):
        parts += ["", *yardstick_section(path)]
    for path in sorted((folder / "perf").glob("*.json")):
        parts += ["", *host_cost_section(path)]
    for path in sorted((folder / "narrow_flips").glob("*.json")):
        parts += ["", *narrow_flips_section(path)]
    if not runs:
        parts += ["", "No GPU run is recorded: not measured."]
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpgpu_tools.results_report", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    parser.add_argument("--out", type=Path, default=PAGE, help=f"default {PAGE}")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        stale = not args.out.exists() or args.out.read_text() != text
        if stale:
            print(f"{args.out} is stale: run python -m gpgpu_tools.results_report", file=sys.stderr)
        return int(stale)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Lesson 05's tables: the sums' speeds, seed 001's measurements beside ours, the tracer's counts
beside the GPU's times, and where the tuned sum catches up with CUB.

Each function returns (header, rows) with numbers written for people ("1.2 ms", "2^28"), which
the notebook records and shows with `notebook.show_table` (on a GPU this run's table, in the
simulator the recorded GPU run's). The tracer's counts are the same on every machine, so a
table records them beside the times it puts them next to.
"""

from __future__ import annotations

from ..formats import format_count as count
from ..formats import format_ms as duration
from . import tracing

SEED_N = (100, 1_000, 10_000, 100_000, 1_000_000)
SEED_RTX2070_MS = {  # seed 001's table: RTX 2070, ms, at n = SEED_N (None: not run)
    "1 brute force": (2.457216, 19.241217, 158.047623, 1398.913086, 13832.567383),
    "2-1 atomics": (56.279041, 512.576782, 3783.871826, 36508.042969, None),
    "2-2 shared tree": (113.077759, 85.194466, 714.860535, 7208.444336, 79598.742188),
    "3 host loop": (95.010529, 89.894913, 727.293640, 7305.295410, 86867.156250),
}
SPEED_UP_AT = 10_000  # the n at which the sweep tables compare every variant with the brute force


def sums(timings, ceiling=None, *, relative_to: str | None = None, traces: dict | None = None):
    """Header and rows of sums (Timings, slowest first): time, GB/s, % of the ceiling, speed-ups.

    The last columns: each row's speed-up over the row before and over the first; with
    relative_to (a row's name, or how it starts), each row's speed against that row instead.
    traces ({name: Trace} of the sums' first launches, `tracing.trace_ladder`): the table of each
    traced sum's time beside what the tracer counts, instead.
    """
    if traces is not None:
        return beside_counts(timings, traces)
    share = f"% of {ceiling.name}" if ceiling is not None else "% of ceiling"
    header = ["variant", "time", "GB/s", share]
    if relative_to is None:
        header += ["step speed-up", "cumulative"]
    else:
        header.append(f"speed vs {relative_to}")
        ref = next((t for t in timings if t.name.startswith(relative_to)), None)
    rows, first, previous = [], timings[0].median_ms, None
    for t in timings:
        percent = 100 * t.gbs / ceiling.gbs if ceiling is not None and t.gbs is not None else None
        row = [
            t.name,
            duration(t.median_ms),
            None if t.gbs is None else round(t.gbs),
            None if percent is None else round(percent),
        ]
        if relative_to is None:
            row.append(None if previous is None else f"{previous / t.median_ms:.3g}x")
            row.append(f"{first / t.median_ms:,.4g}x")
        else:
            row.append("" if ref is None else f"{ref.median_ms / t.median_ms:.2f}x")
        rows.append(row)
        previous = t.median_ms
    return header, rows


def beside_counts(timings, traces: dict) -> tuple[list[str], list[list]]:
    """Header and rows: the time of each traced sum beside its counts (`tracing.ladder_counts`)."""
    header = [
        "rung",
        "time",
        "shared requests",
        "busy lanes per request",
        "wavefronts per request",
        "global atomics (lanes on one address)",
    ]
    rows = []
    for t in timings:
        if t.name not in traces:
            continue  # a library sum (CUB, cuda.reduce): no kernel of ours to trace
        c = tracing.ladder_counts(traces[t.name])
        shared, atomics = c["shared requests"], c["global atomic adds"]
        rows.append(
            [
                t.name,
                duration(t.median_ms),
                shared,
                f"{c['busy lanes per request']:.1f}" if shared else "-",
                f"{c['wavefronts per request']:.1f}" if shared else "-",
                f"{atomics} ({c['lanes on one address']:.0f})" if atomics else "0",
            ]
        )
    return header, rows


def seed_rows(xs, series: dict, variants) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the n sweep: 'ours / seed 001's' time per variant and n ('-': not run).

    The last column: how many times faster than our brute force each variant runs at
    n = SPEED_UP_AT (where both ran).
    """
    xs = list(xs)
    header = ["variant", *(f"n = {count(x)}" for x in xs)]
    header.append(f"vs brute force, n = {count(SPEED_UP_AT)}")
    brute = series.get("1 brute force", [])
    at = xs.index(SPEED_UP_AT) if SPEED_UP_AT in xs else None
    rows = []
    for variant in variants:
        ours = [t.median_ms for t in series.get(variant, [])]
        seed = SEED_RTX2070_MS.get(variant, (None,) * len(SEED_N))
        cells = []
        for k, x in enumerate(xs):
            mine = duration(ours[k]) if k < len(ours) else "-"
            theirs = seed[SEED_N.index(x)] if x in SEED_N else None
            cells.append(f"{mine} / {duration(theirs)}" if theirs else mine)
        ran = at is not None and at < len(ours) and at < len(brute)
        cells.append(f"{brute[at].median_ms / ours[at]:.3g}x" if ran else "-")
        rows.append([variant] + cells)
    return header, rows


def histograms(timings: dict, traces: dict | None = None) -> tuple[list[str], list[list]]:
    """Header and rows: per histogram and kind of data, the time beside the lanes of a warp that the
    tracer counts on one bin (the queue of the per-pixel atomic); the last row, the fastest.

    timings: {(kind of data, variant): Timing}; traces: {(kind, variant): Trace}, by default
    `tracing.trace_histograms()` (warps of the images the lesson measures on a GPU).
    """
    traces = tracing.trace_histograms() if traces is None else traces
    kinds = list(dict.fromkeys(kind for kind, _ in timings))
    variants = list(dict.fromkeys(variant for _, variant in timings))
    header = ["variant"] + [f"{kind}: time · lanes on one bin" for kind in kinds]
    rows = []
    for variant in variants:
        cells = []
        for kind in kinds:
            trace = traces.get((kind, variant))
            lanes = "-" if trace is None else f"{tracing.contention(trace):.1f}"
            cells.append(f"{duration(timings[kind, variant].median_ms)} · {lanes}")
        rows.append([variant, *cells])
    fastest = [min(variants, key=lambda v: timings[kind, v].median_ms) for kind in kinds]
    rows.append(["fastest", *fastest])
    return header, rows


def crossover(
    sizes, ours, theirs, names=("ours", "theirs"), at_least: float = 0.95
) -> tuple[list[str], list[list]]:
    """Header and rows: time of each sum per size, and their ratio; the last row names the
    smallest size from which ours keeps at least `at_least` x their speed (where the curves
    meet), or says there is none."""
    header = ["elements", f"{names[0]}", f"{names[1]}", f"{names[1]} time / {names[0]} time"]
    ratios = [b.median_ms / a.median_ms for a, b in zip(ours, theirs, strict=True)]
    rows = [
        [f"2^{n.bit_length() - 1}", duration(a.median_ms), duration(b.median_ms), ratio]
        for n, a, b, ratio in zip(sizes, ours, theirs, ratios, strict=True)
    ]
    start = next((i for i in range(len(ratios)) if min(ratios[i:]) >= at_least), None)
    verdict = "never, in this range" if start is None else f"from {rows[start][0]} elements up"
    rows.append([f"{names[0]} at least {at_least:g}x as fast", "", "", verdict])
    return header, rows

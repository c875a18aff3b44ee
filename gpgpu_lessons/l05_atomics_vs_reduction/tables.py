"""Lesson 05's tables: the ladder's speed-ups, seed 001's measurements beside ours, and the
tracer's counts beside the GPU's times.

Most functions return (header, rows) with numbers written for people ("1.2 ms", "2^28"), which
the notebook records and shows with `notebook.show_table`. `notebook.recorded_table` records a
table and returns what to show (this GPU run's, or in the simulator the recorded one), so that a
recorded table's times can stand beside what the tracer counts on this machine
(`ladder_beside_trace`, `histograms_beside_trace`).
"""

from __future__ import annotations

from ..formats import format_count as count
from ..formats import format_ms as duration
from ..formats import format_small

SEED_N = (100, 1_000, 10_000, 100_000, 1_000_000)
SEED_RTX2070_MS = {  # seed 001's table: RTX 2070, ms, at n = SEED_N (None: not run)
    "1 brute force": (2.457216, 19.241217, 158.047623, 1398.913086, 13832.567383),
    "2-1 atomics": (56.279041, 512.576782, 3783.871826, 36508.042969, None),
    "2-2 shared tree": (113.077759, 85.194466, 714.860535, 7208.444336, 79598.742188),
    "3 host loop": (95.010529, 89.894913, 727.293640, 7305.295410, 86867.156250),
}
SPEED_UP_AT = 10_000  # the n at which the sweep tables compare every variant with the brute force


small = format_small  # a small positive number for people: '5.2 × 10⁻⁸'


def speedups(timings, ceiling=None) -> tuple[list[str], list[list]]:
    """Header and rows: time, bandwidth, % of the ceiling, step and cumulative speed-up."""
    share = f"% of {ceiling.name}" if ceiling is not None else "% of ceiling"
    header = ["variant", "time", "GB/s", share, "step speed-up", "cumulative"]
    rows, first, previous = [], timings[0].median_ms, None
    for t in timings:
        percent = 100 * t.gbs / ceiling.gbs if ceiling is not None and t.gbs is not None else None
        rows.append(
            [
                t.name,
                duration(t.median_ms),
                None if t.gbs is None else round(t.gbs),
                None if percent is None else round(percent),
                None if previous is None else f"{previous / t.median_ms:.3g}x",
                f"{first / t.median_ms:,.4g}x",
            ]
        )
        previous = t.median_ms
    return header, rows


def against(timings, ceiling, reference: str) -> tuple[list[str], list[list]]:
    """Header and rows: time, GB/s, % of the ceiling, and speed relative to the `reference` row."""
    header = ["variant", "time", "GB/s", f"% of {ceiling.name}", f"speed vs {reference}"]
    ref = next((t for t in timings if t.name.startswith(reference)), None)
    rows = [
        [
            t.name,
            duration(t.median_ms),
            round(t.gbs),
            round(100 * t.gbs / ceiling.gbs),
            "" if ref is None else f"{ref.median_ms / t.median_ms:.2f}x",
        ]
        for t in timings
    ]
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


def ladder_beside_trace(shown, counts: dict) -> tuple[list[str], list[list]]:
    """Header and rows: each rung's GPU time (from `shown`, the speed-ups table) and its counts.

    counts: {rung: tracing.ladder_counts(trace)}.
    """
    times = {row[0]: row[1] for row in shown.data["rows"]}
    header = [
        "rung",
        "time",
        "shared requests",
        "busy lanes per request",
        "wavefronts per request",
        "global atomics (lanes on one address)",
    ]
    rows = []
    for rung, c in counts.items():
        shared, atomics = c["shared requests"], c["global atomic adds"]
        rows.append(
            [
                rung,
                times.get(rung, "-"),
                shared,
                f"{c['busy lanes per request']:.1f}" if shared else "-",
                f"{c['wavefronts per request']:.1f}" if shared else "-",
                f"{atomics} ({c['lanes on one address']:.0f})" if atomics else "0",
            ]
        )
    return header, rows


def histogram_times(timings: dict, kinds, variants) -> tuple[list[str], list[list]]:
    """Header and rows: ms of every variant on every kind of data ({(kind, variant): Timing})."""
    header = ["variant", *kinds]
    return header, [[v] + [timings[k, v].median_ms for k in kinds] for v in variants]


def histograms_beside_trace(shown, lanes: dict) -> tuple[list[str], list[list]]:
    """Header and rows: per variant and kind of data, the GPU time (from `shown`, a
    `histogram_times` table) beside the traced lanes of a warp on one bin ({(kind, variant): x})."""
    kinds = list(shown.data["columns"][1:])
    header = ["variant"] + [f"{kind}: time · lanes on one bin" for kind in kinds]
    rows = []
    for variant, *times in shown.data["rows"]:
        cells = []
        for kind, ms in zip(kinds, times, strict=True):
            traced = lanes.get((kind, variant))
            cells.append(f"{duration(ms)} · {'-' if traced is None else f'{traced:.1f}'}")
        rows.append([variant, *cells])
    return header, rows


def fastest(shown) -> str:
    """'fastest on photograph: ...; random bytes: ...': the quickest variant per kind of data."""
    kinds = shown.data["columns"][1:]
    rows = shown.data["rows"]
    best = [min(rows, key=lambda row: row[k])[0] for k in range(1, len(kinds) + 1)]
    return "fastest on " + "; ".join(f"{kind}: {b}" for kind, b in zip(kinds, best, strict=True))


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

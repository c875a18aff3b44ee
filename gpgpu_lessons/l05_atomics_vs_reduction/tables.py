"""Lesson 05's tables: the ladder's speed-ups, and seed 001's measurements beside ours."""

from __future__ import annotations

SEED_N = (100, 1_000, 10_000, 100_000, 1_000_000)
SEED_RTX2070_MS = {  # seed 001's table: RTX 2070, ms, at n = SEED_N (None: not run)
    "1 brute force": (2.457216, 19.241217, 158.047623, 1398.913086, 13832.567383),
    "2-1 atomics": (56.279041, 512.576782, 3783.871826, 36508.042969, None),
    "2-2 shared tree": (113.077759, 85.194466, 714.860535, 7208.444336, 79598.742188),
    "3 host loop": (95.010529, 89.894913, 727.293640, 7305.295410, 86867.156250),
}


def speedups(timings, ceiling=None) -> tuple[list[str], list[list]]:
    """Header and rows: time, bandwidth, % of the copy ceiling, step and cumulative speed-up."""
    header = ["variant", "ms", "GB/s", "% of copy", "step speed-up", "cumulative"]
    rows, first, previous = [], timings[0].median_ms, None
    for t in timings:
        share = 100 * t.gbs / ceiling.gbs if ceiling is not None and t.gbs is not None else None
        rows.append(
            [
                t.name,
                t.median_ms,
                t.gbs,
                share,
                None if previous is None else previous / t.median_ms,
                first / t.median_ms,
            ]
        )
        previous = t.median_ms
    return header, rows


def seed_rows(xs, series: dict, variants) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the n sweep: 'ours / seed 001's' ms per variant and n ('-': not run)."""
    header = ["variant"] + [f"n={x:.0e}" for x in xs]
    rows = []
    for variant in variants:
        ours = [t.median_ms for t in series.get(variant, [])]
        seed = SEED_RTX2070_MS.get(variant, (None,) * len(SEED_N))
        cells = []
        for k, x in enumerate(xs):
            mine = f"{ours[k]:.3g}" if k < len(ours) else "-"
            theirs = seed[SEED_N.index(x)] if x in SEED_N else None
            cells.append(f"{mine} / {theirs:.4g}" if theirs else mine)
        rows.append([variant] + cells)
    return header, rows

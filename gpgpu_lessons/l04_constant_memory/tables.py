"""Lesson 04's tables of measured times, as rows for `notebook.show_table` (numbers for people)."""

from __future__ import annotations

from .. import notebook
from ..timing import Timing

# Seed 002's milliseconds for its 3x3 filter (image size and GPU not stated), by our variant name.
SEED_002_MS = {"NumPy on the CPU": 553, "direct, global": 4.13, "direct, constant": 3.38}


def comparison(
    runs: list[Timing], ceiling: Timing, pairs: dict[str, str]
) -> tuple[list[str], list[list]]:
    """(header, rows): each kernel's time and share of the copy, and its time ÷ another kernel's.

    pairs: {kernel: the kernel it is compared with}, by Timing name. Host times of the simulator
    get no bandwidth: they say nothing about memory.
    """
    by_name = {t.name: t for t in runs}
    missing = (set(pairs) | set(pairs.values())) - set(by_name)
    if missing:
        raise ValueError(f"pairs name kernels that were not timed: {sorted(missing)}")
    header = ["kernel", "time", "GB/s", "of the copy", "compared with", "time ratio"]
    rows = []
    for t in runs:
        other = by_name.get(pairs.get(t.name))
        rows.append(
            [
                t.name,
                notebook.duration(t.median_ms),
                "–" if t.simulated else f"{t.gbs:,.0f}",
                "–" if t.simulated else f"{100 * t.gbs / ceiling.gbs:.0f} %",
                other.name if other else "–",
                f"{t.median_ms / other.median_ms:.2f}×" if other else "–",
            ]
        )
    return header, rows


def seed_comparison(runs: list[Timing]) -> tuple[list[str], list[list]]:
    """(header, rows): seed 002's milliseconds beside ours, for the variants the seed timed."""
    header = ["3×3 Laplacian", "seed 002", "this run", "GB/s", "CPU ÷ this"]
    cpu = next((t for t in runs if t.name == "NumPy on the CPU"), None)
    rows = []
    for t in runs:
        seed = SEED_002_MS.get(t.name)
        rows.append(
            [
                t.name,
                notebook.duration(seed) if seed is not None else "–",
                notebook.duration(t.median_ms),
                "–" if t.simulated else f"{t.gbs:,.1f}" if t.gbs < 10 else f"{t.gbs:,.0f}",
                f"{cpu.median_ms / t.median_ms:,.0f}×" if cpu and not t.simulated else "–",
            ]
        )
    return header, rows

"""Lesson 04's tables of measured times, as rows for `notebook.show_table` (numbers for people)."""

from __future__ import annotations

import numpy as np

from .. import notebook, runtime, timing
from ..timing import Timing
from .filters import LAPLACIAN
from .reference import reference

CPU = "NumPy on the CPU"

# Seed 002's milliseconds for its 3x3 filter (image size and GPU not stated), by our variant name.
SEED_002_MS = {CPU: 553, "direct, global": 4.13, "direct, constant": 3.38}


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


def cpu_laplacian(image: np.ndarray) -> Timing:
    """Time the seed's CPU row: NumPy's 3x3 Laplacian (float32) of a host image, on this host."""
    return timing.benchmark_cpu(
        lambda: reference(image, LAPLACIAN, dtype=np.float32),
        name=CPU,
        bytes_moved=2 * image.nbytes,
        repeat=runtime.pick(gpu=3, simulator=2),
        warmup=0,
    )


def seed_comparison(runs: list[Timing], image: np.ndarray) -> tuple[list[str], list[list]]:
    """(header, rows): seed 002's milliseconds beside ours, for the variants the seed timed.

    runs: this run's GPU timings of the 3x3 Laplacian; image: a host image of the size they
    filtered, which NumPy filters here for the CPU row (the first).
    """
    header = ["3×3 Laplacian", "seed 002", "this run", "GB/s", "CPU ÷ this"]
    cpu = cpu_laplacian(image)
    rows = []
    for t in [cpu, *runs]:
        seed = SEED_002_MS.get(t.name)
        rows.append(
            [
                t.name,
                notebook.duration(seed) if seed is not None else "–",
                notebook.duration(t.median_ms),
                "–" if t.simulated else f"{t.gbs:,.1f}" if t.gbs < 10 else f"{t.gbs:,.0f}",
                f"{cpu.median_ms / t.median_ms:,.0f}×" if not t.simulated else "–",
            ]
        )
    return header, rows

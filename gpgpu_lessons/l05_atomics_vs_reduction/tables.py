"""Lesson 05's tables of the tracer's counts beside the GPU's times: the ladder's and the
histograms'.

Each function returns (header, rows) with numbers written for people ("1.2 ms", "3.3"), which
the notebook records and shows with `notebook.show_table` (on a GPU this run's table, in the
simulator the recorded GPU run's). The tracer's counts are the same on every machine, so a
table records them beside the times it puts them next to.
"""

from __future__ import annotations

from ..formats import format_ms as duration
from . import tracing


def beside_counts(timings, traces: dict) -> tuple[list[str], list[list]]:
    """Header and rows: the time of each traced sum beside its counts (`tracing.ladder_counts`).

    timings: the sums' Timings (a library sum, which has no trace, is left out); traces:
    {name: Trace} of the sums' first launches (`tracing.trace_ladder`).
    """
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


def histograms(timings: dict, images: dict) -> tuple[list[str], list[list]]:
    """Header and rows: per histogram and image, the time beside the lanes of a warp that the
    tracer counts on one bin (the queue of the per-pixel atomic); the last row, the fastest.

    timings: {(image name, variant): Timing}; images: {image name: uint8 image}, the images
    timed (the tracer counts warps of them: `tracing.trace_histograms`).
    """
    traces = tracing.trace_histograms(images)
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

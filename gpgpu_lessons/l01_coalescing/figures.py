"""Lesson 01's pictures: which sectors a warp's load touches, and what that costs on the GPU.

The figures take the labels the slides give the lesson's launches and trace those launches
themselves (`tracing.launches`, once per process): the bytes each lane loads come from the
tracer, never from formulas copied out of the kernels.
"""

from __future__ import annotations

import dataclasses

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt

from .. import plotting
from ..hardware import LINE_BYTES as LINE
from ..hardware import SECTOR_BYTES as SECTOR
from ..timing import Timing
from . import tracing

SHOWN_SECTORS = 32  # the strip shows the first 1024 bytes of the array
NOT_MEASURED = plotting.NOT_MEASURED


def sectors_touched(lane_bytes) -> list[int]:
    """The 32-byte sectors one warp request needs, from [(first byte, size)] per lane."""
    return sorted({b // SECTOR for start, size in lane_bytes for b in range(start, start + size)})


def _strip_note(lane_bytes) -> str:
    """'4 sectors · 100% used': what one request moves, and how much of it the lanes wanted."""
    sectors = sectors_touched(lane_bytes)
    used = sum(size for _, size in lane_bytes)
    return f"{len(sectors)} sectors · {100 * used / (SECTOR * len(sectors)):.0f}% used"


def draw_warp_requests(labels, *, shown_as: dict[str, str] | None = None):
    """One strip per traced launch (labels of `tracing.launches`): the bytes its warp's load asks.

    shown_as: {label: the strip's name} for a strip named otherwise than its launch.
    """
    shown_as = shown_as or {}
    if set(shown_as) - set(labels):
        raise ValueError(f"shown_as names launches not drawn: {set(shown_as) - set(labels)}")
    rows = [
        (shown_as.get(label, label), traced.lane_bytes())
        for label, traced in tracing.traced(labels).items()
    ]
    fig, ax = plotting.figure(height=0.8 * len(rows) + 2.0)
    with plotting.styled():
        colours = plt.get_cmap("viridis")
        for row, (_, lane_bytes) in enumerate(rows):
            y = len(rows) - 1 - row
            for s in range(SHOWN_SECTORS):
                ax.add_patch(
                    mpatches.Rectangle((s * SECTOR, y), SECTOR, 0.7, fill=False, lw=0.5, ec="grey")
                )
            for lane, (start, size) in enumerate(lane_bytes):
                if start < SHOWN_SECTORS * SECTOR:
                    colour = colours(lane / max(len(lane_bytes) - 1, 1))
                    ax.add_patch(mpatches.Rectangle((start, y), size, 0.7, color=colour))
        for line in range(SHOWN_SECTORS * SECTOR // LINE + 1):
            ax.axvline(line * LINE, color="black", lw=1.5)
        ax.set_xlim(0, SHOWN_SECTORS * SECTOR)
        ax.set_ylim(-0.2, len(rows))
        ticks = [len(rows) - 1 - row + 0.35 for row in range(len(rows))]
        ax.set_yticks(ticks, [label for label, _ in rows])
        notes = ax.twinx()  # what each request costs, beside its strip
        notes.set_ylim(ax.get_ylim())
        notes.set_yticks(ticks, [_strip_note(lane_bytes) for _, lane_bytes in rows])
        for side in (ax, notes):
            side.tick_params(axis="y", length=0)
        ax.set_xlabel(
            "byte from the array's start (grey boxes: 32-byte sectors; black lines: 128-byte lines)"
        )
        ax.set_title(
            "One warp's load: the bytes each lane asks for (colour: lane 0 to 31)", loc="left"
        )
    plt.close(fig)
    return fig


def _traced_panel(traced: dict, metric: str):
    """draw(ax, names): traced sectors per warp request (ideal marked), or requests per KiB."""

    def draw(ax, names):
        sectors = [traced[n].sectors_per_request for n in names]
        if metric == "sectors":
            ideals = [traced[n].ideal_sectors for n in names]
            labels = [f"{v:g} (ideal {i:g})" for v, i in zip(sectors, ideals)]
            plotting.bars(ax, sectors, labels, names=names, colour="tab:orange", log=False)
            ax.scatter(ideals, range(len(names)), marker="|", s=600, color="black", zorder=3)
            ax.set_xlabel("32-byte sectors per warp request (traced)")
        else:
            requests = [traced[n].requests_per_kib for n in names]
            labels = [f"{r:g} ({s:g} sectors each)" for r, s in zip(requests, sectors)]
            plotting.bars(ax, requests, labels, names=names, colour="tab:orange", log=False)
            ax.set_xlabel("warp requests per KiB loaded (traced)")

    return draw


def traced_and_measured(
    measured: dict[str, Timing],
    *,
    title: str,
    size: str,
    ceiling: Timing,
    metric: str = "sectors",
    record_as: str | None = None,
):
    """Left, the tracer's count per warp request; right, the GPU's bandwidth of the same kernels.

    measured: {label of `tracing.launches`: Timing} (timed at `size`, against `ceiling`); the
    left half traces the launches of those labels. metric "sectors" (32-byte sectors per
    request, ideal marked) or "requests" (warp requests per KiB loaded). See
    plotting.traced_beside_measured.
    """
    if metric not in ("sectors", "requests"):
        raise ValueError(f"metric must be 'sectors' or 'requests', got {metric!r}")
    return plotting.traced_beside_measured(
        _traced_panel(tracing.traced(measured), metric),
        [dataclasses.replace(t, name=label) for label, t in measured.items()],
        names=list(measured)[::-1],
        title=title,
        size=size,
        ceiling=ceiling,
        record_as=record_as,
    )

"""Lesson 01's pictures: which sectors a warp's load touches, and what that costs on the GPU.

The bytes each lane loads come from tracing the lesson's own launches (`tracing`), never from
formulas copied out of the kernels.
"""

from __future__ import annotations

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt

from .. import plotting, results
from ..timing import Timing

SECTOR, LINE = 32, 128  # bytes of a sector, of a cache line
SHOWN_SECTORS = 32  # the strip shows the first 1024 bytes of the array
LABEL_SIZE = 13  # points: the rows' names, read from the back of a room
NOT_MEASURED = "traced here; the GPU's bandwidths appear once a GPU run is recorded"


def sectors_touched(lane_bytes) -> list[int]:
    """The 32-byte sectors one warp request needs, from [(first byte, size)] per lane."""
    return sorted({b // SECTOR for start, size in lane_bytes for b in range(start, start + size)})


def _strip_note(lane_bytes) -> str:
    """'4 sectors · 100% used': what one request moves, and how much of it the lanes wanted."""
    sectors = sectors_touched(lane_bytes)
    used = sum(size for _, size in lane_bytes)
    return f"{len(sectors)} sectors · {100 * used / (SECTOR * len(sectors)):.0f}% used"


def draw_warp_requests(patterns: dict):
    """One strip per {label: [(first byte, size) per lane]}: the bytes a warp's load asks for."""
    rows = list(patterns.items())
    with plt.rc_context(plotting.STYLE):
        fig, ax = plt.subplots(
            figsize=(plotting.WIDTH, 0.7 * len(rows) + 1.6), layout="constrained"
        )
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
            side.tick_params(axis="y", length=0, labelsize=LABEL_SIZE)
        ax.set_xlabel(
            "byte from the array's start (grey boxes: 32-byte sectors; black lines: 128-byte lines)"
        )
        ax.set_title(
            "One warp's load: the bytes each lane asks for (colour: lane 0 to 31)", loc="left"
        )
    plt.close(fig)
    return fig


def _bars(ax, names, values, colour, labels, *, log: bool = False, reach: float = 0) -> None:
    """Horizontal bars with a label at each bar's end, inside the frame (which reaches `reach`)."""
    ax.barh(names, values, color=colour)
    if log:
        ax.set_xscale("log")
        ax.set_xlim(min(v for v in values if v > 0) / 2, max(max(values) * 12, reach * 1.5))
    else:
        ax.set_xlim(0, max(max(values) * 1.6, reach * 1.1))
    for y, (v, label) in enumerate(zip(values, labels)):  # on white: a ceiling line passes behind
        ax.annotate(
            label,
            (v, y),
            xytext=(5, 0),
            textcoords="offset points",
            va="center",
            bbox={"color": "white", "pad": 0.5},
        )


def _traced_panel(ax, traced: dict, names: list, metric: str) -> None:
    """The tracer's counts: sectors per warp request (ideal marked), or requests per KiB."""
    sectors = [traced[n].sectors_per_request for n in names]
    if metric == "sectors":
        ideals = [traced[n].ideal_sectors for n in names]
        labels = [f"{v:g} (ideal {i:g})" for v, i in zip(sectors, ideals)]
        _bars(ax, names, sectors, "tab:orange", labels)
        ax.scatter(ideals, range(len(names)), marker="|", s=600, color="black", zorder=3)
        ax.set_xlabel("32-byte sectors per warp request (traced)")
    else:
        requests = [traced[n].requests_per_kib for n in names]
        labels = [f"{r:g} ({s:g} sectors each)" for r, s in zip(requests, sectors)]
        _bars(ax, names, requests, "tab:orange", labels)
        ax.set_xlabel("warp requests per KiB loaded (traced)")


def _measured_panel(ax, shown: results.Shown, names: list) -> bool:
    """The GPU's bandwidths of the same kernels against the ceiling; False if none was measured."""
    timings = {t.name: t for t in shown.timings()}
    drawn = [timings.get(n) for n in names]
    ax.set_yticks(range(len(names)), [""] * len(names))
    if any(t is None or t.simulated or t.gbs is None for t in drawn):
        ax.text(
            0.5,
            0.5,
            "no GPU run of these kernels\nrecorded yet",
            ha="center",
            va="center",
            transform=ax.transAxes,
            color="dimgrey",
        )
        ax.set_xticks([])
        return False
    roof = Timing.from_dict(shown.data["ceiling"])
    gbs = [t.gbs for t in drawn]
    labels = [f"{g:,.0f} GB/s ({100 * g / roof.gbs:.0f}%)" for g in gbs]
    _bars(
        ax,
        names,
        gbs,
        "tab:green",
        labels,
        log=max(gbs) / min(gbs) > plotting.WIDE_RANGE,
        reach=roof.gbs,
    )
    ax.axvline(roof.gbs, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel(f"GB/s on the GPU (dashed: {roof.name}, {roof.gbs:,.0f})")
    return True


def traced_and_measured(
    traced: dict,
    measured: dict[str, Timing],
    *,
    title: str,
    size: str,
    ceiling: Timing,
    metric: str = "sectors",
    record_as: str | None = None,
):
    """Left, the tracer's count per warp request; right, the GPU's bandwidth of the same kernels.

    traced: {label: tracing.Traced}; measured: {label: Timing} of the same labels (timed at
    `size`, against `ceiling`); metric "sectors" (32-byte sectors per request, ideal marked) or
    "requests" (warp requests per KiB loaded). The measured half is this run's on a GPU, the
    recorded GPU run's in the simulator (`results.experiment`); the traced half is the same on
    any machine.
    """
    if metric not in ("sectors", "requests"):
        raise ValueError(f"metric must be 'sectors' or 'requests', got {metric!r}")
    if set(traced) != set(measured):
        raise ValueError(
            f"traced and measured name different kernels: {set(traced) ^ set(measured)}"
        )
    data = {
        "kind": "variants",
        "title": title,
        "size": size,
        "timings": [{**t.as_dict(), "name": label} for label, t in measured.items()],
        "ceiling": ceiling.as_dict(),
    }
    shown = results.experiment(record_as, data)
    names = list(traced)[::-1]
    with plt.rc_context(plotting.STYLE):
        fig, (left, right) = plt.subplots(
            1, 2, figsize=(plotting.WIDTH, 0.55 * len(names) + 2.3), layout="constrained"
        )
        _traced_panel(left, traced, names, metric)
        left.tick_params(axis="y", labelsize=LABEL_SIZE)
        where = shown.label if _measured_panel(right, shown, names) else NOT_MEASURED
        heading = plotting.heading(shown.data.get("title", title), shown.data.get("size"), where)
        left.set_title(heading, loc="left")
    plt.close(fig)
    return fig

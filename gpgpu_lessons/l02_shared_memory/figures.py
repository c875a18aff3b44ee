"""Lesson 02's pictures: the memories of a GPU, a mosaic's tiles, and a mosaic's barrier intervals
with the races the tracer finds.

Every figure is drawn in the core's slide style (plotting.figure): it reads from the back of a
room on a 1280 x 720 slide.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from .. import plotting
from ..launch import blocks_for
from . import tracing

# the memories an SM owns: (name, who sees it, what to know), one row each inside the SM
_ON_CHIP = [
    ("registers", "one thread", "64K x 32 bit per SM, ~1 cycle", "#9ecae1"),
    ("shared memory", "one block", "up to 227 KiB per SM, ~30 cycles", "#a1d99b"),
    ("L1 cache", "one SM", "caches global and local data", "#d9d9d9"),
    ("constant cache", "one SM", "one value broadcast to a warp", "#dadaeb"),
]
# the memories off chip, in device memory: (lines of text, colour)
_OFF_CHIP = [
    ("global memory\nevery thread sees it,\nthe host copies to it\ncuda.to_device", "#fdae6b"),
    ("constant memory\nevery thread reads it,\nthe host writes it\ncuda.const, 64 KiB", "#bcbddc"),
    ("local memory\none thread's spills\nand local arrays,\ncached in L1 and L2", "#fdd0a2"),
]


def _box(ax, x, y, w, h, colour, *, dashed=False):
    ax.add_patch(
        Rectangle(
            (x, y),
            w,
            h,
            facecolor=colour,
            edgecolor="black",
            linewidth=1,
            linestyle="--" if dashed else "-",
        )
    )


def memory_hierarchy():
    """The memories of a GPU: on chip (in each SM, then L2) and off chip (device memory, where
    global, constant and local memory live), and the host."""
    with plotting.styled():
        fig = plt.figure(figsize=(plotting.WIDTH, 5.8))  # fits a slide under its heading
        ax = fig.add_axes((0, 0, 1, 1))  # one data unit: one inch
        ax.set_xlim(0, plotting.WIDTH)
        ax.set_ylim(0, 5.8)
        ax.axis("off")
        # the chip: one SM (of many), then L2
        _box(ax, 0.05, 2.2, 11.9, 3.55, "#f7f7f7", dashed=True)
        ax.text(0.2, 5.5, "on chip: fast, small", weight="bold", va="center")
        _box(ax, 0.2, 2.95, 8.6, 2.3, "white")
        ax.text(0.35, 5.0, "one SM (streaming multiprocessor)", weight="bold", va="center")
        for row, (name, scope, note, colour) in enumerate(_ON_CHIP):
            y = 4.35 - 0.45 * row
            _box(ax, 0.35, y, 8.3, 0.4, colour)
            ax.text(0.45, y + 0.2, f"{name} [{scope}]", va="center")
            ax.text(8.55, y + 0.2, note, va="center", ha="right")
        ax.text(10.35, 4.1, "x 132 SMs\non an H200", ha="center", va="center", weight="bold")
        _box(ax, 0.2, 2.3, 11.6, 0.5, "#fee391")
        ax.text(
            6.0,
            2.55,
            "L2 cache: shared by all SMs, every device-memory access passes it",
            ha="center",
            va="center",
        )
        # off chip: the device memory, and the host beside it
        _box(ax, 0.05, 0.05, 9.0, 1.95, "#fff5eb", dashed=True)
        ax.text(
            0.2,
            1.8,
            "off chip: device memory (HBM), large, ~500+ cycles",
            weight="bold",
            va="center",
        )
        for k, (text, colour) in enumerate(_OFF_CHIP):
            _box(ax, 0.15 + 2.95 * k, 0.12, 2.85, 1.48, colour)
            ax.text(0.15 + 2.95 * k + 1.425, 0.86, text, ha="center", va="center")
        _box(ax, 9.45, 0.12, 2.4, 1.48, "#c6dbef")  # clear of the slide's navigation arrows
        ax.text(10.65, 0.86, "host memory\n(CPU)\nNumPy arrays", ha="center", va="center")
        arrow = {"arrowstyle": "<->", "mutation_scale": 16, "linewidth": 1.5}
        ax.add_patch(FancyArrowPatch((9.05, 0.86), (9.45, 0.86), **arrow))
        ax.add_patch(FancyArrowPatch((4.5, 2.0), (4.5, 2.3), **arrow))
    plt.close(fig)
    return fig


def mosaic_tiles(shape, size: int):
    """The tiles of a mosaic over an image of `shape`: one block each; edge tiles are smaller."""
    height, width = shape[:2]
    tiles_y, tiles_x = blocks_for(height, size), blocks_for(width, size)
    inches_per_pixel = (plotting.WIDTH - 1.0) / (tiles_x * size + 1)
    figure_height = min(6.4, inches_per_pixel * (tiles_y * size + 1) + 2.4)
    fig, ax = plotting.figure(height=figure_height)
    with plotting.styled():
        for by in range(tiles_y):
            for bx in range(tiles_x):
                y0, x0 = by * size, bx * size
                rows, cols = min(size, height - y0), min(size, width - x0)  # the kernels' formula
                edge = rows < size or cols < size
                ax.add_patch(
                    Rectangle(
                        (x0, y0), size, size, facecolor="none", edgecolor="#bbbbbb", linestyle=":"
                    )
                )
                ax.add_patch(
                    Rectangle(
                        (x0, y0),
                        cols,
                        rows,
                        facecolor="#fdae6b" if edge else "#a1d99b",
                        edgecolor="black",
                        alpha=0.8,
                    )
                )
                ax.text(
                    x0 + cols / 2,
                    y0 + rows / 2,
                    f"({bx},{by})\n{rows}x{cols}",
                    ha="center",
                    va="center",
                )
        ax.add_patch(
            Rectangle((0, 0), width, height, facecolor="none", edgecolor="red", linewidth=2.5)
        )
        ax.set_xlim(-0.5, tiles_x * size + 0.5)
        ax.set_ylim(tiles_y * size + 0.5, -0.5)
        ax.set_aspect("equal")
        ax.set_xlabel("x (column)")
        ax.set_ylabel("y (row)")
        fig.suptitle(  # the figure's left edge: a narrow image leaves the axes narrow
            f"{height} x {width} image, tiles of {size}: one block of {size} x {size} threads "
            "per tile, labelled (bx,by) and rows x cols\n"
            "green: full tile; orange: edge tile, averages only its real pixels; red: the image",
            x=0.01,
            ha="left",
        )
    plt.close(fig)
    return fig


def _who(threads) -> str:
    """'thread (0, 0)' or '64 threads'."""
    if len(threads) == 1:
        x, y, z = threads[0]
        return f"thread ({x}, {y})" if z == 0 else f"thread ({x}, {y}, {z})"
    return f"{len(threads):,} threads"


def _hazard(hazard) -> str:
    """'RAW on tile (63 found)' or 'WAR on mean'."""
    found = f" ({hazard.count:,} found)" if hazard.count > 1 else ""
    return f"{hazard.kind} on {hazard.array}{found}"


def _short(code: str, limit: int = 34) -> str:
    return code if len(code) <= limit else code[: limit - 1] + "…"


def barrier_intervals(wrappers: dict, image, *args):
    """Which threads read and write which shared array between which barriers, and the races the
    tracer finds, per kernel: wrappers {name: wrapper}, each traced on one tile of its launch
    `wrapper(image, *args)`."""
    # rows: the shared-memory lines of the traced block; columns: barrier intervals; races (RAW,
    # WAR, WAW): red arrows; every hazard, with how many the tracer found, in the panel's title
    traces = {name: tracing.trace_wrapper(f, image, *args) for name, f in wrappers.items()}
    panels = {name: tracing.shared_accesses(trace) for name, trace in traces.items()}
    columns = 1 + max(
        (max(a.intervals) for accesses in panels.values() for a in accesses), default=0
    )
    heights = [max(1, len(accesses)) + 0.9 for accesses in panels.values()]
    fig, axes = plotting.figure(
        len(panels),
        1,
        height=0.45 * sum(heights) + 0.9,
        squeeze=False,
        sharex=True,
        gridspec_kw={"height_ratios": heights},
    )
    with plotting.styled():
        for ax, (name, accesses), trace in zip(axes[:, 0], panels.items(), traces.values()):
            _interval_panel(ax, name, accesses, trace, columns)
        axes[-1, 0].set_xticks(
            [i + 0.5 for i in range(columns)], [f"{i} passed" for i in range(columns)]
        )
        axes[-1, 0].set_xlabel("barrier interval: syncthreads a thread has passed")
    plt.close(fig)
    return fig


def _interval_panel(ax, name, accesses, trace, columns) -> None:
    row_of = {}
    for row, access in enumerate(accesses):
        row_of.setdefault(access.line, row)
        colour = "#fdae6b" if access.op == "store" else "#9ecae1"
        verb = "write" if access.op == "store" else "read"
        verb += "s" if len(access.threads) == 1 else ""
        for interval in access.intervals:
            ax.barh(row, 0.9, left=interval + 0.05, height=0.7, color=colour, edgecolor="black")
            ax.text(interval + 0.5, row, f"{_who(access.threads)} {verb}", ha="center", va="center")
    ax.set_yticks(range(len(accesses)), [f"line {a.line}: {_short(a.code)}" for a in accesses])
    ax.set_ylim(len(accesses) - 0.5, -0.5)
    ax.set_xlim(0, columns)
    barriers = max((max(a.intervals) for a in accesses), default=0)
    for boundary in range(1, barriers + 1):  # the kernel's own syncthreads
        ax.axvline(boundary, color="black", linestyle="--", linewidth=1.5)
    races = [h for h in trace.hazards if h.kind in ("RAW", "WAR", "WAW")]
    for hazard in races:
        first, second = (row_of.get(line) for line in hazard.lines)
        if first is None or second is None:
            continue
        ax.annotate(
            "",
            (0.97, second),
            (0.97, first),
            arrowprops={
                "arrowstyle": "->",
                "color": "#cf222e",
                "linewidth": 2.5,
                "connectionstyle": "arc3,rad=-0.5",
            },
        )
        ax.text(
            1.12,
            (first + second) / 2,
            f"{hazard.kind} race on {hazard.array}",
            color="#cf222e",
            va="center",
            weight="bold",
        )
    verdict = ", ".join(_hazard(h) for h in trace.hazards) or "no hazard"
    ax.set_title(
        f"{name}: {barriers} syncthreads\n{verdict}",
        loc="left",
        color="#cf222e" if trace.hazards else "black",
    )

"""Lesson 02's pictures: the memories of a GPU, and the tiles of a mosaic (one block each)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from ..launch import blocks_for

# (name, scope, lifetime/size note, colour) of the memories an SM owns, drawn inside each SM
_ON_CHIP = [
    ("registers", "one thread", "64K x 32 bit per SM, ~1 cycle", "#9ecae1"),
    ("local memory*", "one thread", "spills, arrays; lives off chip", "#fdd0a2"),
    ("shared memory", "one block", "up to 227 KiB per SM, ~30 cycles", "#a1d99b"),
    ("L1 cache", "one SM", "shares 256 KiB with shared mem.", "#d9d9d9"),
    ("constant cache", "one SM", "small; one value broadcast to a warp", "#dadaeb"),
]
_WHO_SEES_WHAT = (
    "Who sees what\n\nthread: its registers,\n  its local memory\n"
    "block: its shared memory\ngrid: global, constant\nhost: global, constant\n"
    "  (copies, not pointers)\ncaches (L1, L2): nobody\n  addresses them directly\n\n"
    "* local memory is private\n  but lives off chip"
)


def _box(ax, x, y, w, h, text, colour, *, fontsize=8, weight="normal", edge="black"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor=edge, linewidth=1))
    ax.text(
        x + w / 2,
        y + h / 2,
        text,
        ha="center",
        va="center",
        fontsize=fontsize,
        weight=weight,
        wrap=True,
    )


def memory_hierarchy():
    """The memories of a GPU: on chip (per SM, then L2) and off chip (HBM), and who sees each."""
    fig, ax = plt.subplots(figsize=(10, 5.1), layout="constrained")
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 7.4)
    ax.axis("off")
    # the chip
    ax.add_patch(
        Rectangle((0.2, 2.35), 10.6, 4.9, facecolor="#f7f7f7", edgecolor="black", linestyle="--")
    )
    ax.text(0.35, 7.0, "GPU chip (on chip: fast, small)", fontsize=10, weight="bold", va="center")
    for k, x0 in enumerate((0.45, 3.95)):
        ax.add_patch(Rectangle((x0, 3.35), 3.3, 3.45, facecolor="white", edgecolor="black"))
        ax.text(
            x0 + 1.65,
            6.6,
            f"SM {k}" if k == 0 else "SM 1  (an H200 has 132)",
            ha="center",
            fontsize=9,
            weight="bold",
        )
        for row, (name, scope, note, colour) in enumerate(_ON_CHIP):
            y = 5.85 - row * 0.6
            _box(ax, x0 + 0.1, y, 3.1, 0.52, f"{name}  [{scope}]\n{note}", colour, fontsize=7)
    ax.text(7.6, 6.35, "...", fontsize=20, va="center")
    _box(
        ax,
        0.45,
        2.5,
        7.6,
        0.65,
        "L2 cache: shared by all SMs, every global access passes it (50-60 MB on H100/H200)",
        "#fee391",
        fontsize=8,
    )
    # off chip
    ax.add_patch(
        Rectangle((0.2, 0.2), 8.0, 1.85, facecolor="#fff5eb", edgecolor="black", linestyle="--")
    )
    ax.text(
        0.35,
        1.85,
        "device memory, HBM (off chip: large, ~500+ cycles, 4.8 TB/s on an H200)",
        fontsize=9,
        weight="bold",
        va="center",
    )
    _box(
        ax,
        0.4,
        0.35,
        2.5,
        1.2,
        "global memory\n[every thread of every block,\nand the host by copies]\ncuda.to_device",
        "#fdae6b",
        fontsize=7,
    )
    _box(
        ax,
        3.0,
        0.35,
        2.4,
        1.2,
        "constant memory\n[all threads read,\nhost writes]\n64 KiB, cuda.const",
        "#bcbddc",
        fontsize=7,
    )
    _box(
        ax,
        5.5,
        0.35,
        2.5,
        1.2,
        "local memory*\n[one thread: spilled\nregisters, local arrays]\ncuda.local.array",
        "#fdd0a2",
        fontsize=7,
    )
    # the host
    _box(
        ax,
        8.7,
        0.35,
        2.1,
        1.2,
        "host memory (CPU)\nNumPy arrays\nPCIe / NVLink-C2C",
        "#c6dbef",
        fontsize=7,
    )
    ax.add_patch(FancyArrowPatch((8.7, 0.95), (8.0, 0.95), arrowstyle="<->", mutation_scale=12))
    ax.add_patch(FancyArrowPatch((4.25, 2.05), (4.25, 2.5), arrowstyle="<->", mutation_scale=12))
    ax.text(8.35, 5.55, _WHO_SEES_WHAT, fontsize=8, va="center", family="monospace")
    plt.close(fig)
    return fig


def mosaic_tiles(shape, size: int):
    """The tiles of a mosaic over an image of `shape`: one block each; edge tiles are smaller."""
    height, width = shape[:2]
    size_inches = (9, min(5.3, 9 * height / width + 0.6))  # wide enough to read on a slide
    fig, ax = plt.subplots(figsize=size_inches, layout="constrained")
    for by, y0 in enumerate(range(0, height, size)):
        for bx, x0 in enumerate(range(0, width, size)):
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
                f"block ({bx},{by})\n{rows}x{cols} px",
                ha="center",
                va="center",
                fontsize=7,
            )
    ax.add_patch(Rectangle((0, 0), width, height, facecolor="none", edgecolor="red", linewidth=2))
    ax.set_xlim(-0.5, blocks_for(width, size) * size + 0.5)
    ax.set_ylim(blocks_for(height, size) * size + 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (column)")
    ax.set_ylabel("y (row)")
    ax.set_title(
        f"{height} x {width} image, mosaic size {size}: one block of {size} x {size} "
        "threads per tile\ngreen: full tile; orange: edge tile, averages only its real "
        "pixels (red frame = image)",
        fontsize=9,
        loc="left",
    )
    plt.close(fig)
    return fig

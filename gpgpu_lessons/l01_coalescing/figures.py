"""Lesson 01's picture: which 32-byte sectors one warp-wide load touches.

The byte each lane asks for comes from the kernels' own index lines (lane = threadIdx.x of
warp 0, first loop step), written out here in plain Python.
"""

from __future__ import annotations

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt

SECTOR, LINE, LANES = 32, 128, 32
ITEM = 4  # bytes per float32


def warp_bytes(kind: str, value: int = 0, *, threads: int = 4096, n: int = 2**28):
    """[(first byte, size)] that each of the 32 lanes of warp 0 reads, for one access pattern.

    kind "stride" (copy_strided, value = stride), "offset" (copy_offset, value = offset),
    "chunked" (dot_chunked with `threads` threads over n elements), "wide" (one wide element of
    `value` bytes per lane, as fast.copy_vectors).
    """
    if kind == "stride":
        return [(ITEM * lane * value, ITEM) for lane in range(LANES)]  # j = i * stride
    if kind == "offset":
        return [(ITEM * ((lane + value) % n), ITEM) for lane in range(LANES)]  # j = i + offset
    if kind == "chunked":
        chunk = -(-n // threads)
        return [(ITEM * lane * chunk, ITEM) for lane in range(LANES)]  # i = t * chunk
    if kind == "wide":
        return [(value * lane, value) for lane in range(LANES)]
    raise ValueError(f"kind must be 'stride', 'offset', 'chunked' or 'wide', got {kind!r}")


def sectors_touched(accesses) -> list[int]:
    """The 32-byte sectors a warp request needs (what the memory system actually moves)."""
    return sorted(
        {byte // SECTOR for start, size in accesses for byte in range(start, start + size)}
    )


def draw_warp_requests(patterns: dict, shown_sectors: int = 32):
    """One strip per pattern {label: (kind, value)}: the first sectors of memory, bytes by lane."""
    fig, ax = plt.subplots(figsize=(11, 0.62 * len(patterns) + 0.9), layout="constrained")
    colours = plt.get_cmap("viridis")
    for row, (label, (kind, value)) in enumerate(patterns.items()):
        y = len(patterns) - 1 - row
        accesses = warp_bytes(kind, value)
        for s in range(shown_sectors):
            ax.add_patch(
                mpatches.Rectangle((s * SECTOR, y), SECTOR, 0.7, fill=False, lw=0.4, ec="grey")
            )
        for lane, (start, size) in enumerate(accesses):
            if start < shown_sectors * SECTOR:
                colour = colours(lane / (LANES - 1))
                ax.add_patch(mpatches.Rectangle((start, y), size, 0.7, color=colour))
        used = sum(size for _, size in accesses)
        sectors = sectors_touched(accesses)
        lines = {s * SECTOR // LINE for s in sectors}
        ax.text(
            shown_sectors * SECTOR + 12,
            y + 0.35,
            f"{len(sectors):>3} sectors, {len(lines):>2} lines: "
            f"{100 * used / (SECTOR * len(sectors)):.0f}% of moved bytes used",
            va="center",
            fontsize=9,
            family="monospace",
        )
        ax.text(-12, y + 0.35, label, va="center", ha="right", fontsize=10)
    for line in range(shown_sectors * SECTOR // LINE + 1):
        ax.axvline(line * LINE, color="black", lw=1.2)
    ax.set_xlim(0, shown_sectors * SECTOR)
    ax.set_ylim(-0.2, len(patterns))
    ax.set_yticks([])
    ax.set_xlabel(
        f"byte address (first {shown_sectors * SECTOR} bytes; grey boxes: 32-byte "
        "sectors, black lines: 128-byte lines)"
    )
    ax.set_title(
        "One warp-wide load: which bytes each lane wants (colour = lane 0..31)",
        loc="left",
        fontsize=10,
    )
    plt.close(fig)
    return fig

"""Lesson 03's pictures: a shared tile coloured by bank, and which tiles the first blocks take."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from .banks import BANKS, bank_of, column_read, conflict_ways, tile_slot
from .fast import tile_of_block
from .textbook import TILE


def draw_tile(
    ax, tile: int = TILE, pad: int = 0, itemsize: int = 4, rows: int | None = None, shown: int = 32
) -> None:
    """Colour each slot of a shared tile by its bank; outline the column warp 0 reads at once."""
    width = tile + pad
    request = column_read(tile, pad, itemsize, rows)
    n_rows = min(tile, shown)
    banks = [
        [bank_of(tile_slot(r, c, width) * itemsize) for c in range(width)] for r in range(n_rows)
    ]
    ax.imshow(banks, cmap=plt.get_cmap("hsv", BANKS), vmin=-0.5, vmax=BANKS - 0.5, aspect="equal")
    for slot in request.elements:
        r, c = divmod(slot, width)
        if r < n_rows:
            ax.add_patch(
                Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5)
            )
    if pad:
        ax.axvline(tile - 0.5, color="white", linewidth=2)
    ways = conflict_ways(request)
    ax.set_title(
        f"{tile} x ({tile} + {pad}) tile of {itemsize}-byte elements\n"
        f"column read: {request.cost} wavefront(s), {ways:g}-way",
        fontsize=9,
    )
    ax.set_xlabel(
        "tile column (the padding column right of the white line)" if pad else "tile column"
    )
    ax.set_ylabel("tile row")


def bank_picture(tile: int = TILE, pads=(0, 1), itemsize: int = 4, rows: int | None = None):
    """Side-by-side tiles coloured by bank, with and without padding (one panel per pad)."""
    fig, axes = plt.subplots(
        1, len(pads), figsize=(4.4 * len(pads), 4.4), layout="constrained", squeeze=False
    )
    for ax, pad in zip(axes[0], pads):
        draw_tile(ax, tile, pad, itemsize, rows)
    fig.suptitle(
        "colour = bank (32 banks of 4 bytes); black boxes = the slots one warp reads together",
        fontsize=10,
    )
    plt.close(fig)
    return fig


def block_order_picture(tiles: int = 8, groups=(1, 4), first: int = 16):
    """The tiles the first blocks read and write, side by side per block order (tile_of_block)."""
    fig, axes = plt.subplots(
        1, 2 * len(groups), figsize=(3 * 2 * len(groups), 3.6), layout="constrained", squeeze=False
    )
    for col, group in enumerate(groups):
        order = np.full((2, tiles, tiles), np.nan)
        for block in range(first):
            r, c = tile_of_block(block, tiles, tiles, group)
            order[0, r, c], order[1, c, r] = block, block  # the output tile is the transposed one
        for side, what in enumerate(("reads", "writes")):
            ax = axes[0][2 * col + side]
            ax.imshow(order[side], cmap="viridis", vmin=0, vmax=first - 1)
            for (r, c), block in np.ndenumerate(order[side]):
                if not np.isnan(block):
                    ax.text(c, r, int(block), ha="center", va="center", fontsize=8, color="white")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"group = {group}: {what}", fontsize=11)
    fig.suptitle(
        f"the tiles the first {first} blocks of a {tiles} x {tiles}-tile transpose read "
        "(in a) and write (in out); number = block index",
        fontsize=12,
    )
    plt.close(fig)
    return fig

"""Lesson 03's pictures: shared tiles coloured by bank (from traces), traced beside measured, and
the block order (the blurred photograph is diagrams.show_images).

Every figure is drawn in the core's slide style (plotting.figure): it reads from the back of a room.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from .. import plotting
from ..hardware import BANKS
from ..timing import Timing
from . import banks
from .fast import tile_of_block


def draw_tile(ax, name: str, traced) -> None:
    """Colour each slot of the traced kernel's shared tile by bank; box warp 0's column read."""
    tile = banks.tile_view(traced)
    ax.imshow(
        banks.slot_banks(traced),
        cmap=plt.get_cmap("hsv", BANKS),
        vmin=-0.5,
        vmax=BANKS - 0.5,
        aspect="equal",
    )
    for _, (r, c), _, _ in banks.column_read(traced):
        ax.add_patch(
            Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5)
        )
    rows, width = tile.shape
    if width > rows:
        ax.axvline(rows - 0.5, color="white", linewidth=3)
    waves = banks.shared_line(traced, "load").per_request("wavefronts")
    ax.set_title(
        f"{name}: {rows} x {width} tile\n"
        f"column read: {waves:g} wavefront{'' if waves == 1 else 's'}, {banks.ways(traced):g}-way"
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("tile column" + (" (| padding)" if width > rows else ""))
    ax.set_ylabel("tile row")


def bank_picture(names=("tiled 32x8", "padded 32x8", "padded 16x16 (seed)")):
    """One panel per traced kernel (banks.KERNELS names): its tile coloured by bank (32 banks of
    4 bytes), black boxes on the slots warp 0 reads in one instruction."""
    fig, axes = plotting.figure(
        1, len(names), height=plotting.WIDTH / len(names) + 1.4, squeeze=False
    )
    with plotting.styled():
        for ax, name in zip(axes[0], names):
            draw_tile(ax, name, banks.trace(name))
    plt.close(fig)
    return fig


def traced_and_measured(
    measured: dict[str, Timing], *, title: str, size: str, ceiling: Timing, record_as=None
):
    """Left, each kernel's costliest line, traced; right, the GPU's bandwidth of the same kernels.

    measured: {banks.KERNELS name: Timing}, timed at `size` against `ceiling` (the copy). See
    plotting.traced_beside_measured.
    """

    def draw_traced(ax, names):
        costs = [banks.costliest(banks.trace(name)) for name in names]
        plotting.bars(
            ax,
            [cost / ideal for _, cost, ideal in costs],
            [f"{what.split(' / ')[0]}: {cost:g}, ideal {ideal:g}" for what, cost, ideal in costs],
            names=names,
            colour="tab:orange",
            log=False,
        )
        ax.set_xlabel("the costliest line, x its ideal (traced)")

    return plotting.traced_beside_measured(
        draw_traced,
        list(measured.values()),
        names=list(measured)[::-1],  # the first kernel on top
        title=title,
        size=size,
        ceiling=ceiling,
        record_as=record_as,
    )


def block_order_picture(tiles: int = 8, groups=(1, 4), first: int = 16):
    """The tiles the first blocks read and write, side by side per block order (tile_of_block)."""
    fig, axes = plotting.figure(
        1, 2 * len(groups), height=plotting.WIDTH / (2 * len(groups)) + 1.8, squeeze=False
    )
    with plotting.styled():
        for col, group in enumerate(groups):
            order = np.full((2, tiles, tiles), np.nan)
            for block in range(first):
                r, c = tile_of_block(block, tiles, tiles, group)
                order[0, r, c], order[1, c, r] = block, block  # the output tile is transposed
            for side, what in enumerate(("reads", "writes")):
                ax = axes[0][2 * col + side]
                ax.imshow(order[side], cmap="viridis", vmin=0, vmax=first - 1)
                for (r, c), block in np.ndenumerate(order[side]):
                    if not np.isnan(block):
                        ax.text(c, r, int(block), ha="center", va="center", color="white")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(f"group {group}: {what}")
        fig.suptitle(
            f"the tiles the first {first} blocks of a {tiles} x {tiles}-tile transpose read "
            "(in a) and write (in out); number = block index"
        )
    plt.close(fig)
    return fig

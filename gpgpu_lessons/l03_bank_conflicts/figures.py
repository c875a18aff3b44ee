"""Lesson 03's pictures: shared tiles coloured by bank (from traces), block order, the blur.

Every figure is plotting.WIDTH (12 inches) wide with the core's text sizes (13 pt and up), so it
reads from the back of a room.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from .. import plotting, results
from ..timing import Timing
from ..trace.model import BANKS
from . import banks
from .fast import tile_of_block

DETAIL = (0.26, 0.36, 0.53, 0.62)  # the blur picture's window (fractions): the camera's body
WHOLE_BELOW = 200  # a photograph narrower than this (the simulator's) is shown whole


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
    with plt.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(
            1,
            len(names),
            figsize=(plotting.WIDTH, plotting.WIDTH / len(names) + 1.2),
            layout="constrained",
            squeeze=False,
        )
        for ax, name in zip(axes[0], names):
            draw_tile(ax, name, banks.trace(name))
    plt.close(fig)
    return fig


def _bars(ax, names, values, colour, labels, *, log: bool, reach: float = 0.0) -> None:
    """Horizontal bars up to at least `reach`, labelled inside the frame: beside a short bar,
    inside a long one."""
    ax.barh(range(len(names)), values, color=colour)
    top = max(max(values), reach)
    low, high = (min(values) / 2, top * 30) if log else (0, top * 1.25)
    ax.set_xlim(low, high)
    if log:
        ax.set_xscale("log")
    for y, (value, label) in enumerate(zip(values, labels)):
        reached = np.log(value / low) / np.log(high / low) if log else value / high
        inside = reached > 0.6
        ax.annotate(
            f" {label} " if inside else f" {label}",
            (value, y),
            va="center",
            ha="right" if inside else "left",
            color="white" if inside else "black",
        )


def traced_and_measured(
    measured: dict[str, Timing], *, title: str, size: str, ceiling: Timing, record_as=None
):
    """Left, each kernel's costliest line, traced; right, the GPU's bandwidth of the same kernels.

    measured: {banks.KERNELS name: Timing}, timed at `size` against `ceiling` (the copy). The
    right half is this run on a GPU, the recorded GPU run in the simulator (results.experiment);
    the left half is the tracer's, the same on any machine.
    """
    data = {
        "kind": "variants",
        "title": title,
        "size": size,
        "timings": [t.as_dict() for t in measured.values()],
        "ceiling": ceiling.as_dict(),
    }
    shown = results.experiment(record_as, data)
    names = list(measured)[::-1]  # the first kernel on top
    costs = [banks.costliest(banks.trace(name)) for name in names]
    with plt.rc_context(plotting.STYLE):
        fig, (left, right) = plt.subplots(
            1, 2, figsize=(plotting.WIDTH, 0.5 * len(names) + 2.0), layout="constrained"
        )
        _bars(
            left,
            names,
            [cost / ideal for _, cost, ideal in costs],
            "tab:orange",
            [f"{what.split(' / ')[0]}: {cost:g}, ideal {ideal:g}" for what, cost, ideal in costs],
            log=False,
        )
        left.set_yticks(range(len(names)), names, fontsize=13)
        left.set_xlabel("the costliest line, x its ideal (traced)")
        timings = {t.name: t for t in shown.timings()}
        drawn = [timings.get(name) for name in names]
        right.set_yticks(range(len(names)), [""] * len(names))
        if any(t is None or t.simulated or t.gbs is None for t in drawn):
            right.text(
                0.5,
                0.5,
                "no GPU run of these kernels\nrecorded yet",
                ha="center",
                va="center",
                transform=right.transAxes,
                color="dimgrey",
            )
            right.set_xticks([])
        else:
            roof = Timing.from_dict(shown.data["ceiling"])
            gbs = [t.gbs for t in drawn]
            _bars(
                right,
                names,
                gbs,
                "tab:green",
                [f"{g:,.0f} GB/s ({100 * g / roof.gbs:.0f}%)" for g in gbs],
                log=max(gbs) / min(gbs) > plotting.WIDE_RANGE,
                reach=roof.gbs,
            )
            right.axvline(roof.gbs, color="black", linestyle="--", linewidth=1)
            right.set_xlabel(f"GB/s on the GPU (dashed: {roof.name})")
        left.set_title(
            plotting.heading(shown.data.get("title", title), shown.data.get("size"), shown.label),
            loc="left",
        )
    plt.close(fig)
    return fig


def block_order_picture(tiles: int = 8, groups=(1, 4), first: int = 16):
    """The tiles the first blocks read and write, side by side per block order (tile_of_block)."""
    with plt.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(
            1,
            2 * len(groups),
            figsize=(plotting.WIDTH, plotting.WIDTH / (2 * len(groups)) + 1.4),
            layout="constrained",
            squeeze=False,
        )
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


def detail(shape: tuple) -> tuple[slice, slice]:
    """The window of a photograph the blur picture zooms into (the whole of a small one)."""
    h, w = shape
    if w < WHOLE_BELOW:
        return slice(0, h), slice(0, w)
    top, bottom, left, right = DETAIL
    return slice(int(top * h), int(bottom * h)), slice(int(left * w), int(right * w))


def blur_picture(photo: np.ndarray, blurred: np.ndarray):
    """Input and blurred output side by side, zoomed into a detailed window, and what changed."""
    rows, cols = detail(photo.shape)
    change = np.abs(blurred - photo)[rows, cols]
    with plt.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(1, 3, figsize=(plotting.WIDTH, 4.2), layout="constrained")
        gray = dict(cmap="gray", vmin=0, vmax=1)
        panels = (
            (photo[rows, cols], "input", gray),
            (blurred[rows, cols], "blurred (rows, transpose x 2)", gray),
            (change, "|blurred - input|", dict(cmap="magma", vmin=0, vmax=max(change.max(), 1e-6))),
        )
        for ax, (picture, title, style) in zip(axes, panels):
            ax.imshow(picture, interpolation="nearest", **style)
            ax.set_title(title)
            ax.axis("off")
        h, w = photo.shape
        where = "the whole photograph" if change.shape == photo.shape else "a zoom"
        fig.suptitle(
            f"{where}: rows {rows.start}-{rows.stop} and columns {cols.start}-{cols.stop} "
            f"of {h} x {w} pixels"
        )
    plt.close(fig)
    return fig

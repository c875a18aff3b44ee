"""Lesson 04's pictures: the filters, and what a warp reads from constant memory, traced from the
lesson's kernels (`tracing`) beside what it costs on the GPU (photographs: diagrams.show_images).

Every figure is drawn in the core's slide style (plotting.figure): it reads from the back of a room.
"""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import numpy as np

from .. import plotting
from ..formats import format_ms
from ..hardware import WARP_SIZE as WARP

NOT_MEASURED = plotting.NOT_MEASURED


def filters(named: dict[str, np.ndarray]):
    """The filters as heat maps with their values written in."""
    fig, axes = plotting.figure(1, len(named), height=4.8)
    with plotting.styled():
        for ax, (name, w) in zip(np.atleast_1d(axes), named.items()):
            reach = float(np.abs(w).max())
            ax.imshow(w, cmap="coolwarm", vmin=-reach, vmax=reach)
            for (i, j), v in np.ndenumerate(w):
                ax.text(j, i, f"{v:.2g}", ha="center", va="center")
            ax.set_title(name)
            ax.set_xticks([])
            ax.set_yticks([])
    plt.close(fig)
    return fig


def _reads(count: int) -> str:
    return "1 address: one read, broadcast" if count == 1 else f"{count} addresses: {count} reads"


def warp_reads(rows: dict):
    """One strip per {label: (tracing.Traced, request)}: the entry each lane of that warp reads.

    Lanes on top, the whole array (filter or table) below, a line from each lane to its entry;
    the title counts the distinct addresses, which constant memory reads one after another.
    """
    fig, axes = plotting.figure(len(rows), 1, height=1.5 * len(rows) + 0.4)
    with plotting.styled():
        for ax, (label, (traced, request)) in zip(np.atleast_1d(axes), rows.items()):
            entries, size = traced.entries(request), traced.size
            x_of = [e * (WARP - 1) / max(size - 1, 1) for e in entries]
            for lane, x in enumerate(x_of):
                ax.plot([lane, x], [1, 0], color="tab:grey", linewidth=0.8)
            ax.scatter(range(len(entries)), [1] * len(entries), s=30, color="tab:blue", zorder=3)
            ax.plot([0, WARP - 1], [0, 0], color="lightgrey", linewidth=6, solid_capstyle="butt")
            ax.scatter(
                sorted(set(x_of)), [0] * len(set(x_of)), s=60, marker="s", color="tab:red", zorder=3
            )
            ax.set_title(f"{label}: {_reads(len(set(entries)))}", loc="left")
            ax.set_yticks([0, 1], [f"{traced.array} ({size} entries)", "lanes 0-31"])
            ax.set_xticks([])
            ax.set_ylim(-0.3, 1.3)
            for side in ("top", "right", "bottom"):
                ax.spines[side].set_visible(False)
    plt.close(fig)
    return fig


def _ratio_panel(ax, names: list, timings: dict, ceiling) -> bool:
    """Constant-memory time ÷ global-memory time per row; False when no GPU run is at hand."""
    pairs = [(timings.get(f"{n} · global"), timings.get(f"{n} · constant")) for n in names]
    if any(t is None or t.simulated for pair in pairs for t in pair):
        return False
    ratios = [c.median_ms / g.median_ms for g, c in pairs]
    labels = [
        f"{r:.2f}× ({format_ms(c.median_ms)} vs {format_ms(g.median_ms)})"
        for r, (g, c) in zip(ratios, pairs)
    ]
    plotting.bars(ax, ratios, labels, colour="tab:green", log=False, reach=1)
    ax.axvline(1, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("GPU: time with constant ÷ with global\n(dashed: the same time)")
    return True


def broadcast_vs_serialised(rows: dict, *, title: str, size: str, record_as: str | None = None):
    """Left, the traced reads per warp request of a constant array; right, the GPU's time ratio.

    rows: {label: (tracing.Traced of the constant-memory kernel, Timing of the global-memory
    kernel, Timing of the constant-memory kernel)}, timed at `size`. See
    plotting.traced_beside_measured.
    """

    def draw_traced(ax, names):
        reads = [rows[n][0].addresses_per_request for n in names]
        labels = [f"{r:.1f}" for r in reads]
        plotting.bars(ax, reads, labels, names=names, colour="tab:orange", log=False, reach=WARP)
        ax.axvline(1, color="black", linestyle="--", linewidth=1)
        ax.set_xlabel("traced: constant reads per warp request\n(dashed: 1, a broadcast)")

    return plotting.traced_beside_measured(
        draw_traced,
        [
            dataclasses.replace(t, name=f"{label} · {memory}")
            for label, (_, *pair) in rows.items()
            for memory, t in zip(("global", "constant"), pair)
        ],
        names=list(rows)[::-1],
        title=title,
        size=size,
        draw_measured=_ratio_panel,
        record_as=record_as,
    )

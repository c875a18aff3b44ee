"""Lesson 04's pictures: the filters, the photograph filtered, and what a warp reads from constant
memory, traced from the lesson's kernels (`tracing`) beside what it costs on the GPU.

Every figure is plotting.WIDTH inches wide with plotting.STYLE's text (13 pt and more), so that it
reads from the back of a room.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .. import notebook, plotting, results
from ..trace.model import WARP

NOT_MEASURED = "traced here; the GPU's times appear once a GPU run is recorded"


def filters(named: dict[str, np.ndarray]):
    """The filters as heat maps with their values written in."""
    with plt.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(1, len(named), figsize=(plotting.WIDTH, 4.4), layout="constrained")
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


def photographs(shown: dict[str, np.ndarray]):
    """Grey images side by side (0 black, 255 white), each titled with its name and size."""
    with plt.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(1, len(shown), figsize=(plotting.WIDTH, 4.6), layout="constrained")
        for ax, (name, picture) in zip(np.atleast_1d(axes), shown.items()):
            ax.imshow(picture, cmap="gray", vmin=0, vmax=255)
            ax.set_title(f"{name}\n{picture.shape[1]} × {picture.shape[0]}")
            ax.axis("off")
    plt.close(fig)
    return fig


def _reads(count: int) -> str:
    return "1 address: one read, broadcast" if count == 1 else f"{count} addresses: {count} reads"


def warp_reads(rows: dict):
    """One strip per {label: (tracing.Traced, request)}: the entry each lane of that warp reads.

    Lanes on top, the whole array (filter or table) below, a line from each lane to its entry;
    the title counts the distinct addresses, which constant memory reads one after another.
    """
    with plt.rc_context(plotting.STYLE):
        fig, axes = plt.subplots(
            len(rows), 1, figsize=(plotting.WIDTH, 1.3 * len(rows) + 0.3), layout="constrained"
        )
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


def _bars(ax, names, values, colour, labels, reach) -> None:
    """Horizontal bars with a label at each bar's end, inside a frame that reaches `reach`."""
    ax.barh(names, values, color=colour)
    ax.set_xlim(0, max(max(values), reach) * 1.45)
    for y, (v, label) in enumerate(zip(values, labels)):
        ax.annotate(f" {label}", (v, y), va="center")


def _measured_panel(ax, shown: results.Shown, names: list) -> bool:
    """Constant-memory time ÷ global-memory time per row; False when no GPU run is at hand."""
    timings = {t.name: t for t in shown.timings()}
    pairs = [(timings.get(f"{n} · global"), timings.get(f"{n} · constant")) for n in names]
    ax.set_yticks(range(len(names)), [""] * len(names))
    if any(t is None or t.simulated for pair in pairs for t in pair):
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
    ratios = [c.median_ms / g.median_ms for g, c in pairs]
    labels = [
        f"{r:.2f}× ({notebook.duration(c.median_ms)} vs {notebook.duration(g.median_ms)})"
        for r, (g, c) in zip(ratios, pairs)
    ]
    _bars(ax, names, ratios, "tab:green", labels, 1)
    ax.axvline(1, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("GPU: time with constant ÷ with global\n(dashed: the same time)")
    return True


def broadcast_vs_serialised(rows: dict, *, title: str, size: str, record_as: str | None = None):
    """Left, the traced reads per warp request of a constant array; right, the GPU's time ratio.

    rows: {label: (tracing.Traced of the constant-memory kernel, Timing of the global-memory
    kernel, Timing of the constant-memory kernel)}, timed at `size`. The measured half is this
    run's on a GPU, the recorded GPU run's in the simulator (`results.experiment`); the traced
    half is the same on any machine.
    """
    data = {
        "kind": "variants",
        "title": title,
        "size": size,
        "timings": [
            {**t.as_dict(), "name": f"{label} · {memory}"}
            for label, (_, *pair) in rows.items()
            for memory, t in zip(("global", "constant"), pair)
        ],
        "ceiling": None,
    }
    shown = results.experiment(record_as, data)
    names = list(rows)[::-1]
    with plt.rc_context(plotting.STYLE):
        fig, (left, right) = plt.subplots(
            1, 2, figsize=(plotting.WIDTH, 0.6 * len(names) + 2.3), layout="constrained"
        )
        reads = [rows[n][0].addresses_per_request for n in names]
        _bars(left, names, reads, "tab:orange", [f"{r:.1f}" for r in reads], WARP)
        left.axvline(1, color="black", linestyle="--", linewidth=1)
        left.set_xlabel("traced: constant reads per warp request\n(dashed: 1, a broadcast)")
        where = shown.label if _measured_panel(right, shown, names) else NOT_MEASURED
        heading = plotting.heading(shown.data.get("title", title), shown.data.get("size"), where)
        left.set_title(heading, loc="left")
    plt.close(fig)
    return fig

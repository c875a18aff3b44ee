"""Lesson 00's pictures, drawn with matplotlib (no measurements in them)."""

from __future__ import annotations

import matplotlib.pyplot as plt


def launch_timeline():
    """Host and GPU timelines of `launch; stop the clock` with and without a synchronize."""
    fig, ax = plt.subplots(figsize=(9, 2.8), layout="constrained")
    rows = {"host (Python)": 1.0, "GPU": 0.0}
    ax.broken_barh([(0, 0.6)], (0.75, 0.5), color="tab:blue")
    ax.text(0.3, 1.0, "launch", ha="center", va="center", color="white", fontsize=9)
    ax.broken_barh([(0.6, 6.4)], (0.75, 0.5), color="lightgrey")
    ax.text(3.8, 1.0, "cuda.synchronize(): waits", ha="center", va="center", fontsize=9)
    ax.broken_barh([(0.9, 6.0)], (-0.25, 0.5), color="tab:green")
    ax.text(3.9, 0.0, "kernel runs", ha="center", va="center", color="white", fontsize=9)
    for x, label, colour in (
        (0.6, "clock stops here\nwithout synchronize", "tab:red"),
        (7.0, "clock stops here\nwith synchronize / end event", "black"),
    ):
        ax.axvline(x, color=colour, linestyle="--", linewidth=1)
        ax.text(x + 0.05, 1.55, label, color=colour, fontsize=8, va="bottom")
    ax.set_yticks(list(rows.values()), list(rows.keys()))
    ax.set_xticks([])
    ax.set_xlabel("time")
    ax.set_ylim(-0.5, 2.3)
    ax.set_xlim(-0.2, 9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    plt.close(fig)
    return fig

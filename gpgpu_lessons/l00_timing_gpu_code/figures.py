"""Lesson 00's pictures, drawn with matplotlib (no measurements in them)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .. import plotting


def launch_timeline():
    """Host and GPU timelines of `launch; stop the clock` with and without a synchronize."""
    fig, ax = plotting.figure(height=4.0)
    with plotting.styled():
        ax.broken_barh([(0, 0.9)], (0.75, 0.5), color="tab:blue")
        ax.text(0.45, 1.0, "launch", ha="center", va="center", color="white")
        ax.broken_barh([(0.9, 6.1)], (0.75, 0.5), color="lightgrey")
        ax.text(3.95, 1.0, "cuda.synchronize(): waits", ha="center", va="center")
        ax.broken_barh([(1.2, 5.7)], (-0.25, 0.5), color="tab:green")
        ax.text(4.05, 0.0, "kernel runs", ha="center", va="center", color="white")
        for x, label, colour in (
            (0.9, "clock stops here\nwithout synchronize", "tab:red"),
            (7.0, "clock stops here with\nsynchronize / end event", "black"),
        ):
            ax.axvline(x, color=colour, linestyle="--", linewidth=1.5)
            ax.text(x + 0.08, 1.45, label, color=colour, va="bottom")
        ax.set_yticks([1.0, 0.0], ["host (Python)", "GPU"])
        ax.set_xticks([])
        ax.set_xlabel("time")
        ax.set_ylim(-0.5, 2.3)
        ax.set_xlim(-0.2, 9.4)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    plt.close(fig)
    return fig

"""Lesson 05's pictures: which thread adds which element in each tree of the ladder."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .. import plotting

TREE_ORDER = ("interleaved, divergent", "interleaved, bank conflicts", "sequential addressing")


def tree_pairs(variant: str, threads: int = 8) -> list[list[tuple[int, int, int]]]:
    """(thread, destination, source) of every addition a block tree makes, one list per step.

    From the index formulas of the textbook kernels, for a block of `threads` (a power of two).
    """
    if variant not in TREE_ORDER:
        raise ValueError(f"tree_pairs draws the trees {list(TREE_ORDER)}, got {variant!r}")
    if (
        not isinstance(threads, int)
        or isinstance(threads, bool)
        or threads < 2
        or threads & (threads - 1)
    ):
        raise ValueError(f"threads must be a power of two >= 2, got {threads!r}")
    steps = []
    if variant == "sequential addressing":  # tid < s adds tid + s
        s = threads // 2
        while s >= 1:
            steps.append([(tid, tid, tid + s) for tid in range(s)])
            s //= 2
        return steps
    s = 1
    while s < threads:
        if variant == "interleaved, divergent":  # tid % 2s == 0 adds tid + s
            steps.append([(tid, tid, tid + s) for tid in range(0, threads, 2 * s)])
        else:  # thread tid adds at 2*s*tid
            steps.append([(tid, 2 * s * tid, 2 * s * tid + s) for tid in range(threads // (2 * s))])
        s *= 2
    return steps


def draw_tree(ax, variant: str, threads: int = 8) -> None:
    """Draw one tree on a matplotlib Axes: a row per step, an arrow per addition, tN its thread."""
    steps = tree_pairs(variant, threads)
    for level, adds in enumerate(steps):
        y = -level
        ax.scatter(range(threads), [y] * threads, s=50, color="lightgray", zorder=1)
        for thread, dst, src in adds:
            ax.annotate(
                "",
                xy=(dst, y - 1),
                xytext=(src, y),
                arrowprops=dict(arrowstyle="->", color="tab:red", lw=1.5),
            )
            ax.plot([dst, dst], [y, y - 1], color="tab:blue", lw=1.5)
            ax.text(dst - 0.1, y - 0.5, f"t{thread}", ha="right", color="tab:purple")
    ax.scatter(range(threads), [-len(steps)] * threads, s=50, color="lightgray")
    ax.scatter([0], [-len(steps)], s=90, color="tab:green", zorder=3)
    ax.set_title(variant)
    labels = [f"step {k}" for k in range(len(steps))] + ["sum"]
    ax.set_yticks([-k for k in range(len(steps) + 1)], labels)
    ax.set_xticks(range(threads))
    ax.set_xlim(-0.9, threads - 0.5)
    ax.set_xlabel("shared-memory index")


def trees(threads: int = 8):
    """The three trees side by side, as a matplotlib Figure (closed: a cell shows it once)."""
    fig, axes = plotting.figure(1, 3, height=5.0, sharey=True)
    with plotting.styled():
        for ax, variant in zip(axes, TREE_ORDER, strict=True):
            draw_tree(ax, variant, threads)
        fig.suptitle(
            f"Adding {threads} values in shared memory: an arrow adds its tail into its head; "
            "tN: the thread that adds"
        )
    plt.close(fig)
    return fig

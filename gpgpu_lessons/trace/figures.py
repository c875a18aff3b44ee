"""Which sector (global, local), bank (shared) or address (constant) each lane of a warp hits.

One picture per warp request of a traced kernel: the 32 lanes on top, what they touch below,
a line from each lane to its target. Banks are coloured as in lesson 03's tiles (hsv, 32 colours);
a bank that must deliver several words is labelled with how many (the n of an n-way conflict).
"""

from __future__ import annotations

from collections import Counter

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from .. import plotting
from .model import BANKS, SECTOR_BYTES, WARP

LABELLED_SECTORS = 8  # more sectors than this: only the first and last offsets are written
_UNITS = {"global": "sectors", "local": "sectors", "shared": "wavefronts", "constant": "addresses"}


def _targets(trace, line: int, row, lanes):
    """(label of the bottom row, target per lane, ordered targets, their labels)."""
    if row.space == "shared":
        words = {}
        for _, _, _, address, _, bank in lanes:
            words.setdefault(bank, set()).add(address // 4)
        labels = [f"x{len(words[b])}" if len(words.get(b, ())) > 1 else "" for b in range(BANKS)]
        return "bank", [lane[5] for lane in lanes], list(range(BANKS)), labels
    if row.space == "constant":
        addresses = sorted({lane[3] for lane in lanes})
        return "address", [lane[3] for lane in lanes], addresses, [str(a) for a in addresses]
    sectors = sorted({lane[4] for lane in lanes})
    first = sectors[0] if sectors else 0
    labels = [f"+{(s - first) * SECTOR_BYTES}" for s in sectors]
    if len(sectors) > LABELLED_SECTORS:  # too narrow for every offset: the ends only
        labels = [labels[0]] + [""] * (len(labels) - 2) + [labels[-1]]
    return "sector", [lane[4] for lane in lanes], sectors, labels


def request_picture(
    trace, line: int, *, space=None, op=None, block=None, warp: int = 0, occurrence: int = 0
):
    """The lanes of one warp request at `line` and the sectors/banks/addresses they hit."""
    row = trace.line(line, space, op)
    lanes = trace.lanes(
        line, space=row.space, op=row.op, block=block, warp=warp, occurrence=occurrence
    )
    kind, per_lane, targets, labels = _targets(trace, line, row, lanes)
    width = WARP / max(len(targets), 1)
    x_of = {t: (k + 0.5) * width for k, t in enumerate(targets)}
    colours = plt.get_cmap("hsv", BANKS)
    fig, ax = plotting.figure(height=4.6)
    font = plotting.MIN_FONT_PT
    for (lane, *_), target in zip(lanes, per_lane):
        colour = colours(target % BANKS) if kind == "bank" else "tab:blue"
        ax.plot([lane + 0.5, x_of[target]], [1.0, 0.35], color=colour, linewidth=1)
        ax.add_patch(Rectangle((lane, 1.0), 1, 0.3, facecolor="#deebf7", edgecolor="black"))
        ax.text(lane + 0.5, 1.15, str(lane), ha="center", va="center", fontsize=font)
    for k, (target, label) in enumerate(zip(targets, labels)):
        colour = colours(target % BANKS) if kind == "bank" else "#fdd0a2"
        ax.add_patch(Rectangle((k * width, 0.05), width, 0.3, facecolor=colour, edgecolor="black"))
        ends = kind == "sector" and len(targets) > LABELLED_SECTORS and k in (0, len(targets) - 1)
        ax.text(  # the first and last of many sectors: aligned to the strip's ends
            (k + (0.1 if k == 0 else 0.9)) * width if ends else (k + 0.5) * width,
            0.2,
            str(target) if kind == "bank" else label,
            ha=("left" if k == 0 else "right") if ends else "center",
            va="center",
            fontsize=font,
        )
        if kind == "bank" and label:  # n different words wanted from one bank: n-way
            ax.text(
                (k + 0.5) * width,
                0.4,
                label,
                ha="center",
                va="bottom",
                fontsize=font,
                color="black",
                weight="bold",
            )
    unit = _UNITS[row.space]
    cost = Counter(per_lane).most_common(1)[0][1] if kind == "address" else None
    per = row.per_request(unit)
    ideal = {
        "sectors": row.per_request("ideal_sectors"),
        "wavefronts": row.per_request("ideal_wavefronts"),
    }.get(unit, 1.0)
    shared = f", {cost} lanes share one address" if cost and cost > 1 else ""
    ax.set_title(
        f"line {line}: {row.space} {row.op} of {', '.join(row.arrays)}, warp {warp}: "
        f"{len(lanes)} lanes -> {len(set(per_lane))} {kind}(s)\n{per:.1f} {unit} per "
        f"request (ideal {ideal:.1f}): {row.verdict}{shared}",
        fontsize=font + 1,
        loc="left",
    )
    ax.set_xlim(-0.2, WARP + 0.2)
    ax.set_ylim(0, 1.4)
    ax.set_yticks([0.2, 1.15], [kind, "lane"], fontsize=font)
    if kind == "sector" and len(targets) > LABELLED_SECTORS:
        ax.set_xlabel(
            f"{len(targets)} sectors: byte offsets of the first and the last", fontsize=font
        )
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    plt.close(fig)
    return fig

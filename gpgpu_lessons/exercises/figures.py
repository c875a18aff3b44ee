"""Small pictures for the exercises' statements (matplotlib Figures, no pyplot state)."""

from __future__ import annotations


def _figure(width, height):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=90, layout="constrained")


def chunked_vs_interleaved():
    """Which elements lanes 0-3 read first: chunks (32 sectors per warp) or interleaved (4)."""
    figure = _figure(7.5, 2.2)
    for row, (title, first) in enumerate(
        (
            ("chunked: lane t starts at t * chunk", lambda t: 8 * t),
            ("interleaved: lane t starts at t", lambda t: t),
        )
    ):
        axes = figure.add_subplot(2, 1, row + 1)
        axes.set_xlim(0, 32)
        axes.set_ylim(0, 1)
        axes.axis("off")
        axes.set_title(title, fontsize=9, loc="left")
        for k in range(32):
            axes.add_patch(_box(k, "#eeeeee"))
        for lane, color in zip(range(4), ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")):
            axes.add_patch(_box(first(lane), color))
            axes.text(
                first(lane) + 0.5,
                0.5,
                str(lane),
                ha="center",
                va="center",
                fontsize=8,
                color="white",
            )
    return figure


def _box(x, color):
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.05, 0.1), 0.9, 0.8, color=color)


def rgb_bytes():
    """The bytes of an RGB row: one thread per pixel (3 bytes apart) vs one thread per byte."""
    figure = _figure(7.5, 2.2)
    colors = ("#d62728", "#2ca02c", "#1f77b4")
    for row, (title, lane_of) in enumerate(
        (
            (
                "one thread per pixel: lane t reads bytes 3t, 3t+1, 3t+2 (three loads)",
                lambda byte: byte // 3 if byte % 3 == 0 else None,
            ),
            ("one thread per byte: lane t reads byte t (one load, one sector)", lambda byte: byte),
        )
    ):
        axes = figure.add_subplot(2, 1, row + 1)
        axes.set_xlim(0, 32)
        axes.set_ylim(0, 1)
        axes.axis("off")
        axes.set_title(title, fontsize=9, loc="left")
        for byte in range(32):
            axes.add_patch(_box(byte, colors[byte % 3]))
            lane = lane_of(byte)
            if lane is not None:
                axes.text(
                    byte + 0.5, 0.5, str(lane), ha="center", va="center", fontsize=7, color="white"
                )
    return figure


def _strip(axes, cells, title, labels=None, colors=None):
    """A row of `cells` boxes with optional labels and colours, titled."""
    axes.set_xlim(0, cells)
    axes.set_ylim(0, 1)
    axes.axis("off")
    axes.set_title(title, fontsize=9, loc="left")
    for k in range(cells):
        axes.add_patch(_box(k, (colors or {}).get(k, "#eeeeee")))
        if labels and k in labels:
            axes.text(k + 0.5, 0.5, labels[k], ha="center", va="center", fontsize=7)


def halo():
    """A block's shared tile: its 64 elements and one halo element on each side."""
    figure = _figure(7.5, 1.3)
    axes = figure.add_subplot()
    colors = {0: "#ff7f0e", 17: "#ff7f0e", **{k: "#9ecae1" for k in range(1, 17)}}
    labels = {0: "a[s-1]", 1: "a[s]", 16: "…", 17: "a[s+m]"}
    _strip(
        axes,
        18,
        "tile of a block starting at s: halo (orange), its own elements (blue); "
        "thread t computes from tile[t], tile[t+1], tile[t+2]",
        labels,
        colors,
    )
    return figure


def scan_steps():
    """Hillis-Steele: which element each thread adds at d = 1, 2, 4 (8 threads shown)."""
    figure = _figure(7.5, 2.4)
    axes = figure.add_subplot()
    axes.set_xlim(-0.5, 7.5)
    axes.set_ylim(-0.5, 3.5)
    axes.axis("off")
    for level, d in enumerate((0, 1, 2, 4)):
        y = 3 - level
        for t in range(8):
            axes.add_patch(_circle(t, y))
            if d and t >= d:
                axes.annotate(
                    "",
                    xy=(t, y + 0.2),
                    xytext=(t - d, y + 0.8),
                    arrowprops={"arrowstyle": "->", "color": "#1f77b4", "lw": 0.8},
                )
        axes.text(-0.45, y, "input" if not d else f"d = {d}", fontsize=8, va="center", ha="right")
    axes.set_title(
        "each arrow: thread t reads t - d (before anyone writes: a barrier between)",
        fontsize=9,
        loc="left",
    )
    return figure


def _circle(x, y):
    from matplotlib.patches import Circle

    return Circle((x, y), 0.18, color="#9ecae1")


def padded_banks():
    """Banks of one tile column: width 32 (all bank 0) vs width 33 (banks 0, 1, 2, ...)."""
    figure = _figure(7.5, 2.0)
    for row, width in enumerate((32, 33)):
        axes = figure.add_subplot(2, 1, row + 1)
        banks = [(r * width) % 32 for r in range(32)]
        colors = {r: ("#d62728" if banks.count(banks[r]) > 1 else "#2ca02c") for r in range(32)}
        _strip(
            axes,
            32,
            f"tile[r, 0] for r = 0..31, rows of {width} words: its bank",
            {r: str(banks[r]) for r in range(32)},
            colors,
        )
    return figure


def pair_layouts():
    """Banks of x for 32 lanes: pairs side by side (2 lanes per bank) vs all x together."""
    figure = _figure(7.5, 2.0)
    for row, (title, word) in enumerate(
        (("pts[2t]: lane t at word 2t", lambda t: 2 * t), ("xs[t]: lane t at word t", lambda t: t))
    ):
        axes = figure.add_subplot(2, 1, row + 1)
        banks = [word(t) % 32 for t in range(32)]
        colors = {t: ("#d62728" if banks.count(banks[t]) > 1 else "#2ca02c") for t in range(32)}
        _strip(
            axes, 32, f"{title}: bank of each lane", {t: str(banks[t]) for t in range(32)}, colors
        )
    return figure


def reduction_addressing():
    """Which words the 32 lanes of a warp read at the first step: interleaved vs sequential."""
    figure = _figure(7.5, 2.0)
    for row, (title, word) in enumerate(
        (
            (
                "interleaved, s = 1: lane t reads buf[2t] (banks 0, 2, ..., 30: 2 lanes each)",
                lambda t: 2 * t,
            ),
            ("sequential, s = 16: lane t < 16 reads buf[t] (one bank each)", lambda t: t),
        )
    ):
        axes = figure.add_subplot(2, 1, row + 1)
        banks = [word(t) % 32 for t in range(32 if row == 0 else 16)]
        colors = {
            t: ("#d62728" if banks.count(banks[t]) > 1 else "#2ca02c") for t in range(len(banks))
        }
        _strip(axes, 32, title, {t: str(banks[t]) for t in range(len(banks))}, colors)
    return figure


def matmul_tiles():
    """The tiles a block loads: a row band of a, a column band of b, one tile of c."""
    from matplotlib.patches import Rectangle

    figure = _figure(7.0, 2.4)
    for k, (name, w, h, band) in enumerate(
        (
            ("a (m x k)", 5, 3, ("row", 1)),
            ("b (k x n)", 3, 5, ("column", 1)),
            ("c (m x n)", 3, 3, ("tile", (1, 1))),
        )
    ):
        axes = figure.add_subplot(1, 3, k + 1)
        axes.set_xlim(0, w)
        axes.set_ylim(h, 0)
        axes.set_aspect("equal")
        axes.set_xticks([])
        axes.set_yticks([])
        axes.set_title(name, fontsize=9)
        for y in range(h):
            for x in range(w):
                shaded = (
                    (band[0] == "row" and y == band[1])
                    or (band[0] == "column" and x == band[1])
                    or (band[0] == "tile" and (y, x) == band[1])
                )
                axes.add_patch(
                    Rectangle(
                        (x + 0.05, y + 0.05), 0.9, 0.9, color="#9ecae1" if shaded else "#eeeeee"
                    )
                )
    figure.suptitle(
        "block (1, 1) walks a's tile row and b's tile column, 16 x 16 at a time", fontsize=9
    )
    return figure


def shuffle_tree():
    """shfl_down_sync with offsets 4, 2, 1 on 8 lanes: lane 0 ends with the sum."""
    figure = _figure(7.5, 2.2)
    axes = figure.add_subplot()
    axes.set_xlim(-0.5, 7.5)
    axes.set_ylim(-0.5, 3.5)
    axes.axis("off")
    for level, offset in enumerate((0, 4, 2, 1)):
        y = 3 - level
        for lane in range(8):
            axes.add_patch(_circle(lane, y))
            if offset and lane + offset < 8:
                axes.annotate(
                    "",
                    xy=(lane, y + 0.2),
                    xytext=(lane + offset, y + 0.8),
                    arrowprops={"arrowstyle": "->", "color": "#1f77b4", "lw": 0.8},
                )
        axes.text(
            -0.45,
            y,
            "values" if not offset else f"offset {offset}",
            fontsize=8,
            va="center",
            ha="right",
        )
    axes.set_title(
        "value += shfl_down_sync(mask, value, offset), 8 of 32 lanes shown "
        "(a warp uses 16, 8, 4, 2, 1)",
        fontsize=9,
        loc="left",
    )
    return figure

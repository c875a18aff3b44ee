"""The standard timing figures: variants side by side, and sweeps over a parameter.

Each function returns a matplotlib Figure (end a notebook cell with it to show it). Give every
figure the problem `size` it measured ("2^28 float32", "8192 x 8192 float32"): the title shows
it. With ``record_as="NN_lesson/experiment"`` a GPU run records the data with its title and
size. On a GPU the figure shows this run. In the simulator the figure shows the recorded GPU
run, titled with the size and device of that run, never the simulator's: the emulation's host
times say nothing about GPUs, so they are drawn only when no GPU result was recorded.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import results
from .timing import Timing

SIMULATOR_NOTE = results.SIMULATOR_LABEL
SIMULATOR_SHOWS_RECORDED = (
    "this machine runs the simulator: every variant ran and was checked; "
    "the times above are the recorded GPU run's"
)
WIDE_RANGE = 30  # values spanning more than this factor get a log axis
STYLE = {
    "font.size": 13,
    "axes.titlesize": 14,
    "axes.labelsize": 13,
    "legend.fontsize": 11,
    "xtick.labelsize": 12,
    "ytick.labelsize": 12,
}
WIDTH = 12  # inches: the figure spans most of a 1280-pixel slide


def heading(title: str, size: str | None, where: str) -> str:
    """A figure title: what was measured, at which size, and where (GPU name or recorded run)."""
    return f"{title}{f' · {size}' if size else ''}\n{where}"


def _as_timings(items) -> list[Timing]:
    """Accept Timing objects or their stored dictionaries."""
    return [t if isinstance(t, Timing) else Timing.from_dict(t) for t in items]


def _wide(values) -> bool:
    """True when positive values span more than WIDE_RANGE: draw them on a log axis."""
    positive = [v for v in values if v and v > 0]
    return bool(positive) and max(positive) / min(positive) > WIDE_RANGE


def _bars(ax, names, values, colour, label_format) -> None:
    """Horizontal bars with their values written inside the frame (a log axis for wide ranges)."""
    ax.barh(names, values, color=colour)
    top = max(values)
    if _wide(values):
        ax.set_xscale("log")
        ax.set_xlim(min(v for v in values if v > 0) / 2, top * 8)
    else:
        ax.set_xlim(0, top * 1.3)
    for y, v in enumerate(values):
        ax.annotate(f" {label_format(v)}", (v, y), va="center")


def percent(value: float) -> str:
    """A percentage label: '97%', '4.2%', '0.31%' (two significant digits below 10)."""
    return f"{value:,.0f}%" if value >= 10 else f"{value:.2g}%"


def _has_bandwidth(timings: list[Timing]) -> bool:
    """True when every timing knows its bytes and was measured on a GPU (a bandwidth panel)."""
    return all(t.gbs is not None for t in timings) and not timings[0].simulated


def _draw_variants(axes, timings: list[Timing], ceiling: Timing | None) -> None:
    """Time bars on the left axis; bandwidth (% of the copy ceiling) bars on the right."""
    names = [t.name for t in timings][::-1]
    left, right = axes
    _bars(left, names, [t.median_ms for t in timings][::-1], "tab:blue", lambda v: f"{v:.3g}")
    left.set_xlabel("median time per launch (ms)")
    if right is None:
        return
    if ceiling is not None:
        values = [100 * t.gbs / ceiling.gbs for t in timings][::-1]
        right.set_xlabel(f"% of {ceiling.name} ({ceiling.gbs:,.0f} GB/s)")
        right.axvline(100, color="black", linestyle="--", linewidth=1)
        _bars(right, names, values, "tab:green", percent)
    else:
        right.set_xlabel("effective bandwidth (GB/s)")
        _bars(right, names, [t.gbs for t in timings][::-1], "tab:green", lambda v: f"{v:,.0f}")
    right.set_yticklabels([])


def variants(
    timings,
    *,
    title: str,
    size: str | None = None,
    ceiling: Timing | None = None,
    record_as: str | None = None,
):
    """Bar chart of variants: median time, and bandwidth as % of the measured copy ceiling."""
    timings = _as_timings(timings)
    if not timings:
        raise ValueError("variants() needs at least one Timing to draw")
    data = {
        "kind": "variants",
        "title": title,
        "size": size,
        "timings": [t.as_dict() for t in timings],
        "ceiling": ceiling.as_dict() if ceiling else None,
    }
    shown = results.experiment(record_as, data)
    drawn, where, shown = shown.timings(), shown.label, shown.data
    panels = 2 if _has_bandwidth(drawn) else 1  # times only: one axis as wide as the figure
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            1, panels, figsize=(WIDTH, 0.5 * len(drawn) + 1.9), squeeze=False, layout="constrained"
        )
        _draw_variants(
            (axes[0][0], axes[0][1] if panels == 2 else None),
            drawn,
            Timing.from_dict(shown["ceiling"]) if shown.get("ceiling") else None,
        )
        axes[0][0].set_title(
            heading(shown.get("title", title), shown.get("size"), where), loc="left"
        )
        if shown is not data:
            fig.supxlabel(SIMULATOR_SHOWS_RECORDED, fontsize=11, color="dimgrey")
    plt.close(fig)
    return fig


def _draw_sweep(
    ax,
    x,
    series: dict[str, list[Timing]],
    metric: str,
    ceiling: Timing | None,
    xlabel: str,
    logx: bool | int,
    marks: dict[str, float],
) -> None:
    """One line per series; the ceiling dashed when plotting bandwidth; marks as verticals."""
    every = []
    for name, timings in series.items():
        values = [t.gbs if metric == "gbs" else t.median_ms for t in timings]
        every += values
        ax.plot(x[: len(values)], values, marker="o", markersize=4, label=name)
    if metric == "gbs" and ceiling is not None:
        ax.axhline(
            ceiling.gbs,
            color="black",
            linestyle="--",
            linewidth=1,
            label=f"{ceiling.name} {ceiling.gbs:,.0f} GB/s",
        )
    for label, position in marks.items():
        ax.axvline(position, color="grey", linestyle=":", linewidth=1.2, label=label)
    if logx:  # True: powers of two; or the base itself (10 for decimal sweeps)
        ax.set_xscale("log", base=2 if logx is True else logx)
    if metric == "ms" or _wide(every):
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(
        "effective bandwidth (GB/s)" if metric == "gbs" else "median time per launch (ms)"
    )
    ax.grid(True, alpha=0.3)
    ax.legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0
    )  # beside, not on, the data


def sweep(
    x,
    series: dict,
    *,
    xlabel: str,
    title: str,
    size: str | None = None,
    metric: str = "gbs",
    ceiling: Timing | None = None,
    logx: bool | int = True,
    marks: dict[str, float] | None = None,
    record_as: str | None = None,
):
    """Line plot of one or more series over a swept parameter (size, stride, block shape...).

    marks: vertical reference lines, {label: x position}, e.g. {"L2 cache": 60}.
    """
    marks = dict(marks or {})
    if metric not in ("gbs", "ms"):
        raise ValueError(f"metric must be 'gbs' (bandwidth) or 'ms' (time), got {metric!r}")
    x = list(x)
    series = {name: _as_timings(ts) for name, ts in series.items()}
    if not series or any(len(ts) > len(x) or not ts for ts in series.values()):
        raise ValueError("sweep() needs at least one series, each with 1..len(x) timings")
    if metric == "gbs" and any(t.gbs is None for ts in series.values() for t in ts):
        raise ValueError(
            "metric='gbs' needs bytes_moved on every Timing; use metric='ms' otherwise"
        )
    data = {
        "kind": "sweep",
        "title": title,
        "size": size,
        "x": x,
        "xlabel": xlabel,
        "metric": metric,
        "logx": logx,
        "series": {name: [t.as_dict() for t in ts] for name, ts in series.items()},
        "ceiling": ceiling.as_dict() if ceiling else None,
        "marks": marks,
    }
    shown = results.experiment(record_as, data)
    where, shown = shown.label, shown.data
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(WIDTH, 4.4), layout="constrained")
        _draw_sweep(
            ax,
            shown["x"],
            {n: _as_timings(ts) for n, ts in shown["series"].items()},
            shown["metric"],
            Timing.from_dict(shown["ceiling"]) if shown.get("ceiling") else None,
            shown["xlabel"],
            shown["logx"],
            shown.get("marks", {}),
        )
        ax.set_title(heading(shown.get("title", title), shown.get("size"), where), loc="left")
        if shown is not data:
            fig.supxlabel(SIMULATOR_SHOWS_RECORDED, fontsize=11, color="dimgrey")
    plt.close(fig)
    return fig

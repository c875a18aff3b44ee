"""The standard timing figures: variants side by side, and sweeps over a parameter.

Each function returns a matplotlib Figure (end a notebook cell with it to show it). Give every
figure the problem `size` it measured ("2^28 float32", "8192 x 8192 float32"): the title shows
it. With ``record_as="NN_lesson/experiment"`` a GPU run records the data with its title and
size. On a GPU the figure shows this run. In the simulator the figure shows the recorded GPU
run, titled with the size and device of that run, never the simulator's: the emulation's host
times say nothing about GPUs, so they are drawn only when no GPU result was recorded.
"""

from __future__ import annotations

import base64
import io

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

from . import results
from .formats import format_gbps, format_percent
from .timing import Timing

SIMULATOR_NOTE = results.SIMULATOR_LABEL
SIMULATOR_SHOWS_RECORDED = (
    "this machine runs the simulator: every variant ran and was checked; "
    "the times above are the recorded GPU run's"
)
WIDE_RANGE = 30  # values spanning more than this factor get a log axis
NOT_MEASURED = "traced here; the GPU's measurements appear once a GPU run is recorded"
NO_GPU_RUN = "no GPU run of these kernels\nrecorded yet"

# One style for every figure the package draws for a slide: WIDTH x DPI = 1200 pixels, shown at
# least 1,100 pixels wide on a 1280 x 720 slide, so MIN_FONT_PT (x DPI / 72 = 20.8 pixels) keeps
# every text at 19 pixels or more there (issue 23; CONVENTIONS.md).
WIDTH = 12  # inches
DPI = 100
# The deck shows a figure at most 540 pixels tall on a slide of its own (a hide-input cell): a
# figure keeps 1,100 of its WIDTH x DPI pixels there when it is at most WIDTH x 540 / 1100 inches
# (5.89) tall. `figure` caps every height at MAX_HEIGHT.
MAX_HEIGHT = 5.8  # inches
MIN_FONT_PT = 15
STYLE = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": MIN_FONT_PT + 1,
    "axes.titlesize": MIN_FONT_PT + 2,
    "axes.labelsize": MIN_FONT_PT + 1,
    "figure.titlesize": MIN_FONT_PT + 2,
    "figure.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
}
MIN_FONT_KEY = "gpgpu-lessons:min-font-px"  # the PNG text chunk the deck checker reads


def figure(*args, height: float, **kwargs):
    """plt.subplots(*args) in the slide style: WIDTH wide, `height` inches high (at most
    MAX_HEIGHT), constrained."""
    with plt.rc_context(STYLE):
        size = (WIDTH, min(height, MAX_HEIGHT))
        return plt.subplots(*args, figsize=size, layout="constrained", **kwargs)


def styled():
    """The slide style as a context (for figures drawn by other means than `figure`)."""
    return plt.rc_context(STYLE)


def min_font_px(fig) -> float:
    """The height in pixels, at the figure's dpi, of its smallest visible text (0: no text)."""
    fig.draw_without_rendering()  # tick labels get their text when the figure is laid out
    sizes = [
        text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    return min(sizes) * fig.dpi / 72 if sizes else 0.0


def png(fig) -> bytes:
    """The figure as a PNG (its natural size, WIDTH x dpi wide) carrying its min-font-px chunk."""
    buffer = io.BytesIO()
    fig.savefig(
        buffer,
        format="png",
        dpi=fig.dpi,
        facecolor=fig.get_facecolor(),
        metadata={MIN_FONT_KEY: f"{min_font_px(fig):.1f}"},
    )
    return buffer.getvalue()


def _png_base64(fig) -> str | None:
    """What IPython's image/png formatter shows for a Figure (none for an empty one)."""
    if not fig.axes and not fig.lines:
        return None
    return base64.b64encode(png(fig)).decode("ascii")


def register_png_formatter() -> bool:
    """Make IPython show every matplotlib Figure through `png` (min-font-px chunk included).

    The inline backend registers its own formatter when it loads: it is loaded first here, so
    this one replaces it. False outside IPython.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    # Import the backend now: the inline one registers its formatter when its module is imported
    # (pyplot imports it at the first figure, which would replace ours).
    plt.switch_backend(plt.get_backend())
    _use_png_formatter()
    # ... and before every cell (`%matplotlib inline` registers the inline formatter again).
    if _use_png_formatter not in shell.events.callbacks["pre_run_cell"]:
        shell.events.register("pre_run_cell", _use_png_formatter)
    return True


def _use_png_formatter(*_) -> None:
    """IPython's image/png formatter for a Figure: `_png_base64` (a pre_run_cell callback)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, _png_base64)


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


def bars(ax, values, labels, *, names=None, colour="tab:blue", log=None, reach=0.0) -> None:
    """Horizontal bars, bottom to top, each labelled inside the frame (reaching at least `reach`):
    beside a short bar, inside a long one. log: a log axis (None: when the values span more than
    WIDE_RANGE). names: the y tick labels (None: none)."""
    values = [float(v) for v in values]
    ax.barh(range(len(values)), values, color=colour)
    ax.set_yticks(range(len(values)), [""] * len(values) if names is None else list(names))
    log = _wide(values) if log is None else log
    top = max(max(values), reach)
    low, high = (min(v for v in values if v > 0) / 2, top * 30) if log else (0, top * 1.3)
    ax.set_xlim(low, high)
    if log:
        ax.set_xscale("log")
    for y, (value, label) in enumerate(zip(values, labels, strict=True)):
        reached = np.log(max(value, low) / low) / np.log(high / low) if log else value / high
        inside = reached > 0.6
        ax.annotate(
            f" {label} " if inside else f" {label}",
            (value, y),
            va="center",
            ha="right" if inside else "left",
            color="white" if inside else "black",
        )


def no_measurement(ax) -> None:
    """Say on an empty panel that no GPU run of these kernels was recorded."""
    ax.text(0.5, 0.5, NO_GPU_RUN, ha="center", va="center", transform=ax.transAxes, color="dimgrey")
    ax.set_xticks([])


def bandwidth_panel(ax, names: list, timings: dict, ceiling: Timing | None) -> bool:
    """The GPU's bandwidth of each named kernel against the ceiling; False when not measured."""
    drawn = [timings.get(n) for n in names]
    if ceiling is None or any(t is None or t.simulated or t.gbs is None for t in drawn):
        return False
    gbs = [t.gbs for t in drawn]
    labels = [f"{format_gbps(g)} ({100 * g / ceiling.gbs:.0f}%)" for g in gbs]
    bars(ax, gbs, labels, colour="tab:green", reach=ceiling.gbs)
    ax.axvline(ceiling.gbs, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel(f"GB/s on the GPU (dashed: {ceiling.name}, {ceiling.gbs:,.0f})")
    return True


def _recorded_variants(key, timings, title, size, ceiling) -> results.Shown:
    """Record timings of variants under key (GPU runs); return what to show (results.experiment)."""
    data = {
        "kind": "variants",
        "title": title,
        "size": size,
        "timings": [t.as_dict() for t in timings],
        "ceiling": ceiling.as_dict() if ceiling else None,
    }
    return results.experiment(key, data)


def traced_beside_measured(
    draw_traced,
    measured: list,
    *,
    names: list,
    title: str,
    size: str,
    ceiling: Timing | None = None,
    draw_measured=bandwidth_panel,
    record_as: str | None = None,
):
    """Left, what the tracer counts; right, what the GPU measured, for the same kernels.

    draw_traced(ax, names) draws the left half (the same on any machine). measured: this run's
    Timings (named as `names`), recorded under record_as on a GPU; the right half shows them, or
    in the simulator the recorded GPU run's (`results.experiment`), drawn by
    draw_measured(ax, names, {name: Timing}, ceiling), which returns False when they are not
    GPU measurements. names: bottom to top.
    """
    shown = _recorded_variants(record_as, measured, title, size, ceiling)
    roof = Timing.from_dict(shown.data["ceiling"]) if shown.data.get("ceiling") else None
    fig, (left, right) = figure(1, 2, height=0.65 * len(names) + 2.6)
    with styled():
        draw_traced(left, names)
        right.set_yticks(range(len(names)), [""] * len(names))
        timings = {t.name: t for t in shown.timings()}
        gpu = draw_measured(right, names, timings, roof)
        if not gpu:
            no_measurement(right)
        where = shown.label if gpu else NOT_MEASURED
        heading_text = heading(shown.data.get("title", title), shown.data.get("size"), where)
        left.set_title(heading_text, loc="left")
    plt.close(fig)
    return fig


def _has_bandwidth(timings: list[Timing]) -> bool:
    """True when every timing knows its bytes and was measured on a GPU (a bandwidth panel)."""
    return all(t.gbs is not None for t in timings) and not timings[0].simulated


def _draw_variants(axes, timings: list[Timing], ceiling: Timing | None) -> None:
    """Time bars on the left axis; bandwidth (% of the copy ceiling) bars on the right."""
    names = [t.name for t in timings][::-1]
    left, right = axes
    times = [t.median_ms for t in timings][::-1]
    bars(left, times, [f"{v:.3g}" for v in times], names=names)
    left.set_xlabel("median time per launch (ms)")
    if right is None:
        return
    if ceiling is not None:
        values = [100 * t.gbs / ceiling.gbs for t in timings][::-1]
        right.set_xlabel(f"% of {ceiling.name} ({ceiling.gbs:,.0f} GB/s)")
        right.axvline(100, color="black", linestyle="--", linewidth=1)
        bars(right, values, [format_percent(v) for v in values], colour="tab:green")
    else:
        right.set_xlabel("effective bandwidth (GB/s)")
        gbs = [t.gbs for t in timings][::-1]
        bars(right, gbs, [f"{v:,.0f}" for v in gbs], colour="tab:green")


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
    shown = _recorded_variants(record_as, timings, title, size, ceiling)
    drawn, where, live, shown = shown.timings(), shown.label, shown.live, shown.data
    panels = 2 if _has_bandwidth(drawn) else 1  # times only: one axis as wide as the figure
    fig, axes = figure(1, panels, height=0.6 * len(drawn) + 2.4, squeeze=False)
    with styled():
        _draw_variants(
            (axes[0][0], axes[0][1] if panels == 2 else None),
            drawn,
            Timing.from_dict(shown["ceiling"]) if shown.get("ceiling") else None,
        )
        axes[0][0].set_title(
            heading(shown.get("title", title), shown.get("size"), where), loc="left"
        )
        if not live:
            fig.supxlabel(SIMULATOR_SHOWS_RECORDED, fontsize=MIN_FONT_PT, color="dimgrey")
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
    fig, ax = figure(height=5.2)
    with styled():
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
            fig.supxlabel(SIMULATOR_SHOWS_RECORDED, fontsize=MIN_FONT_PT, color="dimgrey")
    plt.close(fig)
    return fig


register_png_formatter()

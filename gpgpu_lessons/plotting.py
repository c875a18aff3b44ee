"""The standard timing figures: variants side by side, and sweeps over a parameter.

Each function returns a matplotlib Figure (end a notebook cell with it to show it). With
``record_as="NN_lesson/experiment"`` the data is recorded during a GPU run, and in the
simulator the recorded GPU result is drawn beside the (meaningless) simulator times.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from . import results, runtime
from .timing import Timing

SIMULATOR_NOTE = "simulator: host times of a Python emulation, not GPU performance"


def _device_title(title: str) -> str:
    """Title that names the GPU, or says 'simulator'."""
    info = runtime.device_info()
    return f"{title}\n{SIMULATOR_NOTE if info.simulator else info.name}"


def _as_timings(items) -> list[Timing]:
    """Accept Timing objects or their stored dictionaries."""
    return [t if isinstance(t, Timing) else Timing.from_dict(t) for t in items]


def _recorded_for(record_as: str | None, data: dict) -> results.Recorded | None:
    """Record on a GPU run; in the simulator, return the first shipped GPU result to show."""
    if record_as is None:
        return None
    results.record(record_as, data)
    if runtime.MODE == runtime.SIMULATOR:
        shipped = results.recorded(record_as)
        return shipped[0] if shipped else None
    return None


def _draw_variants(axes, timings: list[Timing], ceiling: Timing | None) -> None:
    """Time bars on the left axis; bandwidth (% of the copy ceiling) bars on the right."""
    names = [t.name for t in timings][::-1]
    times = [t.median_ms for t in timings][::-1]
    left, right = axes
    left.barh(names, times, color="tab:blue")
    left.set_xlabel("median time per launch (ms)")
    for y, t in enumerate(timings[::-1]):
        left.annotate(f" {t.median_ms:.3g}", (t.median_ms, y), va="center", fontsize=8)
    if any(t.gbs is None for t in timings):
        right.set_visible(False)
        return
    if ceiling is not None:
        values = [100 * t.gbs / ceiling.gbs for t in timings][::-1]
        right.set_xlabel(f"% of device copy ({ceiling.gbs:,.0f} GB/s)")
        right.axvline(100, color="black", linestyle="--", linewidth=1)
    else:
        values = [t.gbs for t in timings][::-1]
        right.set_xlabel("effective bandwidth (GB/s)")
    right.barh(names, values, color="tab:green")
    right.set_yticklabels([])
    for y, v in enumerate(values):
        right.annotate(f" {v:,.0f}", (v, y), va="center", fontsize=8)


def variants(timings, *, title: str, ceiling: Timing | None = None, record_as: str | None = None):
    """Bar chart of variants: median time, and bandwidth as % of the measured copy ceiling."""
    timings = _as_timings(timings)
    if not timings:
        raise ValueError("variants() needs at least one Timing to draw")
    data = {"kind": "variants", "timings": [t.as_dict() for t in timings],
            "ceiling": ceiling.as_dict() if ceiling else None}
    shipped = _recorded_for(record_as, data)
    rows = 2 if shipped else 1
    fig, axes = plt.subplots(rows, 2, figsize=(10, 0.45 * len(timings) * rows + 1.6 * rows),
                             squeeze=False, layout="constrained")
    _draw_variants(axes[0], timings, ceiling)
    axes[0][0].set_title(_device_title(title), loc="left", fontsize=10)
    if shipped:
        stored = shipped.data
        _draw_variants(axes[1], _as_timings(stored["timings"]),
                       Timing.from_dict(stored["ceiling"]) if stored.get("ceiling") else None)
        axes[1][0].set_title(shipped.label, loc="left", fontsize=10)
    plt.close(fig)
    return fig


def _draw_sweep(ax, x, series: dict[str, list[Timing]], metric: str, ceiling: Timing | None,
                xlabel: str, logx: bool, marks: dict[str, float]) -> None:
    """One line per series; the copy ceiling as a dashed line when plotting bandwidth; marks as verticals."""
    for name, timings in series.items():
        values = [t.gbs if metric == "gbs" else t.median_ms for t in timings]
        ax.plot(x[:len(values)], values, marker="o", markersize=3, label=name)
    if metric == "gbs" and ceiling is not None:
        ax.axhline(ceiling.gbs, color="black", linestyle="--", linewidth=1,
                   label=f"device copy {ceiling.gbs:,.0f} GB/s")
    for label, position in marks.items():
        ax.axvline(position, color="grey", linestyle=":", linewidth=1.2, label=label)
    if logx:
        ax.set_xscale("log", base=2)
    if metric == "ms":
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("effective bandwidth (GB/s)" if metric == "gbs" else "median time per launch (ms)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def sweep(x, series: dict, *, xlabel: str, title: str, metric: str = "gbs",
          ceiling: Timing | None = None, logx: bool = True, marks: dict[str, float] | None = None,
          record_as: str | None = None):
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
        raise ValueError("metric='gbs' needs bytes_moved on every Timing; use metric='ms' otherwise")
    data = {"kind": "sweep", "x": x, "xlabel": xlabel, "metric": metric, "logx": logx,
            "series": {name: [t.as_dict() for t in ts] for name, ts in series.items()},
            "ceiling": ceiling.as_dict() if ceiling else None, "marks": marks}
    shipped = _recorded_for(record_as, data)
    fig, axes = plt.subplots(1, 2 if shipped else 1, figsize=(11 if shipped else 7, 3.6),
                             squeeze=False, layout="constrained")
    _draw_sweep(axes[0][0], x, series, metric, ceiling, xlabel, logx, marks)
    axes[0][0].set_title(_device_title(title), loc="left", fontsize=10)
    if shipped:
        stored = shipped.data
        _draw_sweep(axes[0][1], stored["x"], {n: _as_timings(ts) for n, ts in stored["series"].items()},
                    stored["metric"], Timing.from_dict(stored["ceiling"]) if stored.get("ceiling") else None,
                    stored["xlabel"], stored["logx"], stored.get("marks", {}))
        axes[0][1].set_title(f"{title}\n{shipped.label}", loc="left", fontsize=10)
    plt.close(fig)
    return fig

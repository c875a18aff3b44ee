"""What a run says: tables (worst shape first), the summary, the plot, and the recorded GPUs.

Two measures per shape: the prepared launch's GPU time (CUDA events) and the wrapper called
back to back as users call it (host clock), each beside CuPy's call timed the same way.
Ratios: `of_copy` is a kernel's bandwidth over the same run's device-to-device copy; `of_cupy`
is CuPy's time over the kernel's (above 1: the kernel is faster); `called_of_*` the same for
the calls. A family's score is its ratio to the copy, or for the sums (no copy target) its
ratio to CuPy on the sizes the issue's target covers; its worst shape is the one with the lowest
score, on each measure.
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np

from .families import FAMILIES, Family
from .record import Bench, Result
from .shapes import shape_text

TARGET_HOST_RATIO = 1.25  # the issue: a wrapper's host cost at most 1.25x a bare launch's
TARGET_CALLED_OF_CUPY = 1.0  # the issue: as users call them, at least as fast as CuPy's call ...
TARGET_CALLED_FROM_MB = 16  # ... on every input from 16 MB up


# ---- derived numbers -----------------------------------------------------------------------


def of_copy(bench: Bench, result: Result) -> float | None:
    """The kernel's bandwidth over the same run's device copy."""
    if result.fast is None or bench.ceiling is None:
        return None
    return result.fast.gbs / bench.ceiling.gbs


def of_cupy(result: Result) -> float | None:
    """CuPy's time over the kernel's: above 1, the kernel is faster."""
    if result.fast is None or result.cupy is None:
        return None
    return result.cupy.median_ms / result.fast.median_ms


def called_of_copy(bench: Bench, result: Result) -> float | None:
    """The wrapper called back to back: its bandwidth over the same run's device copy."""
    if result.called is None or bench.ceiling is None:
        return None
    return result.called.gbs / bench.ceiling.gbs


def called_of_cupy(result: Result) -> float | None:
    """CuPy's call over the wrapper's, both back to back as a user calls them (above 1: ours)."""
    if result.called is None or result.cupy_called is None:
        return None
    return result.cupy_called.median_ms / result.called.median_ms


def elements(result: Result) -> int:
    return math.prod(result.shape)


def in_cupy_target(family: Family, result: Result) -> bool:
    """True where the family's CuPy target applies to this size."""
    return family.of_cupy is not None and elements(result) >= family.cupy_from


def meets(bench: Bench, result: Result) -> bool | None:
    """Whether a result meets its family's targets (None: nothing to judge, e.g. no times)."""
    if not result.ok:
        return False
    family = FAMILIES.get(result.family)
    if family is None or result.fast is None:
        return None
    verdicts = []
    if family.of_copy is not None and bench.ceiling is not None:
        verdicts.append(of_copy(bench, result) >= family.of_copy)
    if in_cupy_target(family, result) and result.cupy is not None:
        verdicts.append(of_cupy(result) >= family.of_cupy)
    return all(verdicts) if verdicts else None


def meets_called(result: Result) -> bool | None:
    """Whether the wrapper, called back to back, is at least as fast as CuPy's call (None: the
    input is under TARGET_CALLED_FROM_MB, or either call was not timed)."""
    if not result.ok:
        return False
    ratio = called_of_cupy(result)
    nbytes = elements(result) * np.dtype(result.dtype).itemsize
    if ratio is None or nbytes < TARGET_CALLED_FROM_MB * 1e6:
        return None
    return ratio >= TARGET_CALLED_OF_CUPY


def score(bench: Bench, result: Result) -> float | None:
    """What 'worst' ranks by: the ratio to the copy, or for the sums the ratio to CuPy.

    Without CuPy, the sums rank by their ratio to the copy too.
    """
    family = FAMILIES.get(result.family)
    if family is not None and family.of_copy is None and result.cupy is not None:
        return of_cupy(result)
    return of_copy(bench, result)


def _rank(bench: Bench, result: Result) -> tuple:
    """Sort key, worst first: failures, then the lowest score, then untimed results."""
    value = score(bench, result)
    return (result.ok, value is None, value if value is not None else 0.0)


def by_family(bench: Bench) -> dict[str, list[Result]]:
    """The results of each family, worst first."""
    grouped: dict[str, list[Result]] = {}
    for result in bench.results:
        grouped.setdefault(result.family, []).append(result)
    return {name: sorted(found, key=lambda r: _rank(bench, r)) for name, found in grouped.items()}


def worst(bench: Bench) -> dict[str, Result]:
    """Each family's worst result (for the sums: among the sizes the CuPy target covers)."""
    found = {}
    for name, results in by_family(bench).items():
        family = FAMILIES.get(name)
        judged = [
            r
            for r in results
            if family is None or family.of_copy is not None or in_cupy_target(family, r) or not r.ok
        ]
        found[name] = (judged or results)[0]
    return found


def score_called(bench: Bench, result: Result) -> float | None:
    """'Worst' as users call it: x CuPy's call where the family has no copy target, else x copy."""
    family = FAMILIES.get(result.family)
    if family is not None and family.of_copy is None and result.cupy_called is not None:
        return called_of_cupy(result)
    return called_of_copy(bench, result)


def worst_called(bench: Bench) -> dict[str, Result]:
    """Each family's worst result as users call it (wrapper back to back), where timed."""
    found = {}
    for result in bench.results:
        value = score_called(bench, result)
        if value is None:
            continue
        best = found.get(result.family)
        if best is None or value < score_called(bench, best):
            found[result.family] = result
    return found


def crossover(bench: Bench, family: str) -> int | None:
    """The length from which the fast kernel reaches the family's CuPy target (0.95x CuPy's
    speed; 1x without one) at every longer length: the two curves meet there."""
    target = (FAMILIES[family].of_cupy if family in FAMILIES else None) or 1.0
    timed = sorted(
        (elements(r), of_cupy(r))
        for r in bench.results
        if r.family == family and of_cupy(r) is not None
    )
    start = None
    for n, ratio in timed:
        if ratio >= target:
            start = n if start is None else start
        else:
            start = None
    return start


def summary(bench: Bench) -> dict:
    """The headline numbers, saved beside the results for readers of the JSON."""
    found = {}
    for name, result in worst(bench).items():
        entry = {"worst shape": shape_text(result.shape), "why": result.label, "ok": result.ok}
        ratios = {"of_copy": of_copy(bench, result), "of_cupy": of_cupy(result)}
        entry.update({k: round(v, 3) for k, v in ratios.items() if v is not None})
        entry["meets target"] = meets(bench, result)
        if FAMILIES.get(name) is not None and FAMILIES[name].reduction:
            entry["crossover with CuPy"] = crossover(bench, name)
        found[name] = entry
    for name, result in worst_called(bench).items():
        entry = found.setdefault(name, {})
        entry["worst shape as called"] = shape_text(result.shape)
        ratios = {"of_copy": called_of_copy(bench, result), "of_cupy": called_of_cupy(result)}
        entry["as called"] = {k: round(v, 3) for k, v in ratios.items() if v is not None}
        entry["as called"]["meets target"] = meets_called(result)
    for cost in bench.host_costs:
        entry = found.setdefault(cost.family, {}).setdefault("host cost vs bare launch", {})
        entry[f"{cost.kernel} {cost.size}".strip()] = round(cost.ratio, 2)
    failed = sum(not r.ok for r in bench.results)
    return {"families": found, "checked": len(bench.results), "failed": failed}


# ---- text ----------------------------------------------------------------------------------


def _number(value, fmt: str, width: int) -> str:
    return f"{'-' if value is None else format(value, fmt):>{width}}"


def _ms(timing) -> float | None:
    return None if timing is None else timing.median_ms


def _verdict(value: bool | None) -> str:
    return {True: "ok", False: "BELOW", None: ""}[value]


def _heading(name: str) -> str:
    family = FAMILIES.get(name)
    if family is None:
        return name
    kernels = ", ".join(k.wrapper_name.replace("gpgpu_lessons.", "") for k in family.kernels)
    target = family.target()
    return f"{name}: {family.description} ({kernels})" + (f"; target {target}" if target else "")


def table(bench: Bench) -> str:
    """Every result, grouped by family, worst shape first; failures spelt out below each."""
    timed = any(r.fast is not None for r in bench.results)
    lines = []
    for name, results in by_family(bench).items():
        lines += ["", _heading(name)]
        if timed:
            lines.append(
                f"  {'kernel':16} {'shape':20} {'why':28} {'MB moved':>8} {'ms':>9} "
                f"{'GB/s':>7} {'x copy':>6} {'CuPy GB/s':>9} {'x CuPy':>6}  "
                f"{'called ms':>9} {'x copy':>6} {'CuPy call':>9} {'x CuPy':>6}  target  called"
            )
        else:
            lines.append(f"  {'kernel':16} {'shape':20} {'why':28} check")
        for r in results:
            head = f"  {r.kernel:16} {shape_text(r.shape):20} {r.label:28}"
            if not r.ok:
                lines.append(f"{head} FAILED: {r.error or r.check}")
            elif timed and r.fast is not None:
                nbytes = r.fast.bytes_moved or 0
                lines.append(
                    f"{head} {nbytes / 1e6:8.1f} {r.fast.median_ms:9.4f} {r.fast.gbs:7.0f} "
                    f"{_number(of_copy(bench, r), '.2f', 6)} "
                    f"{_number(None if r.cupy is None else r.cupy.gbs, '.0f', 9)} "
                    f"{_number(of_cupy(r), '.2f', 6)}  "
                    f"{_number(_ms(r.called), '.4f', 9)} "
                    f"{_number(called_of_copy(bench, r), '.2f', 6)} "
                    f"{_number(_ms(r.cupy_called), '.4f', 9)} "
                    f"{_number(called_of_cupy(r), '.2f', 6)}  "
                    f"{_verdict(meets(bench, r)):6}  {_verdict(meets_called(r))}".rstrip()
                )
            else:
                lines.append(f"{head} ok: {r.check}")
    return "\n".join(lines[1:])


def worst_table(bench: Bench) -> str:
    """One line per family: its worst shape and how far it is from the target."""
    lines = ["Worst shape of each family:"]
    for name, r in worst(bench).items():
        text = f"  {name:10} {shape_text(r.shape):20} {r.label:28}"
        if not r.ok:
            text += " FAILED"
        elif r.fast is not None:
            text += (
                f" {_number(of_copy(bench, r), '.2f', 5)}x copy"
                f" {_number(of_cupy(r), '.2f', 5)}x CuPy  {_verdict(meets(bench, r))}"
            )
        else:
            text += " checked"
        lines.append(text)
    called = worst_called(bench)
    if called:
        lines.append(
            "Worst shape of each family as users call it (wrapper back to back; target: "
            f">= {TARGET_CALLED_OF_CUPY:g}x CuPy's call from {TARGET_CALLED_FROM_MB} MB):"
        )
    for name, r in called.items():
        lines.append(
            f"  {name:10} {shape_text(r.shape):20} {r.label:28}"
            f" {_number(called_of_copy(bench, r), '.2f', 5)}x copy"
            f" {_number(called_of_cupy(r), '.2f', 5)}x CuPy's call  {_verdict(meets_called(r))}"
        )
    for name in bench.families:
        if FAMILIES.get(name) is not None and FAMILIES[name].reduction and bench.ceiling:
            if not any(r.cupy is not None for r in bench.results if r.family == name):
                lines.append(f"  {name}: no crossover (CuPy was not available)")
                continue
            n = crossover(bench, name)
            where = "never in the sweep" if n is None else f"from {shape_text((n,))} elements up"
            target = FAMILIES[name].of_cupy or 1.0
            lines.append(f"  {name}: at least {target:g}x CuPy's speed {where}")
    return "\n".join(lines)


def host_table(bench: Bench) -> str:
    """Host time per call of every wrapper beside its prepare(), Launch, a bare launch and CuPy."""
    if not bench.host_costs:
        return ""
    lines = [
        "Host cost per call, us, device arrays in and out, back to back (the issue's target: "
        f"wrapper <= {TARGET_HOST_RATIO}x bare; a number back <= {TARGET_HOST_RATIO}x "
        "bare + 4-byte copy):",
        f"  {'kernel':16} {'size':6} {'elements':>9} {'wrapper':>8} {'prepare':>8} "
        f"{'Launch':>7} {'bare':>7} {'ratio':>6} {'CuPy':>7} {'number':>7} {'bare+cp':>7} "
        f"{'ratio':>6} {'CuPy':>7}",
    ]
    for c in bench.host_costs:
        ratios = [c.ratio] + ([c.number_ratio] if c.number_ratio is not None else [])
        verdict = "ok" if max(ratios) <= TARGET_HOST_RATIO else "BELOW"
        lines.append(
            f"  {c.kernel or c.family:16} {c.size:6} {c.elements:>9,} {c.wrapper_us:8.1f} "
            f"{_number(c.prepare_us, '.1f', 8)} {_number(c.launch_us, '.1f', 7)} "
            f"{c.bare_us:7.1f} {c.ratio:6.2f} {_number(c.cupy_us, '.1f', 7)} "
            f"{_number(c.number_us, '.1f', 7)} {_number(c.bare_copy_us, '.1f', 7)} "
            f"{_number(c.number_ratio, '.2f', 6)} {_number(c.cupy_number_us, '.1f', 7)}  {verdict}"
        )
    return "\n".join(lines)


def _family_line(bench: Bench, name: str) -> str:
    """A family's worst / median score in one run, for the comparison table."""
    results = [r for r in bench.results if r.family == name]
    if not results:
        return "-"
    if not all(r.ok for r in results):
        return f"{sum(not r.ok for r in results)} failed"
    family = FAMILIES.get(name)
    if family is not None and family.of_copy is None:
        results = [r for r in results if in_cupy_target(family, r)] or results
    values = [v for v in (score(bench, r) for r in results) if v is not None]
    if not values:
        return "checked"
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def scored_by_cupy() -> str:
    """'sum, dot: x CuPy from 2^25 elements': the families without a copy target."""
    found = [f for f in FAMILIES.values() if f.of_copy is None and f.of_cupy is not None]
    if not found:
        return ""
    starts = {f.cupy_from for f in found}
    start = f" from {shape_text((starts.pop(),))} elements" if len(starts) == 1 else ""
    return f" ({', '.join(f.name for f in found)}: x CuPy{start})"


def _smallest_cost(bench: Bench, name: str) -> str:
    """A family's host cost at its smallest size, over a bare launch's, in one run."""
    cost = min(
        (c for c in bench.host_costs if c.family == name), key=lambda c: c.elements, default=None
    )
    return "-" if cost is None else f"{cost.ratio:.2f}x bare"


def comparison(current: Bench | None, recorded: list[Bench]) -> str:
    """This run beside the recorded GPUs: each family's worst / median score, the sums'
    crossover, and each family's host cost where a run measured it."""
    runs = ([("this run", current)] if current is not None else []) + [
        (f"{b.gpu} ({b.date}, {b.sizes})", b) for b in recorded
    ]
    if not runs:
        return "No recorded GPU runs to compare with (python -m gpgpu_tools.bench --record)."
    names = list(dict.fromkeys(n for _, b in runs for n in b.families))
    width = max(24, *(len(title) + 2 for title, _ in runs))
    lines = [
        "Comparison with the recorded GPUs: worst / median over the sweep of x copy"
        + scored_by_cupy(),
        f"  {'family':22}" + "".join(f"{title:>{width}}" for title, _ in runs),
    ]
    for name in names:
        lines.append(f"  {name:22}" + "".join(f"{_family_line(b, name):>{width}}" for _, b in runs))
        if FAMILIES.get(name) is not None and FAMILIES[name].reduction:
            cells = []
            for _, b in runs:
                n = crossover(b, name)
                cells.append("-" if n is None else shape_text((n,)))
            lines.append(f"  {name + ' crossover':22}" + "".join(f"{c:>{width}}" for c in cells))
        if any(c.family == name for _, b in runs for c in b.host_costs):
            cells = [_smallest_cost(b, name) for _, b in runs]
            lines.append(f"  {name + ' host cost':22}" + "".join(f"{c:>{width}}" for c in cells))
    lines.append(
        "  "
        + " " * 22
        + "".join(
            f"{(f'copy {b.ceiling.gbs:,.0f} GB/s' if b.ceiling else 'untimed'):>{width}}"
            for _, b in runs
        )
    )
    return "\n".join(lines)


# ---- the plot ------------------------------------------------------------------------------


def plot(bench: Bench, path) -> None:
    """Ratio to the copy per kernel and shape (worst labelled); the sums' GB/s beside CuPy's."""
    from matplotlib.figure import Figure

    timed = [r for r in bench.results if r.fast is not None and bench.ceiling is not None]
    copies = [r for r in timed if FAMILIES.get(r.family) and FAMILIES[r.family].of_copy]
    sums = [r for r in timed if FAMILIES.get(r.family) and FAMILIES[r.family].reduction]
    panels = [p for p in (copies, sums) if p]
    if not panels:
        return
    figure = Figure(figsize=(7 * len(panels), 5.5), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    if copies:
        _draw_ratios(axes[0], bench, copies)
    if sums:
        _draw_sums(axes[-1], bench, sums)
    figure.suptitle(f"gpgpu_lessons bench · {bench.gpu} · {bench.date} · {bench.sizes} sweep")
    figure.savefig(path, dpi=110)


def _draw_ratios(ax, bench: Bench, results: list[Result]) -> None:
    kernels = list(dict.fromkeys(r.kernel for r in results))
    for x, kernel in enumerate(kernels):
        mine = [r for r in results if r.kernel == kernel]
        values = [of_copy(bench, r) for r in mine]
        ax.scatter([x] * len(values), values, s=22, alpha=0.7, color="tab:blue")
        target = FAMILIES[mine[0].family].of_copy
        ax.hlines(target, x - 0.3, x + 0.3, colors="tab:red", linestyles="dashed")
        low = min(range(len(mine)), key=lambda k: values[k])
        ax.annotate(
            shape_text(mine[low].shape),
            (x, values[low]),
            textcoords="offset points",
            xytext=(6, -4),
            fontsize=7,
        )
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(kernels)), kernels, rotation=30, ha="right")
    ax.set_ylabel(f"x device copy ({bench.ceiling.gbs:,.0f} GB/s)")
    ax.set_ylim(bottom=0)
    ax.set_title("every shape of the sweep (red: the issue's target)", loc="left", fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def _draw_sums(ax, bench: Bench, results: list[Result]) -> None:
    families = dict.fromkeys(r.family for r in results)
    for colour, name in zip(itertools.cycle(("tab:blue", "tab:green", "tab:orange")), families):
        mine = sorted((r for r in results if r.family == name), key=elements)
        n = [elements(r) for r in mine]
        ax.plot(n, [r.fast.gbs for r in mine], "o-", color=colour, label=f"{name} (fast)")
        cupy = [(elements(r), r.cupy.gbs) for r in mine if r.cupy is not None]
        if cupy:
            ax.plot(*zip(*cupy), "s--", color=colour, alpha=0.6, label=f"{mine[0].cupy_name}")
        crossing = crossover(bench, name)
        if crossing is not None:
            ax.axvline(crossing, color=colour, linestyle=":", alpha=0.7)
    ax.axhline(bench.ceiling.gbs, color="grey", linewidth=0.8, label="device copy")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("elements (dotted: from here on as fast as CuPy or faster)")
    ax.set_ylabel("GB/s, back-to-back calls from Python")
    ax.set_title(f"{' and '.join(families)} beside CuPy", loc="left", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)

"""The grader's answer: a verdict line, findings in plain words, and a picture where it helps."""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field

import numpy as np

from .running import poison as running_poison

RACES = frozenset({"RAW", "WAR", "WAW", "race between blocks", "atomic race"})


class Sentence(str):
    """A finding on wrong values that ends with a guess at the pattern of the wrong elements (a
    shift, the halo, the last block; `plain`: the finding without it), dropped where the
    tracer found a race that explains them."""

    plain: str = ""


@dataclass
class Report:
    """What a grader says about one attempt. Shown as text (print) or HTML (a notebook cell)."""

    exercise_id: str
    title: str
    passed: bool
    findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    picture_png: bytes | None = None
    kinds: set[str] = field(default_factory=set)  # what was found: "values", "race", ...

    @property
    def verdict(self) -> str:
        mark = "✓ solved" if self.passed else "✗ not yet"
        return f"{mark} · {self.exercise_id} {self.title}"

    @property
    def shown(self) -> list[str]:
        """The findings as the student reads them: after a race, wrong values without a guess
        at their pattern (a halo, the last block), which the race explains instead."""
        if not self.kinds & RACES:
            return list(self.findings)
        return [getattr(f, "plain", "") or f for f in self.findings]

    def __str__(self) -> str:
        lines = [self.verdict] + [f"- {f}" for f in self.shown] + [f"  {n}" for n in self.notes]
        if self.picture_png:
            lines.append("  (a picture of the wrong elements is shown in the notebook)")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.passed else "#b42318"
        parts = [f'<div><b style="color:{color}">{html.escape(self.verdict)}</b>']
        if self.findings:
            parts.append(
                "<ul>" + "".join(f"<li>{_inline_code(f)}</li>" for f in self.shown) + "</ul>"
            )
        for note in self.notes:
            parts.append(f"<div>{_inline_code(note)}</div>")
        if self.picture_png:
            data = base64.b64encode(self.picture_png).decode()
            parts.append(f'<img src="data:image/png;base64,{data}" alt="wrong elements"/>')
        return "".join(parts) + "</div>"


def _inline_code(text: str) -> str:
    """Escape text for HTML and show `back-quoted` parts as code."""
    pieces = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


def number(value) -> str:
    """A value as the student would write it: integers plainly, floats to 6 significant digits."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    return f"{value:.6g}"


def index_text(index) -> str:
    index = tuple(int(i) for i in index)
    return str(index[0]) if len(index) == 1 else "[" + ", ".join(map(str, index)) + "]"


def wrong_mask(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """True where got differs from expected (NaN where a number is expected counts as wrong)."""
    if got.dtype.kind in "fc" or expected.dtype.kind in "fc":
        g, e = got.astype(np.float64), expected.astype(np.float64)
        return ~np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    return got != expected


def _where_wrong(wrong: np.ndarray, block, writes: np.ndarray | None = None) -> str:
    """A guess at the pattern of the wrong elements: the first block's elements repeated, the
    tail, block edges, whole rows... or nothing where no pattern names the mistake."""
    if wrong.ndim == 0 or not wrong.any():
        return ""
    block = tuple(block) if isinstance(block, (tuple, list)) else (block,)
    columns = wrong.shape[1] if wrong.ndim > 2 else wrong.shape[-1]
    positions = np.argwhere(wrong)
    flat_columns = positions[:, -1] if wrong.ndim <= 2 else positions[:, 1]
    bx = block[0]
    if wrong.ndim == 1 and columns > bx and not wrong[:bx].any() and wrong[bx:].all():
        repeated = writes is not None and bool((writes[:bx] > 1).any())
        if repeated or columns > 2 * bx:
            return (
                f"only the first {bx} elements (one block's worth) are right"
                + (", and they were written by several blocks" if repeated else "")
                + ": every block works on the same elements. Does the index include "
                "`cuda.blockIdx.x` (`i = cuda.grid(1)`)?"
            )
    full = (columns // bx) * bx
    if 0 < full < columns and (flat_columns >= full).all() and wrong.ndim <= 2:
        return (
            f"all of them past element {full} along the last axis: in the last, partial "
            f"block (the size is not a multiple of the block's {bx} threads)"
        )
    edge_columns = {c for c in range(columns) if c % bx in (0, bx - 1) or c == columns - 1}
    edges = np.isin(flat_columns, sorted(edge_columns))
    if bx > 2 and len(edge_columns) < columns and edges.all() and len(positions) > 1:
        return (
            f"all of them at the first or last element of a block of {bx} along x: "
            "look at what a thread on a block's edge reads (the halo)"
        )
    if wrong.ndim == 2 and wrong.shape[0] > 1 and wrong[0].all() and not wrong[1:].any():
        return "only the first row"
    if wrong.all() and wrong.size > 1:
        return "every element"
    return ""


def describe_values(
    name: str,
    got: np.ndarray,
    expected: np.ndarray,
    *,
    rtol: float,
    atol: float,
    writes: np.ndarray | None,
    block,
    case_label: str,
) -> tuple[str | None, np.ndarray | None]:
    """A sentence on the wrong elements of one output, and the mask of wrong elements (or None)."""
    if got.shape != expected.shape:
        return (f"`{name}` has shape {got.shape}, expected {expected.shape}", None)
    wrong = wrong_mask(got, expected, rtol, atol)
    count = int(wrong.sum())
    if not count:
        return None, None
    first = tuple(np.argwhere(wrong)[0]) if got.ndim else ()
    sentence = (
        f"Wrong values in `{name}` for {case_label}: {count} of {got.size} elements "
        f"differ; the first at {index_text(first) if first else 'the only element'}: "
        f"expected {number(expected[first])}, got {number(got[first])}"
    )
    if writes is not None:
        never = int(((writes == 0) & wrong).sum())
        if never:
            sentence += (
                f". {never} of them were never written (no thread stored to them)"
                if never < count
                else ". No thread wrote it (never written)"
                if count == 1
                else ". No thread wrote any of them (never written)"
            )
    elif got.dtype.kind in "fc":
        unwritten = int((np.isnan(got) & wrong).sum())
        if unwritten:
            sentence += f". {unwritten} of them still hold NaN: probably never written"
    elif (got == running_poison(got.dtype)).any():
        unwritten = int(((got == running_poison(got.dtype)) & wrong).sum())
        if unwritten:
            sentence += (
                f". {unwritten} of them still hold {number(running_poison(got.dtype))}, "
                "the value outputs start with: probably never written"
            )
    pattern = _shifted(got, expected, wrong, rtol, atol, writes)
    if not pattern:
        pattern = _where_wrong(wrong, block, writes)
        pattern = f"; {pattern}" if pattern else ""
    if pattern and not (pattern == "; every element" and "never written" in sentence):
        guessed = Sentence(f"{sentence}{pattern}.")
        guessed.plain = sentence + "."
        return guessed, wrong
    return sentence + ".", wrong


def _shifted(got, expected, wrong, rtol, atol, writes) -> str:
    """'; ...shifted one place...' when most wrong elements of a 1-D output hold the value
    expected one place to the left (or right) of them, else ''."""
    if got.ndim != 1 or got.size < 3 or int(wrong.sum()) < 2:
        return ""
    written = np.ones(got.shape, bool) if writes is None else writes > 0
    if got.dtype.kind in "fc":
        written &= ~np.isnan(got)
    positions = np.flatnonzero(wrong & written)
    for step, side, index in ((1, "left", "k - 1"), (-1, "right", "k + 1")):
        inside = positions[(positions - step >= 0) & (positions - step < got.size)]
        if len(inside) < 2:
            continue
        same = ~wrong_mask(got[inside], expected[inside - step], rtol, atol)
        if same.sum() >= 2 and same.mean() >= 0.75:
            return (
                f"; {int(same.sum())} of them hold the value expected one place to their "
                f"{side} (element k has what element {index} should): the values are shifted "
                "by one place, an index off by one"
            )
    return ""


def describe_writes(name: str, writes: np.ndarray | None) -> str | None:
    """A sentence when some element of an output was stored by more than one thread."""
    if writes is None:
        return None
    twice = writes > 1
    if not twice.any():
        return None
    first = tuple(np.argwhere(twice)[0])
    return (
        f"{int(twice.sum())} elements of `{name}` were written more than once (element "
        f"{index_text(first)}: {int(writes[first])} stores). Each element needs one thread; "
        "extra threads redo work (and race when they write different values)."
    )


def picture(wrong: np.ndarray, writes: np.ndarray | None, title: str) -> bytes | None:
    """A small PNG of a 2-D (or 3-D) output: right in grey, wrong in red, never written in black."""
    if wrong is None or wrong.ndim < 2 or not wrong.any():
        return None
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    mask = wrong.any(axis=tuple(range(2, wrong.ndim))) if wrong.ndim > 2 else wrong
    never = None
    if writes is not None:
        never = writes == 0
        never = never.all(axis=tuple(range(2, never.ndim))) if never.ndim > 2 else never
    rows, columns = np.nonzero(mask)
    top, left = max(0, rows.min() - 4), max(0, columns.min() - 4)
    bottom, right = min(mask.shape[0], top + 48), min(mask.shape[1], left + 64)
    shown = mask[top:bottom, left:right].astype(np.int8)
    if never is not None:
        shown[(never[top:bottom, left:right]) & (shown == 1)] = 2
    figure = Figure(
        figsize=(
            min(7.0, max(4.5, 2.0 + 0.1 * shown.shape[1])),
            min(4.0, max(1.9, 1.3 + 0.12 * shown.shape[0])),
        ),
        dpi=80,
    )
    axes = figure.add_subplot()
    axes.imshow(
        shown,
        cmap=ListedColormap(["#d0d0d0", "#d62728", "#000000"]),
        vmin=0,
        vmax=2,
        interpolation="nearest",
        aspect="auto",
        extent=(left - 0.5, right - 0.5, bottom - 0.5, top - 0.5),
    )
    unwritten = "black: never written, " if never is not None else ""
    legend = f"red: wrong, {unwritten}grey: right"
    axes.set_title(f"{title}\n{legend}", fontsize=9)
    axes.set_xlabel("column", fontsize=8)
    axes.set_ylabel("row", fontsize=8)
    axes.tick_params(labelsize=7)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()

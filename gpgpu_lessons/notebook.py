"""Small helpers that keep notebook cells short: show kernel source, check results, print tables."""

from __future__ import annotations

import inspect
import textwrap

import numpy as np
from IPython.display import Code, Markdown, display

from . import results
from .formats import format_count, format_ms, format_number
from .specialise import python_function


def source(*functions) -> str:
    """The Python source of kernels or functions (a Numba kernel's original function included)."""
    texts = []
    for function in functions:
        try:
            original = python_function(function)
        except AttributeError:  # a plain function, class or module
            original = function
        try:
            texts.append(textwrap.dedent(inspect.getsource(original)))
        except TypeError:
            raise TypeError(
                f"source() takes functions or @cuda.jit kernels, got {type(function).__name__}"
            ) from None
    return "\n".join(texts)  # each ends in a newline: one blank line between functions


def show_source(*functions) -> None:
    """Display the source of kernels from the package, highlighted, so each kernel has one copy."""
    display(Code(source(*functions), language="python"))


def default_tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) that fit a dtype: exact for integers, 100 ulps (rtol >= 1e-6) for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return 0.0, 0.0
    eps = float(np.finfo(dtype).eps)
    return max(1e-6, 100 * eps), 100 * eps


def check(
    name: str, got, expected, *, rtol: float | None = None, atol: float | None = None
) -> None:
    """Print '<name> matches NumPy: True' and fail loudly (AssertionError) when it does not.

    NaN must stand where the reference has NaN (and nowhere else); the default tolerance fits
    the result's dtype (`default_tolerance`). Returns None, so a check on a cell's last line adds
    no Out[] value (which nbval would compare).
    """
    got, expected = np.asarray(got), np.asarray(expected)
    default_rtol, default_atol = default_tolerance(got.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    same = got.shape == expected.shape and bool(
        np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    )
    print(f"{name} matches NumPy: {same}")
    if not same:
        raise AssertionError(
            f"{name} differs from the NumPy reference: {_difference(got, expected, rtol, atol)}"
        )


def _difference(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> str:
    """Where and by how much got differs from expected, in words."""
    if got.shape != expected.shape:
        return f"shape {got.shape} != {expected.shape}"
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    return (
        f"{int(wrong.sum())} of {wrong.size} elements differ; the first at index {first}: "
        f"got {got[first].item()!r}, expected {expected[first].item()!r} "
        f"(rtol={rtol:g}, atol={atol:g})"
    )


duration = format_ms  # the names the notebooks call: a time in ms, an element count
count = format_count


def recorded_table(key: str | None, header: list[str], rows: list[list], *, title: str, size=None):
    """Record a measured table under `key` (GPU runs) and return what to show: `results.Shown`,
    this run's table on a GPU, the recorded GPU run's in the simulator."""
    data = {"kind": "table", "title": title, "size": size, "columns": header, "rows": rows}
    return results.experiment(key, data)


def show_recorded(shown, *, beside: tuple[list[str], dict] | None = None) -> None:
    """Display a table experiment under a heading naming what, at which size, and where it ran.

    beside: (columns, {first cell of a row: cells}) counted on this machine (the tracer's),
    added to the right of the rows they name.
    """
    heading = shown.title
    header, rows = list(shown.data["columns"]), [list(row) for row in shown.data["rows"]]
    if beside is not None:
        columns, cells = beside
        header += columns
        rows = [row + list(cells.get(row[0], [""] * len(columns))) for row in rows]
        heading += f"** ({shown.label}) · tracer counts from this machine"
    else:
        heading += f"** ({shown.label})"
    display(Markdown(f"**{heading}"))
    table(header, rows)


def show_table(key: str | None, header: list[str], rows: list[list], *, title: str, size=None):
    """Record a measured table (GPU runs) and show it; in the simulator, the recorded GPU table.

    The heading names what was measured, its size and where: this GPU, or the recorded run.
    Returns None (a cell ending with it shows no Out[] value); `recorded_table` gives the data.
    """
    show_recorded(recorded_table(key, header, rows, title=title, size=size))


def table(header: list[str], rows: list[list]) -> None:
    """Display a Markdown table (floats written by `formats.format_number`)."""

    def cell(value):
        if isinstance(value, float):
            return format_number(value)
        return "" if value is None else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))

"""Small helpers that keep notebook cells short: show kernel source, check results, print tables."""

from __future__ import annotations

import inspect
import textwrap

import numpy as np
from IPython.display import Code, Markdown, display


def source(*functions) -> str:
    """The Python source of kernels or functions (a Numba kernel's original function included)."""
    texts = []
    for function in functions:
        original = getattr(function, "py_func", None) or getattr(function, "fn", None) or function
        try:
            texts.append(textwrap.dedent(inspect.getsource(original)))
        except TypeError:
            raise TypeError(
                f"source() takes functions or @cuda.jit kernels, got {type(function).__name__}"
            ) from None
    return "\n\n".join(texts)


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


def duration(ms: float) -> str:
    """A time for people: '13.8 s', '1.74 ms', '52.1 µs', '830 ns' (three significant digits)."""
    for unit, scale in (("s", 1e3), ("ms", 1.0), ("µs", 1e-3)):
        if abs(ms) >= scale:
            return f"{ms / scale:.3g} {unit}"
    return f"{ms * 1e6:.3g} ns"


def count(n: int) -> str:
    """An element count for people: '100', '10,000', '2^28' (powers of two from 2^10 up)."""
    n = int(n)
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def show_table(
    key: str | None, header: list[str], rows: list[list], *, title: str, size: str | None = None
):
    """Record a measured table (GPU runs) and show it; in the simulator, the recorded GPU table.

    The heading names what was measured, its size and where: this GPU, or the recorded run.
    Returns None (a cell ending with it shows no Out[] value); results.experiment gives the data.
    """
    from . import results

    shown = results.experiment(
        key, {"kind": "table", "title": title, "size": size, "columns": header, "rows": rows}
    )
    heading = shown.title or (f"{title} · {size}" if size and shown.live else title)
    display(Markdown(f"**{heading}** ({shown.label})"))
    table(shown.data["columns"], shown.data["rows"])


def table(header: list[str], rows: list[list]) -> None:
    """Display a Markdown table (numbers formatted to 3-4 significant digits)."""

    def cell(value):
        if isinstance(value, float):
            return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
        return "" if value is None else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))

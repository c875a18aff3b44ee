"""Small helpers that keep notebook cells short: show kernel source, check results, print tables."""
from __future__ import annotations

import inspect

import numpy as np
from IPython.display import Code, Markdown, display


def source(*functions) -> str:
    """The Python source of kernels or functions (a Numba kernel's original function included)."""
    texts = []
    for function in functions:
        original = getattr(function, "py_func", None) or getattr(function, "fn", None) or function
        try:
            texts.append(inspect.getsource(original))
        except TypeError:
            raise TypeError(f"source() takes functions or @cuda.jit kernels, got {type(function).__name__}") from None
    return "\n\n".join(texts)


def show_source(*functions) -> None:
    """Display the source of kernels from the package, highlighted, so each kernel has one copy."""
    display(Code(source(*functions), language="python"))


def check(name: str, got, expected, *, rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Print '<name> matches NumPy: True' and fail loudly (AssertionError) when it does not.

    Returns None, so a check on a cell's last line adds no Out[] value (which nbval would compare).
    """
    got, expected = np.asarray(got), np.asarray(expected)
    same = got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol))
    print(f"{name} matches NumPy: {same}")
    if not same:
        detail = (f"shape {got.shape} != {expected.shape}" if got.shape != expected.shape else
                  f"max abs error {np.max(np.abs(got.astype(np.float64) - expected)):.3g}")
        raise AssertionError(f"{name} differs from the NumPy reference: {detail}")


def table(header: list[str], rows: list[list]) -> None:
    """Display a Markdown table (numbers formatted to 3-4 significant digits)."""
    def cell(value):
        if isinstance(value, float):
            return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
        return "" if value is None else str(value)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))

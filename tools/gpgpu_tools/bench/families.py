"""What the bench times: every lesson's fast kernels, their NumPy references and CuPy's calls.

Each lesson declares its bench families in `gpgpu_lessons/lNN_topic/bench.py`: a tuple `BENCH`
of plain dicts (the student package never imports the tools), found by scanning, so a new
lesson's family needs no edit here. `FAMILIES` holds them all by name, in the order the bench
runs them. One declaration::

    BENCH = (
        {
            "family": "transpose",              # its name for --families; unique
            "order": 1,                         # optional: its place in the bench's tables,
                                                # lowest first; families without one come last
            "description": "float32 matrices, lesson 03",
            "dtype": np.float32,                # the inputs' element type
            "sweep": "matrices",                # which shapes: shapes.SWEEPS
            "kernels": (                        # the fast wrappers that take these inputs
                {
                    "name": "transpose",
                    "wrapper": fast.transpose,  # @launch.op; wrapper.prepare(*inputs, out=out)
                    "expected": transposed,     # (host inputs, where) -> the reference values
                                                # at the output's indices `where`; leave it out
                                                # for a reduction
                    "cupy_name": "a.T.copy() (CuPy)",
                    "cupy": lambda cp, a: lambda: a.T.copy(),  # CuPy's call, or None
                },
            ),
            "transposed": True,                 # optional: Family's and Kernel's other fields
            "of_copy": 0.85,
        },
    )

`where` holds one index array per axis of the output's first two axes. The optional fields are
those of `Family` and `Kernel` below, with their defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..lessons import lesson_modules
from . import data, shapes


@dataclass(frozen=True)
class Kernel:
    """One timed operation: the fast wrapper, its reference, and CuPy's way of doing the same."""

    name: str
    wrapper: Any  # the @launch.op wrapper; wrapper.prepare(*inputs, out=out) -> Launch
    cupy_name: str
    cupy: Callable  # (cupy module, cupy inputs) -> a callable that does the same on CuPy, or None
    expected: Callable | None = None  # (host inputs, where) -> values; None for a reduction
    options: dict = field(default_factory=dict)  # extra arguments of prepare
    tolerance: Callable | None = None  # (host inputs) -> absolute error allowed; None: exact

    @property
    def wrapper_name(self) -> str:
        return f"{self.wrapper.__module__}.{self.wrapper.__name__}"

    def prepare(self, inputs, out):
        return self.wrapper.prepare(*inputs, out=out, **self.options)


@dataclass(frozen=True)
class Family:
    """Fast kernels that take the same inputs, the shapes they are timed on, and their targets."""

    name: str
    dtype: Any
    description: str
    sweep: str  # the kind of shapes (shapes.SWEEPS)
    kernels: tuple[Kernel, ...]
    inputs: int = 1  # arrays of the input's shape (2 for the dot)
    transposed: bool = False  # the output's shape is the input's reversed
    reduction: bool = False  # one number out, compared with a float64 sum
    of_copy: float | None = None  # target: at least this x the same-run device copy
    of_cupy: float | None = None  # target: at least this x CuPy's time ...
    cupy_from: int = 0  # ... from this many elements up
    tiny: tuple = ()  # (shape, label) of the simulator's sweep; () : the sweep kind's own
    skip: tuple[str, ...] = ()  # labels of the sweep's shapes this family is not timed on

    def make(self, shape, seed: int) -> tuple:
        """Random device inputs of this shape."""
        return tuple(data.random_array(shape, self.dtype, seed + k) for k in range(self.inputs))

    def output(self, shape) -> tuple[tuple[int, ...], np.dtype]:
        """The shape and dtype of a kernel's output for inputs of `shape`."""
        if self.reduction:
            return (1,), np.dtype(self.dtype)
        return (tuple(shape)[::-1] if self.transposed else tuple(shape)), np.dtype(self.dtype)

    def bytes_moved(self, shape) -> int:
        """Bytes that must move: every input read (and, but for a reduction, the output written)."""
        nbytes = int(np.prod(shape)) * np.dtype(self.dtype).itemsize
        return nbytes * (self.inputs if self.reduction else 2)

    def target(self) -> str:
        """The issue's target for this family, in words."""
        parts = []
        if self.of_copy:
            parts.append(f">= {self.of_copy:g}x copy")
        if self.of_cupy:
            start = f" from {self.cupy_from:,} elements" if self.cupy_from else ""
            parts.append(f">= {self.of_cupy:g}x CuPy{start}")
        return ", ".join(parts)


# ---- the declarations, found in the lessons ----------------------------------------------


def family(declared: dict, module: str) -> Family:
    """The Family of one BENCH entry of `module`; a missing, unknown or wrong key is named."""
    entry = {k: v for k, v in declared.items() if k != "order"}
    try:
        kernels = tuple(Kernel(**kernel) for kernel in entry.pop("kernels"))
        found = Family(name=entry.pop("family"), kernels=kernels, **entry)
    except (KeyError, TypeError) as problem:
        raise ValueError(
            f"{module}.BENCH: {type(problem).__name__} {problem} "
            "(gpgpu_tools/bench/families.py shows a declaration)"
        ) from None
    if found.sweep not in shapes.SWEEPS:
        raise ValueError(
            f"{module}.BENCH: family {found.name!r} has sweep {found.sweep!r}; "
            f"choose one of {', '.join(shapes.SWEEPS)}"
        )
    return found


def discover() -> dict[str, Family]:
    """Every family the lessons' bench modules declare, by name, in the bench's order."""
    declared = []  # (order, module, position, Family)
    for module in lesson_modules("bench"):
        for position, entry in enumerate(getattr(module, "BENCH", ())):
            order = entry.get("order", math.inf)
            declared.append((order, module.__name__, position, family(entry, module.__name__)))
    found: dict[str, Family] = {}
    where: dict[str, str] = {}
    for _, module, _, one in sorted(declared, key=lambda d: d[:3]):
        if one.name in found:
            raise ValueError(
                f"{where[one.name]} and {module} both declare the bench family {one.name!r}: "
                "rename one"
            )
        found[one.name], where[one.name] = one, module
    return found


FAMILIES = discover()

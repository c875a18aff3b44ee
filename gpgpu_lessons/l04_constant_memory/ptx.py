"""Where a compiled kernel keeps its filter or table: a one-line summary of its PTX.

Numba fills constant memory at compile time, so the PTX tells the story: a `.const` array read
with `ld.const` (a table read at run-time indices), taps folded into the multiply-adds as
immediates (a filter read at indices the compiler knows), or `ld.global` loads (a filter passed
as an argument). The PTX facts come from the package's PTX checks (gpgpu_lessons.ptx).
"""

from __future__ import annotations

from numba import cuda

from .. import ptx as facts
from .. import runtime


def kernel_ptx(kernel, signature: str, cc: tuple[int, int] | None = None) -> str | None:
    """The PTX of a kernel for one signature, compiled now (None in the simulator: it has no PTX).

    cc: the compute capability to compile for (default: the GPU's).
    """
    if runtime.is_simulator():
        return None
    cc = cc or runtime.device_info().compute_capability
    return cuda.compile_ptx(facts.python_function(kernel), signature, cc=cc)[0]


def immediate_fmas(ptx: str) -> int:
    """Multiply-adds with an immediate multiplier: fma.rn.f32 %f3, %f2, 0f3F800000, %f1."""
    operands = [
        line.split(None, 1)[1].split(", ")
        for line in ptx.splitlines()
        if line.lstrip().startswith("fma.rn.f32")
    ]
    return sum(1 for o in operands if any(value.startswith("0f") for value in o[1:3]))


def ptx_summary(ptx) -> str:
    """One line on where a kernel's PTX keeps its filter or table (text, or inspect_asm()'s dict).

    The __constant__ arrays (`.const` declarations, with their bytes), the loads from constant
    and global memory, and the multiply-adds with an immediate multiplier.
    """
    text = "\n".join(ptx.values()) if isinstance(ptx, dict) else str(ptx)
    arrays = " ".join(f"{name}[{size}]" for name, size in facts.const_arrays(text))
    loads = facts.memory_instructions(text)
    count = {
        space: sum(n for op, n in loads.items() if op.startswith(f"ld.{space}."))
        for space in ("const", "global")
    }
    return (
        f"{len(facts.const_arrays(text))} .const array(s) {arrays}".rstrip()
        + f"; {count['const']} ld.const, {count['global']} ld.global, "
        f"{immediate_fmas(text)} fma with an immediate"
    )

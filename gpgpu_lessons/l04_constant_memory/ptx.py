"""Where a compiled kernel keeps its filter or table: a one-line summary of its PTX.

Numba fills constant memory at compile time, so the PTX tells the story: a `.const` array read
with `ld.const` (a table read at run-time indices), taps folded into the multiply-adds as
immediates (a filter read at constant indices), or `ld.global` loads (a filter passed as an
argument).
"""
from __future__ import annotations

from numba import cuda

from .. import runtime


def kernel_ptx(kernel, signature: str, cc: tuple[int, int] | None = None) -> str | None:
    """The PTX of a kernel for one signature, compiled now (None in the simulator: it has no PTX).

    cc: the compute capability to compile for (default: the GPU's).
    """
    if runtime.is_simulator():
        return None
    cc = cc or runtime.device_info().compute_capability
    return cuda.compile_ptx(kernel.py_func, signature, cc=cc)[0]


def ptx_summary(ptx) -> str:
    """One line on where a kernel's PTX keeps its filter or table (text, or inspect_asm()'s dict).

    Counts the __constant__ arrays (`.const` declarations, with their size), the loads from
    constant and global memory, and the float multiply-adds whose multiplier is an immediate (a
    value written into the instruction itself, e.g. `fma.rn.f32 %f3, %f2, 0f3F800000, %f1`).
    """
    text = "\n".join(ptx.values()) if isinstance(ptx, dict) else str(ptx)
    lines = text.splitlines()
    arrays = [line.split("=")[0].split()[-1] for line in lines
              if line.lstrip().startswith(".const")]
    fmas = [line.split(None, 1)[1].split(", ") for line in lines
            if line.lstrip().startswith("fma.rn.f32")]
    immediates = sum(1 for operands in fmas if any(o.startswith("0f") for o in operands[1:3]))
    return (f"{len(arrays)} .const array(s) {' '.join(arrays)}".rstrip()
            + f"; {text.count('ld.const.')} ld.const, {text.count('ld.global.')} ld.global, "
            f"{immediates} fma with an immediate")

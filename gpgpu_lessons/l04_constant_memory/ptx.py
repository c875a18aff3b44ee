"""Where a compiled kernel keeps its filter or table: a one-line summary of its PTX.

Numba fills constant memory at compile time, so the PTX tells the story: a `.const` array read
with `ld.const` (a table read at run-time indices), taps folded into the multiply-adds as
immediates (a filter read at indices the compiler knows), or `ld.global` loads (a filter passed
as an argument). The PTX facts come from gpgpu_lessons.ptxfacts.
"""

from __future__ import annotations

from numba import cuda

from .. import launch, runtime
from .. import ptxfacts as facts
from ..specialise import python_function
from . import fast, textbook


def kernel_ptx(kernel, signature: str, cc: tuple[int, int] | None = None) -> str | None:
    """The PTX of a kernel for one signature, compiled now (None in the simulator: it has no PTX).

    cc: the compute capability to compile for (default: the GPU's).
    """
    if runtime.is_simulator():
        return None
    cc = cc or runtime.device_info().compute_capability
    return cuda.compile_ptx(python_function(kernel), signature, cc=cc)[0]


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
        f"{facts.immediate_fmas(text)} fma with an immediate"
    )


def signature(kernel) -> str:
    """The first signature the lesson compiles `kernel` for (textbook or fast SIGNATURES)."""
    for signatures in (textbook.SIGNATURES, fast.SIGNATURES):
        if kernel in signatures:
            return signatures[kernel][0]
    raise ValueError(
        f"{python_function(kernel).__name__} is not one of lesson 04's compiled kernels "
        "(textbook.SIGNATURES or fast.SIGNATURES)"
    )


def launched(shown):
    """A kernel, or the one kernel a prepared launch (`wrapper.prepare(...)`) runs."""
    if not isinstance(shown, launch.Launch):
        return shown
    kernels = list(dict.fromkeys(step.kernel for step in shown.steps))
    if len(kernels) != 1:
        raise ValueError(f"this launch runs {len(kernels)} kernels; show them one at a time")
    return kernels[0]


def show(kernels, *, in_simulator: str, cc: tuple[int, int] | None = None) -> None:
    """Print one line per kernel on where its PTX keeps the filter or table (ptx_summary).

    kernels: a list of the lesson's kernels or prepared launches (labelled by kernel name), or
    {label: kernel or prepared launch}; a launch stands for the kernel it runs. cc: as for
    kernel_ptx. In the simulator, which has no PTX, print "simulator: no PTX here; " +
    in_simulator instead.
    """
    if runtime.is_simulator():
        print(f"simulator: no PTX here; {in_simulator}")
        return
    if isinstance(kernels, dict):
        kernels = {label: launched(k) for label, k in kernels.items()}
    else:
        kernels = {python_function(k).__name__: k for k in map(launched, kernels)}
    width = max(len(label) for label in kernels)
    for label, kernel in kernels.items():
        print(f"{label:{width}s}: {ptx_summary(kernel_ptx(kernel, signature(kernel), cc))}")

"""Helper package of the gpgpu-lessons notebooks: runtime choice, timing, plots and the kernels.

Importing it chooses a real GPU or Numba's CUDA simulator (before numba.cuda is imported; after
it, it says what to restart) and prints one line that says which, and why (unless
GPGPU_LESSONS_QUIET=1, for tools that run no kernel).
"""

import os

from . import runtime

if runtime.MODE == runtime.SIMULATOR:
    from . import simwarp

    simwarp.install()  # warp intrinsics (shfl_*_sync, ballot_sync, ...) for the simulator

if os.environ.get("GPGPU_LESSONS_QUIET", "") != "1":
    print(runtime.mode_line())

__version__ = "0.1.0"


def __getattr__(name: str):
    """`trace_kernel`, imported on first use (the tracer loads the simulator's machinery)."""
    if name == "trace_kernel":
        from .trace import trace_kernel

        return trace_kernel
    raise AttributeError(f"module 'gpgpu_lessons' has no attribute {name!r}")

"""A kernel launched again with the arguments Numba marshalled for it once: what a call costs.

`kernel[grid, block](*args)` types the arguments, looks up the compiled kernel, marshals every
array into the pointer, shape and strides the kernel receives and builds a launch
configuration, on every call; most of a launch's host time is that marshalling (measured by
`python -m gpgpu_tools.perf_run`, recorded in `recorded/perf/`). A wrapper called again with
the same device arrays (`launch.KeptCalls`) launches the same compiled kernel with the same
arguments, so on a GPU it marshals them once and hands them to the launch Numba itself makes
(`cuda.core.launch`) every time after.

`marshal` returns None, and the caller launches through Numba as usual, wherever that would
not be the same launch: in the simulator; for a kernel compiled with `debug=True` (Numba checks
its error flag after each launch), a cooperative one or one compiled per launch configuration;
when an argument is one Numba copies to the device and back (a NumPy array); when the kernel
was not compiled for these argument types yet; and on a Numba release whose internals differ
from those read here (numba-cuda 0.30).
"""

from __future__ import annotations

import functools

import numpy as np

from . import runtime


def marshal(kernel, grid, block, args: tuple):
    """A function that launches kernel[grid, block](*args) with its arguments marshalled now."""
    if runtime.MODE != runtime.GPU or any(isinstance(a, np.ndarray) for a in args):
        return None
    try:
        from cuda.core import LaunchConfig
        from cuda.core import launch as core_launch
        from numba.cuda._compat import CUDA_CORE_GE_1_0

        if kernel._launch_config_sensitive:
            return None
        configured = kernel[grid, block]
        compiled = kernel.overloads.get(tuple(kernel.typeof_pyval(a) for a in args))
        if compiled is None or compiled.debug or compiled.cooperative:
            return None
        copies_back, kernel_args = [], []
        for numba_type, value in zip(compiled.argument_types, args, strict=True):
            compiled._prepare_args(numba_type, value, configured.stream, copies_back, kernel_args)
        if copies_back:
            return None
        cooperative = "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch"
        config = LaunchConfig(
            grid=configured.griddim,
            block=configured.blockdim,
            shmem_size=configured.sharedmem,
            **{cooperative: False},
        )
        function = compiled._codelibrary.get_cufunc().kernel
    except (AttributeError, ImportError, KeyError, TypeError, ValueError):
        return None  # another Numba release: launch through the dispatcher
    return functools.partial(core_launch, configured.stream, config, function, *kernel_args)

"""A kernel launched again with the arguments Numba marshalled for it once: what a call costs.

`kernel[grid, block](*args)` types the arguments, looks up the compiled kernel, marshals every
array into the pointer, shape and strides the kernel receives and builds a launch
configuration, on every call; most of a launch's host time is that marshalling (measured by
`python -m gpgpu_tools.perf_run`, recorded in `recorded/perf/`). A wrapper called again with
the same device arrays (`launch.KeptCalls`) launches the same compiled kernel with the same
arguments, and so does a prepared `launch.Launch` run again (`timing.benchmark` runs one back to
back): on a GPU each marshals them once and hands them to the launch Numba itself makes
(`cuda.core.launch`) every time after.

`marshal` returns None, and the caller launches through Numba as usual, wherever that would
not be the same launch: in the simulator; for a kernel compiled with `debug=True` (Numba checks
its error flag after each launch), a cooperative one or one compiled per launch configuration;
when an argument is one Numba copies to the device and back (a NumPy array not in mapped
memory); when the kernel
was not compiled for these argument types yet; and on a Numba release whose internals differ
from those read here (numba-cuda 0.30).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import runtime


@dataclass(frozen=True, slots=True)
class Marshalled:
    """One launch step with its arguments marshalled once: run() launches it again."""

    launch: Any

    def run(self) -> None:
        self.launch()


def marshalled_steps(steps) -> tuple | None:
    """The launch steps (each with kernel, grid, block, args) marshalled, or None if one cannot."""
    runs = tuple(marshal(s.kernel, s.grid, s.block, s.args) for s in steps)
    return None if None in runs else tuple(map(Marshalled, runs))


def marshal(kernel, grid, block, args: tuple):
    """A function that launches kernel[grid, block](*args) with its arguments marshalled now."""
    if runtime.MODE != runtime.GPU:
        return None
    try:
        from cuda.core import LaunchConfig
        from cuda.core import launch as core_launch
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        from numba.cuda.cudadrv.devicearray import DeviceNDArrayBase

        if any(isinstance(a, np.ndarray) and not isinstance(a, DeviceNDArrayBase) for a in args):
            return None  # a host array, which Numba copies in and back (a mapped one it does not)

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

"""trace_kernel: run a kernel on Numba's CUDA simulator and say what it does to memory."""

from __future__ import annotations

import gc
import time

from . import accesses, hazards, model, record
from .report import Trace, source_line


def trace_kernel(
    kernel, griddim, blockdim, *args, blocks=None, dynamic_shared: int = 0, limit_s=None
) -> Trace:
    """Run `kernel[griddim, blockdim](*args)` on the simulator, recording every memory access.

    Works on any @cuda.jit kernel, in simulator mode and on a GPU machine (there the kernel's
    Python function runs on the simulator's machinery, for the trace only). Arrays are updated
    as by a launch. `blocks`: trace only some blocks (an int: that many, spread over the grid;
    or a list of block indices). `dynamic_shared`: bytes of dynamic shared memory. `limit_s`:
    seconds the launch may run (default `watchdog.default_limit()`, GPGPU_LAUNCH_LIMIT_S or 30;
    0: none); past it `watchdog.LaunchTimeout` names the line where the threads spin.
    Returns a `Trace`: `.lines` (sectors, wavefronts, addresses, contention per source line,
    with a verdict), `.hazards` (races, uninitialised shared reads, partial barriers,
    out-of-bounds indices), `.summary()`, `.figure(line)`; a notebook shows it as a table.
    """
    recording = record.run(
        kernel,
        griddim,
        blockdim,
        args,
        blocks=blocks,
        dynamic_shared=dynamic_shared,
        limit_s=limit_s,
    )
    start = time.perf_counter()
    collecting = gc.isenabled()
    gc.disable()  # the analysis makes many small tuples, none cyclic: no collection needed
    try:
        acc, bar, sites = accesses.build(recording)
        requests = model.requests(acc)
        rows = model.lines(requests, acc, sites, recording.views, source_line)
        found = hazards.find(acc, bar, recording, sites)
    finally:
        if collecting:
            gc.enable()
    return Trace(
        recording.kernel,
        recording.file,
        recording.grid,
        recording.block,
        recording.blocks,
        rows,
        found,
        acc,
        requests,
        sites,
        recording.views,
        recording.seconds,
        time.perf_counter() - start,
    )


def trace_launch(prepared, *, step: int = 0, blocks=None) -> Trace:
    """Trace one kernel of a prepared wrapper call (`wrapper.prepare(...)`): its `step`-th launch.

    blocks: as in `trace_kernel` (None: every block). A wrapper's launch may take several kernels
    (a reduction's two passes); `step` picks one.
    """
    steps = prepared.steps
    if not -len(steps) <= step < len(steps):
        raise ValueError(f"this launch has {len(steps)} kernel(s); step {step} is not one of them")
    s = steps[step]
    return trace_kernel(s.kernel, s.grid, s.block, *s.args, blocks=blocks)

"""Run a kernel on Numba's CUDA simulator with arrays that record every load, store and atomic.

The simulator (numba.cuda.simulator) runs one Python thread per CUDA thread, one block at a
time. `run` reuses its machinery (BlockManager, the kernel context, the swap of the `cuda`
module for a fake one) with three changes: arrays are wrapped in `arrays.Recorded` arrays that
log every access; the fake `cuda` module (`fakecuda`) records shared, local and constant arrays,
atomics and barriers; and what the kernel refers to is swapped for the trace (`swap`): global
NumPy arrays become constant memory, and on a real GPU device functions become simulated ones,
so that the kernel's Python function (`kernel.py_func`) runs on the simulator's machinery there.
"""

from __future__ import annotations

import inspect
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import watchdog
from .arrays import BLOCK, GLOBAL, Tracer
from .fakecuda import fake_module_class
from .swap import Substitutions, python_function

MAX_RECORDS = 4_000_000  # about 1 GB of records: blocks past it are not traced (a warning)


@dataclass
class Recording:
    """What `run` hands to the analysis: the records, the views, the launch."""

    kernel: str
    file: str
    first_line: int
    grid: tuple
    block: tuple
    blocks: list  # the grid points traced, in order
    records: list
    views: list
    oob: list = field(default_factory=list)
    seconds: float = 0.0


def _argument(tracer: Tracer, value, name: str, writebacks: list):
    """What the traced kernel gets for one argument: arrays become recorded global arrays."""
    from numba.cuda.args import ArgHint  # the simulator's in simulator mode

    if isinstance(value, ArgHint):
        value = value.value
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value
        return tracer.wrap(value, name, GLOBAL)
    host = getattr(value, "_ary", None)  # a simulator device array
    if isinstance(host, np.ndarray):
        return tracer.wrap(host, name, GLOBAL)
    if hasattr(value, "__cuda_array_interface__"):  # a device array on a real GPU (Numba, CuPy)
        from numba import cuda

        device = value if hasattr(value, "copy_to_host") else cuda.as_cuda_array(value)
        host = device.copy_to_host()
        writebacks.append(lambda: device.copy_to_device(host))
        return tracer.wrap(host, name, GLOBAL)
    return value


def _vector_codes() -> frozenset:
    """Code objects of device.vector's helpers: their element accesses are one wide access."""
    from ..device import vector

    codes = set()
    for fn in (vector.load_vector, vector.load_vector_readonly, vector.store_vector):
        codes.add(fn.__code__)
        codes.update(c for c in fn.__code__.co_consts if isinstance(c, types.CodeType))
    return frozenset(codes)


def _install_warp_intrinsics() -> None:
    """The simulator's warp intrinsics (simwarp), on a real GPU too: the trace runs simulated."""
    from .. import simwarp

    if not simwarp.installed():
        simwarp.install(anywhere=True)


def run(
    kernel, griddim, blockdim, args, *, blocks=None, dynamic_shared: int = 0, limit_s=None
) -> Recording:
    """Run `kernel` on the simulator's machinery with recording arrays; return the records.

    The launch stops with watchdog.LaunchTimeout after `limit_s` seconds (None: the default)."""
    import time

    from numba.cuda.errors import normalize_kernel_dimensions
    from numba.cuda.simulator import kernel as simkernel
    from numba.cuda.simulator.kernelapi import swapped_cuda_module

    fn = python_function(kernel)
    try:
        grid, block = normalize_kernel_dimensions(griddim, blockdim)
    except (ValueError, TypeError) as error:
        raise ValueError(
            f"{fn.__name__}: a kernel needs a launch shape, griddim and blockdim "
            f"(ints or tuples of up to 3 positive ints); got griddim={griddim!r}, "
            f"blockdim={blockdim!r} ({error})"
        ) from None
    grid, block = tuple(grid), tuple(block)
    if min(grid) < 1 or min(block) < 1:
        raise ValueError(f"{fn.__name__}: griddim {grid} and blockdim {block} must be positive")
    if int(np.prod(block)) > 1024:
        raise ValueError(
            f"{fn.__name__}: {int(np.prod(block))} threads per block; a GPU allows at most 1024"
        )
    params = list(inspect.signature(fn).parameters)
    if len(args) != len(params):
        raise TypeError(
            f"{fn.__name__} takes {len(params)} arguments ({', '.join(params)}), got {len(args)}"
        )
    points = select_blocks(grid, blocks)
    _install_warp_intrinsics()
    tracer = Tracer(fn.__name__, _vector_codes())
    writebacks: list = []
    fake_args = [_argument(tracer, a, n, writebacks) for a, n in zip(args, params)]
    module = fake_module_class()(tracer, grid, block, int(dynamic_shared))
    start = time.perf_counter()
    with (
        watchdog.limit(limit_s, fn),
        simkernel._push_kernel_context(module),
        swapped_cuda_module(fn, module),
        Substitutions(tracer, fn),
    ):
        for index, point in enumerate(points):
            if len(tracer.records) > MAX_RECORDS:
                warnings.warn(
                    f"{fn.__name__}: the trace stops after {index} of {len(points)} "
                    f"blocks ({len(tracer.records)} accesses recorded); pass blocks= "
                    "to trace a sample of the grid",
                    stacklevel=3,
                )
                points = points[:index]
                break
            tracer.block_point = point
            tracer.records.append((index, -1, BLOCK, point, None, 0, 0, None))
            simkernel.BlockManager(fn, grid, block, False).run(point, *fake_args)
    # A sample of the blocks leaves GPU memory as it was: half-written outputs, or a sum's
    # hand-over state (device.handover) left mid-way, would corrupt later launches.
    if len(points) == int(np.prod(grid)):
        for writeback in writebacks:
            writeback()
    return Recording(
        fn.__name__,
        fn.__code__.co_filename,
        fn.__code__.co_firstlineno,
        grid,
        block,
        points,
        tracer.records,
        tracer.views,
        tracer.oob,
        time.perf_counter() - start,
    )


def select_blocks(grid: tuple, blocks) -> list:
    """The grid points to trace: all (None), `blocks` spread evenly (an int), or those listed."""
    total = int(np.prod(grid))
    if blocks is None:
        return list(np.ndindex(*grid))  # the simulator's order
    if isinstance(blocks, (int, np.integer)) and not isinstance(blocks, bool):
        if blocks < 1:
            raise ValueError(f"blocks={blocks}: sample at least one block")
        picks = np.unique(np.linspace(0, total - 1, min(int(blocks), total)).round().astype(int))
        return [tuple(int(v) for v in p) for p in zip(*np.unravel_index(picks, grid))]
    chosen = []
    for b in blocks:
        point = tuple(int(v) for v in (b if isinstance(b, (tuple, list)) else (b,)))
        point = point + (0,) * (3 - len(point))
        if len(point) != 3 or any(not 0 <= p < g for p, g in zip(point, grid)):
            raise ValueError(f"block {b!r} is outside the grid {grid[: len(point)]}")
        chosen.append(point)
    if not chosen:
        raise ValueError("blocks= names no block")
    return chosen

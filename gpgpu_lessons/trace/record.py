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
import math
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import watchdog
from .arrays import BLOCK, GLOBAL, Tracer
from .fakecuda import fake_module_class
from .swap import Substitutions, python_function

MAX_RECORDS = 4_000_000  # about 1 GB of records: blocks past it are not traced (a warning)
MAX_THREADS = 1 << 20  # a whole-grid trace of more threads is refused (blocks= samples)
GRID_LIMITS = (2**31 - 1, 65_535, 65_535)  # CUDA's largest grid, x, y, z
BLOCK_LIMITS = (1024, 1024, 64)  # CUDA's largest block, x, y, z (and 1024 threads in all)


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
    negative: list = field(default_factory=list)  # negative indices (wrapped)
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

    from numba.cuda.simulator import kernel as simkernel
    from numba.cuda.simulator.kernelapi import swapped_cuda_module

    fn = python_function(kernel)
    grid = _dimensions(fn, "griddim", griddim, GRID_LIMITS)
    block = _dimensions(fn, "blockdim", blockdim, BLOCK_LIMITS)
    if math.prod(block) > 1024:
        raise ValueError(
            f"{fn.__name__}: blockdim={blockdim!r} is {math.prod(block)} threads per block; "
            "a GPU allows at most 1024: use smaller blocks and more of them"
        )
    if isinstance(dynamic_shared, bool) or not isinstance(dynamic_shared, (int, np.integer)):
        raise TypeError(
            f"{fn.__name__}: dynamic_shared={dynamic_shared!r}: give the bytes of dynamic "
            "shared memory as an int (0 for none)"
        )
    if dynamic_shared < 0:
        raise ValueError(
            f"{fn.__name__}: dynamic_shared={dynamic_shared}: the bytes of dynamic shared "
            "memory cannot be negative (0 for none)"
        )
    threads = math.prod(grid) * math.prod(block)
    if blocks is None and threads > MAX_THREADS:
        raise ValueError(
            f"{fn.__name__}: griddim={griddim!r} x blockdim={blockdim!r} is {threads:,} "
            f"threads; the tracer runs each one in Python (more than {MAX_THREADS:,} would "
            "take hours): pass blocks=8 to trace a sample of the grid"
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
    if len(points) == math.prod(grid):
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
        tracer.negative,
        time.perf_counter() - start,
    )


def _dimensions(fn, name: str, value, limits) -> tuple:
    """(x, y, z) of a griddim or blockdim (an int or a tuple of 1 to 3 ints), within CUDA's
    limits, or a one-line error naming the fix."""
    parts = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(parts) <= 3 or any(
        isinstance(p, bool) or not isinstance(p, (int, np.integer)) for p in parts
    ):
        raise ValueError(
            f"{fn.__name__}: {name}={value!r} is not a launch shape: give an int or a tuple "
            f"of 1 to 3 ints, e.g. {name}=256 or {name}=(16, 16)"
        )
    parts = tuple(int(p) for p in parts) + (1,) * (3 - len(parts))
    for axis, (n, most) in enumerate(zip(parts, limits)):
        if n < 1:
            raise ValueError(
                f"{fn.__name__}: {name}={value!r}: every dimension must be positive (>= 1)"
            )
        if n > most:
            raise ValueError(
                f"{fn.__name__}: {name}={value!r}: CUDA allows at most {most:,} on "
                f"{'xyz'[axis]}; "
                + (
                    "use more blocks on another axis, or loop inside the kernel"
                    if name == "griddim"
                    else "use smaller blocks and more of them"
                )
            )
    return parts


class GridPoints:
    """Every block index of a grid, in the simulator's order, made one at a time (a grid of
    2**31 blocks is not a list of 2**31 tuples)."""

    def __init__(self, grid: tuple):
        self.grid = grid
        self.count = math.prod(grid)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(self.count))]
        k = int(k)  # an index from a NumPy column: the point holds plain ints
        if not -self.count <= k < self.count:
            raise IndexError(k)
        k %= self.count
        _, gy, gz = self.grid
        return (k // (gy * gz), k // gz % gy, k % gz)

    def __iter__(self):
        return (self[k] for k in range(self.count))


def select_blocks(grid: tuple, blocks):
    """The grid points to trace: all (None), `blocks` spread evenly (an int), or those listed."""
    total = math.prod(grid)
    if blocks is None:
        return GridPoints(grid)  # np.ndindex's order: the simulator's
    if isinstance(blocks, (bool, str, bytes, float, np.floating)) or not isinstance(
        blocks, (int, np.integer, list, tuple, range, np.ndarray)
    ):
        raise TypeError(
            f"blocks={blocks!r}: give how many blocks to trace (an int, e.g. blocks=8) or a "
            "list of block indices (e.g. blocks=[0, (3, 1)])"
        )
    if isinstance(blocks, (int, np.integer)):
        if blocks < 1:
            raise ValueError(f"blocks={blocks}: sample at least one block")
        picks = np.unique(np.linspace(0, total - 1, min(int(blocks), total)).round().astype(int))
        return [tuple(int(v) for v in p) for p in zip(*np.unravel_index(picks, grid))]
    chosen = []
    for b in blocks:
        parts = b if isinstance(b, (tuple, list)) else (b,)
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in parts):
            raise TypeError(
                f"blocks: {b!r} is not a block index; give ints or tuples of ints, e.g. "
                "blocks=[0, (3, 1)]"
            )
        point = tuple(int(v) for v in parts)
        point = point + (0,) * (3 - len(point))
        if len(point) != 3 or any(not 0 <= p < g for p, g in zip(point, grid)):
            raise ValueError(f"block {b!r} is outside the grid {grid[: len(point)]}")
        chosen.append(point)
    if not chosen:
        raise ValueError("blocks= names no block")
    return chosen

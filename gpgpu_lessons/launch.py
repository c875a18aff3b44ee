"""Input checks, grid sizes and the configured launch that every kernel wrapper shares.

A wrapper checks its inputs once and builds a `Launch`: the kernel, its grid and block, its
arguments and where the result lands. Calling the launch runs the kernel (nothing else), so
`timing.benchmark(launch)` times the GPU work alone; `launch.result()` runs it and returns the
result by the collection's one convention: host in, host out; device in, device out; a
reduction gives a Python number unless `out=` was given. `@op` turns a function that builds a
`Launch` into the public wrapper, with the builder kept as `wrapper.prepare`.

A launch never keeps a configured ``kernel[grid, block]``: in Numba's simulator that expression
reconfigures and returns the kernel object itself, so a kept one runs with whatever grid was
configured last.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import cuda

from . import runtime

MAX_THREADS_PER_BLOCK = 1024
MAX_GRID_X = 2**31 - 1  # blocks along x
MAX_GRID_YZ = 65535  # blocks along y and z
STATIC_SHARED_MEMORY_BYTES = 48 * 1024
WARP_SIZE = 32


# ---- integers and block shapes -------------------------------------------------------------


def positive_int(value, name: str, *, minimum: int = 1) -> int:
    """Return value as an int, or raise naming `name` when it is not an integer >= minimum."""
    if type(value) is int and value >= minimum:  # the usual case, without the slower checks
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def block_shape(block, *, name: str = "block") -> tuple[int, ...]:
    """Check a block size (an int or a tuple of up to 3 ints) and return it as a tuple."""
    dims = tuple(block) if isinstance(block, (tuple, list)) else (block,)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{name} must be an int or a tuple of 1 to 3 ints, got {block!r}")
    dims = tuple(positive_int(d, f"each dimension of {name}") for d in dims)
    count = 1
    for d in dims:
        count *= d
    if count > MAX_THREADS_PER_BLOCK:
        raise ValueError(
            f"a block of {block} has {count} threads; CUDA allows at most "
            f"{MAX_THREADS_PER_BLOCK} per block: use fewer threads per block"
        )
    return dims


def block_1d(block) -> int:
    """The block size of a 1-D launch (an int, or a tuple of one int), checked."""
    dims = block_shape(block)
    if len(dims) != 1:
        raise ValueError(f"block must be one int for this 1-D kernel, got {block!r}")
    return dims[0]


def check_shared_memory(nbytes: int, what: str = "the shared-memory tile") -> int:
    """Reject static shared-memory requests above the 48 KiB a block gets without opting in."""
    if nbytes > STATIC_SHARED_MEMORY_BYTES:
        raise ValueError(
            f"{what} needs {nbytes} bytes of shared memory, more than the "
            f"{STATIC_SHARED_MEMORY_BYTES} bytes (48 KiB) a block may declare "
            "statically: use a smaller tile"
        )
    return nbytes


# ---- grids ---------------------------------------------------------------------------------


def blocks_for(n: int, per_block: int) -> int:
    """Blocks needed to cover n items, per_block items per block (a ceiling division)."""
    return -(-int(n) // int(per_block))


def grid_2d(shape, per_block) -> tuple[int, int]:
    """(blocks along x, blocks along y) covering a (rows, columns) shape, x over the columns.

    `per_block` is (columns, rows) per block. CUDA allows at most 65535 blocks along y: a
    taller shape gets a clear error; `row_bands` splits such a shape into launches that fit.
    """
    rows, columns = shape
    per_x, per_y = per_block
    grid = (blocks_for(columns, per_x), blocks_for(rows, per_y))
    if grid[0] > MAX_GRID_X or grid[1] > MAX_GRID_YZ:
        raise ValueError(
            f"a {rows} x {columns} array needs a grid of {grid[0]} x {grid[1]} blocks; "
            f"CUDA allows at most {MAX_GRID_X} x {MAX_GRID_YZ}: use this lesson's fast "
            "wrapper, which walks the tiles with a 1-D grid"
        )
    return grid


def row_bands(shape, per_block) -> list[tuple[int, int, tuple[int, int]]]:
    """[(first row, end row, grid)] covering a (rows, columns) shape with 2-D grids that fit CUDA.

    One band unless the grid would pass 65535 blocks along y (an N x 1 array, say): then each
    band is a launch on the rows first:end (views a[first:end] of C-contiguous arrays).
    """
    rows, columns = shape
    per_x, per_y = per_block
    band_rows = MAX_GRID_YZ * per_y
    return [
        (
            first,
            min(rows, first + band_rows),
            grid_2d((min(rows, first + band_rows) - first, columns), per_block),
        )
        for first in range(0, max(rows, 1), band_rows)
    ]


def grid_1d(n: int, per_block: int) -> int:
    """Blocks along x covering n items, per_block items per block (at least one block)."""
    blocks = max(1, blocks_for(n, per_block))
    if blocks > MAX_GRID_X:
        raise ValueError(f"{n} items need {blocks} blocks, more than CUDA's {MAX_GRID_X}")
    return blocks


def resident_blocks(block_threads: int, per_sm: int | None = None) -> int:
    """Blocks that fill the device once: per_sm per SM (default: as many as 2048 threads allow)."""
    per_sm = per_sm or max(1, 2048 // block_threads)
    return (runtime.device_info().sm_count or 2) * per_sm  # the simulator: 2 pretend SMs


# ---- arrays --------------------------------------------------------------------------------


@functools.cache
def numba_array_type() -> type:
    """Numba's device array class: DeviceNDArray, or the simulator's FakeCUDAArray."""
    if runtime.is_simulator():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return FakeCUDAArray
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    return DeviceNDArray


def is_device_array(a) -> bool:
    """True for a GPU array (Numba's, CuPy's, ...) or, in the simulator, its stand-in for one."""
    if isinstance(a, numba_array_type()):
        return True
    # is_cuda_array builds the whole __cuda_array_interface__ dict: asked only of other types
    return not runtime.is_simulator() and cuda.is_cuda_array(a)


@functools.cache
def _dtypes_of(dtypes) -> tuple[np.dtype, ...]:
    return tuple(np.dtype(d) for d in (dtypes if isinstance(dtypes, tuple) else (dtypes,)))


def _dtypes(dtypes) -> tuple[np.dtype, ...]:
    return _dtypes_of(tuple(dtypes) if isinstance(dtypes, list) else dtypes)


def device_input(
    a, *, name: str, dtypes, ndim: int | tuple[int, ...] | None = None, allow_empty: bool = False
):
    """Check an input array and return (device array, came_from_host).

    Accepts a NumPy array (copied to the device) or a device array (used as is); rejects
    wrong types, dtypes, ranks, empty and non-contiguous arrays with a message naming the fix.
    """
    dtypes = _dtypes(dtypes)
    on_device = is_device_array(a)
    if not on_device and not isinstance(a, np.ndarray):
        raise TypeError(
            f"{name} must be a NumPy array or a device array, got {type(a).__name__}; "
            f"convert it first: {name} = np.asarray({name}, dtype=np.{dtypes[0]})"
        )
    if a.dtype not in dtypes:
        wanted = " or ".join(str(d) for d in dtypes)
        raise TypeError(
            f"{name} has dtype {a.dtype}, but this kernel takes {wanted}; "
            f"convert it first: {name}.astype(np.{dtypes[0]})"
        )
    ranks = (ndim,) if isinstance(ndim, int) else ndim
    if ranks is not None and a.ndim not in ranks:
        wanted = " or ".join(f"{r}-D" for r in ranks)
        raise ValueError(f"{name} must be {wanted}, got shape {a.shape}")
    if a.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty (shape {a.shape}); give it at least one element")
    if not on_device and not a.flags.c_contiguous:
        raise ValueError(
            f"{name} is not C-contiguous (a slice with a step, or a transpose?); "
            f"make a contiguous copy first: np.ascontiguousarray({name})"
        )
    if on_device and not isinstance(a, numba_array_type()):
        a = cuda.as_cuda_array(a)  # CuPy and other arrays with __cuda_array_interface__
    if on_device and not a.is_c_contiguous():
        raise ValueError(
            f"{name} is a non-contiguous device array; make a contiguous copy first "
            "(cupy.ascontiguousarray, or copy_to_host and back)"
        )
    return (a, False) if on_device else (cuda.to_device(a), True)


def aligned(d, nbytes: int) -> bool:
    """True when device array d starts on an nbytes boundary (always so in the simulator)."""
    return runtime.is_simulator() or (d.device_ctypes_pointer.value or 0) % nbytes == 0


def _extent(a) -> tuple[int, int]:
    """(first byte, one past the last byte) of the device memory an array spans."""
    pointer = a.device_ctypes_pointer.value or 0
    return pointer, pointer + max(a.nbytes, 1)


def overlaps(a, b) -> bool:
    """True when two arrays (both on the host or both on the device) share memory."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.shares_memory(a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    if runtime.is_simulator():  # the simulator's device arrays wrap NumPy arrays
        return np.shares_memory(a._ary, b._ary)
    (a0, a1), (b0, b1) = _extent(a), _extent(b)
    return a0 < b1 and b0 < a1


@dataclass(frozen=True)
class Output:
    """Where a wrapper's result goes: the device array the kernel writes, and the caller's `out`."""

    device: Any
    host: np.ndarray | None = None  # a NumPy `out=` to copy the result into
    given: bool = False  # the caller passed out=


def device_output(
    out, shape, dtype, *, inputs=(), name: str = "out", in_place: bool = False
) -> Output:
    """Check `out` (None, a NumPy array or a device array of the right shape and dtype).

    An `out` that shares memory with one of `inputs` is refused unless the kernel works in
    place (`in_place=True`): a kernel reading what other threads already overwrote gives wrong
    results without an error.
    """
    shape, dtype = tuple(int(s) for s in shape), np.dtype(dtype)
    if out is None:
        return Output(cuda.device_array(shape, dtype=dtype))
    on_device = is_device_array(out)
    if not on_device and not isinstance(out, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array or a device array, got {type(out).__name__}")
    if on_device and not runtime.is_simulator() and not hasattr(out, "is_c_contiguous"):
        out = cuda.as_cuda_array(out)  # CuPy and other arrays with __cuda_array_interface__
    if tuple(out.shape) != shape or out.dtype != dtype:
        raise ValueError(
            f"{name} must have shape {shape} and dtype {dtype}, got "
            f"{tuple(out.shape)} {out.dtype}; allocate it with "
            f"cuda.device_array({shape}, dtype=np.{dtype})"
        )
    if not in_place:
        for given in inputs:
            if given is not None and overlaps(out, given):
                raise ValueError(
                    f"{name} shares memory with an input; this kernel cannot work in "
                    f"place (threads would read elements others already wrote): "
                    f"pass a separate array, or leave {name}=None"
                )
    if on_device:
        if not out.is_c_contiguous():
            raise ValueError(f"{name} must be a C-contiguous device array")
        return Output(out, given=True)
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{name} must be a writeable C-contiguous NumPy array")
    return Output(cuda.device_array(shape, dtype=dtype), host=out, given=True)


# ---- the configured launch -----------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One kernel launch: kernel[grid, block](*args), configured afresh every time it runs."""

    kernel: Any
    grid: Any
    block: Any
    args: tuple

    def run(self) -> None:
        self.kernel[self.grid, self.block](*self.args)


@dataclass(frozen=True)
class Launch:
    """A checked, configured launch: call it to run the kernel(s); result() also returns the output.

    `out` is the device array the kernels write; `to_host` says the caller gave host arrays;
    `host_out` is a NumPy `out=` to fill; `scalar` marks a reduction whose result is a number
    (returned as a Python number unless the caller gave `out=`).
    """

    steps: tuple[Step, ...]
    out: Any = None
    to_host: bool = False
    host_out: np.ndarray | None = None
    scalar: bool = False
    out_given: bool = False
    extra: dict = field(default_factory=dict)

    def __call__(self) -> None:
        for step in self.steps:
            step.run()

    def result(self):
        """Run the launch and return its result by the collection's convention."""
        self()
        if self.host_out is not None:
            self.out.copy_to_host(self.host_out)
            return self.host_out
        if self.out_given:
            return self.out  # a device out= comes back as it was given
        if self.scalar:
            return self.out.copy_to_host().reshape(-1)[0].item()
        return self.out.copy_to_host() if self.to_host else self.out


def single(
    kernel,
    grid,
    block,
    *args,
    out: Output | None = None,
    to_host: bool = False,
    scalar: bool = False,
    then: tuple[Step, ...] = (),
) -> Launch:
    """A Launch of one kernel (followed by the steps in `then`), writing to `out`."""
    steps = (Step(kernel, grid, block, tuple(args)),) + tuple(then)
    if out is None:
        return Launch(steps, to_host=to_host, scalar=scalar)
    return Launch(steps, out.device, to_host, out.host, scalar, out.given)


def op(build):
    """Make a public wrapper from a function that builds a Launch: calling it runs and returns.

    The builder stays reachable as `wrapper.prepare(...)`, with the same arguments, for timing:
    `timing.benchmark(transpose.padded.prepare(d_a, out=d_out))`.
    """

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        return build(*args, **kwargs).result()

    wrapper.prepare = build
    return wrapper

"""Input checks and launch arithmetic shared by every kernel wrapper, with errors that say the fix."""
from __future__ import annotations

import numpy as np
from numba import cuda

from . import runtime

MAX_THREADS_PER_BLOCK = 1024
STATIC_SHARED_MEMORY_BYTES = 48 * 1024


def is_device_array(a) -> bool:
    """True for a GPU array (Numba's, CuPy's, ...) or, in the simulator, its stand-in for one."""
    if runtime.is_simulator():
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return isinstance(a, FakeCUDAArray)
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    # isinstance first: is_cuda_array builds the whole __cuda_array_interface__ dict, per call
    return isinstance(a, DeviceNDArray) or cuda.is_cuda_array(a)


def device_input(a, *, name: str, dtypes, ndim: int | None = None, allow_empty: bool = False):
    """Check an input array and return (device array, came_from_host).

    Accepts a NumPy array (copied to the device) or a device array (used as is); rejects
    wrong types, dtypes, ranks, empty and non-contiguous arrays with a message naming the fix.
    """
    dtypes = tuple(np.dtype(d) for d in (dtypes if isinstance(dtypes, (tuple, list)) else (dtypes,)))
    on_device = is_device_array(a)
    if not on_device and not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array or a Numba device array, got {type(a).__name__}; "
                        f"convert it with np.asarray({name}, dtype=np.{dtypes[0]})")
    if a.dtype not in dtypes:
        wanted = " or ".join(str(d) for d in dtypes)
        raise TypeError(f"{name} has dtype {a.dtype}, but this kernel takes {wanted}; "
                        f"convert it first, e.g. {name}.astype(np.{dtypes[0]})")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}"
                         + ("; flatten it with .ravel()" if ndim == 1 else ""))
    if a.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty (shape {a.shape}); give it at least one element")
    if not on_device and not a.flags.c_contiguous:
        raise ValueError(f"{name} is not C-contiguous (a slice or a transpose view?); "
                         f"make a contiguous copy with np.ascontiguousarray({name})")
    if on_device and not runtime.is_simulator():
        from numba.cuda.cudadrv.devicearray import DeviceNDArray

        if not isinstance(a, DeviceNDArray):
            a = cuda.as_cuda_array(a)  # CuPy and other arrays with __cuda_array_interface__
    if on_device and not a.is_c_contiguous():
        raise ValueError(f"{name} is a non-contiguous device array; copy it to a contiguous one first")
    return (a, False) if on_device else (cuda.to_device(a), True)


def device_output(out, shape, dtype, *, name: str = "out"):
    """Return `out` after checking its shape and dtype, or a new device array when out is None."""
    shape, dtype = tuple(shape), np.dtype(dtype)
    if out is None:
        return cuda.device_array(shape, dtype=dtype)
    if not is_device_array(out):
        raise TypeError(f"{name} must be a device array (cuda.device_array(...)), got {type(out).__name__}")
    if tuple(out.shape) != shape or out.dtype != dtype:
        raise ValueError(f"{name} must have shape {shape} and dtype {dtype}, got {tuple(out.shape)} {out.dtype}")
    return out


def returned(d_out, to_host: bool):
    """Copy the result back when the caller passed NumPy arrays; keep it on the device otherwise."""
    return d_out.copy_to_host() if to_host else d_out


def check_threads(threads) -> int:
    """Validate a block size (an int or a tuple of dims); return the thread count."""
    dims = tuple(threads) if isinstance(threads, (tuple, list)) else (threads,)
    if not dims or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
        raise ValueError(f"threads per block must be positive integers, got {threads!r}")
    count = 1
    for d in dims:
        count *= int(d)
    if count > MAX_THREADS_PER_BLOCK:
        raise ValueError(f"a block of {threads} has {count} threads; CUDA allows at most "
                         f"{MAX_THREADS_PER_BLOCK} per block: use fewer threads per block")
    return count


def check_shared_memory(nbytes: int, what: str = "the shared-memory tile") -> int:
    """Reject static shared-memory requests above the 48 KiB a block gets without opting in."""
    if nbytes > STATIC_SHARED_MEMORY_BYTES:
        raise ValueError(f"{what} needs {nbytes} bytes of shared memory, more than the "
                         f"{STATIC_SHARED_MEMORY_BYTES} bytes (48 KiB) a block may declare statically: use a smaller tile")
    return nbytes


def blocks_for(n: int, threads: int) -> int:
    """Blocks needed to give each of n items its own thread."""
    return (n + threads - 1) // threads

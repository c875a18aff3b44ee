"""Run a student's kernel once and turn whatever goes wrong into a sentence.

In the simulator the arrays a kernel gets are watched: a negative index (which NumPy would
quietly wrap to the end of the array, and a GPU would read from before it) raises an
IndexError in the thread that made it, and every store to an output is counted, so the grader
knows which elements were never written or written twice. On a GPU the arrays are plain device
arrays and the outputs start as a poison value instead.
"""
from __future__ import annotations

import contextlib
import linecache
import os
import re
import threading
import traceback
import warnings
from dataclasses import dataclass

import numpy as np
from numba import cuda

from .. import runtime

_THREAD = re.compile(r"tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]:?\s*")
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Crash:
    """What went wrong in a launch: the sentence for the student, and where it happened."""

    kind: str            # "out of bounds", "deadlock", "error", "compile", "gpu"
    text: str
    line: int | None = None


def poison(dtype) -> object:
    """The value outputs start with on a GPU: NaN, or an unlikely integer (0xAB bytes)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.frombuffer(b"\xab" * dtype.itemsize, dtype=dtype)[0]


def _negative(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (int, np.integer)) and p < 0 for p in parts)


def watched_array(array: np.ndarray, name: str, count_writes: bool):
    """A simulator device array that refuses negative indices and counts stores per element."""
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    class Watched(FakeCUDAArray):
        def __getitem__(self, index):
            if _negative(index):
                raise IndexError(f"index {index} is negative: {name} (shape {self._ary.shape}) "
                                 "has no element there")
            return super().__getitem__(index)

        def __setitem__(self, index, value):
            if _negative(index):
                raise IndexError(f"index {index} is negative: {name} (shape {self._ary.shape}) "
                                 "has no element there")
            super().__setitem__(index, value)
            if self.writes is not None:
                with self.lock:
                    self.writes[index] += 1

    watched = Watched(array)
    watched.__dict__.update(writes=np.zeros(array.shape, np.int32) if count_writes else None,
                            lock=threading.Lock())
    return watched


def _user_frame(tb, kernel):
    """(line number, source text) of the deepest traceback frame in the kernel's own file."""
    filename = kernel.py_func.__code__.co_filename
    frames = traceback.extract_tb(tb)
    own = [f for f in frames if f.filename == filename]
    if not own:
        own = [f for f in frames if not f.filename.startswith(_HERE) and "numba" not in f.filename
               and "threading" not in f.filename]
    if not own:
        return None, ""
    frame = own[-1]
    text = (frame.line or linecache.getline(frame.filename, frame.lineno)).strip()
    return frame.lineno, text


def _where(line, text) -> str:
    return f"line {line} `{text}`" if line else "a line of your kernel"


def explain(error: BaseException, kernel) -> Crash:
    """Turn an exception raised by a launch into a Crash with a plain sentence."""
    message = str(error)
    thread = ""
    match = _THREAD.match(message)
    if match:
        t, b = match.groups()[:3], match.groups()[3:]
        thread = f"thread ({', '.join(t)}) of block ({', '.join(b)})"
        message = message[match.end():]
    line, text = _user_frame(error.__traceback__, kernel)
    who = thread or "a thread"
    name = type(error).__name__
    if name == "WarpDeadlockError":
        return Crash("deadlock", f"The warp got stuck at {_where(line, text)}: "
                     f"{message.rstrip('.')}. Every "
                     "lane named in the mask must reach the same warp call; a shuffle or ballot "
                     "under `if i < n:` leaves the lanes past the end out. Let every lane take "
                     "part (give the lanes past the end a neutral value, such as 0 for a sum).",
                     line)
    if isinstance(error, IndexError):
        return Crash("out of bounds", f"Out of bounds: {who} ran {_where(line, text)} with an "
                     f"index outside the array ({message}). On a GPU nothing stops it: it reads "
                     "garbage or overwrites other data. Check the index against the array's "
                     "shape before using it.", line)
    if name in ("TypingError", "UnsupportedError", "NumbaError", "LoweringError"):
        first = message.strip().splitlines()[0] if message.strip() else name
        return Crash("compile", f"Numba could not compile your kernel: {first}", line)
    if name in ("CudaAPIError", "CudaDriverError", "CudaSupportError"):
        return Crash("gpu", f"The GPU reported an error ({message}). If it says "
                     "ILLEGAL_ADDRESS, a thread went out of bounds and the CUDA context is "
                     "lost: restart the Jupyter kernel before running more GPU code.", line)
    return Crash("error", f"Your kernel raised {name} in {who} at {_where(line, text)}: "
                 f"{message or name}", line)


@contextlib.contextmanager
def quiet():
    """Hide NumPy's RuntimeWarnings (overflow in a wrong kernel's garbage) while a kernel runs.

    The simulator's threads do not inherit np.errstate, so the (process-wide) warning filter is
    used; the grader reports what went wrong instead.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def run(kernel, case, params, *, count_writes: bool) -> tuple[dict, dict | None]:
    """Launch kernel[case.grid, case.block] on the case's arguments once.

    Returns ({output name: NumPy array}, {output name: stores per element} or None). Outputs
    start as zeros (names in case.zeros) or the poison value. Exceptions propagate.
    """
    simulator = runtime.is_simulator()
    device_args, outputs = [], {}
    for name in params:
        value = case.args[name]
        if isinstance(value, np.ndarray):
            array = np.array(value, copy=True)
            if name in case.expected:
                array[...] = 0 if name in case.zeros else poison(array.dtype)
            if simulator:
                once = case.write_once is True or (isinstance(case.write_once, tuple)
                                                   and name in case.write_once)
                watched = watched_array(array, name, count_writes and name in case.expected
                                        and once)
                device_args.append(watched)
            else:
                device_args.append(cuda.to_device(array))
            if name in case.expected:
                outputs[name] = device_args[-1]
        else:
            device_args.append(value)
    with quiet():
        kernel[case.grid, case.block](*device_args)
    if not simulator:
        cuda.synchronize()
    got = {name: array.copy_to_host() for name, array in outputs.items()}
    writes = None
    if simulator and count_writes:
        writes = {name: array.writes for name, array in outputs.items() if array.writes is not None}
    return got, writes


def device_args(case, params) -> list:
    """The case's arguments as device arrays (outputs poisoned or zeroed), for timing on a GPU."""
    result = []
    for name in params:
        value = case.args[name]
        if isinstance(value, np.ndarray):
            array = np.array(value, copy=True)
            if name in case.expected:
                array[...] = 0 if name in case.zeros else poison(array.dtype)
            result.append(cuda.to_device(array))
        else:
            result.append(value)
    return result

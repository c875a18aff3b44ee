"""Run a student's kernel once and turn whatever goes wrong into a sentence.

In the simulator the arrays a kernel gets are watched: a negative index (which NumPy, and
Numba on a GPU too, quietly wrap to the end of the array; CUDA C would read before it) raises
an IndexError in the thread that made it, and every store to an output is counted, so the grader
knows which elements were never written or written twice. On a GPU the outputs start as a
poison value instead, and every array sits between two guard zones (`Guarded`): a kernel that
writes a little past an array's end overwrites a guard, which the grader checks, and not another
array (the grader rehearses every launch on the simulator first, see `rehearsal`; the guards catch
what a rehearsal of only some blocks could miss).
"""

from __future__ import annotations

import contextlib
import linecache
import os
import re
import sys
import threading
import traceback
import warnings
from dataclasses import dataclass

import numpy as np
from numba import cuda

from .. import runtime, watchdog

_THREAD = re.compile(r"tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]:?\s*")
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Crash:
    """What went wrong in a launch: the sentence for the student, and where it happened."""

    kind: str  # "out of bounds", "deadlock", "timeout", "error", "compile", "gpu"
    text: str
    line: int | None = None


GUARD_BYTES = 1 << 20  # on each side of every array launched on a GPU (keeps 256-byte alignment)
GUARD = 0xA5  # the byte the guard zones hold


class GuardDamaged(RuntimeError):
    """A kernel launched on a GPU wrote into the guard zone around one of its arrays."""


class Guarded:
    """A device copy of a host array between two guard zones of GUARD bytes (on a GPU)."""

    def __init__(self, array: np.ndarray, name: str):
        self.name, self.shape, self.itemsize = name, array.shape, array.dtype.itemsize
        self.pad = -(-GUARD_BYTES // self.itemsize)
        host = np.empty(2 * self.pad + array.size, array.dtype)
        host.view(np.uint8)[...] = GUARD
        host[self.pad : self.pad + array.size] = array.reshape(-1)
        self.buffer = cuda.to_device(host)
        self.size = array.size
        self.array = self.buffer[self.pad : self.pad + array.size].reshape(array.shape)

    def damage(self) -> str | None:
        """None, or which bytes of the guards the kernel changed (in words)."""
        before = self.buffer[: self.pad].copy_to_host().view(np.uint8)
        after = self.buffer[self.pad + self.size :].copy_to_host().view(np.uint8)
        changed_before = np.flatnonzero(before != GUARD)
        changed_after = np.flatnonzero(after != GUARD)
        parts = []
        if changed_after.size:
            parts.append(
                f"{changed_after.size} bytes past its end (the furthest "
                f"{changed_after[-1] + 1} bytes past it)"
            )
        if changed_before.size:
            parts.append(
                f"{changed_before.size} bytes before its start (the furthest "
                f"{before.size - changed_before[0]} bytes before it)"
            )
        if not parts:
            return None
        return f"`{self.name}` (shape {self.shape}): {' and '.join(parts)}"


def check_guards(guarded) -> None:
    """Raise GuardDamaged when a kernel wrote into the guard zone of any of these arrays."""
    damaged = [text for text in (g.damage() for g in guarded) if text]
    if damaged:
        raise GuardDamaged("; ".join(damaged))


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
                raise IndexError(
                    f"index {index} is negative: {name} (shape {self._ary.shape}) "
                    "has no element there (Numba, like NumPy, would wrap it to the end of "
                    "the array, on a GPU too)"
                )
            return super().__getitem__(index)

        def __setitem__(self, index, value):
            if _negative(index):
                raise IndexError(
                    f"index {index} is negative: {name} (shape {self._ary.shape}) "
                    "has no element there (Numba, like NumPy, would wrap it to the end of "
                    "the array, on a GPU too)"
                )
            super().__setitem__(index, value)
            if self.writes is not None:
                with self.lock:
                    self.writes[index] += 1

    watched = Watched(array)
    watched.__dict__.update(
        writes=np.zeros(array.shape, np.int32) if count_writes else None, lock=threading.Lock()
    )
    return watched


def _user_frame(tb, kernel):
    """(line number, source text) of the deepest traceback frame in the kernel's own file."""
    filename = kernel.py_func.__code__.co_filename
    frames = traceback.extract_tb(tb)
    own = [f for f in frames if f.filename == filename]
    if not own:
        own = [
            f
            for f in frames
            if not f.filename.startswith(_HERE)
            and "numba" not in f.filename
            and "threading" not in f.filename
        ]
    if not own:
        return None, ""
    frame = own[-1]
    text = (frame.line or linecache.getline(frame.filename, frame.lineno)).strip()
    return frame.lineno, text


def where(line, text) -> str:
    """'line N `text`', or 'a line of your kernel'."""
    return f"line {line} `{text}`" if line else "a line of your kernel"


def explain(error: BaseException, kernel) -> Crash:
    """Turn an exception raised by a launch into a Crash with a plain sentence."""
    message = str(error)
    thread = ""
    match = _THREAD.match(message)
    if match:
        t, b = match.groups()[:3], match.groups()[3:]
        thread = f"thread ({', '.join(t)}) of block ({', '.join(b)})"
        message = message[match.end() :]
    line, text = _user_frame(error.__traceback__, kernel)
    who = thread or "a thread"
    name = type(error).__name__
    if isinstance(error, GuardDamaged):
        return Crash(
            "out of bounds",
            f"Out of bounds on the GPU: your kernel wrote outside "
            f"{message}. The simulator ran only a sample of the blocks at this size "
            "before the launch, so the GPU ran it; the grader keeps a guard zone around "
            "every array, so nothing else was overwritten. Check every index against "
            "the array's shape before using it.",
        )
    if isinstance(error, watchdog.LaunchTimeout):
        return Crash(
            "timeout",
            f"Your kernel never finished: {message}. A loop whose condition never becomes "
            "false hangs a GPU too; make sure every thread leaves every loop (a grid-stride "
            "loop needs `i += stride`).",
            error.line,
        )
    if name == "WarpDeadlockError":
        return Crash(
            "deadlock",
            f"The warp got stuck at {where(line, text)}: "
            f"{message.rstrip('.')}. Every "
            "lane named in the mask must reach the same warp call; a shuffle or ballot "
            "under `if i < n:` leaves the lanes past the end out. Let every lane take "
            "part (give the lanes past the end a neutral value, such as 0 for a sum).",
            line,
        )
    if isinstance(error, IndexError):
        return Crash(
            "out of bounds",
            f"Out of bounds: {who} ran {where(line, text)} with an "
            f"index outside the array ({message}). On a GPU nothing stops it: it reads "
            "garbage or overwrites other data. Check the index against the array's "
            "shape before using it.",
            line,
        )
    if name in ("TypingError", "UnsupportedError", "NumbaError", "LoweringError"):
        first = message.strip().splitlines()[0] if message.strip() else name
        return Crash("compile", f"Numba could not compile your kernel: {first}", line)
    if name in ("CudaAPIError", "CudaDriverError", "CudaSupportError"):
        return Crash(
            "gpu",
            f"The GPU reported an error ({message}). If it says "
            "ILLEGAL_ADDRESS, a thread went out of bounds and the CUDA context is "
            "lost: restart the Jupyter kernel before running more GPU code.",
            line,
        )
    return Crash(
        "error",
        f"Your kernel raised {name} in {who} at {where(line, text)}: {message or name}",
        line,
    )


@contextlib.contextmanager
def quiet():
    """Hide NumPy's RuntimeWarnings (overflow in a wrong kernel's garbage) while a kernel runs.

    The simulator's threads do not inherit np.errstate, so the (process-wide) warning filter is
    used; the grader reports what went wrong instead.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def start_values(case, name) -> object:
    """The argument `name` as the kernel gets it: a copy of an array (outputs filled with zeros
    or the poison value), or the scalar itself."""
    value = case.args[name]
    if not isinstance(value, np.ndarray):
        return value
    array = np.array(value, copy=True)
    if name in case.expected:
        array[...] = 0 if name in case.zeros else poison(array.dtype)
    return array


_CONFIGURED = "_gpgpu_configured"  # on a simulated kernel: where kernel[grid, block] was


def watch_configurations() -> None:
    """In the simulator, mark a kernel that `kernel[grid, block]` configured with where that
    was (file, line), until the kernel is launched. The simulator's `kernel[grid, block]` sets
    the launch on the kernel and returns the kernel itself, which keeps that launch for ever
    after (its grid_dim is no mark: a kernel launched once has it too); this mark lasts only
    until the kernel is called, and says which statement configured it, so that the grader
    can tell `k = reverse[4, 32]` (in an earlier cell) then `grade(id, k)` from a kernel."""
    if not runtime.is_simulator():
        return
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    if getattr(FakeCUDAKernel, "_gpgpu_watched", False):
        return
    configure, launch = FakeCUDAKernel.__getitem__, FakeCUDAKernel.__call__

    def __getitem__(self, configuration):
        configured = configure(self, configuration)
        caller = sys._getframe(1)
        if not self._device:
            configured.__dict__[_CONFIGURED] = (caller.f_code.co_filename, caller.f_lineno)
        return configured

    def __call__(self, *args):
        self.__dict__.pop(_CONFIGURED, None)
        return launch(self, *args)

    FakeCUDAKernel.__getitem__, FakeCUDAKernel.__call__ = __getitem__, __call__
    FakeCUDAKernel._gpgpu_watched = True


def configured_at(kernel) -> tuple[str, int] | None:
    """(file, line) of the `kernel[grid, block]` that configured this simulated kernel, when
    nothing has launched it since; else None."""
    return getattr(kernel, "__dict__", {}).get(_CONFIGURED)


watch_configurations()


class Outputs(dict):
    """A launch's outputs by name, with the kernel that made them and, in the simulator, the
    stores to each element ({name: counts}, None on a GPU): what a case's `verify` may word its
    answer by (what the kernel calls, which elements were never written)."""

    kernel = None
    writes: dict | None = None


def run(
    kernel, case, params, *, count_writes: bool, simulator: bool | None = None, limit_s=None
) -> tuple[dict, dict | None]:
    """Launch kernel[case.grid, case.block] on the case's arguments once.

    Returns ({output name: NumPy array}, as `Outputs`; {output name: stores per element} or
    None). Outputs start as zeros (names in case.zeros) or the poison value. In the simulator
    (`simulator`, by default the mode Numba runs in) the arrays are watched; otherwise they are
    `Guarded` device arrays, checked after the launch (GuardDamaged). Exceptions propagate; in
    the simulator a launch running past `limit_s` seconds (None: watchdog.default_limit())
    raises watchdog.LaunchTimeout.
    """
    simulator = runtime.is_simulator() if simulator is None else simulator
    device_args, outputs, guarded = [], {}, []
    for name in params:
        array = start_values(case, name)
        if isinstance(array, np.ndarray):
            if simulator:
                watched = watched_array(
                    array, name, count_writes and name in case.expected and writes_once(case, name)
                )
                device_args.append(watched)
            else:
                guarded.append(Guarded(array, name))
                device_args.append(guarded[-1].array)
            if name in case.expected:
                outputs[name] = device_args[-1]
        else:
            device_args.append(array)
    with quiet(), watchdog.limit(limit_s if simulator else 0, kernel):
        kernel[case.grid, case.block](*device_args)
    if not simulator:
        cuda.synchronize()
        check_guards(guarded)
    got = Outputs({name: array.copy_to_host() for name, array in outputs.items()})
    writes = None
    if simulator and count_writes:
        writes = {name: array.writes for name, array in outputs.items() if array.writes is not None}
    got.kernel, got.writes = kernel, writes
    return got, writes


def writes_once(case, name) -> bool:
    """True when each element of output `name` must be stored by one thread, once."""
    return case.write_once is True or (
        isinstance(case.write_once, tuple) and name in case.write_once
    )


def device_args(case, params) -> tuple[list, dict[str, Guarded]]:
    """The case's arguments for timing on a GPU: guarded device arrays (outputs poisoned or
    zeroed) and scalars, and {array name: its Guarded} (check_guards after the timing)."""
    args, guarded = [], {}
    for name in params:
        value = start_values(case, name)
        if isinstance(value, np.ndarray):
            guarded[name] = Guarded(value, name)
            value = guarded[name].array
        args.append(value)
    return args, guarded

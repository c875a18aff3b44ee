"""A pretend GPU on a virtual clock, for grading timers: a launch returns before its work ends.

`FakeGPU.run` behaves like a kernel launch on a real GPU: the first call blocks the host while
the kernel "compiles"; every call then costs the host `launch_ms`, queues `kernel_ms` of work and
returns. Time is virtual: the GPU's clock advances only by what the pretend host and GPU do (the
compile, each launch, `synchronize` or an event's `synchronize` waiting for the queued work,
`time.sleep`, and `READ_NS` for each clock read or event query), never by real elapsed time. So a
student's timer measures the same numbers on an idle machine and on a busy one, and a grade is
the same every time.

While the `installed()` context is active, in the thread that entered it:

- `cuda.synchronize`, `cuda.event` and `cuda.event_elapsed_time` of `numba.cuda` follow this GPU
  (in every thread, as before);
- the time module's `perf_counter`, `perf_counter_ns`, `monotonic`, `monotonic_ns`, `time`,
  `time_ns` and `sleep` read and advance the virtual clock (other threads get the host's clocks:
  a notebook's background threads keep working); `import time` at the top of a module or inside
  a function sees them;
- in the globals (and closure) of the functions passed to `installed(fn)`, names bound to those
  functions before the check started (`from time import perf_counter`) are rebound to the
  virtual ones, and bound back at the end.

`VIRTUAL_TIME` is a module named "time" with those seven functions: each reads the clock of the
FakeGPU installed in the calling thread at that moment, and the host's clock when none is; every
other attribute is the time module's own. A student's source that gets it for `import time` (run
in a process of its own) is timed on the pretend GPU the same way.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import threading
import time
import types

NAMES = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "sleep")
READ_NS = 1_000  # what a clock read or an event query costs the host: a polling loop ends
START_NS = 1_000 * 10**9  # the virtual perf_counter() of a new FakeGPU: 1000 s
EPOCH_NS = 1_750_000_000 * 10**9  # time.time() - perf_counter(): fixed, so grades repeat exactly

_HOST = {name: getattr(time, name) for name in NAMES}  # the time module's, at import
_saved: dict = {}  # the time module's functions while a FakeGPU is installed anywhere
_active: dict = {}  # thread id -> the FakeGPUs installed in that thread, innermost last
_lock = threading.Lock()


class NotReady(RuntimeError):
    """elapsed_time of an event the GPU has not reached yet (CUDA_ERROR_NOT_READY)."""


def _ns(ms: float) -> int:
    return round(ms * 1e6)


def current() -> FakeGPU | None:
    """The FakeGPU installed in the calling thread (the innermost), or None."""
    stack = _active.get(threading.get_ident())
    return stack[-1] if stack else None


class FakeGPU:
    """A stream of queued work with known durations: durations_ms[k % len] for the k-th launch."""

    def __init__(self, durations_ms, compile_ms: float = 80.0, launch_ms: float = 0.01):
        self.durations_ms = list(durations_ms)
        self.compile_ms = compile_ms
        self.launch_ms = launch_ms
        self.now_ns = START_NS  # the host's virtual clock
        self.busy_until = START_NS  # when the queued work ends
        self.launches = 0
        self.synchronizes = 0
        self.events = 0
        self.reads = 0  # clock reads and event queries
        self.compiled_at = None  # virtual ns when the first call started compiling
        self.first_timing = None  # virtual ns of the first clock read or event record

    # ---- the pretend GPU -----------------------------------------------------------------------

    def run(self) -> None:
        """A kernel launch: compile on the first call (blocking), then queue the work."""
        if self.launches == 0:
            self.compiled_at = self.now_ns
            self.now_ns += _ns(self.compile_ms)
        duration = _ns(self.durations_ms[self.launches % len(self.durations_ms)])
        self.launches += 1
        self.now_ns += _ns(self.launch_ms)
        self.busy_until = max(self.now_ns, self.busy_until) + duration

    def synchronize(self) -> None:
        """Wait until the queued work has ended."""
        self.synchronizes += 1
        self.now_ns = max(self.now_ns, self.busy_until)

    def event(self, timing: bool = True):
        return _Event(self)

    def compile_timed(self) -> bool:
        """True when a clock was read (or an event recorded) before the first call compiled."""
        started = self.first_timing
        return started is not None and self.compiled_at is not None and started <= self.compiled_at

    # ---- the host's clocks, virtual ------------------------------------------------------------

    def _read_ns(self) -> int:
        self.reads += 1
        self.now_ns += READ_NS
        if self.first_timing is None:
            self.first_timing = self.now_ns
        return self.now_ns

    def perf_counter_ns(self) -> int:
        return self._read_ns()

    def perf_counter(self) -> float:
        return self._read_ns() / 1e9

    monotonic_ns = perf_counter_ns
    monotonic = perf_counter

    def time_ns(self) -> int:
        return EPOCH_NS + self._read_ns()

    def time(self) -> float:
        return self.time_ns() / 1e9

    def sleep(self, seconds) -> None:
        """time.sleep on the virtual clock: the same errors, no real waiting."""
        if not isinstance(seconds, numbers.Real):
            raise TypeError(
                f"'{type(seconds).__name__}' object cannot be interpreted as an integer"
            )
        if math.isnan(seconds):
            raise ValueError("Invalid value NaN (not a number)")
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        self.now_ns += round(seconds * 1e9)

    # ---- installing it -------------------------------------------------------------------------

    @contextlib.contextmanager
    def installed(self, *functions):
        """Inside the block, numba.cuda's synchronize and events use this pretend GPU, and the
        time module's clocks (and those bound in `functions`' globals) its virtual clock."""
        with _cuda_installed(self), _time_installed(self), _rebound(functions):
            yield self


class _Event:
    """An event in the pretend stream: it happens when the work queued before it is done."""

    def __init__(self, gpu: FakeGPU):
        self.gpu = gpu
        self.at = None

    def record(self, stream=0) -> None:
        gpu = self.gpu
        gpu.events += 1
        if gpu.first_timing is None:
            gpu.first_timing = gpu.now_ns
        self.at = max(gpu.now_ns, gpu.busy_until)

    def synchronize(self) -> None:
        if self.at is None:
            raise RuntimeError("synchronize() on an event that was never recorded")
        self.gpu.now_ns = max(self.gpu.now_ns, self.at)

    def wait(self, stream=0) -> None:
        pass

    def query(self) -> bool:
        self.gpu.reads += 1
        self.gpu.now_ns += READ_NS
        return self.at is not None and self.gpu.now_ns >= self.at

    def elapsed_time(self, end: _Event) -> float:
        if self.at is None or end.at is None:
            raise RuntimeError("elapsed_time needs two recorded events: call record() on both")
        if self.gpu.now_ns < end.at:
            raise NotReady(
                "CUDA_ERROR_NOT_READY: the GPU has not reached the end event yet; "
                "call end.synchronize() before asking for the elapsed time"
            )
        return (end.at - self.at) / 1e6


# ---- the time module on the virtual clock -------------------------------------------------------


def _host(name: str):
    """The host's time.<name>: what the time module had before any FakeGPU was installed."""
    saved = _saved.get(name)
    if saved is not None:
        return saved
    function = getattr(time, name)
    return _HOST[name] if function is VIRTUAL_FUNCTIONS.get(name) else function


def _virtual(name: str):
    def function(*args):
        gpu = current()
        return _host(name)(*args) if gpu is None else getattr(gpu, name)(*args)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"time.{name} on the clock of the FakeGPU installed in this thread, if any."
    return function


VIRTUAL_FUNCTIONS = {name: _virtual(name) for name in NAMES}
VIRTUAL_TIME = types.ModuleType("time", "The time module on the installed FakeGPU's clock.")
VIRTUAL_TIME.__dict__.update(VIRTUAL_FUNCTIONS)
VIRTUAL_TIME.__getattr__ = lambda name: getattr(time, name)  # strftime, process_time, ...


@contextlib.contextmanager
def _time_installed(gpu: FakeGPU):
    """The time module's clocks follow `gpu` in this thread inside the block."""
    ident = threading.get_ident()
    try:  # an interrupt anywhere in here leaves the time module as it was
        with _lock:
            for name in NAMES:
                if getattr(time, name) is not VIRTUAL_FUNCTIONS[name]:
                    _saved[name] = getattr(time, name)
                    setattr(time, name, VIRTUAL_FUNCTIONS[name])
            _active.setdefault(ident, []).append(gpu)
        yield
    finally:
        with _lock:
            stack = _active.get(ident, [])
            if gpu in stack:
                stack.remove(gpu)
            if not stack:
                _active.pop(ident, None)
            if not _active:
                for name, function in _saved.items():
                    setattr(time, name, function)
                _saved.clear()


@contextlib.contextmanager
def _cuda_installed(gpu: FakeGPU):
    """numba.cuda's synchronize and events use `gpu` inside the block."""
    from numba import cuda

    names = ("synchronize", "event", "event_elapsed_time")
    saved = {name: getattr(cuda, name, None) for name in names}
    try:
        cuda.synchronize = gpu.synchronize
        cuda.event = gpu.event
        cuda.event_elapsed_time = lambda start, end: start.elapsed_time(end)
        yield
    finally:
        for name, value in saved.items():
            setattr(cuda, name, value)


def _virtual_of(value):
    """The virtual function for a host clock function (as bound before the check), else None."""
    for name in NAMES:
        if value is _HOST[name] or value is _saved.get(name):
            return VIRTUAL_FUNCTIONS[name]
    return None


@contextlib.contextmanager
def _rebound(functions):
    """Names of the functions' globals and closure cells bound to host clocks (`from time
    import perf_counter`) are bound to the virtual ones inside the block, and back at its end."""
    spaces, cells = [], []
    for fn in functions:
        fn = getattr(fn, "__func__", fn)
        space = getattr(fn, "__globals__", None)
        if isinstance(space, dict) and all(space is not s for s, _ in spaces):
            spaces.append((space, {k: v for k, v in list(space.items()) if _virtual_of(v)}))
        cells += [c for c in getattr(fn, "__closure__", None) or () if _cell_clock(c)]
    old_cells = [c.cell_contents for c in cells]
    try:
        for space, old in spaces:
            space.update({k: _virtual_of(v) for k, v in old.items()})
        for cell, old in zip(cells, old_cells):
            cell.cell_contents = _virtual_of(old)
        yield
    finally:
        for space, old in spaces:
            space.update(old)
        for cell, old in zip(cells, old_cells):
            cell.cell_contents = old


def _cell_clock(cell) -> bool:
    try:
        return _virtual_of(cell.cell_contents) is not None
    except ValueError:  # an empty cell
        return False

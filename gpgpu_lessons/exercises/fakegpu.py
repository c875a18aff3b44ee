"""A pretend GPU for grading timing code: launches return at once, work finishes later.

`FakeGPU.run` behaves like a kernel launch on a real GPU: the first call blocks the host while
the kernel "compiles"; every call then only queues `kernel_ms` of work and returns. While the
`installed()` context is active, `cuda.synchronize`, `cuda.event` and `cuda.event_elapsed_time`
of `numba.cuda` follow this GPU's clock, so a student's timer that uses them (or a host clock)
measures this pretend kernel exactly as it would measure a real one, in both modes.
"""

from __future__ import annotations

import contextlib
import time


class NotReady(RuntimeError):
    """elapsed_time of an event the GPU has not reached yet (CUDA_ERROR_NOT_READY)."""


class FakeGPU:
    """A stream of queued work with known durations: durations_ms[k % len] for the k-th launch."""

    def __init__(self, durations_ms, compile_ms: float = 80.0, launch_ms: float = 0.01):
        self.durations_ms = list(durations_ms)
        self.compile_ms = compile_ms
        self.launch_ms = launch_ms
        self.busy_until = time.perf_counter()
        self.launches = 0
        self.synchronizes = 0
        self.events = 0

    def run(self) -> None:
        """A kernel launch: compile on the first call (blocking), then queue the work."""
        if self.launches == 0:
            time.sleep(self.compile_ms / 1e3)
        duration = self.durations_ms[self.launches % len(self.durations_ms)] / 1e3
        self.launches += 1
        start = max(time.perf_counter() + self.launch_ms / 1e3, self.busy_until)
        self.busy_until = start + duration

    def synchronize(self) -> None:
        self.synchronizes += 1
        delay = self.busy_until - time.perf_counter()
        if delay > 0:
            time.sleep(delay)

    def event(self, timing: bool = True):
        return _Event(self)

    @contextlib.contextmanager
    def installed(self):
        """Make numba.cuda's synchronize and events use this pretend GPU inside the block."""
        from numba import cuda

        names = ("synchronize", "event", "event_elapsed_time")
        saved = {name: getattr(cuda, name, None) for name in names}
        cuda.synchronize = self.synchronize
        cuda.event = self.event
        cuda.event_elapsed_time = lambda start, end: start.elapsed_time(end)
        try:
            yield self
        finally:
            for name, value in saved.items():
                setattr(cuda, name, value)


class _Event:
    """An event in the pretend stream: it happens when the work queued before it is done."""

    def __init__(self, gpu: FakeGPU):
        self.gpu = gpu
        self.at = None

    def record(self, stream=0) -> None:
        self.gpu.events += 1
        self.at = max(time.perf_counter(), self.gpu.busy_until)

    def synchronize(self) -> None:
        if self.at is None:
            raise RuntimeError("synchronize() on an event that was never recorded")
        delay = self.at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)

    def wait(self, stream=0) -> None:
        pass

    def query(self) -> bool:
        return self.at is not None and time.perf_counter() >= self.at

    def elapsed_time(self, end: _Event) -> float:
        if self.at is None or end.at is None:
            raise RuntimeError("elapsed_time needs two recorded events: call record() on both")
        if time.perf_counter() < end.at:
            raise NotReady(
                "CUDA_ERROR_NOT_READY: the GPU has not reached the end event yet; "
                "call end.synchronize() before asking for the elapsed time"
            )
        return (end.at - self.at) * 1e3

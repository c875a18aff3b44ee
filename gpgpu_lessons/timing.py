"""Time GPU code correctly: warm up, bracket launches with CUDA events, report the median."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field

from numba import cuda

from . import runtime

EVENTS = "CUDA events"
HOST_SYNC = "host clock + synchronize"
HOST_NO_SYNC = "host clock, no synchronize (wrong)"
SIMULATED = "simulator host time, not a GPU's"
CPU = "host clock (CPU)"
METHODS = (EVENTS, HOST_SYNC, HOST_NO_SYNC)

# Time enough back-to-back launches per sample that Python's launch overhead (~10-50 us)
# hides behind the GPU's work; see lesson 00.
_SAMPLE_TARGET_MS = 5.0
_MAX_BATCH = 1000


@dataclass
class Timing:
    """Per-launch times of one benchmarked variant, in milliseconds."""

    name: str
    samples_ms: list[float]
    bytes_moved: int | None = None
    clock: str = EVENTS
    extra: dict = field(default_factory=dict)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def min_ms(self) -> float:
        return min(self.samples_ms)

    @property
    def max_ms(self) -> float:
        return max(self.samples_ms)

    @property
    def gbs(self) -> float | None:
        """Effective bandwidth of the median time: bytes that must move / time, in GB/s."""
        return None if self.bytes_moved is None else bandwidth_gbs(self.bytes_moved, self.median_ms)

    @property
    def simulated(self) -> bool:
        return self.clock == SIMULATED

    def identified(self, id: str) -> Timing:
        """A copy that records under `id` whatever its label (to rename a label safely)."""
        return Timing(
            self.name, self.samples_ms, self.bytes_moved, self.clock, {**self.extra, "id": id}
        )

    def as_dict(self) -> dict:
        """JSON-ready form, as stored in recorded results."""
        return {
            "name": self.name,
            "samples_ms": self.samples_ms,
            "bytes_moved": self.bytes_moved,
            "clock": self.clock,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Timing:
        return cls(
            data["name"],
            list(data["samples_ms"]),
            data.get("bytes_moved"),
            data.get("clock", EVENTS),
            dict(data.get("extra", {})),
        )

    def __str__(self) -> str:
        spread = f"min {_format_ms(self.min_ms)}, max {_format_ms(self.max_ms)}"
        text = f"{self.name}: {_format_ms(self.median_ms)} ({spread})"
        if self.gbs is not None:
            text += f", {self.gbs:,.0f} GB/s"
        return f"{text} [{self.clock}]"


def per_call_us(call, *, calls: int = 200, repeat: int = 5) -> float:
    """Median host time of one call in microseconds, without waiting for the GPU in between.

    What a launch costs the CPU: `calls` back-to-back calls per sample (fewer than the launch
    queue holds, so the GPU never makes the host wait), synchronised between samples.
    """
    call()
    cuda.synchronize()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        cuda.synchronize()
    return statistics.median(samples)


def _format_ms(ms: float) -> str:
    """Milliseconds with a unit that keeps three significant digits readable."""
    return f"{ms * 1e3:.3g} us" if ms < 1 else f"{ms:.4g} ms"


def bandwidth_gbs(nbytes: int, ms: float) -> float:
    """Effective bandwidth in GB/s (10^9 bytes per second) of nbytes moved in ms milliseconds."""
    if ms <= 0:
        raise ValueError(f"time must be positive to compute a bandwidth, got {ms} ms")
    return nbytes / (ms * 1e-3) / 1e9


def benchmark(
    launch,
    *,
    name: str = "kernel",
    bytes_moved: int | None = None,
    repeat: int | None = None,
    warmup: int | None = None,
    batch: int | None = None,
    method: str = EVENTS,
    id: str | None = None,
) -> Timing:
    """Time launch() (a callable that launches GPU work) and return per-launch times.

    warmup calls absorb JIT compilation (1 by default; 0 in the simulator, which has none); each
    of the repeat samples times `batch` back-to-back launches (chosen so a sample lasts about 5 ms
    when None) and divides by batch. method: a clock of METHODS (in the simulator each falls back
    to a host clock, labelled as such), or CPU for work that never touches the GPU (NumPy's rows
    in the seeds' tables): the host clock, one call a sample, real time in the simulator too.
    id: the stable id it records under (`Timing.identified`), where its name is a label only.
    """
    if not callable(launch):
        raise TypeError(
            f"launch must be a callable that starts the GPU work, got {type(launch).__name__}; "
            "wrap the launch in a lambda: benchmark(lambda: kernel[grid, block](x, y))"
        )
    if method not in (*METHODS, CPU):
        raise ValueError(f"method must be one of {(*METHODS, CPU)}, got {method!r}")
    repeat = runtime.PRESETS["repeat"] if repeat is None else repeat
    warmup = runtime.pick(gpu=1, simulator=0) if warmup is None else warmup
    if repeat < 1 or warmup < 0 or (batch is not None and batch < 1):
        raise ValueError(
            f"need repeat >= 1, warmup >= 0 and batch >= 1; got repeat={repeat}, "
            f"warmup={warmup}, batch={batch}"
        )
    if bytes_moved is not None and bytes_moved <= 0:
        raise ValueError(f"bytes_moved must be a positive byte count, got {bytes_moved}")
    for _ in range(warmup):
        launch()
    if method == CPU:
        batch = 1 if batch is None else batch
    else:
        cuda.synchronize()
        if runtime.is_simulator():
            method, batch = SIMULATED, 1
        elif batch is None:
            batch = _auto_batch(launch)
    sample = {
        EVENTS: _time_events,
        HOST_SYNC: _time_host,
        SIMULATED: _time_host,
        HOST_NO_SYNC: _time_host_no_sync,
        CPU: _time_host_no_sync,  # no GPU work to wait for: the host clock is the whole story
    }[method]
    samples = [sample(launch, batch) / batch for _ in range(repeat)]
    found = Timing(name, samples, bytes_moved, method, {"batch": batch})
    return found if id is None else found.identified(id)


def _auto_batch(launch) -> int:
    """How many launches make one sample last about _SAMPLE_TARGET_MS (from the fastest of three
    single launches: one disturbed launch would otherwise make every sample a short batch)."""
    one = min(_time_events(launch, 1) for _ in range(3))
    return max(1, min(_MAX_BATCH, math.ceil(_SAMPLE_TARGET_MS / max(one, 1e-3))))


def _time_events(launch, batch: int) -> float:
    """Milliseconds between two CUDA events recorded around `batch` launches."""
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(batch):
        launch()
    end.record()
    end.synchronize()
    return cuda.event_elapsed_time(start, end)


def _time_host(launch, batch: int) -> float:
    """Milliseconds on the host clock around `batch` launches and a synchronize."""
    t0 = time.perf_counter()
    for _ in range(batch):
        launch()
    cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def _time_host_no_sync(launch, batch: int) -> float:
    """The classic mistake: the host clock stops before the GPU has finished."""
    t0 = time.perf_counter()
    for _ in range(batch):
        launch()
    elapsed = (time.perf_counter() - t0) * 1e3
    cuda.synchronize()  # let the work finish before the next sample starts
    return elapsed


def ceiling_bytes() -> int:
    """Buffer size for ceiling measurements: 8x the L2 cache and at least 512 MiB on a GPU."""
    info = runtime.device_info()
    if info.simulator:
        return 64 * 1024
    return max(8 * info.l2_bytes, 512 * 2**20)


_ceilings: dict[tuple[str, int], Timing] = {}


def copy_ceiling(nbytes: int | None = None) -> Timing:
    """Measure the device-to-device copy (cudaMemcpy): the ceiling for memory-bound kernels.

    Bytes moved count the read and the write. The result is cached per buffer size.
    """
    nbytes = ceiling_bytes() if nbytes is None else nbytes
    if nbytes < 4:
        raise ValueError(f"nbytes must be at least 4, got {nbytes}")
    if ("copy", nbytes) not in _ceilings:
        import numpy as np

        src = cuda.to_device(np.random.default_rng(0).random(nbytes // 4, dtype=np.float32))
        dst = cuda.device_array_like(src)
        _ceilings["copy", nbytes] = benchmark(
            lambda: dst.copy_to_device(src),
            name="device-to-device copy",
            bytes_moved=2 * src.nbytes,
        )
    return _ceilings["copy", nbytes]


def read_ceiling(nbytes: int | None = None) -> Timing:
    """Measure how fast the device reads memory it does not write: read-only kernels' ceiling.

    A sum or a dot product only reads; against the copy (which reads and writes) it can pass
    100 %. This kernel reads every 16-byte word of a buffer once, one per thread, and writes
    nothing; bytes moved count the reads. Measured the same way as copy_ceiling and cached.
    """
    import numpy as np

    from . import launch
    from .device.stream import read_every_word

    if nbytes is None:  # the simulator runs a Python thread per word: 256 of them are plenty
        nbytes = 4096 if runtime.is_simulator() else ceiling_bytes()
    if nbytes < 16:
        raise ValueError(f"nbytes must be at least 16, got {nbytes}")
    if ("read", nbytes) not in _ceilings:
        words = cuda.to_device(
            np.random.default_rng(0).integers(0, 2**32, (nbytes // 16, 4), dtype=np.uint32)
        )
        sink = cuda.device_array(1, np.uint32)
        step = launch.Step(read_every_word, launch.grid_1d(words.shape[0], 256), 256, (words, sink))
        _ceilings["read", nbytes] = benchmark(
            step.run, name="device read", bytes_moved=words.nbytes
        )
    return _ceilings["read", nbytes]

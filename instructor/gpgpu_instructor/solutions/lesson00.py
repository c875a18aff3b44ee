"""Reference solutions of lesson 00's exercises (for instructors and the graders' tests)."""

import statistics
import time

from numba import cuda


@cuda.jit
def saxpy(a, x, y, out):
    """out[i] = a * x[i] + y[i], one element per thread."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def saxpy_gbs(n, ms):
    """Effective bandwidth in GB/s of saxpy (out = a*x + y, float32) on n elements in ms."""
    return 12 * n / (ms * 1e-3) / 1e9


def time_kernel(run, repeat=10):
    """Milliseconds per launch of run(), averaged over repeat launches, after a warm-up."""
    run()
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (time.perf_counter() - start) / repeat * 1e3


def time_events(run, repeat=15):
    """Median milliseconds of run() over repeat launches, timed with CUDA events."""
    run()
    samples = []
    for _ in range(repeat):
        start, end = cuda.event(), cuda.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


@cuda.jit
def saxpy_grid_stride(a, x, y, out):
    """out = a * x + y for any n, with a grid of any size."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = a * x[i] + y[i]


REFERENCES = {
    "00.1": saxpy,
    "00.2": saxpy_gbs,
    "00.3": time_kernel,
    "00.4": time_events,
    "00.5": saxpy_grid_stride,
}

_SAXPY = ["void(float32, float32[::1], float32[::1], float32[::1])"]
SIGNATURES = {saxpy: _SAXPY, saxpy_grid_stride: _SAXPY}

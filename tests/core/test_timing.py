"""The benchmark helper: results, labels, and errors for bad input."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import runtime, timing
from gpgpu_lessons.l01_coalescing import textbook as coalescing


@pytest.fixture
def copy_launch(rng):
    src = cuda.to_device(rng.random(2000, dtype=np.float32))
    dst = cuda.device_array_like(src)
    return (lambda: coalescing.copy(src, out=dst)), src.nbytes * 2


def test_benchmark_returns_samples_and_bandwidth(copy_launch):
    launch, nbytes = copy_launch
    result = timing.benchmark(launch, name="copy", bytes_moved=nbytes, repeat=3)
    assert result.name == "copy" and len(result.samples_ms) == 3
    assert all(s > 0 for s in result.samples_ms)
    assert result.min_ms <= result.median_ms <= result.max_ms
    assert result.gbs == pytest.approx(nbytes / (result.median_ms * 1e-3) / 1e9)
    assert "copy:" in str(result) and "GB/s" in str(result)


def test_clock_is_labelled(copy_launch):
    launch, _ = copy_launch
    result = timing.benchmark(launch, repeat=1)
    if runtime.is_simulator():
        assert result.clock == timing.SIMULATED and result.simulated and "simulator" in str(result)
    else:
        assert result.clock == timing.EVENTS and not result.simulated


def test_warmup_calls_are_not_timed():
    calls = []
    result = timing.benchmark(
        lambda: calls.append(1), warmup=2, repeat=3, batch=1, method=timing.HOST_SYNC
    )
    assert len(calls) == 2 + 3
    assert len(result.samples_ms) == 3


def test_round_trip_through_dict(copy_launch):
    launch, nbytes = copy_launch
    result = timing.benchmark(launch, bytes_moved=nbytes, repeat=2)
    again = timing.Timing.from_dict(result.as_dict())
    assert (
        again.samples_ms == result.samples_ms
        and again.gbs == result.gbs
        and again.clock == result.clock
    )


def test_bandwidth_arithmetic():
    assert timing.bandwidth_gbs(2_000_000_000, 1000.0) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="positive"):
        timing.bandwidth_gbs(10, 0)


def test_copy_ceiling_is_measured_and_cached():
    first = timing.copy_ceiling()
    assert first.gbs > 0 and first.name == "device-to-device copy"
    assert timing.copy_ceiling() is first
    if not runtime.is_simulator():
        assert timing.ceiling_bytes() >= 8 * runtime.device_info().l2_bytes


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"repeat": 0}, "repeat >= 1"),
        ({"batch": 0}, "batch >= 1"),
        ({"warmup": -1}, "warmup >= 0"),
        ({"bytes_moved": 0}, "positive byte count"),
        ({"method": "stopwatch"}, "method must be one of"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        timing.benchmark(lambda: None, **kwargs)


def test_launch_must_be_callable():
    with pytest.raises(TypeError, match="wrap the launch in a lambda"):
        timing.benchmark(42)


def test_cpu_work_is_timed_on_the_host_clock_even_in_the_simulator(rng):
    a = rng.random(1000)
    result = timing.benchmark(
        lambda: np.flip(a).copy(),
        name="flip",
        bytes_moved=2 * a.nbytes,
        repeat=3,
        method=timing.CPU,
    )
    assert result.clock == timing.CPU and len(result.samples_ms) == 3 and result.gbs > 0
    assert not result.simulated and result.extra["batch"] == 1
    with pytest.raises(TypeError, match="must be a callable"):
        timing.benchmark(None, method=timing.CPU)
    with pytest.raises(ValueError, match="repeat >= 1"):
        timing.benchmark(lambda: None, repeat=0, method=timing.CPU)


def test_read_ceiling_reads_every_word_and_counts_reads_only():
    read = timing.read_ceiling(4096)
    assert read.name == "device read" and read.bytes_moved == 4096
    assert timing.read_ceiling(4096) is read, "measured once per size"
    with pytest.raises(ValueError, match="at least 16"):
        timing.read_ceiling(8)

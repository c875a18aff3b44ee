"""A kept launch on a GPU runs with its arguments marshalled once; elsewhere Numba launches it."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda
from test_launch import BLOCK, add_one, plus_one

from gpgpu_lessons import runtime
from gpgpu_lessons.marshalled import Marshalled, marshal

N = 37  # not a multiple of the block
on_gpu = pytest.mark.skipif(runtime.MODE != runtime.GPU, reason="marshalling needs a GPU")


def test_a_kept_call_reads_new_values_each_time(rng):
    """Whether or not it is marshalled, a kept launch reads what its arrays hold now."""
    d_x, d_out = cuda.to_device(rng.random(N, dtype=np.float32)), cuda.device_array(N, np.float32)
    for _ in range(4):
        values = rng.random(N, dtype=np.float32)
        d_x.copy_to_device(values)
        plus_one(d_x, out=d_out)
        np.testing.assert_array_equal(d_out.copy_to_host(), values + 1)
    (kept,) = [k for k in plus_one.kept.entries.values() if id(d_x) in k.arrays]
    assert bool(kept.runs) == (runtime.MODE == runtime.GPU)


@pytest.mark.skipif(runtime.MODE == runtime.GPU, reason="the simulator's rule")
def test_the_simulator_never_marshals(rng):
    d_x = cuda.to_device(rng.random(N, dtype=np.float32))
    assert marshal(add_one, 2, BLOCK, (d_x, d_x)) is None


@on_gpu
def test_what_is_not_marshalled(rng):
    """Host arrays (copied in and back), a kernel not compiled yet, a debug kernel."""
    x = rng.random(N, dtype=np.float32)
    d_x, d_out = cuda.to_device(x), cuda.device_array(N, np.float32)
    assert marshal(add_one, 2, BLOCK, (x, d_out)) is None

    @cuda.jit
    def fresh(x, out):
        out[0] = x[0]

    assert marshal(fresh, 1, 1, (d_x, d_out)) is None  # never launched: nothing compiled

    @cuda.jit(debug=True, opt=False)
    def checked(x, out):
        out[0] = x[0]

    checked[1, 1](d_x, d_out)
    assert marshal(checked, 1, 1, (d_x, d_out)) is None


@on_gpu
def test_a_marshalled_launch_is_the_launch_numba_makes(rng):
    x = rng.random(N, dtype=np.float32)
    d_x, d_out = cuda.to_device(x), cuda.device_array(N, np.float32)
    add_one[2, BLOCK](d_x, d_out)
    run = marshal(add_one, 2, BLOCK, (d_x, d_out))
    d_out.copy_to_device(np.zeros(N, np.float32))
    run()
    np.testing.assert_array_equal(d_out.copy_to_host(), x + 1)


def test_a_prepared_launch_run_again_reads_new_values(rng):
    """timing.benchmark runs a prepared launch back to back: on a GPU marshalled from its second
    run on, in the simulator through Numba every time; both read what the arrays hold now."""
    d_x, d_out = cuda.to_device(rng.random(N, dtype=np.float32)), cuda.device_array(N, np.float32)
    prepared = plus_one.prepare(d_x, out=d_out)
    for _ in range(3):
        values = rng.random(N, dtype=np.float32)
        d_x.copy_to_device(values)
        prepared()
        np.testing.assert_array_equal(d_out.copy_to_host(), values + 1)
    (runs,) = prepared._runs
    assert all(isinstance(r, Marshalled) for r in runs) == (runtime.MODE == runtime.GPU)


def test_a_number_written_to_host_memory_is_this_calls(rng):
    """A reduction whose kernel stores its result once hands back the number from mapped host
    memory: each call waits for its own kernel, never reading the last call's number."""
    from gpgpu_lessons.l01_coalescing import fast as l01
    from gpgpu_lessons.l05_atomics_vs_reduction import fast as l05

    d_a = cuda.to_device(rng.random(1001, dtype=np.float32))
    d_b = cuda.to_device(rng.random(1001, dtype=np.float32))
    assert l05.sum_grid_stride.prepare(d_a).mapped is not None
    assert l05.sum_grid_stride.prepare(d_a, hand_over=False).mapped is None  # atomics: device
    assert l05.sum_grid_stride.prepare(d_a, out=cuda.device_array(1, np.float32)).mapped is None
    for _ in range(3):
        values = rng.random(1001, dtype=np.float32) - 0.5
        d_a.copy_to_device(values)
        assert l05.sum_grid_stride(d_a) == pytest.approx(values.sum(dtype=np.float64), abs=1e-4)
        assert l01.dot(d_a, d_b) == pytest.approx(
            values.astype(np.float64) @ d_b.copy_to_host(), rel=1e-5, abs=1e-4
        )


def test_a_dropped_numbers_memory_is_used_again():
    """Mapped memory costs more to allocate and free than a launch: a HostNumber nothing holds
    gives its array back for the next one."""
    import gc

    from gpgpu_lessons import launch

    number = launch.HostNumber(np.dtype(np.float32))
    array = number.array
    del number
    gc.collect()
    assert launch.HostNumber(np.dtype(np.float32)).array is array

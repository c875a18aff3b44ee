"""A kept launch on a GPU runs with its arguments marshalled once; elsewhere Numba launches it."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda
from test_launch import BLOCK, add_one, plus_one

from gpgpu_lessons import runtime
from gpgpu_lessons.marshalled import marshal

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

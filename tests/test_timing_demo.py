"""Lesson 00's kernels against NumPy, and their bad-input errors."""
import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons.kernels import timing_demo


def busy_reference(x, iterations):
    """The busy kernel's arithmetic in float32, on the host."""
    x = x.copy()
    for _ in range(iterations):
        x = (x * np.float32(0.999) + np.float32(0.001)).astype(np.float32)
    return x


@pytest.mark.parametrize("n", [1, 31, 257])
def test_busy_computes_its_chain(rng, n):
    x = rng.random(n, dtype=np.float32)
    d = cuda.to_device(x)
    timing_demo.busy_wait(d, 7)
    np.testing.assert_allclose(d.copy_to_host(), busy_reference(x, 7), rtol=1e-5)


@pytest.mark.parametrize("n, passes", [(1, 1), (33, 2), (1000, 3)])
def test_copy_repeated_copies_every_element(rng, n, passes):
    src = cuda.to_device(rng.random(n, dtype=np.float32))
    dst = cuda.to_device(np.full(n, np.nan, dtype=np.float32))  # poisoned
    timing_demo.copy_repeated(src, dst, passes)
    np.testing.assert_array_equal(dst.copy_to_host(), src.copy_to_host())


def test_fresh_kernels_are_new_and_correct(rng):
    first, second = timing_demo.fresh_scale_kernel(), timing_demo.fresh_scale_kernel()
    assert first is not second
    x = rng.random(300, dtype=np.float32)
    d = cuda.to_device(x)
    first[2, 256](d, np.float32(3))
    np.testing.assert_allclose(d.copy_to_host(), 3 * x, rtol=1e-6)


def test_empty_launch_runs_and_checks_its_shape():
    timing_demo.launch_empty(2, 32)
    cuda.synchronize()
    with pytest.raises(ValueError, match="at most 1024"):
        timing_demo.launch_empty(1, 2048)
    with pytest.raises(ValueError, match="blocks must be >= 1"):
        timing_demo.launch_empty(0, 1)


def test_bad_inputs_are_named(rng):
    host = rng.random(8, dtype=np.float32)
    with pytest.raises(TypeError, match="float32 device array"):
        timing_demo.busy_wait(host, 3)
    with pytest.raises(ValueError, match="iterations must be >= 0"):
        timing_demo.busy_wait(cuda.to_device(host), -1)
    with pytest.raises(TypeError, match="1-D device array"):
        timing_demo.copy_repeated(host, cuda.to_device(host), 1)
    with pytest.raises(ValueError, match="must match"):
        timing_demo.copy_repeated(cuda.to_device(host), cuda.to_device(host[:4]), 1)
    with pytest.raises(ValueError, match="passes must be >= 1"):
        timing_demo.copy_repeated(cuda.to_device(host), cuda.to_device(host), 0)

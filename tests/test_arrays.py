"""Input checks shared by the wrappers: each bad input gets an error that names the fix."""
import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import arrays


def test_host_input_is_copied_and_device_input_kept(rng):
    a = rng.random(10, dtype=np.float32)
    d_a, from_host = arrays.device_input(a, name="a", dtypes=np.float32)
    assert from_host and np.array_equal(d_a.copy_to_host(), a)
    same, from_host = arrays.device_input(d_a, name="a", dtypes=np.float32)
    assert not from_host and np.array_equal(same.copy_to_host(), a)


@pytest.mark.parametrize("value, message", [
    ([1.0, 2.0], "must be a NumPy array or a Numba device array"),
    (np.ones(4, dtype=np.int8), "has dtype int8"),
    (np.ones((2, 2), dtype=np.float32), "must be 1-D"),
    (np.ones(0, dtype=np.float32), "is empty"),
    (np.ones(8, dtype=np.float32)[::2], "not C-contiguous"),
])
def test_bad_inputs_are_named(value, message):
    with pytest.raises((TypeError, ValueError), match=message):
        arrays.device_input(value, name="a", dtypes=np.float32, ndim=1)


def test_output_checks():
    out = cuda.device_array(4, dtype=np.float32)
    assert arrays.device_output(out, (4,), np.float32) is out
    assert arrays.device_output(None, (3, 2), np.float64).shape == (3, 2)
    with pytest.raises(ValueError, match="must have shape"):
        arrays.device_output(out, (5,), np.float32)
    with pytest.raises(TypeError, match="must be a device array"):
        arrays.device_output(np.ones(4, dtype=np.float32), (4,), np.float32)


def test_thread_and_shared_memory_limits():
    assert arrays.check_threads(256) == 256 and arrays.check_threads((32, 8)) == 256
    with pytest.raises(ValueError, match="at most 1024"):
        arrays.check_threads((64, 32))
    with pytest.raises(ValueError, match="positive integers"):
        arrays.check_threads(0)
    with pytest.raises(ValueError, match="48"):
        arrays.check_shared_memory(64 * 1024)
    assert arrays.blocks_for(257, 256) == 2 and arrays.blocks_for(256, 256) == 1

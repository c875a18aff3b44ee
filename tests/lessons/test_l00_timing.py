"""Lesson 00's kernels against NumPy and their bad-input errors (what every wrapper must do:
tests/core/test_wrapper_contract.py)."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import launch
from gpgpu_lessons.device import copy
from gpgpu_lessons.l00_timing_gpu_code import figures, textbook


def poisoned(n, dtype=np.float32):
    """A device output full of NaN (or a sentinel), so elements a kernel forgets show up."""
    fill = np.nan if np.dtype(dtype).kind == "f" else 0xDEAD
    return cuda.to_device(np.full(n, fill, dtype=dtype))


@pytest.mark.parametrize("n, dtype", [(1, np.float32), (33, np.int32), (257, np.float64)])
def test_copy_once(rng, n, dtype):
    a = (rng.random(n) * 1000 + 1).astype(dtype)
    out = poisoned(n, dtype)
    textbook.copy(cuda.to_device(a), out=out, block=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)
    np.testing.assert_array_equal(textbook.copy(a), a)


@pytest.mark.parametrize("n, passes", [(1, 1), (33, 2), (1000, 3)])
def test_copy_repeated_copies_every_element(rng, n, passes):
    a = rng.random(n, dtype=np.float32) + 1
    out = poisoned(n)
    textbook.copy_repeated(cuda.to_device(a), passes, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_a_kernel_jitted_again_from_its_python_code_is_new_and_correct(rng):
    """The notebook's first-call slide: cuda.jit(kernel.py_func), never compiled before."""
    first, second = cuda.jit(textbook.scale.py_func), cuda.jit(textbook.scale.py_func)
    assert first is not second and first is not textbook.scale
    x = rng.random(300, dtype=np.float32)
    d = cuda.to_device(x)
    first[2, 256](d, np.float32(3))
    np.testing.assert_allclose(d.copy_to_host(), 3 * x, rtol=1e-6)


def test_empty_launch_runs_and_checks_its_shape():
    assert textbook.launch_empty(2, 32) is None
    assert isinstance(textbook.launch_empty.prepare(), launch.Launch)
    cuda.synchronize()
    with pytest.raises(ValueError, match="at most 1024"):
        textbook.launch_empty(1, 2048)
    with pytest.raises(ValueError, match="blocks must be an integer >= 1"):
        textbook.launch_empty(0, 1)


@pytest.mark.parametrize("n", [1, 37, 1000])
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_dot(rng, n, dtype, rtol):
    x, y = (rng.random(n) + 0.5).astype(dtype), (rng.random(n) + 0.5).astype(dtype)
    got = textbook.dot(x, y)
    assert isinstance(got, float)
    np.testing.assert_allclose(got, np.dot(x.astype(np.float64), y), rtol=rtol)


def test_dot_sums_in_the_inputs_precision():
    x = np.full(2**12, 1 / 3, dtype=np.float32)
    assert textbook.dot(x, x) != textbook.dot(x.astype(np.float64), x.astype(np.float64))


def test_bad_inputs_are_named(rng):
    host = rng.random(8, dtype=np.float32)
    with pytest.raises(TypeError, match="dtype float64"):
        textbook.keep_busy(host.astype(np.float64), 3)
    with pytest.raises(ValueError, match="iterations must be an integer >= 0"):
        textbook.keep_busy(host, -1)
    with pytest.raises(ValueError, match="must be 1-D"):
        textbook.copy(host.reshape(2, 4))
    with pytest.raises(ValueError, match="one int for this 1-D kernel"):
        textbook.dot(host, host, block=(16, 16))
    with pytest.raises(ValueError, match="out must have shape"):
        textbook.copy_repeated(host, 1, out=cuda.device_array(4, dtype=np.float32))
    with pytest.raises(ValueError, match="same shape and dtype"):
        textbook.dot(host, host[:4])
    with pytest.raises(TypeError, match="dtype int32"):
        textbook.dot(np.ones(3, dtype=np.int32), np.ones(3, dtype=np.int32))
    with pytest.raises(ValueError, match="is empty"):
        textbook.copy(np.ones(0, dtype=np.float32))


def test_every_kernel_is_registered():
    kernels = {v for v in vars(textbook).values() if hasattr(v, "py_func") or hasattr(v, "fn")}
    assert set(textbook.SIGNATURES) == {
        textbook.empty,
        textbook.busy,
        textbook.scale,
        textbook.copy_passes,
        textbook.dot_partial_sums,
    }
    # the one-per-thread copy is lesson 01's too: registered where it lives, device.copy
    assert kernels - set(textbook.SIGNATURES) == {textbook.copy_one_per_thread}
    assert textbook.copy_one_per_thread in copy.SIGNATURES


def test_the_timeline_figure_reads_from_the_back_of_the_room():
    fig = figures.launch_timeline()
    assert fig.get_figwidth() >= 12
    ax = fig.axes[0]
    texts = ax.texts + ax.get_yticklabels() + [ax.xaxis.label]
    assert min(t.get_fontsize() for t in texts) >= 13

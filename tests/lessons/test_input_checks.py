"""Issue 24's input checks: lesson 00's empty launch names CUDA's grid and block limits before
the simulator materialises a grid it cannot hold, and lesson 03's 2-D FFT names a wrong rank."""

import numpy as np
import pytest

from gpgpu_lessons import hardware
from gpgpu_lessons.l00_timing_gpu_code import textbook
from gpgpu_lessons.l03_bank_conflicts import applications


@pytest.mark.parametrize(
    "blocks, block, message",
    [
        (2**31, 1, r"blocks=2147483648 is more than CUDA's 2147483647 blocks along x: launch"),
        (hardware.MAX_GRID_X + 5, 32, "more than CUDA's 2147483647 blocks along x"),
        (1, (1, 1, 65), r"65 threads along z; CUDA allows at most 64"),
        (1, (2, 1, 512), "512 threads along z"),
        (1.5, 1, "blocks must be an integer >= 1, got 1.5"),
    ],
)
def test_empty_launch_names_cudas_limits(blocks, block, message, monkeypatch):
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    def launched(*args):  # refused before the simulator builds the grid
        raise AssertionError("the launch reached the simulator")

    monkeypatch.setattr(FakeCUDAKernel, "__getitem__", launched)
    with pytest.raises(ValueError, match=message) as error:
        textbook.launch_empty(blocks, block)
    assert "\n" not in str(error.value)


def test_empty_launch_at_the_edge_of_the_limits_runs():
    assert textbook.launch_empty(3, (2, 2, hardware.MAX_BLOCK_DIMS[2])) is None


@pytest.mark.parametrize(
    "a, got",
    [(None, "got None"), (np.float32(2), r"got shape \(\)"), (np.arange(8.0), r"shape \(8,\)")],
)
def test_fft2_by_transposes_names_a_wrong_rank(a, got):
    with pytest.raises(ValueError, match=f"must be a non-empty 2-D array .*{got}.*a\\[None, :\\]"):
        applications.fft2_by_transposes(a)


@pytest.mark.parametrize("shape", [(0, 4), (2, 3, 4)])
def test_fft2_by_transposes_refuses_empty_and_3d(shape):
    with pytest.raises(ValueError, match=r"non-empty 2-D array"):
        applications.fft2_by_transposes(np.ones(shape, np.float32))


def test_fft2_by_transposes_takes_a_row_made_from_a_signal(rng):
    signal = rng.random(37).astype(np.float32)
    got = applications.fft2_by_transposes(signal[None, :])
    np.testing.assert_allclose(got, np.fft.fft2(signal[None, :]), rtol=1e-4, atol=1e-4)

"""Seed 001's sums of sine waves, every variant against the float64 reference, on tiny odd shapes."""
import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons.kernels import sine_sum

SMALL = dict(block_threads=16, host_loop_blocks=4)   # small blocks: the simulator runs a thread per thread


@pytest.mark.parametrize("variant", sine_sum.VARIANTS)
@pytest.mark.parametrize("n, width, height", [(1, 1, 1), (40, 7, 3), (17, 1, 11)])
def test_variants_match_float64(variant, n, width, height):
    mag, freq, phi = sine_sum.waves(n)
    expected = sine_sum.reference(mag, freq, phi, width=width, height=height)
    out = cuda.to_device(np.full((height, width), np.nan, dtype=np.float32))
    sine_sum.sine_sum(mag, freq, phi, variant=variant, width=width, height=height, out=out, **SMALL)
    got = out.copy_to_host()
    atol = sine_sum.tolerance(mag, width=width, height=height)
    np.testing.assert_allclose(got, expected, rtol=0, atol=atol)


def test_numpy_input_returns_numpy():
    mag, freq, phi = sine_sum.waves(5, seed=3)
    got = sine_sum.sine_sum(mag, freq, phi, variant="register accumulator", width=5, height=2)
    assert isinstance(got, np.ndarray) and got.shape == (2, 5) and got.dtype == np.float32


def test_reference_rows_pick_rows():
    mag, freq, phi = sine_sum.waves(3)
    full = sine_sum.reference(mag, freq, phi, width=6, height=4)
    np.testing.assert_array_equal(sine_sum.reference(mag, freq, phi, width=6, height=4, rows=[3, 1]), full[[3, 1]])


def test_waves_are_the_seeds_uniform_draws():
    mag, freq, phi = sine_sum.waves(4)
    assert all(v.dtype == np.float32 and v.shape == (4,) for v in (mag, freq, phi))
    assert np.all((mag >= 0) & (mag < 1)) and len({mag[0], freq[0], phi[0]}) == 3


def test_bad_input_is_named():
    mag, freq, phi = sine_sum.waves(3)
    with pytest.raises(ValueError, match="same length"):
        sine_sum.sine_sum(mag, freq[:2], phi, width=2, height=2)
    with pytest.raises(TypeError, match="mag has dtype float64"):
        sine_sum.sine_sum(mag.astype(np.float64), freq, phi, width=2, height=2)
    with pytest.raises(ValueError, match="width must be a positive integer"):
        sine_sum.sine_sum(mag, freq, phi, width=0, height=2)
    with pytest.raises(ValueError, match="unknown variant"):
        sine_sum.sine_sum(mag, freq, phi, variant="5 magic", width=2, height=2)
    with pytest.raises(ValueError, match="power of two"):
        sine_sum.sine_sum(mag, freq, phi, width=2, height=2, block_threads=48)
    with pytest.raises(ValueError, match="at most 1024"):
        sine_sum.sine_sum(mag, freq, phi, width=2, height=2, block_threads=2048)
    with pytest.raises(ValueError, match=r"must have shape \(2, 2\)"):
        sine_sum.sine_sum(mag, freq, phi, width=2, height=2, out=cuda.device_array((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="positive integer"):
        sine_sum.waves(0)


@pytest.mark.parametrize("variant", ["recurrence, fast math", "reduced argument, fast math"])
def test_wide_rows_use_every_output_of_a_thread(variant):
    """300 columns: not a multiple of the recurrence kernel's outputs per thread."""
    mag, freq, phi = sine_sum.waves(3, seed=7)
    expected = sine_sum.reference(mag, freq, phi, width=300, height=1)
    out = cuda.to_device(np.full((1, 300), np.nan, dtype=np.float32))
    sine_sum.sine_sum(mag, freq, phi, variant=variant, width=300, height=1, out=out)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=0,
                               atol=sine_sum.tolerance(mag, width=300, height=1))


@pytest.mark.parametrize("threads, outputs, waves", [(32, 8, 2), (16, 3, 4), (64, 1, 1)])
@pytest.mark.parametrize("n, width, height", [(5, 37, 3), (1, 8, 2), (4, 2, 5)])
def test_recurrence_configurations(threads, outputs, waves, n, width, height):
    """Columns not a multiple of the outputs per thread, n not a multiple of the waves per step."""
    mag, freq, phi = sine_sum.waves(n, seed=11)
    expected = sine_sum.reference(mag, freq, phi, width=width, height=height)
    out = cuda.to_device(np.full((height, width), np.nan, dtype=np.float32))
    d_waves = [cuda.to_device(v) for v in (mag, freq, phi)]
    sine_sum.launch_recurrence(*d_waves, out, threads=threads, outputs=outputs, waves=waves)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=0,
                               atol=sine_sum.tolerance(mag, width=width, height=height))

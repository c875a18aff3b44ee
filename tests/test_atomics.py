"""Atomic contention and the four histograms against NumPy, with poisoned outputs."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import images
from gpgpu_lessons.l05_atomics_vs_reduction import histogram


def test_atomic_spread_sums_per_address_on_interleaved_sizes(rng):
    for n, targets in [(97, 32), (1, 1), (97, 1), (64, 64), (97, 64)]:
        values = rng.random(n, dtype=np.float32)
        out = cuda.to_device(np.full(targets, np.nan, dtype=np.float32))
        assert histogram.atomic_spread(cuda.to_device(values), targets, out=out) is out
        expected = np.bincount(np.arange(n) % targets, weights=values, minlength=targets)
        np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-5)
        np.testing.assert_allclose(histogram.atomic_spread(values, targets), expected, rtol=1e-5)


def photo():
    return images.load("camera", shape=(13, 17))  # 221 pixels: not a multiple of a warp


PIXELS = {
    "photo": photo(),
    "constant": np.full(70, 200, dtype=np.uint8),  # one value: a whole warp aggregates
    "one": np.array([7], dtype=np.uint8),
    "random33": np.random.default_rng(5).integers(0, 256, 33, dtype=np.uint8),
    "column": np.random.default_rng(6).integers(0, 256, (40, 1), dtype=np.uint8),
}


@pytest.mark.parametrize("variant", list(histogram.HISTOGRAMS))
def test_histograms_match_bincount(variant):
    """Every input in one process; the same poisoned out= twice: overwritten, never added to."""
    out = cuda.to_device(np.full(histogram.BINS, 0xDEADBEEF, dtype=np.uint32))
    for pixels in (*PIXELS.values(), PIXELS["photo"]):
        assert histogram.histogram(cuda.to_device(pixels), variant=variant, out=out) is out
        expected = np.bincount(pixels.ravel(), minlength=256)
        np.testing.assert_array_equal(out.copy_to_host(), expected)


def test_histogram_takes_a_2d_numpy_image():
    picture = photo()
    got = histogram.histogram(picture, variant="global atomics")
    assert isinstance(got, np.ndarray) and got.dtype == np.uint32
    np.testing.assert_array_equal(got, np.bincount(picture.ravel(), minlength=256))


def test_bad_input_is_named():
    values = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match="power of two"):
        histogram.atomic_spread(values, 3)
    with pytest.raises(ValueError, match="must not exceed"):
        histogram.atomic_spread(values, 16)
    with pytest.raises(ValueError, match="targets must be an integer"):
        histogram.atomic_spread(values, 0)
    with pytest.raises(TypeError, match="values has dtype float64"):
        histogram.atomic_spread(np.ones(8), 1)
    with pytest.raises(ValueError, match="shares memory"):
        d_values = cuda.to_device(values)
        histogram.atomic_spread(d_values, 8, out=d_values)
    with pytest.raises(TypeError, match="pixels has dtype float32"):
        histogram.histogram(np.ones(8, dtype=np.float32))
    with pytest.raises(ValueError, match="unknown variant"):
        histogram.histogram(np.ones(8, dtype=np.uint8), variant="magic")
    with pytest.raises(ValueError, match="empty"):
        histogram.histogram(np.ones(0, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"must have shape \(256,\) and dtype uint32"):
        histogram.histogram(np.ones(8, dtype=np.uint8), out=cuda.device_array(256, dtype=np.int32))
    assert histogram.histogram(np.ones(8, dtype=np.uint8))[1] == 8  # then a good call


def test_device_input_returns_device_arrays(rng):
    values = cuda.to_device(rng.random(40, dtype=np.float32))
    assert not isinstance(histogram.atomic_spread(values, 8), np.ndarray)
    pixels = cuda.to_device(np.arange(40, dtype=np.uint8))
    assert histogram.histogram(pixels, variant="global atomics").copy_to_host().sum() == 40

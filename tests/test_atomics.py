"""Atomic contention and the histogram variants against NumPy, with poisoned outputs."""
import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import images
from gpgpu_lessons.kernels import atomics


@pytest.mark.parametrize("n, targets", [(1, 1), (97, 1), (97, 32), (97, 64), (64, 64)])
def test_atomic_spread_sums_per_address(rng, n, targets):
    values = rng.random(n, dtype=np.float32)
    out = cuda.to_device(np.full(targets, np.nan, dtype=np.float32))
    atomics.atomic_spread(values, targets, out=out)
    expected = np.bincount(np.arange(n) % targets, weights=values, minlength=targets)
    np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-5)


def photo():
    return images.load("camera", shape=(13, 17))          # 221 pixels: not a multiple of a warp


@pytest.mark.parametrize("variant", list(atomics.HISTOGRAMS))
@pytest.mark.parametrize("pixels", [
    photo(),
    np.full(70, 200, dtype=np.uint8),                        # one value: a whole warp aggregates
    np.array([7], dtype=np.uint8),
    np.random.default_rng(5).integers(0, 256, 33, dtype=np.uint8),
], ids=["photo", "constant", "one", "random33"])
def test_histograms_match_bincount(variant, pixels):
    out = cuda.to_device(np.full(atomics.BINS, 0xDEADBEEF, dtype=np.uint32))
    atomics.histogram(cuda.to_device(pixels.ravel()), variant=variant, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), np.bincount(pixels.ravel(), minlength=256))


def test_histogram_takes_a_2d_numpy_image():
    picture = photo()
    got = atomics.histogram(picture, variant="global atomics")
    assert got.dtype == np.uint32 and got.sum() == picture.size


def test_bad_input_is_named():
    values = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match="power of two"):
        atomics.atomic_spread(values, 3)
    with pytest.raises(ValueError, match="must not exceed"):
        atomics.atomic_spread(values, 16)
    with pytest.raises(TypeError, match="values has dtype float64"):
        atomics.atomic_spread(np.ones(8), 1)
    with pytest.raises(TypeError, match="pixels has dtype float32"):
        atomics.histogram(np.ones(8, dtype=np.float32))
    with pytest.raises(ValueError, match="unknown variant"):
        atomics.histogram(np.ones(8, dtype=np.uint8), variant="magic")
    with pytest.raises(ValueError, match="empty"):
        atomics.histogram(np.ones(0, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"must have shape \(256,\) and dtype uint32"):
        atomics.histogram(np.ones(8, dtype=np.uint8), out=cuda.device_array(256, dtype=np.int32))


def test_device_input_returns_device_arrays(rng):
    values = cuda.to_device(rng.random(40, dtype=np.float32))
    assert not isinstance(atomics.atomic_spread(values, 8), np.ndarray)
    pixels = cuda.to_device(np.arange(40, dtype=np.uint8))
    assert atomics.histogram(pixels, variant="global atomics").copy_to_host().sum() == 40

"""Lesson 04's filter_band: images of 5 to 80 columns, a band of whole rows in shared memory.

The plans are checked on every width and hundreds of heights (no kernel). The kernel runs in the
simulator on images of 1 to 3 rows (one block, clamped at both ends), on three blocks (the
middle one inside the image) of an odd and an even width (rows padded in shared memory), on the
widest, float32 and uint8, from constant and global memory, with filters wider than the image,
against lesson 04's float64 reference and its tolerance.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons.l04_constant_memory import band, fast, filters, reference


def run(image, weights, memory="constant"):
    """fast.filter2d into an output of NaN (a pixel never written shows), checked."""
    out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
    assert fast.filter2d(cuda.to_device(image), weights, memory=memory, out=out) is out
    got = out.copy_to_host()
    assert not np.isnan(got).any(), "some output pixels were never written"
    np.testing.assert_allclose(
        got, reference.reference(image, weights), rtol=0, atol=reference.tolerance(image, weights)
    )


def image_of(rng, shape, dtype):
    if dtype == np.uint8:
        return rng.integers(1, 256, size=shape, dtype=np.uint8)
    return rng.random(shape, dtype=np.float32) + 0.5


@settings(max_examples=300, deadline=None)
@given(h=st.integers(2, 10**8), w=st.integers(band.MIN_COLUMNS, band.MAX_COLUMNS))
def test_the_band_takes_5_to_80_columns_unless_a_tall_tile_spans_them(h, w):
    planned = fast.plan((h, w), filters.GAUSSIAN_5)
    if w in (8, 16, 24, 32, 40):  # TILE's tall tiles: 8 across, 1 to 5 columns a thread
        assert isinstance(planned.tile, fast.Tile)  # (a flat or short one if only a few rows)
        assert planned.tile == fast.tall(fast.TILE, w) or h <= 2 * fast.TILE.threads_y * 4
    else:
        assert planned.tile == band.LAYOUT and planned.shape == (h, w)
    prepared = fast.filter2d.prepare(np.ones((2, w), np.float32), filters.GAUSSIAN_5)
    assert prepared.steps[0].kernel in {**fast.SIGNATURES, **band.SIGNATURES}


def test_wider_or_one_row_images_are_not_the_bands():
    for shape in [(1, 17), (9, 81), (9, 4)]:
        assert not isinstance(fast.plan(shape, filters.GAUSSIAN_5).tile, band.Band)


def test_a_filter_whose_band_does_not_fit_shared_memory_takes_a_tile():
    """A 1201 x 1 filter: a band of 6 columns would need (680 + 1200) x 7 floats."""
    weights = np.ones((1201, 1), np.float32)
    tile = fast.Tile(1, 1, 1, 1)
    assert not band.fits(weights.shape) and band.fits(filters.GAUSSIAN_5.shape)
    assert isinstance(fast.plan((5000, 6), weights, tile).tile, fast.Tile)
    assert all("band" not in k.__name__ for k in fast.launched_kernels(weights, tile=tile))


def test_the_module_kernel_is_the_tuned_filter_and_one_kernel_serves_every_width():
    assert band.band_kernel(filters.GAUSSIAN_5, "constant") is band.filter_band
    assert band.band_kernel(filters.LAPLACIAN, "constant") is not band.filter_band
    names = {band.band_kernel(filters.GAUSSIAN_5, m).py_func.__name__ for m in fast.MEMORIES}
    assert names == {"filter_band", "filter_band_global_5x5"}
    for w in (5, 17, 80):
        prepared = fast.filter2d.prepare(np.ones((3000, w), np.float32), filters.GAUSSIAN_5)
        (step,) = prepared.steps
        assert step.kernel is band.filter_band and step.block == band.THREADS
        assert step.grid == -(-3000 // band.block_rows(band.LAYOUT, 5, w))


def test_the_largest_band_fits_every_width():
    """MAX_BAND holds each width's rows (padded to odd lengths); PASSES loads them."""
    for w in range(band.MIN_COLUMNS, band.MAX_COLUMNS + 1):
        rows = band.band_rows(band.LAYOUT, band.KY, w)
        assert rows * (w | 1) <= band.MAX_BAND and rows * w <= band.PASSES * band.THREADS
        assert band.block_rows(band.LAYOUT, band.KY, w) >= band.ROWS


@pytest.mark.parametrize("rows", [1, 2, 3])  # one block, rows clamped at both ends
@pytest.mark.parametrize("columns", [5, 6, 80])
def test_short_images_match_the_reference(rng, rows, columns):
    for memory, dtype, (ky, kx) in [
        ("constant", np.float32, (5, 5)),
        ("global", np.uint8, (3, 7)),
        ("constant", np.uint8, (7, 1)),
    ]:
        weights = rng.standard_normal((ky, kx)).astype(np.float32)
        run(image_of(rng, (rows, columns), dtype), weights, memory)


@pytest.mark.parametrize("columns", [9, 12])  # odd rows as in the image; even rows padded
def test_three_blocks_the_middle_one_inside_the_image(rng, columns):
    rows = 2 * band.block_rows(band.LAYOUT, 5, columns) + 37
    image = image_of(rng, (rows, columns), np.float32)
    assert fast.filter2d.prepare(image, filters.GAUSSIAN_5).steps[0].grid == 3
    run(image, filters.GAUSSIAN_5)


def test_a_filter_wider_than_the_image_and_one_tap(rng):
    """A 3 x 9 filter on 5 columns: taps past both edges, clamped; a 1 x 1 filter: a scale."""
    image = image_of(rng, (70, 5), np.float32)
    run(image, rng.standard_normal((3, 9)).astype(np.float32), "global")
    run(image_of(rng, (11, 7), np.uint8), np.full((1, 1), 0.5, np.float32))

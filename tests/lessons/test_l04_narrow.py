"""Lesson 04's filter_narrow: images of 2 to 4 columns, the filter folded onto them.

The folding is checked in NumPy on hundreds of filters and widths; the kernel runs in the
simulator on images of 1 to 130 rows (one block, clamped at both ends) and of three blocks (the
middle one inside the image), float32 and uint8, from constant and global memory, against
lesson 04's float64 reference and its tolerance.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons.l04_constant_memory import fast, filters, narrow, reference

ODD = st.integers(0, 3).map(lambda k: 2 * k + 1)


def random_filter(rng, ky, kx):
    return rng.standard_normal((ky, kx)).astype(np.float32)


@settings(max_examples=200, deadline=None)
@given(ky=ODD, kx=ODD, columns=st.integers(2, narrow.MAX_COLUMNS), seed=st.integers(0, 2**16))
def test_the_folded_filter_is_the_clamped_filter(ky, kx, columns, seed):
    """out[y, x] = sum over dy, c of folded[x, dy, c] * image[y + dy - ky//2 (clamped), c]."""
    rng = np.random.default_rng(seed)
    weights = random_filter(rng, ky, kx)
    image = rng.random((7, columns))
    taps = narrow.folded(weights, columns)
    assert taps.shape == (columns, ky, columns) and taps.dtype == np.float32
    rows = np.clip(np.arange(7)[:, None] + np.arange(ky) - ky // 2, 0, 6)  # (y, dy)
    got = np.einsum("xdc,ydc->yx", taps.astype(np.float64), image[rows])
    np.testing.assert_allclose(got, reference.reference(image, weights), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("columns", [2, 3, 4])
@pytest.mark.parametrize("rows", [1, 2, 130])  # one block, its threads past the image idle
def test_narrow_images_match_the_reference(rng, rows, columns):
    for memory, dtype, (ky, kx) in [
        ("constant", np.float32, (5, 5)),
        ("global", np.uint8, (3, 7)),
        ("constant", np.uint8, (7, 1)),
    ]:
        weights = random_filter(rng, ky, kx)
        if dtype == np.uint8:
            image = rng.integers(1, 256, size=(rows, columns), dtype=np.uint8)
        else:
            image = rng.random((rows, columns), dtype=np.float32) + 0.5
        planned = fast.plan(image.shape, weights)
        assert planned.tile == (narrow.Narrow(columns) if rows > 1 else fast.line(fast.TILE))
        out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
        assert fast.filter2d(cuda.to_device(image), weights, memory=memory, out=out) is out
        got = out.copy_to_host()
        assert not np.isnan(got).any(), "some output pixels were never written"
        np.testing.assert_allclose(
            got,
            reference.reference(image, weights),
            rtol=0,
            atol=reference.tolerance(image, weights),
        )


def test_the_module_kernel_is_the_tuned_filter_on_three_columns():
    """As written, filter_narrow is the 5x5 Gaussian from constant memory on N x 3."""
    assert narrow.narrow_kernel(filters.GAUSSIAN_5, "constant", 3) is narrow.filter_narrow
    assert narrow.narrow_kernel(filters.GAUSSIAN_5, "constant", 2) is not narrow.filter_narrow
    names = {
        narrow.narrow_kernel(filters.GAUSSIAN_5, m, w).py_func.__name__
        for m in fast.MEMORIES
        for w in (2, 3, 4)
    }
    assert len(names) == 6  # each instance under its own name in a profiler
    prepared = fast.filter2d.prepare(np.ones((9, 3), np.float32), filters.GAUSSIAN_5)
    assert [step.kernel for step in prepared.steps] == [narrow.filter_narrow]
    assert prepared.steps[0].grid == 1 and prepared.steps[0].block == narrow.THREADS


def test_a_block_inside_the_image_copies_its_band_as_one_run(rng):
    """3 blocks of THREADS x ROWS rows: the middle one lies inside the image (no clamp)."""
    rows = 2 * narrow.THREADS * narrow.ROWS + 50
    image = rng.random((rows, 3), dtype=np.float32) + 0.5
    weights = random_filter(rng, 5, 5)
    prepared = fast.filter2d.prepare(image, weights)
    assert prepared.steps[0].grid == 3
    got = fast.filter2d(image, weights)
    np.testing.assert_allclose(
        got, reference.reference(image, weights), rtol=0, atol=reference.tolerance(image, weights)
    )

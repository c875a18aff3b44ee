"""Lesson 02's flips of short rows: threads over the output's aligned words (`flip_short_rows`).

The tuned flips take this path for images of at least SHORT_MIN_BYTES whose rows are shorter
than SHORT_ROW_BYTES; the simulator runs one Python thread per CUDA thread, so these tests lower
SHORT_MIN_BYTES to 0 and flip tiny images: N x 3, N x 40, 1 x N, 3 x N, RGB, odd sizes, sizes
that are no whole number of words, outputs that start at any byte, host and device arrays.
"""

import numpy as np
import pytest
from flip_images import FILL, kernel_names, placed, random_image
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons.l02_shared_memory import fast


@pytest.fixture(autouse=True)
def small_images_take_short_rows(monkeypatch):
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", 0)


SHAPES = [(37, 3), (9, 40), (1, 29), (3, 29), (13, 5, 3), (7, 13), (2, 3), (11, 17, 3), (5, 2, 3)]


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("offsets", [(0, 0), (3, 5), (8, 1)], ids=["aligned", "3-5", "8-1"])
def test_short_rows_match_numpy_at_any_offset(shape, horizontal, offsets):
    a = random_image(shape, seed=sum(shape))
    expected = np.flip(a, axis=1 if horizontal else 0)
    _, d_src = placed(a, offsets[0])
    allocation, d_out = placed((expected.astype(np.int16) + 1).astype(np.uint8), offsets[1])
    prepared = fast.flip_words.prepare(d_src, horizontal=horizontal, out=d_out)
    kind = "horizontal_" + ("gray" if a.ndim == 2 else "rgb") if horizontal else "vertical"
    assert kernel_names(prepared) == {f"flip_short_rows_{kind}_8B_x{fast.SHORT_PER_THREAD}_i32"}
    prepared()
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)
    around = np.delete(allocation.copy_to_host(), range(offsets[1], offsets[1] + a.size))
    assert (around == FILL).all(), "a byte outside the output changed"
    np.testing.assert_array_equal(d_src.copy_to_host(), a)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    height=st.integers(1, 40),
    width=st.integers(2, 30),
    rgb=st.booleans(),
    horizontal=st.booleans(),
    offsets=st.tuples(st.integers(0, 15), st.integers(0, 15)),
)
def test_any_small_image_at_any_offsets(height, width, rgb, horizontal, offsets):
    shape = (height, width, 3) if rgb else (height, width)
    a = random_image(shape, seed=height * width)
    _, d_src = placed(a, offsets[0])
    _, d_out = placed(np.zeros_like(a), offsets[1])
    wrapper = fast.flip_horizontal_fast if horizontal else fast.flip_vertical_fast
    assert wrapper(d_src, out=d_out) is d_out
    np.testing.assert_array_equal(d_out.copy_to_host(), np.flip(a, axis=1 if horizontal else 0))


@pytest.mark.parametrize("wrapper", [fast.flip_horizontal_fast, fast.flip_vertical_fast])
def test_the_wrappers_take_host_and_device_arrays(wrapper):
    a = random_image((23, 7, 3), seed=3)
    expected = np.flip(a, axis=1 if wrapper is fast.flip_horizontal_fast else 0)
    np.testing.assert_array_equal(wrapper(a), expected)  # host in, host out
    host_out = np.zeros_like(a)
    assert wrapper(a, out=host_out) is host_out
    np.testing.assert_array_equal(host_out, expected)
    d_out = cuda.device_array_like(a)
    assert wrapper(cuda.to_device(a), out=d_out) is d_out  # device in, device out
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)
    np.testing.assert_array_equal(wrapper(cuda.to_device(a)).copy_to_host(), expected)


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize("shape", [(40, 1), (30, 1, 3)], ids=str)
def test_one_pixel_wide_images_stay_one_row_of_words(shape, horizontal):
    """N x 1: the flips of ONE row (flip_words), whose words fill the warps already."""
    a = random_image(shape)
    prepared = fast.flip_words.prepare(a, horizontal=horizontal)
    assert not any(name.startswith("flip_short_rows") for name in kernel_names(prepared))
    np.testing.assert_array_equal(prepared.result(), np.flip(a, axis=1 if horizontal else 0))


def test_the_thresholds_choose_the_path(monkeypatch):
    long_rows = random_image((2, fast.SHORT_ROW_BYTES))
    assert not fast.takes_short_rows((2, fast.SHORT_ROW_BYTES, 1), long_rows.size)
    assert fast.takes_short_rows((2, fast.SHORT_ROW_BYTES - 1, 1), long_rows.size - 2)
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", 64)
    assert not fast.takes_short_rows((21, 3, 1), 63)  # a small image: the row kernels
    assert fast.takes_short_rows((22, 3, 1), 66)
    assert fast.takes_short_rows((8, 3, 3), 72)


def test_options_still_give_the_general_kernels():
    """word_bytes, per_thread or block: the general kernels, whatever the rows (the tuning)."""
    a = random_image((17, 3))
    prepared = fast.flip_words.prepare(a, horizontal=False, per_thread=1)
    assert kernel_names(prepared) == {"flip_vertical_words_8B_x1_i32"}
    np.testing.assert_array_equal(prepared.result(), np.flip(a, 0))


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
def test_64_bit_indices_flip_the_same(monkeypatch, horizontal):
    """Images of INDEX_32_BYTES and more index with int64 (here: a tiny limit)."""
    monkeypatch.setattr(fast, "INDEX_32_BYTES", 16)
    a = random_image((19, 5, 3), seed=7)
    _, d_src = placed(a, 1)
    _, d_out = placed(np.zeros_like(a), 6)
    prepared = fast.flip_words.prepare(d_src, horizontal=horizontal, out=d_out)
    assert all(name.endswith("_i64") for name in kernel_names(prepared))
    prepared()
    np.testing.assert_array_equal(d_out.copy_to_host(), np.flip(a, axis=1 if horizontal else 0))


def test_every_short_rows_instance_is_registered():
    names = {kernel.py_func.__name__ for kernel in fast.SIGNATURES}
    for kind in ("vertical", "horizontal_gray", "horizontal_rgb"):
        for bits in (32, 64):
            assert f"flip_short_rows_{kind}_8B_x{fast.SHORT_PER_THREAD}_i{bits}" in names

"""Transpose kernels against a.T: awkward shapes, dtypes, device arrays, bad input; blur and FFT."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons import notebook, runtime
from gpgpu_lessons.kernels import transpose

TRANSPOSES = {
    "naive": transpose.naive,
    "tiled": transpose.tiled,
    "padded": transpose.padded,
    "seed 16x16": transpose.seed,
    "seed 16x16 unpadded": lambda a, **kw: transpose.seed(a, pad=0, **kw),
    "best": transpose.transpose,
}
FULL_HD = runtime.pick(gpu=(1080, 1920), simulator=(36, 64))  # same aspect, small in the simulator


def poisoned(shape, dtype):
    """A device output filled with a value no kernel writes, so unwritten elements show."""
    fill = np.nan if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max
    return cuda.to_device(np.full(shape, fill, dtype=dtype))


def random(rng, shape, dtype=np.float32):
    if np.dtype(dtype).kind == "f":
        return rng.random(shape).astype(dtype) + 1
    return rng.integers(1, 2**31, size=shape).astype(dtype)


@pytest.mark.parametrize("name", TRANSPOSES)
@pytest.mark.parametrize("shape", [(1, 37), (37, 1), (33, 34)])
def test_transposes_match_numpy(name, shape, rng):
    a = random(rng, shape)
    out = poisoned(shape[::-1], np.float32)
    got = TRANSPOSES[name](cuda.to_device(a), out=out)
    assert got is out
    np.testing.assert_array_equal(out.copy_to_host(), a.T)


@pytest.mark.parametrize("shape", [(1, 37), (37, 1), (33, 34)])
def test_copy_matches_input(shape, rng):
    a = random(rng, shape)
    out = poisoned(shape, np.float32)
    transpose.copy(cuda.to_device(a), out=out)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_full_hd_shape(rng):
    a = random(rng, FULL_HD, np.uint32)
    for kernel in (transpose.naive, transpose.padded, transpose.seed, transpose.wide):
        np.testing.assert_array_equal(kernel(a), a.T)


@pytest.mark.parametrize("dtype", [np.float32, np.uint32, np.int32, np.float64, np.uint64, np.int64])
def test_dtypes(dtype, rng):
    a = random(rng, (13, 7), dtype)
    for pad in (0, 1):
        got = transpose.tiled(a, tile=4, rows=2, pad=pad)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, a.T)
    np.testing.assert_array_equal(transpose.naive(a, tile=4, rows=2), a.T)


@pytest.mark.parametrize("vec, group", [(4, 3), (2, 1), (1, 2)])
@pytest.mark.parametrize("shape", [(4, 4), (8, 68), (68, 4)])
def test_wide_on_shapes_of_whole_vectors(shape, vec, group, rng):
    a = random(rng, shape, np.uint32)
    out = poisoned(shape[::-1], np.uint32)
    transpose.wide(cuda.to_device(a), out=out, tile=8, rows=2, vec=vec, group=group)
    np.testing.assert_array_equal(out.copy_to_host(), a.T)
    out = poisoned(shape, np.uint32)
    transpose.wide_copy(cuda.to_device(a), out=out, tile=8, rows=4, vec=vec, group=group)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_wide_8_byte_elements(rng):
    b = random(rng, (6, 10), np.float64)
    np.testing.assert_array_equal(transpose.wide(b, tile=4, rows=2, vec=2), b.T)


def test_blocks_cover_every_tile_once():
    for tiles_y, tiles_x, group in [(1, 1, 1), (5, 3, 2), (4, 7, 8), (9, 2, 4), (6, 6, 1)]:
        seen = [transpose.tile_of_block(b, tiles_y, tiles_x, group) for b in range(tiles_y * tiles_x)]
        assert sorted(seen) == [(r, c) for r in range(tiles_y) for c in range(tiles_x)]
    assert transpose.tile_of_block(1, 4, 7, 2) == (1, 0)   # the next block walks down the group first


@settings(max_examples=12, deadline=None)
@given(h=st.integers(1, 19), w=st.integers(1, 19), tile=st.sampled_from([2, 4, 8]),
       split=st.sampled_from([1, 2]), pad=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_any_shape_and_tiling(h, w, tile, split, pad, seed):
    a = np.random.default_rng(seed).random((h, w), dtype=np.float32) + 1
    rows = tile // split
    np.testing.assert_array_equal(transpose.tiled(a, tile=tile, rows=rows, pad=pad), a.T)
    np.testing.assert_array_equal(transpose.naive(a, tile=tile, rows=rows), a.T)
    np.testing.assert_array_equal(transpose.copy(a, tile=tile, rows=rows), a)


@pytest.mark.parametrize("call, error, message", [
    (lambda: transpose.padded(np.ones(5, np.float32)), ValueError, "must be 2-D"),
    (lambda: transpose.padded(np.ones((2, 2, 2), np.float32)), ValueError, "must be 2-D"),
    (lambda: transpose.padded(np.ones((0, 3), np.float32)), ValueError, "is empty"),
    (lambda: transpose.padded(np.ones((3, 3), np.int8)), TypeError, "has dtype int8"),
    (lambda: transpose.naive(np.ones((4, 4), np.float32)[:, ::2]), ValueError, "not C-contiguous"),
    (lambda: transpose.padded([[1.0, 2.0]]), TypeError, "must be a NumPy array"),
    (lambda: transpose.tiled(np.ones((3, 3), np.float32), tile=8, rows=3), ValueError, "must divide tile"),
    (lambda: transpose.tiled(np.ones((3, 3), np.float32), tile=64, rows=32), ValueError, "at most 1024"),
    (lambda: transpose.tiled(np.ones((3, 3), np.float64), tile=128, rows=4), ValueError, "48 KiB"),
    (lambda: transpose.tiled(np.ones((3, 3), np.float32), pad=-1), ValueError, "pad must be an integer >= 0"),
    (lambda: transpose.wide(np.ones((6, 4), np.float32), vec=4), ValueError, "multiple of 4 long, got shape"),
    (lambda: transpose.wide_copy(np.ones((3, 6), np.float32), vec=4), ValueError, r"rows to be a multiple of 4"),
    (lambda: transpose.wide(np.ones((4, 4), np.float64), vec=4), ValueError, "vec x itemsize <= 16"),
    (lambda: transpose.wide(np.ones((4, 4), np.float32), vec=3), ValueError, "vec must be 1, 2 or 4"),
    (lambda: transpose.wide(np.ones((4, 4), np.float32), group=0), ValueError, "group must be an integer >= 1"),
    (lambda: transpose.wide(np.ones((4, 4), np.float32), tile=6, rows=2, vec=4), ValueError, r"vec \(4\) must divide"),
    (lambda: transpose.padded(np.ones((3, 4), np.float32), out=cuda.device_array((3, 4), np.float32)),
     ValueError, "must have shape"),
    (lambda: transpose.rows_filter(np.ones((3, 4), np.float32), taps=[1.0, 1.0]), ValueError, "odd length"),
])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_separable_blur_matches_a_2d_filter(rng):
    img = rng.random((20, 26), dtype=np.float32)
    k = transpose.BINOMIAL_5
    p = np.pad(img, 2, mode="edge")
    expected = sum(k[i] * k[j] * p[i:i + 20, j:j + 26] for i in range(5) for j in range(5))
    np.testing.assert_allclose(transpose.separable_blur(img), expected, rtol=1e-5)


def test_fft2_by_transposes_matches_numpy(rng):
    a = rng.random((8, 12), dtype=np.float32)
    got = transpose.fft2_by_transposes(a)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.fft.fft2(a), rtol=1e-4, atol=1e-4)


def test_every_named_variant_and_kernel_lookup(rng):
    a = random(rng, (8, 40))
    for name, run in transpose.VARIANTS.items():
        np.testing.assert_array_equal(run(a), a if name.startswith("copy") else a.T, err_msg=name)
    for kind in ("copy", "naive", "shared", "wide"):
        assert "def " in notebook.source(transpose.kernel(kind))
    with pytest.raises(ValueError, match="kind must be one of"):
        transpose.kernel("diagonal")

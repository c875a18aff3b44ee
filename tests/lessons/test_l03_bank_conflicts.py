"""Lesson 03's transposes against a.T: textbook and fast kernels, awkward shapes, dtypes, bad
input, N x 1 launches that fit a GPU's grid; blur, FFT (what every wrapper must do:
tests/core/test_wrapper_contract.py)."""

import inspect

import numpy as np
import pytest
from gpgpu_tools import ptx
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons import hardware, launch, notebook
from gpgpu_lessons.l03_bank_conflicts import applications, fast, textbook

TEXTBOOK = {
    "naive": textbook.naive,
    "tiled": textbook.tiled,
    "padded": textbook.padded,
    "seed naive": textbook.seed_naive,
    "seed tiled": textbook.seed_tiled,
    "seed padded": textbook.seed_padded,
}
TRANSPOSES = {**TEXTBOOK, "fast": fast.transpose}
WRAPPERS = {
    **TRANSPOSES,
    "copy": textbook.tile_copy,
    "wide": fast.wide,
    "wide copy": fast.wide_copy,
    "rows filter": applications.rows_filter,
}
COPIES = ("copy", "wide copy")
SMALL = {"block": (4, 2), "vec": 2}  # an 8 x 8 tile: several tiles on small matrices


def poisoned(shape, dtype):
    """A device output filled with a value no kernel writes, so unwritten elements show."""
    dtype = np.dtype(dtype)
    fill = np.nan if dtype.kind in "fc" else np.iinfo(dtype).max
    return cuda.to_device(np.full(shape, fill, dtype=dtype))


def random(rng, shape, dtype=np.float32):
    """Random values of any of the lesson's dtypes, never zero."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.random(shape) + 1 + 1j * (rng.random(shape) + 1)).astype(dtype)
    if dtype.kind == "f":
        return (rng.random(shape) + 1).astype(dtype)
    return rng.integers(1, 2**31, size=shape).astype(dtype)


def check(name, got, a):
    """Copies and transposes exactly; the row filter within float32 rounding (a GPU fuses a*b+c)."""
    if name == "rows filter":
        np.testing.assert_allclose(got, expected(name, a), rtol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(got, expected(name, a), err_msg=name)


def expected(name, a):
    if name == "rows filter":
        k, p = applications.BINOMIAL_5, np.pad(a, ((0, 0), (2, 2)), mode="edge")
        return sum(k[i] * p[:, i : i + a.shape[1]] for i in range(5))
    return a if name in COPIES else a.T


@pytest.mark.parametrize("name", TRANSPOSES)
@pytest.mark.parametrize("shape", [(1, 37), (37, 1)])
def test_transposes_match_numpy(name, shape, rng):
    a = random(rng, shape)
    out = poisoned(shape[::-1], np.float32)
    got = TRANSPOSES[name](cuda.to_device(a), out=out)
    assert got is out  # device in, device out: the given out
    np.testing.assert_array_equal(out.copy_to_host(), a.T)


def test_padded_after_another_shape_is_right(rng):
    """The issue's reproduction: padded on 40 x 2 after one call on 2 x 40 had 16 of 80 wrong."""
    textbook.padded(random(rng, (2, 40)))
    a = random(rng, (40, 2))
    np.testing.assert_array_equal(textbook.padded(a), a.T)


def test_fft2_of_a_column_after_another_shape(rng):
    """The issue's reproduction: fft2_by_transposes on a 63 x 1 signal was off by 1.8e37."""
    applications.fft2_by_transposes(rng.random((1, 63), dtype=np.float32))
    signal = rng.random((63, 1), dtype=np.float32)
    got = applications.fft2_by_transposes(signal)
    np.testing.assert_allclose(got, np.fft.fft2(signal), rtol=1e-4, atol=1e-4)


def test_tall_and_wide_matrices_fit_a_gpu_grid():
    """(16777217, 1) needed 524289 blocks along y (at most 65535): bands, or a 1-D grid of tiles."""
    d_a = cuda.device_array((16777217, 1), np.float32)
    for wrapper in (
        textbook.padded,
        textbook.seed_naive,
        textbook.tile_copy,
        applications.rows_filter,
    ):
        for step in wrapper.prepare(d_a).steps:
            assert step.grid[1] <= launch.MAX_GRID_YZ
    for wrapper in (fast.transpose, fast.wide_copy):
        (step,) = wrapper.prepare(d_a, **({"vec": 1} if wrapper is fast.wide_copy else {})).steps
        assert isinstance(step.grid, int)  # 1-D grid: 2**31 - 1 blocks allowed
    wide = cuda.device_array((1, 16777217), np.float32)
    (step,) = textbook.naive.prepare(wide).steps
    assert step.grid == (524289, 1)


def test_bands_give_the_same_result(rng, monkeypatch):
    """With the grid limit made tiny, N x 1 launches split into bands, each a view of a and out."""
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 1)
    a = random(rng, (40, 1))
    for name, wrapper in {
        **TEXTBOOK,
        "copy": textbook.tile_copy,
        "rows filter": applications.rows_filter,
    }.items():
        built = wrapper.prepare(a)
        assert len(built.steps) > 1, name
        check(name, built.result(), a)


def test_textbook_kernels_refuse_other_dtypes():
    for dtype in (np.float64, np.uint32, np.complex64):
        with pytest.raises(TypeError, match=r"written for float32.*fast.transpose"):
            textbook.padded(np.ones((4, 4), dtype))
    with pytest.raises(TypeError, match="must be a NumPy array"):
        textbook.padded([[1.0, 2.0]])


@pytest.mark.parametrize("dtype", fast.DTYPES)
def test_fast_transpose_takes_every_dtype(dtype, rng):
    for shape in [(6, 10), (3, 1)]:  # even sides: wide path; odd: one per access
        a = random(rng, shape, dtype)
        got = fast.transpose(a)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, a.T)


@pytest.mark.parametrize("shape", [(8, 8), (6, 18), (18, 4), (2, 2)])
def test_wide_on_shapes_of_whole_vectors(shape, rng):
    a = random(rng, shape, np.uint32)
    out = poisoned(shape[::-1], np.uint32)
    fast.wide(cuda.to_device(a), out=out, **SMALL, group=3)
    np.testing.assert_array_equal(out.copy_to_host(), a.T)
    out = poisoned(shape, np.uint32)
    fast.wide_copy(cuda.to_device(a), out=out, block=(4, 4), vec=2)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_wide_16_byte_accesses_and_8_byte_elements(rng):
    a = random(rng, (4, 12), np.float32)
    np.testing.assert_array_equal(fast.wide(a, block=(2, 2), vec=4), a.T)
    b = random(rng, (6, 10), np.float64)
    np.testing.assert_array_equal(fast.wide(b, **SMALL), b.T)
    z = random(rng, (2, 6), np.complex64)
    np.testing.assert_array_equal(fast.wide_copy(z, block=(4, 4), vec=2), z)


def test_blocks_cover_every_tile_once():
    for tiles_y, tiles_x, group in [(1, 1, 1), (5, 3, 2), (4, 7, 8), (9, 2, 4), (6, 6, 1)]:
        seen = [fast.tile_of_block(b, tiles_y, tiles_x, group) for b in range(tiles_y * tiles_x)]
        assert sorted(seen) == [(r, c) for r in range(tiles_y) for c in range(tiles_x)]
    assert fast.tile_of_block(1, 4, 7, 2) == (1, 0)  # the next block walks down the group first


@settings(max_examples=3, deadline=None)
@given(
    h=st.integers(1, 11),
    w=st.integers(1, 11),
    vec=st.sampled_from([1, 2]),
    group=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_fast_transpose_any_shape(h, w, vec, group, seed):
    a = np.random.default_rng(seed).random((2 * h, 2 * w) if vec == 2 else (h, w)) + 1
    a = a.astype(np.float32)
    np.testing.assert_array_equal(fast.wide(a, block=(4, 2), vec=vec, group=group), a.T)
    np.testing.assert_array_equal(fast.transpose(a), a.T)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: textbook.padded(np.ones(5, np.float32)), ValueError, "must be 2-D"),
        (lambda: textbook.padded(np.ones((0, 3), np.float32)), ValueError, "is empty"),
        (
            lambda: textbook.naive(np.ones((4, 4), np.float32)[:, ::2]),
            ValueError,
            "not C-contiguous",
        ),
        (
            lambda: textbook.padded(
                np.ones((3, 4), np.float32), out=cuda.device_array((3, 4), np.float32)
            ),
            ValueError,
            "must have shape",
        ),
        (lambda: fast.transpose(np.ones((3, 3), np.int8)), TypeError, "has dtype int8"),
        (lambda: fast.transpose(np.ones((2, 2, 2), np.float32)), ValueError, "must be 2-D"),
        (lambda: fast.wide(np.ones((6, 4), np.float32), vec=4), ValueError, "multiple of 4 long"),
        (
            lambda: fast.wide_copy(np.ones((3, 6), np.float32), vec=4),
            ValueError,
            "the rows to be a multiple",
        ),
        (lambda: fast.wide(np.ones((4, 4), np.float64), vec=4), ValueError, "vec x itemsize <= 16"),
        (
            lambda: fast.wide(np.ones((4, 4), np.float32), vec=3),
            ValueError,
            "vec must be 1, 2 or 4",
        ),
        (
            lambda: fast.wide(np.ones((4, 4), np.float32), group=0),
            ValueError,
            "group must be an integer >= 1",
        ),
        (
            lambda: fast.wide(np.ones((4, 4), np.float32), block=(3, 4)),
            ValueError,
            r"rows \(4\) must divide 6",
        ),
        (
            lambda: fast.wide(np.ones((4, 4), np.float32), block=(64, 32)),
            ValueError,
            "at most 1024",
        ),
        (
            lambda: fast.wide(np.ones((4, 4), np.float32), block=(64, 16), vec=2),
            ValueError,
            "48 KiB",
        ),
        (
            lambda: fast.wide(np.ones((4, 4), np.float32), block=(4, 2, 2)),
            ValueError,
            "threads along x, rows",
        ),
        (
            lambda: applications.rows_filter(np.ones((3, 4), np.float32), taps=[1.0, 1.0]),
            ValueError,
            "odd length",
        ),
    ],
)
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_separable_blur_matches_a_2d_filter(rng):
    img = rng.random((9, 14), dtype=np.float32)
    k = applications.BINOMIAL_5
    p = np.pad(img, 2, mode="edge")
    want = sum(k[i] * k[j] * p[i : i + 9, j : j + 14] for i in range(5) for j in range(5))
    np.testing.assert_allclose(applications.separable_blur(img), want, rtol=1e-5)


def test_fft2_by_transposes_matches_numpy(rng):
    a = rng.random((8, 12), dtype=np.float32)
    got = applications.fft2_by_transposes(a)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.fft.fft2(a), rtol=1e-4, atol=1e-4)


def test_every_variant_the_lesson_times(rng):
    assert set(textbook.VARIANTS.values()) <= {w.prepare for w in WRAPPERS.values()}  # tested above
    a = random(rng, (2, 4))
    for name, build in fast.VARIANTS.items():
        want = a if name.startswith("copy") else a.T
        np.testing.assert_array_equal(build(a).result(), want, err_msg=name)


def test_the_padded_slide_shows_the_padding():
    shown = notebook.source(textbook.transpose_padded)
    assert "tile = cuda.shared.array((TILE, PADDED), float32)" in shown
    assert textbook.PADDED == textbook.TILE + 1
    assert "cuda.shared.array((TILE, TILE), float32)" in notebook.source(textbook.transpose_tiled)
    assert len(shown.splitlines()) <= 18
    assert str(inspect.signature(textbook.padded)) == "(a, *, out=None)"


def test_every_kernel_is_registered_with_its_signatures():
    entries, problems = ptx.registry(("gpgpu_lessons.l03_bank_conflicts",))
    assert not problems, problems
    registered = {id(entry.kernel) for entry in entries}
    used = [
        fast.kernel_for(8, 2, 2),
        fast.kernel_for(8, 2, 4),
        fast.kernel_for(8, 4, 2, 0, False),
        fast.kernel_for(32, 8, 1),
        fast.transpose_wide,
        fast.copy_wide,
    ]
    assert all(id(kernel) in registered for kernel in used)
    assert fast.kernel_for(fast.TILE, fast.ROWS, fast.VEC) is fast.transpose_wide
    assert fast.kernel_for(32, 8, 1).py_func.__name__ == "transpose_wide_32x32_32x8_vec1_pad1"


def test_tuning_space_describes_the_chosen_launch():
    space = fast.TUNING["space"]
    assert fast.WIDE_BLOCK in space["block"] and fast.VEC in space["vec"]
    assert fast.TUNING["chosen"]["group"] in space["group"] and callable(fast.TUNING["case"])


# ---- fast.transpose on every shape: tiles for the bulk, thin kernels for few rows or columns -----


@settings(max_examples=25, deadline=None)
@given(
    h=st.integers(1, 40),
    w=st.integers(1, 40),
    dtype=st.sampled_from([np.float32, np.complex64]),
    offset=st.integers(0, 3),
)
def test_fast_transpose_on_random_shapes_and_offsets(h, w, dtype, offset):
    """Thin matrices (a side below FEW), tiles, and inputs that start off any alignment."""
    rng = np.random.default_rng(h * 41 + w)
    a = (
        rng.random((h, w)) + 1j * rng.random((h, w))
        if dtype == np.complex64
        else rng.random((h, w))
    )
    a = a.astype(dtype)
    buffer = cuda.to_device(np.concatenate([np.zeros(offset, dtype), a.ravel()]))
    d_a = buffer[offset:].reshape(h, w)  # a view offset by `offset` elements
    out = poisoned((w, h), dtype)
    fast.transpose(d_a, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), a.T)


@pytest.mark.parametrize("h, w", [(1, 1), (1, 97), (97, 1), (31, 200), (200, 31), (2, 4097)])
def test_thin_matrices_take_the_thin_kernels(h, w, rng):
    a = random(rng, (h, w))
    (step,) = fast.transpose.prepare(a).steps
    thin = fast.transpose_few_rows if h <= w else fast.transpose_few_columns
    assert step.kernel is thin
    np.testing.assert_array_equal(fast.transpose(a), a.T)


def test_a_thin_block_moves_whole_columns_that_fit_its_tile():
    for fewest in range(1, fast.FEW):
        moved = 1 << fast.largest_shift(fewest)
        assert moved * (fewest | 1) <= fast.THIN_SPAN < 2 * moved * (fewest | 1)


def test_blocks_walk_whole_tile_columns_unless_a_column_outnumbers_the_resident_blocks():
    resident = hardware.resident_blocks(512)
    assert fast.group_for(resident, 512) == resident
    assert fast.group_for(resident + 1, 512) == fast.TALL_GROUP

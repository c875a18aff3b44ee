"""Lesson 02 kernels against NumPy: negative, flips, and every mosaic (edge tiles, RGB, rounding)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons import runtime
from gpgpu_lessons.kernels import shared_memory as sm

BASICS = [
    (sm.negative, sm.negative_reference),
    (sm.negative_fast, sm.negative_reference),
    (sm.flip_horizontal, sm.flip_horizontal_reference),
    (sm.flip_horizontal_fast, sm.flip_horizontal_reference),
    (sm.flip_vertical, sm.flip_vertical_reference),
    (sm.flip_vertical_fast, sm.flip_vertical_reference),
]
BASIC_IDS = [kernel.__name__ for kernel, _ in BASICS]
# awkward shapes: 1 x N, N x 1, primes, not multiples of the 32 x 8 block; widths that are and are not
# whole words of 4, 8 or 16 bytes (the fast flips fall back to one pixel per thread for none); RGB
SHAPES = [(1, 1), (1, 3), (1, 31), (31, 1), (7, 13), (9, 8), (2, 36), (3, 32), (3, 5, 3), (5, 8, 3), (1, 4, 3),
          (2, 16, 3)]
MOSAICS = [sm.mosaic_one_thread, sm.mosaic_shared_one_thread, sm.mosaic_parallel]
MOSAIC_IDS = [m.__name__ for m in MOSAICS]


def image(rng, shape):
    """Random pixels over the whole 0..255 range (never all zeros)."""
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def poisoned_like(expected):
    """A device output where every byte differs from the expected one, so an unwritten pixel shows."""
    return cuda.to_device((expected.astype(np.int16) + 1).astype(np.uint8))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kernel, reference", BASICS, ids=BASIC_IDS)
def test_basics_match_numpy(kernel, reference, shape, rng):
    a = image(rng, shape)
    expected = reference(a)
    d_out = poisoned_like(expected)
    assert kernel(cuda.to_device(a), out=d_out) is d_out  # device in, device out: no copy back
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@pytest.mark.parametrize("kernel, reference", BASICS, ids=BASIC_IDS)
def test_basics_take_and_return_device_arrays(kernel, reference, rng):
    a = image(rng, (6, 12, 3))
    got = kernel(cuda.to_device(a))
    assert not isinstance(got, np.ndarray) and got.shape == a.shape
    np.testing.assert_array_equal(got.copy_to_host(), reference(a))
    assert isinstance(kernel(a), np.ndarray)


FAST_FLIPS = [(sm.flip_horizontal_fast, sm.flip_horizontal_reference), (sm.flip_vertical_fast, sm.flip_vertical_reference)]


@pytest.mark.parametrize("word_bytes, per_thread, threads, rows", [(4, 1, 32, 1), (8, 3, 32, 2), (16, 2, 64, 3)])
@pytest.mark.parametrize("kernel, reference", FAST_FLIPS, ids=["horizontal", "vertical"])
def test_word_flips_in_every_configuration(kernel, reference, word_bytes, per_thread, threads, rows, rng,
                                           monkeypatch):
    # several runs of words per row, a last run cut short, rows that do not fill the last block
    monkeypatch.setattr(sm, "FLIP_WORD_BYTES", {(h, c): min(word_bytes, 8) if h else word_bytes
                                                for h in (False, True) for c in (1, 3)})
    for name, value in [("FLIP_PER_THREAD", per_thread), ("FLIP_THREADS", threads), ("FLIP_ROWS", rows)]:
        monkeypatch.setattr(sm, name, value)
    for shape in [(5, 16 * 40), (4, 16 * 11, 3)]:
        a = image(rng, shape)
        expected = reference(a)
        d_out = poisoned_like(expected)
        kernel(cuda.to_device(a), out=d_out)
        np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@pytest.mark.parametrize("kernel, reference", FAST_FLIPS, ids=["horizontal", "vertical"])
def test_word_flips_use_narrower_words_for_a_misaligned_image(kernel, reference, rng):
    a = image(rng, (4, 16))
    d_flat = cuda.to_device(np.concatenate([np.zeros(8, np.uint8), a.ravel()]))
    d_a = d_flat[8:].reshape(4, 16)  # starts 8 bytes into an allocation: 16-byte words would be misaligned
    assert sm.flip_word_bytes(d_a, a.shape, horizontal=False) == 8
    np.testing.assert_array_equal(kernel(d_a).copy_to_host(), reference(a))


def test_word_flips_refuse_rows_too_long_for_the_grid(monkeypatch):
    monkeypatch.setattr(sm, "MAX_GRID_Y", 1)
    with pytest.raises(ValueError, match="blocks in y, more than CUDA's 1"):
        sm.flip_vertical_fast(np.ones((2, 16 * 1024 * 4 + 16), dtype=np.uint8))


def test_horizontal_flip_has_no_16_byte_words():
    with pytest.raises(ValueError, match="word_bytes must be 4 or 8"):
        sm.flip_words_kernel(True, 1, 16, 4)


@pytest.mark.parametrize("wrapper, args, reference", [
    (sm.negative_fast, (), sm.negative_reference), (sm.flip_horizontal_fast, (), sm.flip_horizontal_reference),
    (sm.flip_vertical, (), sm.flip_vertical_reference), (sm.mosaic_parallel, (3,), lambda a: sm.mosaic_reference(a, 3)),
], ids=["negative_fast", "flip_horizontal_fast", "flip_vertical", "mosaic_parallel"])
def test_launcher_launches_the_planned_kernel(wrapper, args, reference, rng):
    a = image(rng, (5, 8, 3))
    expected = reference(a)
    d_out = poisoned_like(expected)
    launch = sm.launcher(wrapper, cuda.to_device(a), *args, out=d_out)
    launch()
    launch()  # launches again with the same arguments
    cuda.synchronize()
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


def test_launcher_takes_only_this_modules_wrappers():
    with pytest.raises(ValueError, match="one of this module's wrappers"):
        sm.launcher(sm.negative_reference, np.ones((2, 4), dtype=np.uint8), out=None)


def test_negative_is_an_xor_of_words():
    a = np.array([[0, 1, 127, 128, 255]], dtype=np.uint8)
    np.testing.assert_array_equal(sm.negative_fast(a), [[255, 254, 128, 127, 0]])


def naive_mosaic(a, size):
    """The definition, written out: every tile's real pixels, mean rounded half up."""
    out = np.empty_like(a)
    for y0 in range(0, a.shape[0], size):
        for x0 in range(0, a.shape[1], size):
            tile = a[y0:y0 + size, x0:x0 + size].astype(np.int64)
            count = tile.shape[0] * tile.shape[1]
            out[y0:y0 + size, x0:x0 + size] = (tile.sum(axis=(0, 1)) + count // 2) // count
    return out


@pytest.mark.parametrize("shape, size", [((7, 13), 3), ((8, 8), 4), ((5, 9, 3), 2), ((33, 31), 32 - 1), ((1, 7), 1)])
def test_mosaic_reference_is_the_definition(shape, size, rng):
    a = image(rng, shape)
    np.testing.assert_array_equal(sm.mosaic_reference(a, size), naive_mosaic(a, size))


def test_mosaic_rounds_half_up():
    a = np.array([[0, 1], [2, 2]], dtype=np.uint8)  # row tiles of 1 x 2: means 0.5 and 2
    np.testing.assert_array_equal(sm.mosaic_reference(a[:1], 1), a[:1])
    np.testing.assert_array_equal(sm.mosaic_reference(a, 2), np.full((2, 2), 1))  # 5 / 4 = 1.25 -> 1
    for mosaic in MOSAICS:
        np.testing.assert_array_equal(mosaic(np.array([[0, 1]], dtype=np.uint8), 1), [[0, 1]])
        np.testing.assert_array_equal(mosaic(np.array([[1, 2], [2, 1]], dtype=np.uint8), 2), np.full((2, 2), 2))


@pytest.mark.parametrize("shape, size", [
    ((8, 8), 4),         # tiles divide the image
    ((7, 13), 3),        # edge tiles on both sides
    ((10, 9), 4),        # edge tiles of 2 rows and 1 column
    ((5, 6, 3), 4),      # RGB, edge tiles
    ((1, 11), 1),        # one pixel per tile
    ((6, 5), 5),         # one tile column, a short last row of tiles
], ids=str)
@pytest.mark.parametrize("mosaic", MOSAICS, ids=MOSAIC_IDS)
def test_mosaics_match_numpy(mosaic, shape, size, rng):
    a = image(rng, shape)
    expected = sm.mosaic_reference(a, size)
    d_out = poisoned_like(expected)
    assert mosaic(cuda.to_device(a), size, out=d_out) is d_out
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@pytest.mark.parametrize("shape, size", [((33, 35), 32), ((41, 23, 3), 20), ((17, 40), 17)], ids=str)
def test_parallel_mosaic_with_fewer_threads_than_tile_rows(shape, size, rng):
    # tiles above 16 get blocks of size x (256 // size) threads: each thread adds several rows of its column
    a = image(rng, shape)
    expected = sm.mosaic_reference(a, size)
    d_out = poisoned_like(expected)
    sm.mosaic_parallel(cuda.to_device(a), size, out=d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(height=st.integers(1, 9), width=st.integers(1, 9), rgb=st.booleans(), data=st.data())
def test_parallel_mosaic_on_random_shapes(height, width, rgb, data, rng):
    size = data.draw(st.integers(1, min(height, width)), label="size")
    a = image(rng, (height, width, 3) if rgb else (height, width))
    np.testing.assert_array_equal(sm.mosaic_parallel(a, size), sm.mosaic_reference(a, size))


def test_race_version_runs_and_writes_an_image(rng):
    # Without barriers the result depends on timing: correct, partly wrong or all wrong. Only its form is fixed.
    a = image(rng, (6, 7))
    got = sm.mosaic_shared_race(a, 3)
    assert got.shape == a.shape and got.dtype == np.uint8


@pytest.mark.parametrize("n, start", [(1, 0), (2, 1), (3, 2), (4, 2), (9, 8), (16, 8), (1024, 512)])
def test_tree_start_is_the_largest_power_of_two_below_n(n, start):
    assert sm._tree_start(n) == start


ALL_WRAPPERS = [kernel for kernel, _ in BASICS] + MOSAICS + [sm.mosaic_shared_race]


@pytest.mark.parametrize("value, error, message", [
    (np.zeros((4, 4), dtype=np.float32), TypeError, "has dtype float32"),
    (np.zeros((4, 4), dtype=np.uint16), TypeError, "has dtype uint16"),
    (np.zeros(16, dtype=np.uint8), ValueError, r"must be \(height, width\) grayscale or \(height, width, 3\) RGB"),
    (np.zeros((4, 4, 4), dtype=np.uint8), ValueError, r"got shape \(4, 4, 4\)"),
    (np.zeros((2, 4, 4, 3), dtype=np.uint8), ValueError, "grayscale or"),
    (np.zeros((0, 4), dtype=np.uint8), ValueError, "is empty"),
    (np.zeros((4, 8), dtype=np.uint8)[:, ::2], ValueError, "not C-contiguous"),
    ([[1, 2], [3, 4]], TypeError, "must be a NumPy array"),
], ids=["float32", "uint16", "1-D", "4 channels", "4-D", "empty", "strided", "list"])
@pytest.mark.parametrize("wrapper", ALL_WRAPPERS, ids=[w.__name__ for w in ALL_WRAPPERS])
def test_bad_images_are_named(wrapper, value, error, message):
    args = (1,) if wrapper in MOSAICS + [sm.mosaic_shared_race] else ()
    with pytest.raises(error, match=message):
        wrapper(value, *args)


@pytest.mark.parametrize("size, error, message", [
    (0, ValueError, "at least 1 pixel"),
    (-2, ValueError, "at least 1 pixel"),
    (6, ValueError, r"larger than the image \(5 x 40\)"),
    (33, ValueError, "larger than the image"),
    (2.5, TypeError, "must be an integer"),
    (True, TypeError, "must be an integer"),
])
@pytest.mark.parametrize("mosaic", MOSAICS + [sm.mosaic_shared_race, sm.mosaic_reference],
                         ids=MOSAIC_IDS + ["race", "reference"])
def test_bad_mosaic_sizes_are_named(mosaic, size, error, message):
    with pytest.raises(error, match=message):
        mosaic(np.ones((5, 40), dtype=np.uint8), size)


def test_mosaic_tiles_above_32_need_too_many_threads():
    with pytest.raises(ValueError, match="more than the 1024 CUDA allows: use at most 32"):
        sm.mosaic_parallel(np.ones((40, 40), dtype=np.uint8), 33)


def test_output_of_the_wrong_shape_is_refused(rng):
    a = image(rng, (4, 8))
    with pytest.raises(ValueError, match="must have shape"):
        sm.negative_fast(a, out=cuda.device_array((4, 8, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="must have shape"):
        sm.mosaic_parallel(a, 2, out=cuda.device_array((4, 8), dtype=np.int32))



@pytest.mark.skipif(runtime.is_simulator(), reason="PTX exists only for a real GPU")
@pytest.mark.parametrize("wrapper, kernel", [
    (sm.negative_fast, sm.negative_words), (sm.flip_vertical_fast, sm.flip_vertical_words),
    (sm.flip_horizontal_fast, sm.flip_horizontal_words[1]),
], ids=["negative_words", "flip_vertical_words", "flip_horizontal_words"])
def test_word_kernels_hold_their_words_in_registers(wrapper, kernel, rng):
    wrapper(image(rng, (4, 64)))  # compile
    for ptx in kernel.inspect_asm().values():
        assert ".local" not in ptx, "the held words spilled to local memory: the loops were not unrolled"
        assert ptx.count("ld.global") >= sm.FLIP_PER_THREAD  # several word loads per thread, before the stores


def test_lesson_pictures_draw():
    from gpgpu_lessons import diagrams_shared_memory as diagrams

    assert diagrams.memory_hierarchy().axes
    assert diagrams.mosaic_tiles((10, 14), 4).axes
    a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert len(diagrams.show_images({"a": a, "b": np.stack([a] * 3, axis=2)}).axes) == 2
    b = a.copy()
    b[a > 5] += 1
    np.testing.assert_array_equal(diagrams.differences(a, b), np.where(a > 5, 0, 255))

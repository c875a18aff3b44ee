"""Lesson 04 kernels: every filter variant and the lookup table against float64 NumPy, borders included."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

from gpgpu_lessons.kernels import filters
from gpgpu_lessons.kernels.filters import Tile

VARIANTS = [(source, tiled) for tiled in (False, True) for source in filters.SOURCES]
# A small tile (16 threads, 16 x 8 outputs per block) gives the simulator few threads and the tests many
# blocks: border blocks (clamped) and interior ones (the fast path) on small images.
SMALL_TILE = Tile(threads_x=8, threads_y=2, rows=4, cols=2)


def _random_filter(rng, ky, kx):
    return rng.standard_normal((ky, kx)).astype(np.float32)


def _run_poisoned(image, weights, **kwargs):
    """Filter into an output filled with NaN first, so a pixel the kernel never writes is caught."""
    out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
    result = filters.filter2d(cuda.to_device(image), weights, out=out, **kwargs)
    assert result is out
    return out.copy_to_host()


def _assert_matches(got, image, weights):
    expected = filters.reference(image, weights)
    assert not np.isnan(got).any(), "some output pixels were never written"
    np.testing.assert_allclose(got, expected, rtol=0, atol=filters.tolerance(image, weights))


CASES = {
    "one row": ((1, 37), (3, 3)),          # every vertical tap clamps to the one row
    "one column": ((37, 1), (5, 5)),
    "rectangular": ((13, 35), (3, 7)),     # image not a multiple of any block
    "blocks": ((29, 41), (5, 5)),          # the homework's 5x5 over several blocks, interior ones included
    "wide filter": ((20, 9), (9, 9)),      # a filter wider than the image
}


@pytest.mark.parametrize("source, tiled, case", [
    (source, tiled, case) for source, tiled in VARIANTS for case in CASES
    if source != "frozen" or case in ("rectangular", "blocks")])   # frozen: the constant kernel's twin
def test_every_variant_matches_reference(rng, source, tiled, case):
    shape, filter_shape = CASES[case]
    image = rng.random(shape, dtype=np.float32) + 0.5
    weights = _random_filter(rng, *filter_shape)
    tile = SMALL_TILE if tiled else False
    _assert_matches(_run_poisoned(image, weights, source=source, tiled=tile), image, weights)


@pytest.mark.parametrize("source, shape", [("constant", (70, 37)), ("global", (9, 40)), ("frozen", (9, 40))])
def test_default_tile(rng, source, shape):
    """The notebook's tile (tiled=True): several tiles in y for the constant filter, one for the others."""
    image = rng.random(shape, dtype=np.float32) + 0.5
    weights = _random_filter(rng, 5, 5)
    _assert_matches(_run_poisoned(image, weights, source=source, tiled=True), image, weights)


@settings(max_examples=6, deadline=None)
@given(h=st.integers(1, 40), w=st.integers(1, 40), ry=st.integers(0, 3), rx=st.integers(0, 3),
       tile=st.builds(Tile, st.sampled_from([1, 4, 8]), st.integers(1, 3), st.integers(1, 5),
                      st.integers(1, 2), st.booleans()),
       seed=st.integers(0, 2**16))
def test_any_odd_filter_any_shape_any_tile(h, w, ry, rx, tile, seed):
    rng = np.random.default_rng(seed)
    image = rng.random((h, w), dtype=np.float32)
    weights = _random_filter(rng, 2 * ry + 1, 2 * rx + 1)
    _assert_matches(_run_poisoned(image, weights, source="constant", tiled=tile), image, weights)


@pytest.mark.parametrize("source, tiled", [("global", False), ("constant", SMALL_TILE)])
def test_uint8_input_gives_float32_output(rng, source, tiled):
    image = rng.integers(1, 256, size=(17, 29), dtype=np.uint8)
    got = filters.filter2d(image, filters.LAPLACIAN, source=source, tiled=tiled)
    assert got.dtype == np.float32 and got.shape == image.shape
    _assert_matches(got, image, filters.LAPLACIAN)


@pytest.mark.parametrize("threads", [(32, 1), (8, 8), (1, 32)])
def test_block_shapes_of_the_homework_sweep(rng, threads):
    image = rng.random((19, 23), dtype=np.float32)
    weights = filters.gaussian(5, 1.0)
    _assert_matches(_run_poisoned(image, weights, source="constant", threads=threads), image, weights)


def test_named_filters():
    assert filters.LAPLACIAN.sum() == 0 and filters.LAPLACIAN[1, 1] == -4
    np.testing.assert_allclose(filters.BOX_BLUR.sum(), 1, rtol=1e-6)
    g = filters.gaussian(5, 1.0)
    assert g.shape == (5, 5) and g.dtype == np.float32 and g[2, 2] == g.max()
    np.testing.assert_allclose(g.sum(), 1, rtol=1e-6)
    np.testing.assert_allclose(g, g.T)
    with pytest.raises(ValueError, match="odd size"):
        filters.gaussian(4)


def test_reference_is_clamp_to_edge():
    image = np.arange(12, dtype=np.float32).reshape(3, 4)
    shift_right = np.zeros((1, 3), dtype=np.float32)
    shift_right[0, 0] = 1                              # out[y, x] = image[y, clamp(x - 1)]
    np.testing.assert_array_equal(filters.reference(image, shift_right)[:, 0], image[:, 0])
    np.testing.assert_array_equal(filters.reference(image, shift_right)[:, 1:], image[:, :-1])


def test_constant_kernels_are_cached_by_the_filters_bytes(rng):
    weights = _random_filter(rng, 3, 3)
    first = filters.kernel_for(weights, source="constant")
    assert filters.kernel_for(weights.copy(), source="constant") is first
    assert filters.kernel_for(weights.astype(np.float64), source="constant") is first
    assert filters.kernel_for(weights + 1, source="constant") is not first
    assert filters.kernel_for(weights, source="frozen") is not first
    assert filters.kernel_for(weights, source="global") is filters.kernel_for(weights + 1, source="global")


def test_changing_the_host_filter_after_compiling_gives_a_new_kernel(rng):
    image = rng.random((9, 11), dtype=np.float32)
    weights = _random_filter(rng, 3, 3)
    filters.filter2d(image, weights, source="frozen")
    weights[1, 1] += 10                                # a frozen kernel holds its own copy of the old bytes
    _assert_matches(filters.filter2d(image, weights, source="frozen"), image, weights)


@pytest.mark.parametrize("source", ["global", "constant"])
def test_lookup_table(rng, source):
    image = rng.integers(0, 256, size=(21, 45), dtype=np.uint8)
    table = rng.random(256, dtype=np.float32) + 1
    out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
    filters.lookup(cuda.to_device(image), table, source=source, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), table[image])


@pytest.mark.parametrize("image, weights, kwargs, error, message", [
    (np.ones((8, 8), np.float32), np.ones((4, 4), np.float32), {}, ValueError, "sides must be odd"),
    (np.ones((8, 8), np.float32), np.ones((3, 2), np.float32), {}, ValueError, "sides must be odd"),
    (np.ones((8, 8), np.float32), np.ones((129, 129), np.float32), {"source": "constant"}, ValueError, "64 KiB"),
    (np.ones((8, 8), np.float32), np.ones((129, 129), np.float32), {"source": "frozen"}, ValueError, "64 KiB"),
    (np.ones((8, 8), np.float32), np.ones((81, 81), np.float32), {"tiled": True}, ValueError, "48 KiB"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.float32), {"tiled": "yes"}, TypeError, "filters.Tile"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.float32), {"tiled": Tile(32, 8, 0)}, ValueError, ">= 1"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.float32), {"tiled": Tile(64, 32)}, ValueError, "at most 1024"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.int32), {}, TypeError, "dtype int32"),
    (np.ones((8, 8), np.float32), np.ones(3, np.float32), {}, ValueError, "2-D filter"),
    (np.ones((8, 8), np.float32), [[1.0]], {}, TypeError, "NumPy array"),
    (np.ones((8, 8), np.float64), np.ones((3, 3), np.float32), {}, TypeError, "dtype float64"),
    (np.ones((8, 8), np.int16), np.ones((3, 3), np.float32), {}, TypeError, "dtype int16"),
    (np.ones(8, np.float32), np.ones((3, 3), np.float32), {}, ValueError, "must be 2-D"),
    (np.ones((2, 8, 8), np.float32), np.ones((3, 3), np.float32), {}, ValueError, "must be 2-D"),
    (np.ones((8, 8), np.float32)[:, ::2], np.ones((3, 3), np.float32), {}, ValueError, "C-contiguous"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.float32), {"source": "texture"}, ValueError, "source must be"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.float32), {"threads": (64, 32)}, ValueError, "at most 1024"),
    (np.ones((8, 8), np.float32), np.ones((3, 3), np.float32), {"threads": 256}, ValueError, r"\(x, y\) block"),
])
def test_bad_filter_input_is_named(image, weights, kwargs, error, message):
    with pytest.raises(error, match=message):
        filters.filter2d(image, weights, **kwargs)


def test_largest_constant_filter_is_accepted():
    weights = np.ones((127, 127), np.float32)          # 64,516 bytes: fits in 64 KiB
    assert filters.kernel_for(weights, source="constant") is not None


@pytest.mark.parametrize("image, table, kwargs, error, message", [
    (np.ones((4, 4), np.uint8), np.ones(255, np.float32), {}, ValueError, "256 entries"),
    (np.ones((4, 4), np.uint8), np.ones(256, np.float64), {}, ValueError, "float32"),
    (np.ones((4, 4), np.float32), np.ones(256, np.float32), {}, TypeError, "dtype float32"),
    (np.ones((4, 4), np.uint8), np.ones(256, np.float32), {"source": "frozen"}, ValueError, "'global' or 'constant'"),
])
def test_bad_lookup_input_is_named(image, table, kwargs, error, message):
    with pytest.raises(error, match=message):
        filters.lookup(image, table, **kwargs)


def test_launchers_run_the_checked_launch_again(rng):
    image = cuda.to_device(rng.random((6, 20), dtype=np.float32))
    out = cuda.to_device(np.full((6, 20), np.nan, dtype=np.float32))
    launch = filters.filter_launcher(image, filters.BOX_BLUR, out=out, source="global", threads=(16, 4))
    launch()
    launch()
    _assert_matches(out.copy_to_host(), image.copy_to_host(), filters.BOX_BLUR)
    pixels = rng.integers(0, 256, size=(5, 40), dtype=np.uint8)
    table = rng.random(256, dtype=np.float32)
    lut_out = cuda.to_device(np.full(pixels.shape, np.nan, dtype=np.float32))
    filters.lookup_launcher(cuda.to_device(pixels), table, out=lut_out, source="constant")()
    np.testing.assert_array_equal(lut_out.copy_to_host(), table[pixels])


def test_ptx_summary_counts_const_arrays_loads_and_immediates():
    ptx = "\n".join([
        ".const .align 4 .b8 _cudapy_cmem[1024] = {0, 0, 128, 63};",
        "\tld.const.f32 \t%f1, [%rd25];",
        "\tld.global.u8 \t%r7, [%rd22];",
        "\tfma.rn.f32 \t%f3, %f2, 0f3F800000, %f1;",      # an immediate weight
        "\tfma.rn.f32 \t%f4, %f2, %f3, 0f00000000;",      # an immediate addend only: not counted
    ])
    assert filters.ptx_summary(ptx) == ("1 .const array(s) _cudapy_cmem[1024]; 1 ld.const, 1 ld.global, "
                                        "1 fma with an immediate")
    assert filters.ptx_summary({"sig a": ptx, "sig b": ""}) == filters.ptx_summary(ptx)
    assert filters.ptx_summary("").startswith("0 .const array(s);")


def test_lookup_kernels_are_cached_per_table_for_constant_only(rng):
    table = rng.random(256, dtype=np.float32)
    assert filters.lookup_kernel_for(table, source="global") is filters.lookup_kernel_for(table + 1)
    first = filters.lookup_kernel_for(table, source="constant")
    assert filters.lookup_kernel_for(table.copy(), source="constant") is first
    assert filters.lookup_kernel_for(table + 1, source="constant") is not first

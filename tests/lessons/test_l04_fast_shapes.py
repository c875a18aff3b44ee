"""Lesson 04's fast filter on every shape (issue 15): the tile that fits the image, checked.

`fast.plan` lays the bulk tile's threads out to fit the image: a line for 1 x N and N x 1 (the
filter folded into one row), filter_narrow for 2 to 4 columns, filter_band for 5 to 80 unless a
tall tile spans the image exactly, one row of tiles as tall as an image 6 to 2 tiles' rows
high, a flat tile as tall as an image of up to 5 rows, or a tall one, where the bulk tile would
compute more than twice the image. Hundreds of shapes
per test check the plans themselves (Python and NumPy, no kernel); the kernels run on fewer,
small enough for the simulator: thin and edge-only images (smaller than one tile) with small
tiles, against lesson 04's float64 reference and its tolerance.
"""

import numpy as np
import pytest
from gpgpu_tools.bench import shapes as bench_shapes
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons.l04_constant_memory import band, fast, filters, narrow, reference
from gpgpu_lessons.l04_constant_memory.fast import Tile

SIDES = st.integers(1, 80)
REGISTERED = {**fast.SIGNATURES, **narrow.SIGNATURES, **band.SIGNATURES}  # test_ptx compiles
LONG_SIDES = st.one_of(SIDES, st.integers(1, 10**8))  # plans only: no image is allocated
SMALL_TILES = st.builds(  # 1 to 16 threads, few outputs each: seconds in the simulator
    Tile,
    st.sampled_from([1, 2, 4, 8]),
    st.integers(1, 2),
    st.integers(1, 3),
    st.integers(1, 2),
    st.booleans(),
)
THIN_OR_SMALL = st.one_of(  # 1..3 rows or columns, or an image smaller than a few tiles
    st.tuples(st.integers(1, 3), SIDES),
    st.tuples(SIDES, st.integers(1, 3)),
    st.tuples(st.integers(1, 12), st.integers(1, 12)),
)


def odd_filter(rng, max_radius=2):
    ky, kx = 2 * rng.integers(0, max_radius + 1, size=2) + 1
    return rng.standard_normal((ky, kx)).astype(np.float32)


def image_of(rng, shape, dtype=np.float32):
    if dtype == np.uint8:
        return rng.integers(1, 256, size=shape, dtype=np.uint8)
    return rng.random(shape, dtype=np.float32) + 0.5


def poisoned_run(image, weights, **kwargs):
    """fast.filter2d on device arrays into an output of NaN (a pixel never written shows)."""
    out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
    assert fast.filter2d(cuda.to_device(image), weights, out=out, **kwargs) is out
    return out.copy_to_host()


def assert_filtered(got, image, weights):
    assert not np.isnan(got).any(), "some output pixels were never written"
    np.testing.assert_allclose(
        got, reference.reference(image, weights), rtol=0, atol=reference.tolerance(image, weights)
    )


def simulated_threads(shape, weights, tile):
    """The threads filter2d launches: the simulator's cost."""
    planned = fast.plan(shape, weights, tile)
    if isinstance(planned.tile, narrow.Narrow):
        return fast.launch.blocks_for(shape[0], planned.tile.threads) * planned.tile.threads
    if isinstance(planned.tile, band.Band):
        rows = band.block_rows(planned.tile, weights.shape[0], shape[1])
        return fast.launch.blocks_for(shape[0], rows) * planned.tile.threads
    c = fast.constants(planned.tile, planned.weights.shape)
    rows, columns = planned.shape
    blocks = fast.launch.blocks_for(rows, c["OUT_H"]) * fast.launch.blocks_for(columns, c["OUT_W"])
    return blocks * planned.tile.threads_x * planned.tile.threads_y


# ---- the plans: hundreds of shapes each, no kernel --------------------------------------


@settings(max_examples=300, deadline=None)
@given(n=SIDES, one_row=st.booleans(), seed=st.integers(0, 2**16))
def test_a_line_is_the_same_filter_folded_into_one_row(n, one_row, seed):
    """1 x N and N x 1: the folded filter on the 1 x N view gives the 2-D filter's outputs."""
    rng = np.random.default_rng(seed)
    image = image_of(rng, (1, n) if one_row else (n, 1))
    weights = odd_filter(rng, max_radius=3)
    planned = fast.plan(image.shape, weights, fast.TILE)
    assert planned.tile == fast.line(fast.TILE) and planned.shape == (1, n)
    assert planned.weights.dtype == np.float32 and planned.weights.shape[0] == 1
    folded = reference.reference(image.reshape(planned.shape), planned.weights).reshape(image.shape)
    np.testing.assert_allclose(
        folded,
        reference.reference(image, weights),
        rtol=0,
        atol=reference.tolerance(image, weights),
    )


@settings(max_examples=600, deadline=None)
@given(h=LONG_SIDES, w=LONG_SIDES, tile=st.one_of(st.just(fast.TILE), SMALL_TILES))
def test_a_plan_never_computes_more_than_the_bulk_tile(h, w, tile):
    weights = filters.GAUSSIAN_5
    planned = fast.plan((h, w), weights, tile)
    if isinstance(planned.tile, narrow.Narrow):  # 2 to 4 columns: test_l04_narrow.py
        assert 2 <= w <= narrow.MAX_COLUMNS and planned.tile.columns == w and h > 1
        assert narrow.narrow_kernel(weights, "constant", w) in fast.launched_kernels(weights)
        return
    if isinstance(planned.tile, band.Band):  # 5 to 80 columns: test_l04_band.py
        assert band.MIN_COLUMNS <= w <= band.MAX_COLUMNS and h > 1 and planned.weights is weights
        spans = fast.tall(tile, w)
        assert spans.threads_x * spans.cols != w  # a tall tile that spans the image keeps it
        assert band.band_kernel(weights, "constant") in fast.launched_kernels(weights, tile=tile)
        return
    assert fast.fits(planned.weights.shape, planned.tile)
    kernel = fast.tiled_kernel(planned.weights, tile=planned.tile)
    assert kernel in fast.launched_kernels(weights, tile=tile)  # what SIGNATURES would list
    if h == 1 or w == 1:
        assert planned.tile == fast.line(tile) and planned.shape == (1, h * w)
        return
    assert planned.shape == (h, w) and planned.weights is weights
    assert planned.tile in (tile, fast.short(tile, h), fast.flat(tile, h), fast.tall(tile, w))
    bulk = fast.efficiency((h, w), weights.shape, tile)
    chosen = fast.efficiency((h, w), weights.shape, planned.tile)
    assert chosen >= bulk
    short = fast.FLAT_EXACT_ROWS < h <= fast.SHORT_TILES * tile.threads_y * tile.rows
    if planned.tile == fast.short(tile, h) != tile:  # one row of tiles, as tall as the image
        assert short and chosen > bulk
    else:
        assert planned.tile == tile or bulk < 0.5  # the bulk tile unless it wastes over half


@settings(max_examples=300, deadline=None)
@given(h=LONG_SIDES, w=LONG_SIDES)
def test_every_kernel_the_tuned_filter_launches_is_registered(h, w):
    """tests/test_ptx.py compiles what SIGNATURES lists: every plan of TILE and GAUSSIAN_5."""
    planned = fast.plan((h, w), filters.GAUSSIAN_5, fast.TILE)
    if isinstance(planned.tile, narrow.Narrow):
        kernel = narrow.narrow_kernel(planned.weights, "constant", planned.tile.columns)
    elif isinstance(planned.tile, band.Band):
        kernel = band.band_kernel(planned.weights, "constant", planned.tile)
    else:
        kernel = fast.tiled_kernel(planned.weights, tile=planned.tile)
    assert kernel in REGISTERED


def test_the_tuned_filter_registers_its_layouts():
    """TILE, its line (the folded filter), its tall tiles 8 across making 1 to 5 columns a
    thread (8 rows a thread in 1 or 2 columns where one tile spans the image), flat ones of 2
    to 5 rows, short ones of 2, 3 and 5 to 7 rows a thread, filter_narrow for 2 to 4 columns,
    filter_band: only what plan picks (each layout costs tests/test_ptx.py a compilation)."""
    kernels = fast.launched_kernels(filters.GAUSSIAN_5)
    assert kernels[0] is fast.filter_tiled and len(kernels) == 1 + 1 + 6 + 4 + 5 + 3 + 1
    assert all(kernel in REGISTERED for kernel in kernels)
    assert band.filter_band in kernels
    assert {fast.flat(fast.TILE, h).rows for h in range(2, 100)} == {2, 3, 4, 5}
    assert {fast.short(fast.TILE, h).rows for h in range(6, 33)} == set(range(2, 9))
    talls = {fast.tall(fast.TILE, w)[:4] for w in range(5, 100)}
    assert talls == {(8, 16, 8, 1), (8, 16, 8, 2), *((8, 16, 4, cols) for cols in (1, 3, 4, 5))}
    assert fast.tall(fast.TILE, 16).rows == 8 and fast.tall(fast.TILE, 17).rows == 4
    assert fast.tall(fast.TILE, 40).cols == 5 and fast.tall(fast.TILE, 41).cols == 1
    assert narrow.filter_narrow in kernels  # N x 3 with the 5x5 Gaussian: as written


BENCH_H200 = bench_shapes.matrices(4 * 62914560 // 4, mod16=False)  # the H200's full sweep
BENCH_LAYOUTS = {"1 x N": "line", "N x 1": "line", "3 x N": "flat", "N x 3": "narrow"}
BENCH_LAYOUTS.update({"7 x N": "short", "17 x N": "short"})  # one row of tiles
BENCH_LAYOUTS.update({"N x 7": "band", "N x 17": "band"})  # whole rows, a thread a column
BENCH_LAYOUTS["N x 40"] = "tall"  # 8 across, 5 columns a thread: one tile spans the width


@pytest.mark.parametrize("shape, label", BENCH_H200, ids=[label for _, label in BENCH_H200])
def test_the_bench_shapes_get_a_layout_that_fits(shape, label):
    """The sweep the H200 times: TILE where it fits, lines and thin tiles that waste little."""
    planned = fast.plan(shape, filters.GAUSSIAN_5, fast.TILE)
    layouts = {
        "line": fast.line(fast.TILE),
        "flat": fast.flat(fast.TILE, shape[0]),
        "short": fast.short(fast.TILE, shape[0]),
        "tall": fast.tall(fast.TILE, shape[1]),
        "narrow": narrow.Narrow(shape[1]),
        "band": band.LAYOUT,
        "bulk": fast.TILE,
    }
    assert planned.tile == layouts[BENCH_LAYOUTS.get(label, "bulk")]
    assert type(planned.tile) is type(layouts[BENCH_LAYOUTS.get(label, "bulk")])
    if not isinstance(planned.tile, Tile):  # a thread a row or a column: nothing outside
        return
    assert fast.efficiency(planned.shape, planned.weights.shape, planned.tile) >= 0.6
    if BENCH_LAYOUTS.get(label) == "line":
        assert planned.shape == (1, max(shape))
        assert len(fast.launch.row_bands(planned.shape, (4096, 1))) == 1


# ---- shared memory: a warp's thread rows in different banks ---------------------------------


def banks_of_one_warp(threads_x, rows, pitch):
    """The banks a warp reads in filter_tile's first shared-memory load (its rows x pitch apart)."""
    lanes = np.arange(32)
    return (lanes // threads_x * rows * pitch + lanes % threads_x) % 32


@pytest.mark.parametrize("threads_x", [1, 2, 4, 8, 16, 32, 12])
def test_the_pitch_puts_a_warps_thread_rows_in_different_banks(threads_x):
    for rows in range(1, 9):
        for tile_w in range(1, 41):
            pitch = fast.pitch(tile_w, threads_x, rows)
            assert tile_w <= pitch < tile_w + 32
            if threads_x >= 32 or 32 % threads_x:
                assert pitch == tile_w
                continue
            spread = [
                q
                for q in range(tile_w, tile_w + 32)
                if len(set(banks_of_one_warp(threads_x, rows, q))) == 32
            ]
            assert pitch == (spread[0] if spread else tile_w), (rows, tile_w)


# ---- the kernels: thin and edge-only images in the simulator --------------------------------


@settings(max_examples=30, deadline=None)
@given(
    shape=THIN_OR_SMALL,
    tile=SMALL_TILES,
    memory=st.sampled_from(fast.MEMORIES),
    dtype=st.sampled_from([np.float32, np.uint8]),
    seed=st.integers(0, 2**16),
)
def test_thin_and_edge_only_images_match_the_reference(shape, tile, memory, dtype, seed):
    rng = np.random.default_rng(seed)
    image = image_of(rng, shape, dtype)
    weights = odd_filter(rng)
    assume(simulated_threads(shape, weights, tile) <= 256)  # each a Python thread: seconds
    assert_filtered(poisoned_run(image, weights, memory=memory, tile=tile), image, weights)


@pytest.mark.parametrize(
    "shape, layout",
    [
        ((1, 7), fast.line(fast.TILE)),
        ((7, 1), fast.line(fast.TILE)),
        ((2, 129), fast.flat(fast.TILE, 2)),
        ((9, 2), narrow.Narrow(2)),
        ((17, 6), band.LAYOUT),
        ((17, 8), fast.tall(fast.TILE, 8)),
        ((7, 260), fast.short(fast.TILE, 7)),  # one row of tiles, rows clamped; the middle
        ((17, 300), fast.short(fast.TILE, 17)),  # block's columns are inside the image
    ],
)
def test_the_tuned_filter_on_thin_images(rng, shape, layout):
    """The registered kernels of TILE and GAUSSIAN_5, each on an image smaller than its tile."""
    image = image_of(rng, shape)
    prepared = fast.filter2d.prepare(image, filters.GAUSSIAN_5)
    assert fast.plan(shape, filters.GAUSSIAN_5).tile == layout
    assert [step.kernel in REGISTERED for step in prepared.steps] == [True]
    assert_filtered(poisoned_run(image, filters.GAUSSIAN_5), image, filters.GAUSSIAN_5)


@pytest.mark.parametrize("tiles_high, walks", [(2, True), (5, False)])
def test_a_wide_grid_walks_down_its_columns_only_when_few_tiles_high(rng, tiles_high, walks):
    """2 to 4 tiles high, blocks walk down the tile columns; 5, along the rows: both correct."""
    tile = Tile(4, 1, 1, 1)  # 4 threads, one output each: a 2 x 22 or 5 x 22 grid
    image = image_of(rng, (tiles_high, 85))  # (5 to 80 columns: filter_band)
    assert fast.plan(image.shape, filters.GAUSSIAN_5, tile).tile == tile
    assert (tiles_high <= fast.WALK_MAX_TILES_HIGH) == walks
    assert_filtered(poisoned_run(image, filters.GAUSSIAN_5, tile=tile), image, filters.GAUSSIAN_5)


def test_a_long_line_crosses_blocks_and_takes_uint8(rng):
    """N x 1 with a 1 x N view over several blocks, the edge blocks at both ends included."""
    image = image_of(rng, (61, 1), np.uint8)
    weights = odd_filter(rng)
    tile = Tile(4, 2, 2, 1)  # a line of 8 threads, 2 outputs each: 16 per block
    assert fast.plan(image.shape, weights, tile).tile == Tile(8, 1, 1, 2)
    assert_filtered(poisoned_run(image, weights, tile=tile), image, weights)

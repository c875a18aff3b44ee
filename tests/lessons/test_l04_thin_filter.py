"""Lesson 04's thin kernels (issue 25): filter_rows for few columns, filter_columns for few rows.

`fast.plan` gives a thin image (at most THIN_MAX_SIDE columns or rows, at least THIN_MIN_PIXELS)
to a kernel that stages a block's rows, or columns, whole. The plans are checked on many shapes
(no kernel); the kernels run in the simulator on small images with small layouts (few threads,
rows and loads, so that an image spans several blocks and ends mid-block), against lesson 04's
float64 reference: float32 and uint8, every odd filter shape up to 7, both memories.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons.l04_constant_memory import fast, filters, reference
from gpgpu_lessons.l04_constant_memory.fast import Thin, Tile

# small layouts: 16 threads of 2 rows; 64 staged values (whole rows), 128 (whole columns)
SMALL = {
    "rows": Thin("rows", 16, 2, 4),
    "columns": Thin("columns", 16, 2, 8),
}
FEW_COLUMNS = [(1, 1), (1, 3), (2, 5), (7, 1), (23, 1), (17, 2), (37, 3), (5, 4), (6, 3), (31, 7)]
FEW_ROWS = [(1, 1), (3, 1), (5, 2), (1, 7), (1, 23), (2, 17), (3, 37), (5, 11), (6, 13), (13, 5)]


def image_of(rng, shape, dtype=np.float32):
    if dtype == np.uint8:
        return rng.integers(1, 256, size=shape, dtype=np.uint8)
    return rng.random(shape, dtype=np.float32) + 0.5


def filter_of(rng, shape):
    return rng.standard_normal(shape).astype(np.float32) + 0.1


def thin_run(image, weights, thin, **kwargs):
    """fast.filter_thin on device arrays into an output of NaN (a pixel never written shows)."""
    out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
    assert fast.filter_thin(cuda.to_device(image), weights, thin=thin, out=out, **kwargs) is out
    return out.copy_to_host()


def assert_filtered(got, image, weights):
    assert not np.isnan(got).any(), "some output pixels were never written"
    np.testing.assert_allclose(
        got, reference.reference(image, weights), rtol=0, atol=reference.tolerance(image, weights)
    )


# ---- the kernels in the simulator -------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
@pytest.mark.parametrize("shape", FEW_COLUMNS)
def test_filter_rows_on_few_columns(rng, shape, dtype):
    """Whole rows: 1, 2, 3 ... 7 columns; images of one block, several, ending mid-block."""
    image = image_of(rng, shape, dtype)
    assert_filtered(thin_run(image, filters.GAUSSIAN_5, SMALL["rows"]), image, filters.GAUSSIAN_5)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
@pytest.mark.parametrize("shape", FEW_ROWS)
def test_filter_columns_on_few_rows(rng, shape, dtype):
    """Whole columns: 1, 2, 3, 5, 6 ... 13 rows; a thread's rows past the image not written."""
    image = image_of(rng, shape, dtype)
    got = thin_run(image, filters.GAUSSIAN_5, SMALL["columns"])
    assert_filtered(got, image, filters.GAUSSIAN_5)


@pytest.mark.parametrize("whole", ["rows", "columns"])
@pytest.mark.parametrize("filter_shape", [(1, 1), (3, 3), (5, 5), (1, 5), (5, 1), (3, 7), (7, 3)])
@pytest.mark.parametrize("memory", fast.MEMORIES)
def test_any_odd_filter_from_either_memory(rng, whole, filter_shape, memory):
    shape = (29, 3) if whole == "rows" else (3, 29)
    image, weights = image_of(rng, shape), filter_of(rng, filter_shape)
    assert_filtered(thin_run(image, weights, SMALL[whole], memory=memory), image, weights)


@settings(max_examples=25, deadline=None)
@given(
    whole=st.sampled_from(["rows", "columns"]),
    long_side=st.integers(1, 61),
    short_side=st.integers(1, 9),
    threads=st.sampled_from([8, 16]),
    rows=st.integers(1, 3),
    loads=st.sampled_from([2, 3, 8]),
    ry=st.integers(0, 2),
    rx=st.integers(0, 2),
    dtype=st.sampled_from([np.float32, np.uint8]),
    seed=st.integers(0, 2**16),
)
def test_any_small_layout_on_any_thin_image(
    whole, long_side, short_side, threads, rows, loads, ry, rx, dtype, seed
):
    """Sizes that are no multiple of the block, the rows per thread or the staged values."""
    rng = np.random.default_rng(seed)
    shape = (long_side, short_side) if whole == "rows" else (short_side, long_side)
    image, weights = image_of(rng, shape, dtype), filter_of(rng, (2 * ry + 1, 2 * rx + 1))
    thin = Thin(whole, threads, rows, loads)
    assume(fast.thin_share(thin, shape, weights.shape) >= 1)  # else refused: tested below
    assert_filtered(thin_run(image, weights, thin), image, weights)


@pytest.mark.parametrize(
    "shape, thin",
    [
        ((37, 3), fast.THIN_ROWS_LAYOUT),
        ((3, 200), fast.whole_columns(fast.THIN_COLUMNS_LAYOUT, 3)),
        ((9, 41), fast.whole_columns(fast.THIN_COLUMNS_LAYOUT, 9)),
    ],
)
def test_the_tuned_layouts_as_registered(rng, shape, thin):
    """The module's filter_rows as written and the filter_columns instances plan launches."""
    image = image_of(rng, shape)
    prepared = fast.filter_thin.prepare(image, filters.GAUSSIAN_5, thin=thin)
    assert [step.kernel in fast.SIGNATURES for step in prepared.steps] == [True]
    if thin == fast.THIN_ROWS_LAYOUT:
        assert prepared.steps[0].kernel is fast.filter_rows
    assert_filtered(thin_run(image, filters.GAUSSIAN_5, thin), image, filters.GAUSSIAN_5)


@pytest.mark.parametrize("shape", [(41, 3), (3, 41), (40, 7)])
def test_filter2d_takes_the_thin_kernel_plan_picks(rng, monkeypatch, shape):
    """filter2d launches the plan's thin kernel (the thresholds lowered to a small image)."""
    monkeypatch.setattr(fast, "THIN_MIN_PIXELS", 0)
    monkeypatch.setattr(fast, "THIN_ROWS_LAYOUT", SMALL["rows"])
    monkeypatch.setattr(fast, "THIN_COLUMNS_LAYOUT", SMALL["columns"])
    image = image_of(rng, shape, np.uint8)
    chosen = fast.plan(shape, filters.GAUSSIAN_5).tile
    assert isinstance(chosen, Thin) and chosen.whole == ("rows" if shape[1] < 8 else "columns")
    out = cuda.to_device(np.full(shape, np.nan, dtype=np.float32))
    fast.filter2d(cuda.to_device(image), filters.GAUSSIAN_5, out=out)
    assert_filtered(out.copy_to_host(), image, filters.GAUSSIAN_5)


# ---- the plans: many shapes, no kernel --------------------------------------------------------

LONG = 2**20 + 1  # a long side that makes a thin image of at least THIN_MIN_PIXELS


@pytest.mark.parametrize(
    "shape, whole",
    [
        ((LONG, 2), "rows"),
        ((LONG, 3), "rows"),
        ((LONG, 40), "rows"),
        ((LONG, fast.THIN_MAX_SIDE), "rows"),
        ((LONG, fast.THIN_MAX_SIDE + 1), None),
        ((2, LONG), "columns"),
        ((3, LONG), "columns"),
        ((40, LONG), "columns"),
        ((fast.THIN_MAX_SIDE, LONG), "columns"),
        ((fast.THIN_MAX_SIDE + 1, LONG), None),
        ((1, LONG), None),  # a line
        ((LONG, 1), None),
        ((fast.THIN_MIN_PIXELS // 3 - 1, 3), None),  # too small: the tiles
        ((8192, 8192), None),
    ],
)
def test_plan_gives_thin_images_the_thin_kernels(shape, whole):
    planned = fast.plan(shape, filters.GAUSSIAN_5)
    if whole is None:
        assert isinstance(planned.tile, Tile)
        return
    layout = fast.THIN_ROWS_LAYOUT if whole == "rows" else fast.THIN_COLUMNS_LAYOUT
    if whole == "columns":
        layout = fast.whole_columns(layout, shape[0])
    assert planned.tile == layout and planned.shape == shape
    assert planned.weights is filters.GAUSSIAN_5
    assert not isinstance(fast.plan(shape, filters.GAUSSIAN_5, thin=False).tile, Thin)


def test_plan_keeps_the_tiles_where_a_thin_layout_would_not_fit(monkeypatch):
    """A layout whose shared memory passes 48 KiB is never planned (tuning may try one)."""
    monkeypatch.setattr(fast, "THIN_ROWS_LAYOUT", Thin("rows", 1024, 8, 16))  # 2 x 64 KiB
    assert not fast.fits((5, 5), fast.THIN_ROWS_LAYOUT)
    assert fast.thin_share(fast.THIN_ROWS_LAYOUT, (LONG, 3), (5, 5)) == 0
    assert isinstance(fast.plan((LONG, 3), filters.GAUSSIAN_5).tile, Tile)


def test_few_rows_get_each_thread_all_of_them_up_to_five():
    """As the flat tiles: a thread makes all h rows up to 5, then THIN_COLUMNS_LAYOUT's rows."""
    rows = {fast.plan((h, LONG), filters.GAUSSIAN_5).tile.rows for h in range(2, 65)}
    assert rows == {2, 3, 4, 5, fast.THIN_COLUMNS_LAYOUT.rows}


@settings(max_examples=1000, deadline=None)
@given(short=st.integers(2, 80), long=st.integers(2, 10**8), few_rows=st.booleans())
def test_a_thin_plan_is_registered_and_wastes_little(short, long, few_rows):
    shape = (short, long) if few_rows else (long, short)
    planned = fast.plan(shape, filters.GAUSSIAN_5)
    kernel = fast.tiled_kernel(planned.weights, tile=planned.tile)
    assert kernel in fast.launched_kernels(filters.GAUSSIAN_5) and kernel in fast.SIGNATURES
    if isinstance(planned.tile, Thin):
        assert short <= fast.THIN_MAX_SIDE and short * long >= fast.THIN_MIN_PIXELS
        assert fast.thin_share(planned.tile, shape, (5, 5)) >= 1
        assert fast.efficiency(shape, (5, 5), planned.tile) >= 0.5
        assert fast.fits((5, 5), planned.tile)


@pytest.mark.parametrize("whole", ["rows", "columns"])
def test_efficiency_counts_the_outputs_a_thin_launch_computes(whole):
    """rows: 64 staged values hold 21 rows of 3, 4 of them halo: 8 runs of 2 rows a block;
    columns: 128 hold 3 rows of 42 columns, 4 of them halo; 2 runs of 2 rows (4 for 3)."""
    thin, shape = SMALL[whole], (23, 3) if whole == "rows" else (3, 23)
    assert fast.thin_share(thin, shape, (5, 5)) == (8 if whole == "rows" else 38)
    computed = 32 * 3 if whole == "rows" else 4 * 38  # 2 blocks of 16 rows; 1 of 38 columns
    assert fast.efficiency(shape, (5, 5), thin) == pytest.approx(69 / computed)


def test_filter_rows_is_registered_with_flat_images():
    assert fast.SIGNATURES[fast.filter_rows] == [
        f"void({image}[::1], float32[:, ::1], float32[::1], int64, int64, int64)"
        for image in ("float32", "uint8")
    ]
    assert fast.filter_columns in fast.SIGNATURES


# ---- bad input ------------------------------------------------------------------------------


def test_a_layout_that_cannot_take_the_image_is_refused_by_name(rng):
    with pytest.raises(ValueError, match="too wide for Thin"):
        fast.filter_thin(image_of(rng, (9, 40)), filters.GAUSSIAN_5, thin=Thin("rows", 16, 2, 4))
    with pytest.raises(ValueError, match="too tall for Thin"):
        fast.filter_thin(image_of(rng, (40, 9)), filters.GAUSSIAN_5, thin=Thin("columns", 4, 2, 4))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"thin": Tile()}, TypeError, "thin must be a fast.Thin"),
        ({"thin": Thin("diagonal")}, ValueError, "thin.whole must be 'rows' or 'columns'"),
        ({"thin": Thin("rows", 0)}, ValueError, "thin.threads"),
        ({"thin": Thin("rows", 2048)}, ValueError, "threads"),
        ({"thin": Thin("rows", 1024, 8, 16)}, ValueError, "shared memory"),
    ],
)
def test_bad_thin_layouts_are_named(rng, kwargs, error, message):
    with pytest.raises(error, match=message):
        fast.filter_thin(image_of(rng, (9, 3)), filters.GAUSSIAN_5, **kwargs)


def test_filter2d_takes_a_tile_not_a_thin_layout(rng):
    with pytest.raises(TypeError, match="tile must be a fast.Tile"):
        fast.filter2d(image_of(rng, (9, 3)), filters.GAUSSIAN_5, tile=fast.THIN_ROWS_LAYOUT)


# ---- tuning: every layout on every thin shape ---------------------------------------------------


def test_thin_tuning_shapes_are_thin_images_of_the_gpu_size():
    pixels = fast.THIN_GPU_PIXELS
    assert fast.thin_tuning_shape("N x 3", pixels) == (20971521, 3)
    assert fast.thin_tuning_shape("40 x N", pixels) == (40, 1572865)
    assert pixels * 4 >= 4 * 60 * 2**20  # at least 4 times an H200's L2 (60 MiB)


def test_thin_tuning_builds_each_layout_where_it_fits_and_skips_the_rest():
    space = fast.THIN_TUNING["space"]
    case = fast.THIN_TUNING["case"]
    prepared, nbytes = case("N x 3", "rows", 256, 8, 8, True)
    assert prepared.steps[0].kernel is fast.filter_rows and nbytes > 0
    prepared, _ = case("N x 3", "rows", 256, 8, 8, False)
    assert fast.python_function(prepared.steps[0].kernel).__name__.startswith(
        "filter_rows_constant_5x5_t256r8l8_direct"
    )
    prepared, _ = case("3 x N", "columns", 128, 3, 16, True)
    assert "filter_columns" in fast.python_function(prepared.steps[0].kernel).__name__
    prepared, _ = case("N x 3", "tiles", 128, 8, space["loads"][0], True)
    tall = fast.tiled_kernel(filters.GAUSSIAN_5, tile=fast.tall(fast.TILE, 3))
    assert prepared.steps[0].kernel is tall
    with pytest.raises(ValueError, match="no `loads`"):
        case("N x 3", "tiles", 128, 8, space["loads"][0] + 8, True)
    with pytest.raises(ValueError, match="no staged outputs"):
        case("3 x N", "columns", 128, 3, 8, False)
    with pytest.raises(ValueError, match="too wide"):
        case("3 x N", "rows", 256, 8, 8, True)


def test_thin_tuning_chose_what_plan_picks_on_each_gpu_shape():
    chosen = fast.THIN_TUNING["chosen"]
    for label in fast.THIN_TUNING_SHAPES:
        planned = fast.plan(fast.thin_tuning_shape(label, fast.THIN_GPU_PIXELS), filters.GAUSSIAN_5)
        layout = planned.tile.whole if isinstance(planned.tile, Thin) else "tiles"
        assert chosen["layout"][label] == layout
        assert chosen["rows"][label] == planned.tile.rows

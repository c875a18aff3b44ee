"""Lesson 02 against NumPy: negative, flips and every mosaic (edge tiles, RGB, rounding), an out=
overlapping the image elsewhere, N x 1 and 1 x N in bands, bad input named, every kernel under its
own name (tests/test_ptx.py checks their PTX); what the tracer says about the mosaics (races,
barrier intervals, work per tile); legible pictures. What every wrapper must do (host/device in and
out, aliasing, a failed call then a good one): tests/core/test_wrapper_contract.py."""

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from numba import cuda

from gpgpu_lessons import launch, notebook, plotting, results
from gpgpu_lessons.l02_shared_memory import fast, figures, reference, textbook, tracing
from gpgpu_lessons.timing import Timing

BASICS = [
    (textbook.negative, reference.negative),
    (fast.negative_fast, reference.negative),
    (textbook.flip_horizontal, reference.flip_horizontal),
    (fast.flip_horizontal_fast, reference.flip_horizontal),
    (textbook.flip_vertical, reference.flip_vertical),
    (fast.flip_vertical_fast, reference.flip_vertical),
]
BASIC_IDS = [wrapper.__name__ for wrapper, _ in BASICS]
FAST_FLIPS = (fast.flip_horizontal_fast, fast.flip_vertical_fast)
# 1 x N, N x 1, primes, not multiples of the 32 x 8 block; widths that are and are not whole
# words of 4 or 8 bytes (the fast flips: words and a byte edge at each end of a row); RGB
SHAPES = [
    (1, 1),
    (1, 3),
    (1, 31),
    (31, 1),
    (7, 13),
    (9, 8),
    (2, 36),
    (3, 32),
    (3, 5, 3),
    (5, 8, 3),
    (1, 4, 3),
    (2, 16, 3),
]
MOSAICS = [textbook.mosaic_one_thread, textbook.mosaic_shared_one_thread, textbook.mosaic_parallel]
MOSAIC_IDS = [m.__name__ for m in MOSAICS]
ALL_MOSAICS = MOSAICS + [textbook.mosaic_shared_race]
WRAPPERS = [(w, ()) for w, _ in BASICS] + [(m, (3,)) for m in ALL_MOSAICS]
WRAPPER_IDS = [w.__name__ for w, _ in WRAPPERS]
EXACT = [(w, r) for w, r in BASICS] + [
    (m, lambda a: reference.mosaic(a, 3)) for m in MOSAICS
]  # wrappers with exact results, args


def image(rng, shape):
    """Random pixels over the whole 0..255 range (never all zeros)."""
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def poisoned_like(expected):
    """A device output where every byte differs from the expected one: unwritten pixels show."""
    return cuda.to_device((expected.astype(np.int16) + 1).astype(np.uint8))


def arguments(wrapper):
    return (3,) if wrapper in ALL_MOSAICS else ()


# ---- against NumPy -----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("wrapper, expect", BASICS, ids=BASIC_IDS)
def test_basics_match_numpy(wrapper, expect, shape, rng):
    a = image(rng, shape)
    expected = expect(a)
    d_out = poisoned_like(expected)
    assert wrapper(cuda.to_device(a), out=d_out) is d_out  # device in, device out: no copy back
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@pytest.mark.parametrize("word_bytes", [4, 8, 16])
@pytest.mark.parametrize("block", [(32, 1), (32, 2), (64, 3), 96], ids=str)
@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
def test_word_flips_in_every_configuration(horizontal, block, word_bytes, rng):
    # several runs of words per row, a last run cut short, rows that do not fill the last block
    if word_bytes == 16:  # words are shifted into place: at most 8 bytes, the widest integer
        with pytest.raises(ValueError, match="word_bytes must be 4 or 8 for a"):
            fast.flip_words(image(rng, (2, 32)), horizontal=horizontal, word_bytes=16)
        return
    expect = reference.flip_horizontal if horizontal else reference.flip_vertical
    for shape in [(5, 16 * 40), (4, 16 * 11, 3)]:
        a = image(rng, shape)
        expected = expect(a)
        d_out = poisoned_like(expected)
        fast.flip_words(
            cuda.to_device(a), horizontal=horizontal, out=d_out, word_bytes=word_bytes, block=block
        )
        np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@pytest.mark.parametrize(
    "wrapper, expect",
    [
        (fast.flip_horizontal_fast, reference.flip_horizontal),
        (fast.flip_vertical_fast, reference.flip_vertical),
        (fast.negative_fast, reference.negative),
    ],
    ids=["horizontal", "vertical", "negative"],
)
def test_fast_kernels_on_misaligned_images(wrapper, expect, rng):
    a = image(rng, (4, 16))
    for offset in (8, 4, 1):  # tests/test_l02_fast_shapes.py: the flips at every offset
        d_flat = cuda.to_device(np.concatenate([np.zeros(offset, np.uint8), a.ravel()]))
        d_a = d_flat[offset:].reshape(4, 16)  # starts `offset` bytes into an allocation
        np.testing.assert_array_equal(wrapper(d_a).copy_to_host(), expect(a))


def test_word_flips_split_runs_beyond_the_grid_limit(rng, monkeypatch):
    # a 1 x N row of more than 65535 runs of words: the grid's y goes in chunks (here of 2 runs)
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)
    for wrapper, expect in [
        (fast.flip_vertical_fast, reference.flip_vertical),
        (fast.flip_horizontal_fast, reference.flip_horizontal),
    ]:
        for shape in [(1, 16 * 32 * 4 * 3 + 16), (3, 8 * 32 * 9, 3)]:
            a = image(rng, shape)
            prepared = fast.flip_words.prepare(
                a, horizontal=wrapper is fast.flip_horizontal_fast, block=32
            )
            assert len(prepared.steps) > 1
            np.testing.assert_array_equal(prepared.result(), expect(a))


def test_negative_is_an_xor_of_words():
    a = np.array([[0, 1, 127, 128, 255]], dtype=np.uint8)
    np.testing.assert_array_equal(fast.negative_fast(a), [[255, 254, 128, 127, 0]])


# ---- mosaics -----------------------------------------------------------------------------------


def naive_mosaic(a, size):
    """The definition, written out: every tile's real pixels, mean rounded half up."""
    out = np.empty_like(a)
    for y0 in range(0, a.shape[0], size):
        for x0 in range(0, a.shape[1], size):
            tile = a[y0 : y0 + size, x0 : x0 + size].astype(np.int64)
            count = tile.shape[0] * tile.shape[1]
            out[y0 : y0 + size, x0 : x0 + size] = (tile.sum(axis=(0, 1)) + count // 2) // count
    return out


@pytest.mark.parametrize(
    "shape, size",
    [
        ((7, 13), 3),
        ((8, 8), 4),
        ((5, 9, 3), 2),
        ((33, 31), 31),
        ((1, 7), 1),
        ((3, 5), 8),
        ((1, 40), 32),
    ],
)
def test_mosaic_reference_is_the_definition(shape, size, rng):
    a = image(rng, shape)
    np.testing.assert_array_equal(reference.mosaic(a, size), naive_mosaic(a, size))


def test_mosaic_rounds_half_up():
    a = np.array([[0, 1], [2, 2]], dtype=np.uint8)
    np.testing.assert_array_equal(reference.mosaic(a[:1], 1), a[:1])
    np.testing.assert_array_equal(reference.mosaic(a, 2), np.full((2, 2), 1))  # 5 / 4 -> 1
    for mosaic in MOSAICS:
        np.testing.assert_array_equal(mosaic(np.array([[0, 1]], dtype=np.uint8), 1), [[0, 1]])
        np.testing.assert_array_equal(
            mosaic(np.array([[1, 2], [2, 1]], dtype=np.uint8), 2), np.full((2, 2), 2)
        )  # 6 / 4 = 1.5 -> 2


@pytest.mark.parametrize(
    "shape, size",
    [
        ((8, 8), 4),  # tiles divide the image
        ((7, 13), 3),  # edge tiles on both sides
        ((10, 9), 4),  # edge tiles of 2 rows and 1 column
        ((5, 6, 3), 4),  # RGB, edge tiles
        ((1, 11), 1),  # one pixel per tile
        ((6, 5), 5),  # one tile column, a short last row of tiles
        ((3, 4), 6),  # a tile larger than the image: one edge tile
        ((1, 20), 4),  # 1 x N
        ((20, 1, 3), 4),  # N x 1, RGB
    ],
    ids=str,
)
@pytest.mark.parametrize("mosaic", MOSAICS, ids=MOSAIC_IDS)
def test_mosaics_match_numpy(mosaic, shape, size, rng):
    a = image(rng, shape)
    expected = reference.mosaic(a, size)
    d_out = poisoned_like(expected)
    assert mosaic(cuda.to_device(a), size, out=d_out) is d_out
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@pytest.mark.parametrize("shape, size", [((32, 32), 32), ((21, 9, 3), 20), ((18, 17), 17)], ids=str)
def test_parallel_mosaic_with_fewer_threads_than_tile_rows(shape, size, rng):
    # tiles above 16 get blocks of size x (256 // size) threads: each thread adds several rows
    a = image(rng, shape)
    expected = reference.mosaic(a, size)
    d_out = poisoned_like(expected)
    textbook.mosaic_parallel(cuda.to_device(a), size, out=d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), expected)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    height=st.integers(1, 9), width=st.integers(1, 9), rgb=st.booleans(), size=st.integers(1, 10)
)
def test_parallel_mosaic_on_random_shapes(height, width, rgb, size, rng):
    a = image(rng, (height, width, 3) if rgb else (height, width))
    np.testing.assert_array_equal(textbook.mosaic_parallel(a, size), reference.mosaic(a, size))


# ---- the launch regressions (issue 13) ---------------------------------------------------------


IN_PLACE = [(textbook.negative, reference.negative), (fast.negative_fast, reference.negative)] + [
    (m, lambda a: reference.mosaic(a, 3)) for m in MOSAICS
]


@pytest.mark.parametrize("wrapper", [w for w, _ in IN_PLACE], ids=lambda w: w.__name__)
def test_an_out_overlapping_the_image_elsewhere_is_refused(wrapper, rng):
    d_flat = cuda.to_device(image(rng, 4 * 33))
    d_a, d_shifted = d_flat[: 4 * 32].reshape(4, 32), d_flat[4 : 4 * 33].reshape(4, 32)
    with pytest.raises(ValueError, match="shares memory with an input"):
        wrapper(d_a, *arguments(wrapper), out=d_shifted)


@pytest.mark.parametrize("shape", [(40, 1), (1, 40), (20, 1, 3)], ids=str)
@pytest.mark.parametrize("wrapper, expect", EXACT, ids=[w.__name__ for w, _ in EXACT])
def test_n_x_1_and_1_x_n_in_bands_of_rows(wrapper, expect, shape, rng, monkeypatch):
    # a GPU allows 65535 blocks along y: here 2, so a tall image goes in several bands of rows
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)
    a = image(rng, shape)
    prepared = wrapper.prepare(a, *arguments(wrapper))
    # the fast kernels' grids: 1-D (negative), rows on grid x (flips: an N x 1 image is one row)
    if shape[0] > 1 and wrapper not in (fast.negative_fast, *FAST_FLIPS):
        assert len(prepared.steps) > 1
    np.testing.assert_array_equal(prepared.result(), expect(a))


@pytest.mark.parametrize("wrapper, args", WRAPPERS, ids=WRAPPER_IDS)
def test_help_shows_the_real_signature(wrapper, args):
    parameters = list(inspect.signature(wrapper).parameters)
    assert parameters == (["image", "size", "out"] if args else ["image", "out"])
    assert inspect.signature(wrapper.prepare) == inspect.signature(wrapper)
    assert wrapper.__doc__ and "\n" not in wrapper.__doc__.strip()


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, error, message",
    [
        (np.zeros((4, 4), dtype=np.float32), TypeError, "has dtype float32"),
        (np.zeros((4, 4), dtype=np.uint16), TypeError, "has dtype uint16"),
        (np.zeros(16, dtype=np.uint8), ValueError, r"\(height, width\) grayscale or \(height"),
        (np.zeros((4, 4, 4), dtype=np.uint8), ValueError, r"got shape \(4, 4, 4\)"),
        (np.zeros((2, 4, 4, 3), dtype=np.uint8), ValueError, "grayscale or"),
        (np.zeros((0, 4), dtype=np.uint8), ValueError, "is empty"),
        (np.zeros((4, 8), dtype=np.uint8)[:, ::2], ValueError, "not C-contiguous"),
        ([[1, 2], [3, 4]], TypeError, "must be a NumPy array"),
    ],
    ids=["float32", "uint16", "1-D", "4 channels", "4-D", "empty", "strided", "list"],
)
@pytest.mark.parametrize("wrapper, args", WRAPPERS, ids=WRAPPER_IDS)
def test_bad_images_are_named(wrapper, args, value, error, message):
    with pytest.raises(error, match=message):
        wrapper(value, *args)


@pytest.mark.parametrize(
    "size, message",
    [
        (0, "mosaic size must be an integer >= 1"),
        (-2, "mosaic size must be an integer >= 1"),
        (2.5, "mosaic size must be an integer >= 1"),
        (True, "mosaic size must be an integer >= 1"),
        (33, "more than the 1024 CUDA allows: use at most 32"),
    ],
)
@pytest.mark.parametrize(
    "mosaic", ALL_MOSAICS + [reference.mosaic], ids=MOSAIC_IDS + ["race", "reference"]
)
def test_bad_mosaic_sizes_are_named(mosaic, size, message):
    with pytest.raises(ValueError, match=message):
        mosaic(np.ones((5, 40), dtype=np.uint8), size)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"word_bytes": 2}, "word_bytes must be 4 or 8 for a vertical flip, got 2"),
        ({"per_thread": 0}, "per_thread must be an integer >= 1"),
        ({"block": (32, 2, 2)}, r"block is \(threads along a row, rows\)"),
        ({"block": 2048}, "at most 1024 per block"),
    ],
)
def test_bad_flip_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        fast.flip_words(np.ones((4, 32), dtype=np.uint8), horizontal=False, **options)


# ---- registry, tuning, pictures ------------------------------------------------------------------


def test_every_kernel_is_registered_under_its_own_name():
    kernels = {**textbook.SIGNATURES, **fast.SIGNATURES}
    names = [k.py_func.__name__ for k in kernels]
    assert len(names) == len(set(names)), "two kernels share a name in profiler output"
    assert "mosaic_shared_no_barrier" in names and "mosaic_shared" in names


def test_tuning_describes_the_flips():
    tuning = fast.TUNING
    assert tuning["family"] == "flips"
    assert set(inspect.signature(tuning["case"]).parameters) == set(tuning["space"])
    assert set(tuning["chosen"]["per_thread"].values()) <= set(tuning["space"]["per_thread"])
    assert tuning["chosen"]["block"] in tuning["space"]["block"]


def assert_legible(fig):
    """12 inches wide, no text under 13 pt, no two pieces of text overlapping, all inside."""
    assert fig.get_size_inches()[0] == pytest.approx(12)
    canvas = FigureCanvasAgg(fig)  # a closed figure has no canvas of its own to draw on
    canvas.draw()
    renderer = canvas.get_renderer()
    hidden = set()  # labels of ticks outside the axes' limits: matplotlib does not draw them
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not low <= tick.get_loc() <= high:
                    hidden |= {id(tick.label1), id(tick.label2)}
    texts = [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and id(t) not in hidden
    ]
    assert texts
    boxes = []
    for text in texts:
        assert text.get_fontsize() >= plotting.MIN_FONT_PT, (text.get_text(), text.get_fontsize())
        box = text.get_window_extent(renderer)
        assert box.x0 >= -1 and box.y0 >= -1, text.get_text()
        assert box.x1 <= fig.bbox.width + 1 and box.y1 <= fig.bbox.height + 1, text.get_text()
        boxes.append((text.get_text(), box))
    for k, (name, box) in enumerate(boxes):
        for other, second in boxes[k + 1 :]:
            assert not box.overlaps(second), f"{name!r} overlaps {other!r}"


def test_lesson_pictures_draw_legibly():
    assert_legible(figures.memory_hierarchy())
    assert_legible(figures.mosaic_tiles((6, 27), 4))
    assert_legible(figures.mosaic_tiles((10, 14), 4))


# ---- what the tracer says about the mosaics (issue 16) ------------------------------------------


def line_of(kernel, code: str) -> int:
    """The line number, in its file, of the one line of `kernel` that holds `code`."""
    lines, first = inspect.getsourcelines(kernel.py_func)
    found = [first + k for k, line in enumerate(lines) if code in line]
    assert len(found) == 1, (code, found)
    return found[0]


@pytest.fixture(scope="module")
def race_traces():
    a = np.random.default_rng(7).integers(0, 256, size=(16, 16), dtype=np.uint8)
    return {
        "mosaic_shared": tracing.trace_wrapper(textbook.mosaic_shared_one_thread, a, 8),
        "mosaic_shared_no_barrier": tracing.trace_wrapper(textbook.mosaic_shared_race, a, 8),
    }


def test_the_tracer_finds_the_races_of_the_mosaic_without_barriers(race_traces):
    assert race_traces["mosaic_shared"].hazards == []
    racy = textbook.mosaic_shared_no_barrier
    load_tile = line_of(racy, "tile[ty, tx, c] = src[y, x, c]")
    sum_tile = line_of(textbook.tile_mean, "total += pixels[")
    write_mean = line_of(racy, "mean[c] = tile_mean(")
    read_mean = line_of(racy, "dst[y, x, c] = mean[c]")
    found = {(h.kind, h.array): h for h in race_traces["mosaic_shared_no_barrier"].hazards}
    assert set(found) == {("RAW", "tile"), ("WAR", "mean")}
    assert found["RAW", "tile"].lines == (load_tile, sum_tile)
    assert found["RAW", "tile"].threads[1] == (0, 0)  # thread (0, 0) sums a tile being loaded
    assert found["WAR", "mean"].lines == (read_mean, write_mean)


def test_barriers_put_each_write_before_the_reads_of_other_threads(race_traces):
    def summary(trace):
        return [
            (a.array, a.op, a.intervals, len(a.threads)) for a in tracing.shared_accesses(trace)
        ]

    # 8 x 8 tiles: 64 threads load the tile, thread (0, 0) sums it and writes the mean, all read it
    assert summary(race_traces["mosaic_shared"]) == [
        ("tile", "store", (0,), 64),
        ("tile", "load", (1,), 1),
        ("mean", "store", (1,), 1),
        ("mean", "load", (2,), 64),
    ]
    assert [s[2] for s in summary(race_traces["mosaic_shared_no_barrier"])] == [(0,)] * 4
    first = tracing.shared_accesses(race_traces["mosaic_shared"])[0]
    assert first.code == "tile[ty, tx, c] = src[y, x, c]"  # the line's code, not its comment
    assert first.line == line_of(textbook.mosaic_shared, "tile[ty, tx, c] = src[y, x, c]")


def test_the_barrier_picture_is_legible_and_marks_the_races(race_traces):
    a = np.random.default_rng(7).integers(0, 256, size=(16, 16), dtype=np.uint8)
    kernels = {
        "mosaic_shared": textbook.mosaic_shared_one_thread,
        "mosaic_shared_no_barrier": textbook.mosaic_shared_race,
    }
    fig = figures.barrier_intervals(kernels, a, 8)
    assert_legible(fig)
    texts = [t.get_text() for t in fig.findobj(Text)]
    assert "RAW race on tile" in texts and "WAR race on mean" in texts
    assert "mosaic_shared: 2 syncthreads\nno hazard" in texts
    # every hazard in its panel's title, with how many the tracer found
    raw, war = race_traces["mosaic_shared_no_barrier"].hazards
    assert raw.count > 1 and war.count == 1
    verdict = f"RAW on tile ({raw.count:,} found), WAR on mean"
    assert f"mosaic_shared_no_barrier: 0 syncthreads\n{verdict}" in texts


TILE_IMAGE = np.random.default_rng(8).integers(0, 256, size=(64, 64), dtype=np.uint8)
TILE_MOSAICS = {
    "seed 1": textbook.mosaic_one_thread,
    "seed 2": textbook.mosaic_shared_one_thread,
    "tree": textbook.mosaic_parallel,
}


@pytest.fixture(scope="module")
def tile_traces():
    return {name: tracing.trace_wrapper(f, TILE_IMAGE, 32) for name, f in TILE_MOSAICS.items()}


def test_work_per_tile_as_the_notebook_states_it(tile_traces):
    # one 32 x 32 tile: the numbers the notebook's text quotes
    work = {name: tracing.tile_work(trace) for name, trace in tile_traces.items()}
    assert work["seed 1"] == tracing.TileWork(1024, 1, 1024, 0, 0)  # one thread, one byte a load
    assert work["seed 2"] == tracing.TileWork(32, 32, 32, 32 + 1024 + 1 + 32, 2)
    assert work["tree"] == tracing.TileWork(32, 32, 32, 52, 9)  # 256 threads: 8 tree steps
    assert all(trace.hazards == [] for trace in tile_traces.values())
    assert tracing.work_cells(tile_traces["seed 1"]) == ["1,024", "1", "0", "0"]


def shown_tables(monkeypatch):
    """Capture what show_beside_times displays: the heading, and (header, rows) of the table."""
    shown = []
    monkeypatch.setattr(tracing.notebook, "display", lambda markdown: shown.append(markdown.data))
    monkeypatch.setattr(
        tracing.notebook, "table", lambda header, rows: shown.append((header, rows))
    )
    return shown


def test_counts_stand_beside_this_runs_times(monkeypatch):
    shown = shown_tables(monkeypatch)
    timings = [
        Timing(name, [ms]) for name, ms in (("seed 1", 30.0), ("seed 2", 40.0), ("tree", 2.0))
    ]
    tracing.show_beside_times(
        None, timings, TILE_MOSAICS, TILE_IMAGE, 32, title="Mosaics", size="16 x 16 gray"
    )
    heading, (header, rows) = shown
    assert heading.startswith("**Mosaics · 16 x 16 gray** (")
    assert header == ["variant", "median", "speed-up over the first"] + tracing.WORK_COLUMNS
    assert rows[0] == ["seed 1", "30 ms", "1.0x", "1,024", "1", "0", "0"]
    assert rows[1] == ["seed 2", "40 ms", "0.8x", "32", "32", "1,089", "2"]
    assert rows[2] == ["tree", "2 ms", "15.0x", "32", "32", "52", "9"]


def test_counts_stand_beside_the_recorded_gpu_times_in_the_simulator(monkeypatch):
    recorded = {
        "kind": "table",
        "title": "Four mosaics, tiles of 32",
        "size": "16384 x 16384 gray uint8",
        "columns": ["variant", "median", "speed-up over the first"],
        "rows": [["seed 1", "33.5 ms", "1.0x"], ["tree", "2.25 ms", "14.9x"]],
    }
    monkeypatch.setattr(results.runtime, "MODE", results.runtime.SIMULATOR)
    monkeypatch.setattr(
        results, "recorded", lambda key: [results.Recorded("NVIDIA H200", "2026-11-22", recorded)]
    )
    shown = shown_tables(monkeypatch)
    timings = [Timing("seed 1", [900.0]), Timing("tree", [100.0])]  # the simulator's host times
    tracing.show_beside_times(
        "02_shared_memory/mosaic_speedups",
        timings,
        TILE_MOSAICS,
        TILE_IMAGE,
        32,
        title="Four mosaics, tiles of 4",
        size="16 x 16 gray uint8",
    )
    heading, (header, rows) = shown
    assert heading.startswith("**Four mosaics, tiles of 32 · 16384 x 16384 gray uint8** (recorded")
    assert rows == [
        ["seed 1", "33.5 ms", "1.0x", "1,024", "1", "0", "0"],
        ["tree", "2.25 ms", "14.9x", "32", "32", "52", "9"],
    ]
    assert notebook.duration(33.5) == "33.5 ms"

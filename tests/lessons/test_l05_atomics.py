"""Atomic contention and the four histograms against NumPy, with poisoned outputs; the kinds
of data they are measured on, and what the tracer counts on them."""

import inspect

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import images
from gpgpu_lessons.l05_atomics_vs_reduction import histogram, tables, tracing
from gpgpu_lessons.timing import Timing


def test_atomic_spread_sums_per_address_on_interleaved_sizes(rng):
    for n, targets in [(97, 32), (1, 1), (97, 1), (64, 64), (97, 64)]:
        values = rng.random(n, dtype=np.float32)
        out = cuda.to_device(np.full(targets, np.nan, dtype=np.float32))
        assert histogram.atomic_spread(cuda.to_device(values), targets, out=out) is out
        expected = np.bincount(np.arange(n) % targets, weights=values, minlength=targets)
        np.testing.assert_allclose(out.copy_to_host(), expected, rtol=1e-5)
        np.testing.assert_allclose(histogram.atomic_spread(values, targets), expected, rtol=1e-5)


def photo():
    return images.load("camera", shape=(13, 17))  # 221 pixels: not a multiple of a warp


PIXELS = {
    "photo": photo(),
    "constant": np.full(70, 200, dtype=np.uint8),  # one value: a whole warp aggregates
    "one": np.array([7], dtype=np.uint8),
    "random33": np.random.default_rng(5).integers(0, 256, 33, dtype=np.uint8),
    "column": np.random.default_rng(6).integers(0, 256, (40, 1), dtype=np.uint8),
}


@pytest.mark.parametrize("variant", list(histogram.HISTOGRAMS))
def test_histograms_match_bincount(variant):
    """Every input in one process; the same poisoned out= twice: overwritten, never added to."""
    out = cuda.to_device(np.full(histogram.BINS, 0xDEADBEEF, dtype=np.uint32))
    for pixels in (*PIXELS.values(), PIXELS["photo"]):
        assert histogram.histogram(cuda.to_device(pixels), variant=variant, out=out) is out
        expected = np.bincount(pixels.ravel(), minlength=256)
        np.testing.assert_array_equal(out.copy_to_host(), expected)


def test_bad_input_is_named():
    values = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match="power of two"):
        histogram.atomic_spread(values, 3)
    with pytest.raises(ValueError, match="must not exceed"):
        histogram.atomic_spread(values, 16)
    with pytest.raises(ValueError, match="targets must be an integer"):
        histogram.atomic_spread(values, 0)
    with pytest.raises(TypeError, match="values has dtype float64"):
        histogram.atomic_spread(np.ones(8), 1)
    with pytest.raises(TypeError, match="pixels has dtype float32"):
        histogram.histogram(np.ones(8, dtype=np.float32))
    with pytest.raises(ValueError, match="unknown variant"):
        histogram.histogram(np.ones(8, dtype=np.uint8), variant="magic")
    with pytest.raises(ValueError, match="empty"):
        histogram.histogram(np.ones(0, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"must have shape \(256,\) and dtype uint32"):
        histogram.histogram(np.ones(8, dtype=np.uint8), out=cuda.device_array(256, dtype=np.int32))


def test_a_non_contiguous_slice_is_named_with_its_fix():
    """A slice of an image (issue 14): the message names the slice and np.ascontiguousarray."""
    picture = photo()
    for view in (picture[:, 3:9], picture[::2], picture.T):
        with pytest.raises(ValueError, match=r"not C-contiguous.*np\.ascontiguousarray") as error:
            histogram.histogram(view)
        assert "1-D" not in str(error.value)
        expected = np.bincount(view.ravel(), minlength=256)
        np.testing.assert_array_equal(histogram.histogram(np.ascontiguousarray(view)), expected)
    with pytest.raises(ValueError, match="non-contiguous device array"):
        histogram.histogram(cuda.to_device(picture)[:, 3:9])


def test_any_c_contiguous_shape_is_counted():
    pixels = np.random.default_rng(3).integers(0, 256, (3, 5, 7), dtype=np.uint8)
    np.testing.assert_array_equal(
        histogram.histogram(pixels), np.bincount(pixels.ravel(), minlength=256)
    )


def test_the_default_is_the_measured_winner():
    """Block-private shared bins: faster than the warp-aggregated combination on photographs
    (H200) and random bytes (H100); the lesson measures the three kinds of data on every run."""
    assert histogram.DEFAULT == "block-private shared"
    default = inspect.signature(histogram.histogram.prepare).parameters["variant"].default
    assert default == histogram.DEFAULT


def test_warp_sample_takes_whole_warps_spread_over_the_image():
    image = np.arange(64 * 32, dtype=np.uint32).reshape(64, 32)
    sample = tracing.warp_sample(image, warps=4)
    assert sample.shape == (128,) and sample.flags.c_contiguous
    assert list(sample[::32]) == [8 * 32, 24 * 32, 40 * 32, 56 * 32]  # whole rows, evenly spread
    assert list(sample[:32]) == list(range(256, 288))
    with pytest.raises(ValueError, match="runs of 32 pixels"):
        tracing.warp_sample(image[:2], warps=4)


KINDS = {  # the notebook's three images, smaller: a photograph, random bytes, one value
    "photograph": images.load("astronaut", shape=(1024, 1024)),
    "random bytes": np.random.default_rng(0).integers(0, 256, (64, 64), dtype=np.uint8),
    "one value": np.full((64, 64), 255, dtype=np.uint8),
}


@pytest.fixture(scope="module")
def traced():
    traces = tracing.trace_histograms(KINDS)
    assert all(not t.hazards for t in traces.values())
    return traces


@pytest.fixture(scope="module")
def traced_lanes(traced):
    return {key: tracing.contention(trace) for key, trace in traced.items()}


def test_the_tracer_sees_the_queues_the_cures_remove(traced_lanes):
    for plain in ("global atomics", "block-private shared"):
        assert traced_lanes["one value", plain] == 32  # every lane of a warp on one bin
        assert 1 < traced_lanes["random bytes", plain] < 3  # birthday collisions only
        assert traced_lanes["photograph", plain] > traced_lanes["random bytes", plain]
    for aggregated in ("warp-aggregated, global", "block-private + warp-aggregated"):
        assert all(traced_lanes[kind, aggregated] == 1 for kind in KINDS)


def test_the_histogram_table_puts_gpu_times_beside_the_lanes():
    timings = {
        (kind, v): Timing(v, [0.1 * (1 + k) if kind != "one value" else 1 / (1 + k)])
        for kind in KINDS
        for k, v in enumerate(histogram.HISTOGRAMS)
    }
    header, rows = tables.histograms(timings, KINDS)
    assert header[1] == "photograph: time · lanes on one bin"
    assert [row[0] for row in rows] == [*histogram.HISTOGRAMS, "fastest"]
    assert rows[0][3] == "1 ms · 32.0" and rows[1][1] == "200 µs · 1.0"
    assert rows[-1] == [
        "fastest",
        "global atomics",
        "global atomics",
        "block-private + warp-aggregated",
    ]

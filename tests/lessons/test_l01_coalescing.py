"""Lesson 01's kernels against NumPy: copies (plain, strided, offset, wide), seed 004's dot products
and the fast dot; bad input (what every wrapper must do: tests/core/test_wrapper_contract.py)."""

import numpy as np
import pytest
from gpgpu_tools import ptx, tune
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons import launch, plotting
from gpgpu_lessons.device.fill import zero_step
from gpgpu_lessons.l01_coalescing import fast, figures, textbook, tracing
from gpgpu_lessons.timing import SIMULATED, Timing


def poisoned(n, dtype=np.float32):
    """A device output full of NaN (or a sentinel), so elements a kernel forgets show up."""
    fill = np.nan if np.dtype(dtype).kind == "f" else 0xDEAD
    return cuda.to_device(np.full(n, fill, dtype=dtype))


def numbered(n, dtype=np.float32):
    """1, 2, ..., n: every element different, none zero."""
    return np.arange(1, n + 1).astype(dtype)


# ---- the tracer on the lesson's own launches, and the pictures drawn from it ----------------


@pytest.fixture(scope="module")
def traced_copies():
    return tracing.copies(strides=(1, 2, 8, 32), offsets=(0, 1))


@pytest.mark.parametrize(
    "label, sectors",
    [
        ("stride 1", 4),
        ("stride 2", 8),
        ("stride 8", 32),
        ("stride 32", 32),
        ("offset 0", 4),
        ("offset 1", 5),
    ],
)
def test_traced_copies_move_the_sectors_the_lesson_says(traced_copies, label, sectors):
    """A float32 warp request ideally moves 4 sectors; the strided copy 32, a misaligned one 5."""
    traced = traced_copies[label]
    assert traced.sectors_per_request == sectors
    assert traced.ideal_sectors == 4
    assert traced.requests_per_kib == 8  # 32 lanes x 4 bytes per request
    assert figures.sectors_touched(traced.lane_bytes()) == sorted(
        {start // 32 for start, _ in traced.lane_bytes()}
    )


def test_lane_bytes_follow_the_index_lines(traced_copies):
    assert traced_copies["stride 32"].lane_bytes() == [(128 * lane, 4) for lane in range(32)]
    assert traced_copies["offset 1"].lane_bytes() == [(4 * (lane + 1), 4) for lane in range(32)]
    assert traced_copies["stride 1"].lane_bytes(warp=1) == [(4 * lane, 4) for lane in range(32, 64)]


def test_wide_elements_move_the_same_sectors_in_fewer_requests():
    traced = tracing.wide_copies()
    assert [t.sectors_per_request for t in traced.values()] == [4, 8, 16]
    assert [t.ideal_sectors for t in traced.values()] == [4, 8, 16]
    assert [t.requests_per_kib for t in traced.values()] == [8, 4, 2]
    assert traced["16-byte elements"].lane_bytes()[:2] == [(0, 16), (16, 16)]


def test_the_seed_chunked_dot_is_uncoalesced_and_the_best_dot_coalesced():
    seed = tracing.seed_dots()
    assert seed["many blocks, coalesced"].sectors_per_request == 4
    assert seed["many blocks, chunked"].sectors_per_request == 32  # lanes 8 elements apart
    assert tracing.best_dot().sectors_per_request == 4
    assert not seed["many blocks, chunked"].trace.hazards


def test_every_traced_launch_under_the_label_its_slides_give_it():
    found = tracing.launches()
    assert list(found) == [
        "stride 1",
        "stride 2",
        "stride 32",
        "offset 1",
        "4-byte elements",
        "8-byte elements",
        "16-byte elements",
        "many blocks, coalesced",
        "many blocks, chunked",
        tracing.BEST_DOT,
    ]
    sectors = [found[label].sectors_per_request for label in found]
    assert sectors == [4, 8, 32, 5, 4, 8, 16, 4, 32, 4]
    assert tracing.launches() is found  # traced once per process, shared read-only
    with pytest.raises(TypeError):
        found["stride 1"] = found["stride 32"]
    picked = tracing.traced(["stride 32", tracing.BEST_DOT])
    assert list(picked) == ["stride 32", tracing.BEST_DOT]
    assert picked["stride 32"] is found["stride 32"]
    with pytest.raises(ValueError, match=r"no traced launch is called \['stride 3'\]"):
        tracing.traced(["stride 1", "stride 3"])


def test_a_launch_without_one_global_load_line_is_refused():
    cleared = launch.Launch((zero_step(cuda.device_array(64, np.float32)),))
    with pytest.raises(ValueError, match="on 0 lines, not one"):
        tracing.trace_load(cleared, step=0)  # zero_fill stores and loads nothing


@pytest.mark.parametrize(
    "lane_bytes, sectors",
    [
        ([(4 * lane, 4) for lane in range(32)], 4),
        ([(4 * lane + 4, 4) for lane in range(32)], 5),
        ([(128 * lane, 4) for lane in range(32)], 32),
        ([(16 * lane, 16) for lane in range(32)], 16),
        ([(0, 4)] * 32, 1),
    ],
)
def test_sectors_touched(lane_bytes, sectors):
    assert len(figures.sectors_touched(lane_bytes)) == sectors


def test_the_picture_draws_traced_requests_and_says_what_each_costs():
    fig = figures.draw_warp_requests(
        ["stride 1", "stride 32", "16-byte elements"], shown_as={"stride 32": "strided"}
    )
    names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert names == ["stride 1", "strided", "16-byte elements"]
    notes = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert notes == ["4 sectors · 100% used", "32 sectors · 12% used", "16 sectors · 100% used"]
    lanes = [p for p in fig.axes[0].patches if p.get_fill() and p.get_y() == 1]  # stride 32's row
    assert sorted(p.get_x() for p in lanes) == [128 * lane for lane in range(8)]  # 1024 B shown
    assert fig.get_figwidth() >= 12
    labels = fig.axes[0].get_yticklabels() + fig.axes[1].get_yticklabels()
    assert min(t.get_fontsize() for t in labels + [fig.axes[0].title]) >= 13
    with pytest.raises(ValueError, match="no traced launch is called"):
        figures.draw_warp_requests(["stride 1", "stride 3"])
    with pytest.raises(ValueError, match="shown_as names launches not drawn"):
        figures.draw_warp_requests(["stride 1"], shown_as={"stride 2": "two"})


def gpu_timing(name, ms, nbytes=2**31):
    return Timing(name, [ms], nbytes)


def test_traced_and_measured_draws_both_halves():
    measured = {"stride 1": gpu_timing("a", 0.84), "stride 32": gpu_timing("b", 12.8)}
    ceiling = gpu_timing("device-to-device copy", 0.53)
    fig = figures.traced_and_measured(
        measured, title="Copies", size="2^28 float32", ceiling=ceiling
    )
    left, right = fig.axes
    assert "Copies · 2^28 float32" in left.get_title(loc="left")
    texts = left.texts + right.texts + left.get_yticklabels()
    assert min(t.get_fontsize() for t in texts) >= plotting.MIN_FONT_PT
    assert [t.get_text().strip() for t in left.texts] == ["32 (ideal 4)", "4 (ideal 4)"]
    assert [bar.get_width() for bar in left.patches] == [32, 4]  # stride 32 below stride 1
    gbs = [measured[k].gbs for k in ("stride 32", "stride 1")]
    assert [bar.get_width() for bar in right.patches] == pytest.approx(gbs)
    assert "device-to-device copy" in right.get_xlabel()
    wide = {"4-byte elements": 0.84, "16-byte elements": 0.7}
    simulated = {k: Timing(k, [ms], 2**31, clock=SIMULATED) for k, ms in wide.items()}
    fig = figures.traced_and_measured(
        simulated, title="Copies", size="2^10 float32", ceiling=ceiling, metric="requests"
    )
    assert [t.get_text().strip() for t in fig.axes[0].texts] == [
        "2 (16 sectors each)",
        "8 (4 sectors each)",
    ]
    assert "recorded yet" in fig.axes[1].texts[0].get_text()
    assert figures.NOT_MEASURED in fig.axes[0].get_title(loc="left")
    with pytest.raises(ValueError, match="no traced launch is called"):
        figures.traced_and_measured(
            {"stride 3": measured["stride 1"]}, title="t", size="s", ceiling=ceiling
        )
    with pytest.raises(ValueError, match="metric must be"):
        figures.traced_and_measured(measured, title="t", size="s", ceiling=ceiling, metric="bytes")


# ---- textbook copies -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, dtype", [(1, np.float32), (31, np.int32), (33, np.float64), (257, np.uint32)]
)
def test_copy_one_per_thread(rng, n, dtype):
    a = (rng.random(n) * 1000 + 1).astype(dtype)
    out = poisoned(n, dtype)
    textbook.copy(cuda.to_device(a), out=out, block=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)
    np.testing.assert_array_equal(textbook.copy(a), a)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 70), stride=st.integers(1, 40))
def test_copy_with_stride_any_shape(n, stride):
    a = numbered(n)
    out = poisoned(n)
    textbook.copy_with_stride(cuda.to_device(a), stride, out=out, block=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 70), offset=st.integers(0, 200))
def test_copy_with_offset_any_shape(n, offset):
    a = numbered(n, np.int32)
    out = poisoned(n, np.int32)
    textbook.copy_with_offset(cuda.to_device(a), offset, out=out, block=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)


# ---- seed 004's dot products ---------------------------------------------------------------


def reference_partials(x, y, threads, chunked):
    """Each thread's partial sum, from the kernels' index rules, in float64."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    if not chunked:
        return np.array([np.dot(x[t::threads], y[t::threads]) for t in range(threads)])
    chunk = -(-x.size // threads)
    return np.array(
        [
            np.dot(x[t * chunk : (t + 1) * chunk], y[t * chunk : (t + 1) * chunk])
            for t in range(threads)
        ]
    )


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("n, blocks, block", [(1, 1, 1), (37, 1, 32), (101, 3, 8), (5, 2, 4)])
def test_dot_partial_sums(rng, n, blocks, block, chunked):
    x = rng.random(n, dtype=np.float32) + 0.5
    y = rng.random(n, dtype=np.float32) + 0.5
    out = poisoned(blocks * block)
    textbook.dot_partial_sums(
        cuda.to_device(x), cuda.to_device(y), blocks=blocks, block=block, chunked=chunked, out=out
    )
    partials = out.copy_to_host()
    expected = reference_partials(x, y, blocks * block, chunked)
    np.testing.assert_allclose(partials, expected, rtol=1e-5)


# ---- fast copies ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", fast.VARIANTS)
@pytest.mark.parametrize("element_bytes", [4, 8, 16])
@pytest.mark.parametrize(
    "n, dtype",
    [
        (4 * 37, np.float32),
        (1, np.float32),
        (3, np.float32),
        (2 * 13 + 1, np.float64),
        (11, np.int32),
    ],
)
def test_fast_copy_any_length(n, dtype, element_bytes, variant):
    a = numbered(n, dtype)
    out = poisoned(n, dtype)
    fast.copy(cuda.to_device(a), element_bytes=element_bytes, variant=variant, out=out, block=8)
    np.testing.assert_array_equal(out.copy_to_host(), a)


@settings(max_examples=10, deadline=None)
@given(
    n=st.integers(1, 90),
    element_bytes=st.sampled_from([4, 8, 16]),
    variant=st.sampled_from(fast.VARIANTS),
    block=st.sampled_from([1, 4, 32]),
)
def test_fast_copy_any_shape(n, element_bytes, variant, block):
    a = numbered(n, np.uint32)
    out = poisoned(n, np.uint32)
    fast.copy(cuda.to_device(a), element_bytes=element_bytes, variant=variant, block=block, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_fast_copy_prepare_checks_once_and_launches_each_call(rng):
    a = rng.random(4 * 37 + 2, dtype=np.float32) + 1
    d_a, out = cuda.to_device(a), poisoned(a.size)
    prepared = fast.copy.prepare(d_a, out=out, element_bytes=16, variant="unrolled", block=8)
    assert isinstance(prepared, launch.Launch)
    assert np.isnan(out.copy_to_host()).all()  # nothing ran yet
    prepared()
    np.testing.assert_array_equal(out.copy_to_host(), a)
    d_a.copy_to_device(a + 1)
    prepared()
    np.testing.assert_array_equal(out.copy_to_host(), a + 1)


# ---- fast dot ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 33, 1000, 1031])
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_fast_dot(rng, n, dtype, rtol):
    x = (rng.random(n) + 0.5).astype(dtype)
    y = (rng.random(n) + 0.5).astype(dtype)
    got = fast.dot(x, y)
    assert isinstance(got, float)
    np.testing.assert_allclose(got, np.dot(x.astype(np.float64), y.astype(np.float64)), rtol=rtol)


def test_fast_dot_sums_in_the_inputs_precision():
    x = np.full(3000, 1 / 3, dtype=np.float32)
    assert fast.dot(x, x) != fast.dot(x.astype(np.float64), x.astype(np.float64))


# ---- the launch-path regressions ------------------------------------------------------------


def test_bad_input_errors():
    a = np.ones(12, dtype=np.float32)
    with pytest.raises(TypeError, match="dtype int8"):
        textbook.copy_with_stride(np.ones(4, dtype=np.int8))
    with pytest.raises(ValueError, match="must be 1-D"):
        fast.copy(np.ones((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="is empty"):
        textbook.copy(np.ones(0, dtype=np.float32))
    with pytest.raises(ValueError, match="not C-contiguous"):
        textbook.copy_with_offset(np.ones(8, dtype=np.float32)[::2])
    with pytest.raises(ValueError, match="at most 1024"):
        textbook.copy(a, block=2048)
    with pytest.raises(ValueError, match="one int for this 1-D kernel"):
        textbook.copy(a, block=(16, 16))
    with pytest.raises(ValueError, match="stride must be an integer >= 1"):
        textbook.copy_with_stride(a, 0)
    with pytest.raises(ValueError, match="stride must be at most 65535"):
        textbook.copy_with_stride(a, 70000)
    with pytest.raises(ValueError, match="offset must be an integer >= 0"):
        textbook.copy_with_offset(a, -1)
    with pytest.raises(ValueError, match="element_bytes must be one of"):
        fast.copy(a, element_bytes=2)
    with pytest.raises(ValueError, match="out must have shape"):
        fast.copy(a, out=cuda.device_array(11, dtype=np.float32))
    with pytest.raises(ValueError, match="same shape and dtype"):
        fast.dot(a, np.ones(12, dtype=np.float64))
    with pytest.raises(ValueError, match="same shape and dtype"):
        textbook.dot_partial_sums(a, a[:5], blocks=1, block=4)
    with pytest.raises(TypeError, match="dtype int32"):
        fast.dot(np.ones(3, dtype=np.int32), np.ones(3, dtype=np.int32))
    with pytest.raises(ValueError, match="blocks must be an integer >= 1"):
        textbook.dot_partial_sums(a, a, blocks=0, block=4)


# ---- registry and tuning -------------------------------------------------------------------


@pytest.mark.parametrize("module", [textbook, fast])
def test_every_kernel_is_registered(module):
    kernels = {
        v
        for name, v in vars(module).items()
        if ptx.is_kernel(v) and v.__module__ == module.__name__  # kernels, not device functions
    }
    assert kernels and kernels <= set(module.SIGNATURES)


def test_the_tuning_tool_finds_the_copy_and_the_dot_and_their_chosen_launches_build():
    families = tune.families()
    assert families["copy"]["module"] == families["dot"]["module"] == fast.__name__
    assert fast.TUNING == (fast.COPY_TUNING, fast.DOT_TUNING)
    for tuning in fast.TUNING:
        assert set(tuning["chosen"]) == set(tuning["space"])
        assert all(v in tuning["space"][k] for k, v in tuning["chosen"].items())
        prepared, nbytes = tuning["case"](**tuning["chosen"])
        assert isinstance(prepared, launch.Launch) and nbytes > 0

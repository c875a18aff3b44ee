"""Lesson 01 kernels against NumPy: copies (plain, strided, offset, wide, unrolled) and seed 004's dot products."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons.kernels import coalescing


def poisoned(n, dtype=np.float32):
    """A device output full of NaN (or a sentinel), so elements a kernel forgets show up."""
    fill = np.nan if np.dtype(dtype).kind == "f" else 0xDEAD
    return cuda.to_device(np.full(n, fill, dtype=dtype))


# ---- the index formulas (plain Python, also used by the notebook's diagrams) ----

@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), stride=st.integers(1, 40), offset=st.integers(0, 299))
def test_strided_element_visits_every_element_once(n, stride, offset):
    offset %= n
    rows = -(-n // stride)
    got = [coalescing.strided_element(r, c, stride, offset, n) for r in range(rows) for c in range(stride)]
    got = [j for j in got if j >= 0]
    assert sorted(got) == list(range(n))
    if offset == 0:
        assert coalescing.strided_element(1, 0, stride, 0, n) in (stride, -1)  # neighbours `stride` apart


@pytest.mark.parametrize("chunk", [0, 5])
def test_dot_element_covers_all(chunk):
    threads, n = 4, 20
    steps = chunk or n // threads
    got = sorted(coalescing.dot_element(t, k, threads, chunk) for t in range(threads) for k in range(steps))
    assert got == list(range(n))


# ---- copies ----

@pytest.mark.parametrize("n", [1, 31, 33, 257])
def test_copy_one_per_thread(rng, n):
    a = rng.random(n, dtype=np.float32) + 1
    out = poisoned(n)
    coalescing.copy(cuda.to_device(a), out=out, threads=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)
    np.testing.assert_array_equal(coalescing.copy(a), a)


@pytest.mark.parametrize("n, stride, offset", [
    (1, 1, 0), (31, 1, 1), (33, 2, 0), (37, 3, 5), (70, 32, 0), (65, 33, 64), (50, 1, 49)])
def test_copy_with_stride_and_offset(rng, n, stride, offset):
    a = rng.random(n, dtype=np.float32) + 1
    out = poisoned(n)
    coalescing.copy_with_stride(cuda.to_device(a), stride=stride, offset=offset, out=out, threads=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 70), stride=st.integers(1, 6), offset=st.integers(0, 100))
def test_copy_with_stride_any_shape(n, stride, offset):
    a = np.arange(1, n + 1, dtype=np.float32)
    out = poisoned(n)
    coalescing.copy_with_stride(cuda.to_device(a), stride=stride, offset=offset, out=out, threads=32)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_copy_with_stride_numpy_in_numpy_out(rng):
    a = rng.integers(1, 1000, 45).astype(np.int32)
    got = coalescing.copy_with_stride(a, stride=4, offset=3, threads=16)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize("element_bytes", [4, 8, 16])
@pytest.mark.parametrize("unroll", [1, 4])
def test_copy_wide(rng, element_bytes, unroll):
    n = 4 * 37  # 37 16-byte elements: not a multiple of the block
    a = rng.random(n, dtype=np.float32) + 1
    out = poisoned(n)
    coalescing.copy_wide(cuda.to_device(a), element_bytes=element_bytes, unroll=unroll, out=out, threads=8)
    np.testing.assert_array_equal(out.copy_to_host(), a)


@pytest.mark.parametrize("blocks", [1, 3, 1000])
def test_copy_wide_grid_stride_loops_over_the_rest(rng, blocks):
    a = rng.random(2 * 101, dtype=np.float64) + 1   # 1000 blocks: more than needed, no loop
    got = coalescing.copy_wide(a, element_bytes=8, unroll=2, threads=4, blocks=blocks)
    np.testing.assert_array_equal(got, a)


@settings(max_examples=10, deadline=None)
@given(elements=st.integers(1, 90), element_bytes=st.sampled_from([4, 8, 16]),
       unroll=st.sampled_from(coalescing.UNROLLS), threads=st.sampled_from([1, 4, 32]),
       blocks=st.one_of(st.none(), st.integers(1, 4)))
def test_copy_wide_any_shape(elements, element_bytes, unroll, threads, blocks):
    a = np.arange(1, elements * element_bytes // 4 + 1, dtype=np.uint32)
    out = poisoned(a.size, np.uint32)
    coalescing.copy_wide(cuda.to_device(a), element_bytes=element_bytes, unroll=unroll,
                         threads=threads, blocks=blocks, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_copy_wide_launcher_checks_once_and_launches_each_call(rng):
    a = rng.random(4 * 37, dtype=np.float32) + 1
    d_a, out = cuda.to_device(a), poisoned(a.size)
    launch = coalescing.copy_wide_launcher(d_a, out, element_bytes=16, unroll=2, threads=8)
    np.testing.assert_array_equal(out.copy_to_host()[:4], np.full(4, np.nan))  # nothing ran yet
    launch()
    np.testing.assert_array_equal(out.copy_to_host(), a)
    d_a.copy_to_device(a + 1)
    launch()
    np.testing.assert_array_equal(out.copy_to_host(), a + 1)


# ---- seed 004's dot products ----

def reference_partials(x, y, threads, chunk):
    """What each thread of dot_partials should hold, from the same index formula, in float64."""
    steps = chunk or -(-x.size // threads)
    sums = np.zeros(threads)
    for t in range(threads):
        for k in range(steps):
            j = coalescing.dot_element(t, k, threads, chunk)
            if j < x.size:
                sums[t] += float(x[j]) * float(y[j])
    return sums


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("n, blocks, threads", [(1, 1, 1), (37, 1, 32), (101, 3, 8)])
def test_dot_partial_sums(rng, n, blocks, threads, chunked):
    x = rng.random(n, dtype=np.float32) + 0.5
    y = rng.random(n, dtype=np.float32) + 0.5
    out = poisoned(blocks * threads)
    coalescing.dot_partial_sums(cuda.to_device(x), cuda.to_device(y), blocks=blocks, threads=threads,
                                chunked=chunked, out=out)
    partials = out.copy_to_host()
    chunk = -(-n // (blocks * threads)) if chunked else 0
    np.testing.assert_allclose(partials, reference_partials(x, y, blocks * threads, chunk), rtol=1e-5)
    np.testing.assert_allclose(partials.sum(dtype=np.float64), np.dot(x.astype(np.float64), y), rtol=1e-5)


def test_dot_partial_sums_numpy_float64(rng):
    x, y = rng.random(50) + 0.5, rng.random(50) + 0.5
    partials = coalescing.dot_partial_sums(x, y, blocks=2, threads=4, chunked=True)
    assert isinstance(partials, np.ndarray) and partials.dtype == np.float64
    np.testing.assert_allclose(partials.sum(), np.dot(x, y), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 33, 1000])
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_dot(rng, n, dtype, rtol):
    x = (rng.random(n) + 0.5).astype(dtype)
    y = (rng.random(n) + 0.5).astype(dtype)
    got = coalescing.dot(x, y)
    assert got.dtype == dtype  # accumulated in the inputs' precision (lesson 00's pi estimate)
    np.testing.assert_allclose(got, np.dot(x.astype(np.float64), y.astype(np.float64)), rtol=rtol)


def test_dot_out_accumulates_on_the_device(rng):
    x = rng.random(300, dtype=np.float32) + 0.5
    total = cuda.to_device(np.array([1.0], dtype=np.float32))
    got = coalescing.dot(cuda.to_device(x), cuda.to_device(x), out=total)
    assert got is total
    np.testing.assert_allclose(total.copy_to_host()[0], 1 + np.dot(x.astype(np.float64), x), rtol=1e-5)


# ---- bad input ----

def test_bad_input_errors():
    a = np.ones(12, dtype=np.float32)
    with pytest.raises(TypeError, match="dtype int8"):
        coalescing.copy_with_stride(np.ones(4, dtype=np.int8))
    with pytest.raises(ValueError, match="must be 1-D"):
        coalescing.copy_wide(np.ones((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="is empty"):
        coalescing.copy(np.ones(0, dtype=np.float32))
    with pytest.raises(ValueError, match="not C-contiguous"):
        coalescing.copy_with_stride(np.ones(8, dtype=np.float32)[::2])
    with pytest.raises(ValueError, match="at most 1024"):
        coalescing.copy_with_stride(a, threads=2048)
    with pytest.raises(ValueError, match="stride must be"):
        coalescing.copy_with_stride(a, stride=0)
    with pytest.raises(ValueError, match="offset must be"):
        coalescing.copy_with_stride(a, offset=-1)
    with pytest.raises(ValueError, match="element_bytes must be one of"):
        coalescing.copy_wide(a, element_bytes=2)
    with pytest.raises(ValueError, match="unroll must be one of"):
        coalescing.copy_wide(a, unroll=3)
    with pytest.raises(ValueError, match="not a multiple of element_bytes=16"):
        coalescing.copy_wide(np.ones(6, dtype=np.float32), element_bytes=16)
    with pytest.raises(ValueError, match="blocks must be a positive"):
        coalescing.copy_wide(a, blocks=0)
    with pytest.raises(ValueError, match="out must have shape"):
        coalescing.copy_wide(a, out=cuda.device_array(11, dtype=np.float32))
    with pytest.raises(TypeError, match="a must be a device array"):
        coalescing.copy_wide_launcher(a, cuda.device_array(12, dtype=np.float32))
    with pytest.raises(TypeError, match="out must be a device array"):
        coalescing.copy_wide_launcher(cuda.to_device(a), a)
    with pytest.raises(ValueError, match="unroll must be one of"):
        coalescing.copy_wide_launcher(cuda.to_device(a), cuda.device_array(12, dtype=np.float32), unroll=5)
    with pytest.raises(ValueError, match="same shape and dtype"):
        coalescing.dot(a, np.ones(12, dtype=np.float64))
    with pytest.raises(ValueError, match="same shape and dtype"):
        coalescing.dot_partial_sums(a, a[:5], blocks=1, threads=4)
    with pytest.raises(TypeError, match="dtype int32"):
        coalescing.dot(np.ones(3, dtype=np.int32), np.ones(3, dtype=np.int32))
    with pytest.raises(ValueError, match="blocks must be a positive"):
        coalescing.dot_partial_sums(a, a, blocks=0, threads=4)

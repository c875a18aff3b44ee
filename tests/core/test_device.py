"""The shared device helpers: wide loads and stores move exactly what plain indexing would."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons.device import index, vector, warp


@cuda.jit
def copy_by_vectors_1d(a, out):
    """out[4i : 4i + 4] = a[4i : 4i + 4], four elements per access."""
    i = 4 * cuda.grid(1)
    if i + 3 < a.size:
        vector.store_vector(out, i, vector.load_vector(a, i, 4))


@cuda.jit
def double_by_vectors_2d(a, out):
    """out[y, 2x : 2x + 2] = 2 a[y, 2x : 2x + 2] through the read-only path, two per access."""
    x, y = cuda.grid(2)
    if y < a.shape[0] and 2 * x + 1 < a.shape[1]:
        v = vector.load_vector_readonly(a, (y, 2 * x), 2)
        vector.store_vector(out, (y, 2 * x), (2 * v[0], 2 * v[1]))


@cuda.jit
def copy_whole_elements(a, out):
    """out[i] = a[i] as one access per element, 16-byte complex128 included."""
    i = cuda.grid(1)
    if i < a.size:
        vector.store_vector(out, i, vector.load_vector(a, i, 1))


@cuda.jit
def warp_totals(a, out):
    """out[w] = the sum of warp w's 32 values, by shuffles."""
    i = cuda.grid(1)
    total = warp.warp_sum(a[i])
    if cuda.threadIdx.x % 32 == 0:
        out[i // 32] = total


@cuda.jit
def clamped_neighbours(a, out):
    """out[i] = a[clamp(i - 1)] + a[clamp(i + 1)]: clamp-to-edge at both ends."""
    i = cuda.grid(1)
    if i < a.size:
        out[index.at(i)] = a[index.clamp(i - 1, a.size)] + a[index.clamp(i + 1, a.size)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float64])
def test_vector_copy_1d(rng, dtype):
    n = 4 * 37
    a = (rng.random(n) * 100).astype(dtype)
    if np.dtype(dtype).itemsize * 4 > 16:
        pytest.skip("4 x 8 bytes is more than one 16-byte access")
    out = cuda.device_array_like(a)
    copy_by_vectors_1d[3, 16](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_vector_2d_readonly_and_mixed_tuple_types(rng):
    a = rng.random((5, 22), dtype=np.float32)
    out = cuda.to_device(np.full_like(a, np.nan))
    double_by_vectors_2d[(2, 1), (8, 8)](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), 2 * a)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64, np.float64])
def test_whole_element_accesses(rng, dtype):
    a = (
        (rng.random(45) + 1j * rng.random(45)).astype(dtype)
        if np.dtype(dtype).kind == "c"
        else rng.random(45).astype(dtype)
    )
    out = cuda.device_array_like(a)
    copy_whole_elements[2, 32](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a)


def test_warp_sum(rng):
    a = rng.integers(-50, 50, 96).astype(np.float32)
    out = cuda.device_array(3, np.float32)
    warp_totals[1, 96](cuda.to_device(a), out)
    np.testing.assert_array_equal(out.copy_to_host(), a.reshape(3, 32).sum(axis=1))


def test_clamp_to_edge(rng):
    a = rng.random(7, dtype=np.float32)
    out = cuda.device_array_like(a)
    clamped_neighbours[1, 32](cuda.to_device(a), out)
    padded = np.concatenate([a[:1], a, a[-1:]])
    np.testing.assert_allclose(out.copy_to_host(), padded[:-2] + padded[2:], rtol=1e-6)


def test_full_mask_names_all_32_lanes():
    assert warp.FULL_MASK == 2**32 - 1

"""Lesson 03's staged transpose for matrices of 5 to 64 columns (`staged.transpose_staged_columns`).

A block stages 2**shift whole rows in shared memory; these tests take shapes where that block is
the only one and is partial (fewer rows than 2**shift), where the rows are a whole number of
blocks or one more, where the run's 16-byte loads cross rows of odd and even lengths and end in a
partial load, and check when fast.transpose takes the kernel and when it falls back.
"""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import launch
from gpgpu_lessons.l03_bank_conflicts import fast, staged

SHAPES = [(6, 5), (3, 7), (1031, 5), (200, 6), (9, 33), (128, 40), (129, 40), (70, 63), (65, 64)]


def random(shape, dtype, seed=0):
    """Random values of a 4-byte dtype, never zero."""
    rng, dtype = np.random.default_rng(seed), np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.random(shape) + 1).astype(dtype)
    return rng.integers(1, 2**31, size=shape).astype(dtype)


def poisoned_output(a):
    """An Output of a's transposed shape filled with a value no kernel writes."""
    fill = np.nan if a.dtype.kind == "f" else np.iinfo(a.dtype).max
    return launch.Output(cuda.to_device(np.full(a.shape[::-1], fill, a.dtype)), given=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_staged_matches_numpy(shape):
    a = random(shape, np.float32, seed=sum(shape))
    o = poisoned_output(a)
    staged.staged_launch(cuda.to_device(a), o, False)()
    np.testing.assert_array_equal(o.device.copy_to_host(), a.T)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_staged_moves_every_4_byte_type(dtype):
    a = random((37, 11), dtype)
    o = poisoned_output(a)
    staged.staged_launch(cuda.to_device(a), o, False)()
    np.testing.assert_array_equal(o.device.copy_to_host(), a.T)


@pytest.mark.parametrize("w", range(staged.COLUMNS[0], staged.COLUMNS[1] + 1))
def test_every_row_length_fits_the_tile_and_the_block(w):
    rows = 1 << staged.rows_shift(w)
    assert rows * (w | 1) <= staged.SPAN
    assert w * rows <= staged.THREADS * staged.ITEMS < 2 * w * rows  # the most rows that fit
    assert rows % staged.VEC == 0  # every block's run starts on a load


def test_the_wrapper_takes_the_staged_kernel(monkeypatch):
    monkeypatch.setattr(fast, "FLAT_MIN_BYTES", 0)
    a = random((131, 40), np.float32)
    (step,) = fast.transpose.prepare(a).steps
    assert step.kernel is staged.transpose_staged_columns
    np.testing.assert_array_equal(fast.transpose(a), a.T)


@pytest.mark.parametrize(
    "shape, dtype, kernel",
    [
        ((131, 40), np.float64, "gather_columns"),  # 8-byte elements
        ((131, 4), np.float32, "gather_columns"),  # too few columns
        ((66, 65), np.float32, "tiled"),  # too many columns
        ((40, 131), np.float32, "gather"),  # few rows
    ],
    ids=str,
)
def test_other_matrices_take_other_kernels(monkeypatch, shape, dtype, kernel):
    monkeypatch.setattr(fast, "FLAT_MIN_BYTES", 0)
    a = random(shape, dtype)
    (step,) = fast.transpose.prepare(a).steps
    assert step.kernel is not staged.transpose_staged_columns
    assert fast.chosen_kernel(*a.shape, a.nbytes, a.dtype) == kernel
    np.testing.assert_array_equal(fast.transpose(a), a.T)


def test_unaligned_and_huge_matrices_fall_back(monkeypatch):
    monkeypatch.setattr(fast, "FLAT_MIN_BYTES", 0)
    a = random((57, 24), np.float32)
    monkeypatch.setattr(launch, "aligned", lambda d, nbytes: nbytes <= 8)
    assert fast.chosen_kernel(*a.shape, a.nbytes, a.dtype, staged.aligned(cuda.to_device(a))) == (
        "gather_columns"
    )
    np.testing.assert_array_equal(fast.transpose(a), a.T)
    monkeypatch.undo()
    monkeypatch.setattr(fast, "FLAT_MIN_BYTES", 0)
    monkeypatch.setattr(staged, "MAX_BYTES", a.nbytes)
    assert fast.chosen_kernel(*a.shape, a.nbytes, a.dtype) == "gather_columns"
    np.testing.assert_array_equal(fast.transpose(a), a.T)


@pytest.mark.parametrize(
    "shape, dtype", [((50, 40), np.float64), ((50, 4), np.float32), ((50, 65), np.float32)]
)
def test_the_launch_refuses_what_it_cannot_move(shape, dtype):
    d_a = cuda.to_device(np.ones(shape, dtype))
    o = launch.Output(cuda.device_array(shape[::-1], dtype), given=True)
    with pytest.raises(ValueError, match=r"use fast.transpose\(\)"):
        staged.staged_launch(d_a, o, False)


def test_every_instance_is_registered():
    assert set(staged.SIGNATURES) == {staged.transpose_staged_columns}
    names = {
        sig.split("(")[1].split("[")[0]
        for sig in staged.SIGNATURES[staged.transpose_staged_columns]
    }
    assert names == {np.dtype(d).name for d in staged.DTYPES}

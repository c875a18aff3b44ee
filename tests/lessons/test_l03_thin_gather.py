"""Lesson 03's gather kernels for thin matrices: `transpose_gather` (few rows: threads over out's
elements) and `transpose_gather_columns` (few columns: blocks of whole columns of out).

fast.transpose takes them for matrices of at least FLAT_MIN_BYTES with at most GATHER_ROWS rows
or GATHER_COLUMNS columns; the simulator runs one Python thread per CUDA thread, so these tests
lower FLAT_MIN_BYTES to 0 and transpose tiny matrices: 1 x N, N x 1, 2 x N, N x 2, 3 x N, N x 3,
prime sides, sizes that are no multiple of a block or a thread's runs, every dtype.
"""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import launch
from gpgpu_lessons.l03_bank_conflicts import fast, staged

FEW_ROWS = [(1, 37), (2, 41), (3, 29), (5, 13), (7, 31), (40, 3)]
FEW_COLUMNS = [(37, 1), (41, 2), (29, 3), (13, 5), (31, 7), (3, 40)]


@pytest.fixture(autouse=True)
def small_matrices_take_the_gather_kernels(monkeypatch):
    monkeypatch.setattr(fast, "FLAT_MIN_BYTES", 0)


def random(shape, dtype, seed=0):
    """Random values of any of fast.DTYPES, never zero."""
    rng, dtype = np.random.default_rng(seed), np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.random(shape) + 1 + 1j * (rng.random(shape) + 1)).astype(dtype)
    if dtype.kind == "f":
        return (rng.random(shape) + 1).astype(dtype)
    return rng.integers(1, 2**31, size=shape).astype(dtype)


def poisoned_output(a):
    """An Output of a's transposed shape filled with a value no kernel writes."""
    fill = np.nan if a.dtype.kind in "fc" else np.iinfo(a.dtype).max
    return launch.Output(cuda.to_device(np.full(a.shape[::-1], fill, a.dtype)), given=True)


@pytest.mark.parametrize("dtype", fast.DTYPES, ids=lambda d: np.dtype(d).name)
def test_the_wrapper_gathers_thin_matrices_of_every_dtype(dtype):
    for h, w in [(1, 29), (29, 1), (2, 17), (17, 2), (3, 11), (11, 3)]:
        a = random((h, w), dtype, seed=h * w)
        (step,) = fast.transpose.prepare(a).steps
        vec = fast.gather_vec(step.args[1], a.itemsize, fast.GATHER_RUNS[1])  # out's alignment
        expected = (
            fast.gather_kernel(fast.GATHER_RUNS[0], vec, 32)
            if h <= w
            else fast.columns_kernel(fast.COLUMNS_PER_THREAD, 32, fast.columns_vec(step.args[0]))
        )
        assert step.kernel is expected
        got = fast.transpose(a)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, a.T, err_msg=f"{h} x {w}")


@pytest.mark.parametrize("shape", FEW_ROWS, ids=str)
@pytest.mark.parametrize("per_thread, vec", [(1, 1), (2, 4), (3, 2)])
def test_gather_matches_numpy(shape, per_thread, vec):
    """Runs of vec elements that cross out's rows, and a last partial run (no size divides)."""
    a = random(shape, np.float32, seed=sum(shape))
    o = poisoned_output(a)
    fast._gather_launch(cuda.to_device(a), o, False, per_thread, vec)()
    np.testing.assert_array_equal(o.device.copy_to_host(), a.T)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.uint64])
def test_gather_of_8_byte_elements_in_16_byte_runs(dtype):
    a = random((3, 23), dtype)
    o = poisoned_output(a)
    fast._gather_launch(cuda.to_device(a), o, False, 2, 2)()
    np.testing.assert_array_equal(o.device.copy_to_host(), a.T)


@pytest.mark.parametrize("shape", FEW_COLUMNS, ids=str)
@pytest.mark.parametrize("per_thread", [1, 8])
def test_gather_columns_matches_numpy(shape, per_thread):
    a = random(shape, np.float32, seed=sum(shape))
    o = poisoned_output(a)
    fast._columns_launch(cuda.to_device(a), o, False, per_thread)()
    np.testing.assert_array_equal(o.device.copy_to_host(), a.T)


def test_a_block_of_columns_spans_several_blocks_of_rows():
    """A prime number of rows over blocks of 2**shift: the last block is partial."""
    a = random((67, 5), np.complex64)
    o = poisoned_output(a)
    fast._columns_launch(cuda.to_device(a), o, False, 1)()  # 256 // 5 -> 32 rows a block
    np.testing.assert_array_equal(o.device.copy_to_host(), a.T)


def test_large_matrices_index_with_64_bits(monkeypatch):
    monkeypatch.setattr(fast, "FLAT_INDEX_BYTES", 0)
    for shape in [(3, 19), (19, 3)]:
        a = random(shape, np.int64)
        (step,) = fast.transpose.prepare(a).steps
        assert step.kernel.py_func.__name__.endswith("_i64")
        np.testing.assert_array_equal(fast.transpose.prepare(a).result(), a.T)


def test_unaligned_outputs_take_narrower_runs(monkeypatch):
    """The simulator's arrays are always aligned: make 8- and 16-byte runs misaligned."""
    monkeypatch.setattr(launch, "aligned", lambda d, nbytes: nbytes <= 4)
    a = random((3, 21), np.float32)
    (step,) = fast.transpose.prepare(a).steps
    assert step.kernel is fast.gather_kernel(fast.GATHER_RUNS[0], 1, 32)
    np.testing.assert_array_equal(fast.transpose.prepare(a).result(), a.T)
    with pytest.raises(ValueError, match="aligned to 16 bytes"):
        fast._gather_launch(cuda.to_device(a), poisoned_output(a), False, 1, 4)


def test_views_and_offsets():
    """A device view that starts mid-allocation is taken; non-contiguous views are refused."""
    a = random((3, 33), np.float32)
    buffer = cuda.to_device(np.concatenate([np.ones(3, np.float32), a.ravel()]))
    view = buffer[3:].reshape(3, 33)
    out = cuda.device_array((33, 3), np.float32)
    assert fast.transpose(view, out=out) is out
    np.testing.assert_array_equal(out.copy_to_host(), a.T)
    with pytest.raises(ValueError, match="not C-contiguous"):
        fast.transpose(np.ones((3, 66), np.float32)[:, ::2])
    with pytest.raises(ValueError, match="non-contiguous device array"):
        fast.transpose(cuda.to_device(np.ones((3, 66), np.float32))[:, ::2])


def test_bad_runs_are_refused():
    a = cuda.to_device(np.ones((3, 10), np.float64))
    o = launch.Output(cuda.device_array((10, 3), np.float64), given=True)
    with pytest.raises(ValueError, match="vec must be 1, 2 or 4"):
        fast._gather_launch(a, o, False, 1, 3)
    with pytest.raises(ValueError, match="<= 16 bytes"):
        fast._gather_launch(a, o, False, 1, 4)
    wide = cuda.to_device(np.ones((2, 300), np.float32))
    with pytest.raises(ValueError, match="300 columns do not fit"):
        fast._columns_launch(wide, launch.Output(cuda.device_array((300, 2), np.float32)), False, 1)


@pytest.mark.parametrize(
    "h, w, nbytes, kernel",
    [
        (1, 10**6, 2**22, "gather"),
        (fast.GATHER_ROWS, 10**6, 2**28, "gather"),
        (fast.GATHER_ROWS + 1, 10**6, 2**28, "tiled"),
        (10**6, 1, 2**22, "gather_columns"),
        (10**6, 4, 2**24, "gather_columns"),
        (10**6, fast.GATHER_COLUMNS, 2**28, "staged"),  # float32, aligned: staged.fits
        (10**6, staged.COLUMNS[1], 2**28, "staged"),
        (10**6, staged.COLUMNS[1] + 1, 2**28, "tiled"),
        (3, 100, 1200, "gather"),  # FLAT_MIN_BYTES is 0 here
        (777, 80973, 2**28, "tiled"),
    ],
)
def test_the_rule_by_shape(h, w, nbytes, kernel):
    assert fast.chosen_kernel(h, w, nbytes) == kernel


def test_columns_the_staged_kernel_cannot_move_are_gathered():
    assert fast.chosen_kernel(10**6, fast.GATHER_COLUMNS, 2**28, np.float64) == "gather_columns"
    assert fast.chosen_kernel(10**6, fast.GATHER_COLUMNS, 2**28, aligned=False) == "gather_columns"


def test_small_matrices_stay_on_the_thin_kernels(monkeypatch):
    monkeypatch.setattr(fast, "FLAT_MIN_BYTES", 2**20)
    assert fast.chosen_kernel(3, 1000, 12000) == "thin"
    assert fast.chosen_kernel(3, 2**20, 12 * 2**20) == "gather"


def test_every_kernel_the_wrapper_launches_is_registered(monkeypatch):
    registered = set(fast.SIGNATURES)
    launched = set()
    for itemsize in (4, 8):
        for vec in (4, 2, 1):
            limit = vec * itemsize
            monkeypatch.setattr(launch, "aligned", lambda d, nbytes, limit=limit: nbytes <= limit)
            chosen = fast.gather_vec(None, itemsize, fast.GATHER_RUNS[1])
            launched |= {fast.gather_kernel(fast.GATHER_RUNS[0], chosen, bits) for bits in (32, 64)}
    launched |= {
        fast.columns_kernel(fast.COLUMNS_PER_THREAD, bits, vec)
        for bits in (32, 64)
        for vec in (1, 2, 4)
    }
    assert launched <= registered
    assert {fast.transpose_gather, fast.transpose_gather_columns} <= registered


def test_the_tuning_space_times_every_kernel_on_every_thin_shape():
    tuning = fast.THIN_TUNING
    assert {"20971521 x 3", "3 x 20971521", "1572865 x 40", "40 x 1572865"} <= set(
        tuning["space"]["shape"]
    )
    assert {"62914561 x 1", "1 x 62914561", "80973 x 777"} <= set(tuning["space"]["shape"])
    assert set(tuning["space"]["kernel"]) == {"thin", "tiled", "gather", "gather_columns", "staged"}
    chosen = tuning["chosen"]["kernel"]
    assert chosen["3 x 20971521"] == "gather" and chosen["20971521 x 3"] == "gather_columns"
    assert chosen["1572865 x 40"] == "staged"
    assert chosen["80973 x 777"] == "tiled"


@pytest.mark.parametrize(
    "kernel, per_thread, vec",
    [("gather", 2, 4), ("gather_columns", 8, 1), ("thin", 1, 1), ("staged", 1, 1)],
)
def test_tuning_cases_transpose(kernel, per_thread, vec):
    shapes = {"gather_columns": "20971521 x 3", "staged": "1572865 x 40"}
    shape = shapes.get(kernel, "3 x 20971521")
    built, nbytes = fast._thin_case(shape, kernel, per_thread, vec)
    a = fast._thin_matrix(shape).copy_to_host()
    assert nbytes == 2 * a.nbytes
    np.testing.assert_array_equal(built.result().copy_to_host(), a.T)


def test_tuning_cases_refuse_what_a_kernel_does_not_take():
    with pytest.raises(ValueError, match="takes no per_thread or vec"):
        fast._thin_case("3 x 20971521", "thin", 2, 1)
    with pytest.raises(ValueError, match="rows of 3 elements take no loads of 2"):
        fast._thin_case("20971521 x 3", "gather_columns", 8, 2)


@pytest.mark.parametrize("dtype", fast.DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("h, w", [(37, 4), (9, 8), (130, 40), (5, 2), (11, 6)])
def test_gather_columns_reads_rows_in_loads_of_neighbours(dtype, h, w):
    """Up to 16 bytes of a row a load where w allows; a slice off the boundary takes fewer."""
    a = random((h + 1, w), dtype, seed=h + w)
    for d_a in (cuda.to_device(a[1:]), cuda.to_device(a)[1:]):  # aligned, then off by one row
        vec = fast.columns_vec(d_a)
        assert w % vec == 0 and vec * a.itemsize <= 16
        o = poisoned_output(a[1:])
        fast._columns_launch(d_a, o, False, 2, vec)()
        np.testing.assert_array_equal(o.device.copy_to_host(), a[1:].T)

"""The parallel-sum ladder against a float64 NumPy sum, on sizes that are not multiples of a block."""
import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons.kernels import reduction

TREES = list(reduction.TREE_STEPS)


def poisoned_total():
    """A one-element output holding NaN, so a sum that is never written shows."""
    return cuda.to_device(np.full(1, np.nan, dtype=np.float32))


def check_sum(got, a):
    expected = a.sum(dtype=np.float64)
    assert np.isclose(got, expected, rtol=1e-5, atol=1e-6), (got, expected)


@pytest.mark.parametrize("n", [1, 31, 33, 600])
@pytest.mark.parametrize("variant", TREES)
def test_tree_sums_match_numpy(rng, variant, n):
    a = rng.random(n, dtype=np.float32)
    check_sum(reduction.parallel_sum(a, variant=variant), a)


@pytest.mark.parametrize("n", [1, 33, 4099])
@pytest.mark.parametrize("variant", [reduction.ATOMIC_PER_ELEMENT, reduction.GRID_STRIDE])
def test_atomic_sums_match_numpy(rng, variant, n):
    a = rng.random(n, dtype=np.float32) - np.float32(0.25)   # signs mixed, sum far from zero
    check_sum(reduction.parallel_sum(a, variant=variant), a)


@pytest.mark.parametrize("variant", [reduction.GRID_STRIDE, "warp-shuffle finish", reduction.ATOMIC_PER_ELEMENT])
def test_device_input_writes_poisoned_out_without_copying_back(rng, variant):
    a = rng.random(257, dtype=np.float32)
    out = poisoned_total()
    returned = reduction.parallel_sum(cuda.to_device(a), variant=variant, out=out)
    assert returned is out
    check_sum(out.copy_to_host()[0], a)


def test_tree_sum_twice_reuses_its_buffers(rng):
    a = rng.random(600, dtype=np.float32)
    first = reduction.parallel_sum(a, variant="sequential addressing")
    assert first == reduction.parallel_sum(a, variant="sequential addressing")


@pytest.mark.parametrize("n", [1, 300])
def test_numba_reduce_peer(rng, n):
    a = rng.random(n, dtype=np.float32)
    check_sum(reduction.numba_reduce_sum(a), a)
    out = poisoned_total()
    check_sum(reduction.numba_reduce_sum(cuda.to_device(a), out=out).copy_to_host()[0], a)


@pytest.mark.parametrize("variant", TREES)
def test_tree_pairs_follow_the_kernel_formulas(variant):
    steps = reduction.tree_pairs(variant, threads=8)
    values = list(range(1, 9))
    for pairs in steps:
        for _, dst, src in pairs:
            values[dst] += values[src]
    assert values[0] == sum(range(1, 9)) and len(steps) == 3
    if variant == "interleaved, divergent":
        assert steps[1] == [(0, 0, 2), (4, 4, 6)]
    elif variant == "interleaved, bank conflicts":
        assert steps[1] == [(0, 0, 2), (1, 4, 6)]
    else:
        assert steps[0] == [(0, 0, 4), (1, 1, 5), (2, 2, 6), (3, 3, 7)]


def test_bad_input_is_named():
    good = np.ones(4, dtype=np.float32)
    with pytest.raises(TypeError, match="dtype float64"):
        reduction.parallel_sum(np.ones(4))
    with pytest.raises(ValueError, match="must be 1-D"):
        reduction.parallel_sum(np.ones((2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="empty"):
        reduction.parallel_sum(np.ones(0, dtype=np.float32))
    with pytest.raises(TypeError, match="NumPy array or a Numba device array"):
        reduction.parallel_sum([1.0, 2.0])
    with pytest.raises(ValueError, match="unknown variant"):
        reduction.parallel_sum(good, variant="magic")
    with pytest.raises(ValueError, match=r"must have shape \(1,\)"):
        reduction.parallel_sum(good, out=cuda.device_array(2, dtype=np.float32))
    with pytest.raises(ValueError, match="power of two"):
        reduction.tree_pairs("sequential addressing", threads=6)
    with pytest.raises(ValueError, match="tree_pairs draws"):
        reduction.tree_pairs(reduction.GRID_STRIDE)


def test_speedups_table():
    from gpgpu_lessons.timing import Timing
    slow, fast = Timing("slow", [4.0], 400), Timing("fast", [1.0], 400)
    header, rows = reduction.speedups([slow, fast], ceiling=Timing("copy", [1.0], 800))
    assert header[-2:] == ["step speed-up", "cumulative"]
    assert rows[0][4] is None and rows[1][4] == 4.0 and rows[1][5] == 4.0
    assert rows[1][3] == pytest.approx(50.0)


@pytest.mark.parametrize("n", [1, 3, 5, 31, 1027])
@pytest.mark.parametrize("threads, items, vector", [(64, 2, 4), (32, 3, 1), (96, 1, 4)])
def test_grid_stride_configurations(rng, n, threads, items, vector):
    """Every launch configuration tune.py measures: whole loads, the ragged tail, the last floats."""
    a = rng.random(n, dtype=np.float32) - np.float32(0.25)
    out = poisoned_total()
    reduction.sum_grid_stride(cuda.to_device(a), out, threads=threads, items=items, vector=vector)
    check_sum(out.copy_to_host()[0], a)


def test_float32x4_load_reads_four_neighbours():
    a = np.arange(8, dtype=np.float32)
    assert reduction.load_float32x4(a, 4) == (4.0, 5.0, 6.0, 7.0)


@pytest.mark.parametrize("n", [1, 700, 4099])
def test_hand_over_leaves_its_state_at_zero(rng, n):
    """Several blocks: the last one moves the sum out and resets; a second launch starts from zero."""
    a = rng.random(n, dtype=np.float32)
    for _ in range(2):
        out = poisoned_total()
        reduction.sum_grid_stride(cuda.to_device(a), out, threads=32, items=2, vector=4, hand_over=True,
                                  blocks=3)
        check_sum(out.copy_to_host()[0], a)
    assert [state.copy_to_host()[0] for state in reduction._hand_over_state] == [0, 0]

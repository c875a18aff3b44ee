"""The shared launch core: input checks that name the fix, grids, and the one launch path."""

import inspect

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import hardware, launch
from gpgpu_lessons.device import fill

BLOCK = 32


@cuda.jit
def add_one(a, out):
    """out[i] = a[i] + 1: a kernel to launch through the core."""
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 1


@launch.op
def plus_one(a, *, out=None, block: int = BLOCK):
    """a + 1, on the device."""
    block = launch.block_shape(block)
    d_a, to_host = launch.device_input(a, name="a", dtypes=np.float32, ndim=1)
    o = launch.device_output(out, d_a.shape, d_a.dtype, inputs=(d_a,))
    return launch.single(
        add_one, launch.grid_1d(d_a.size, block[0]), block, d_a, o.device, out=o, to_host=to_host
    )


def test_host_input_is_copied_and_device_input_kept(rng):
    a = rng.random(10, dtype=np.float32)
    d_a, from_host = launch.device_input(a, name="a", dtypes=np.float32)
    assert from_host and np.array_equal(d_a.copy_to_host(), a)
    same, from_host = launch.device_input(d_a, name="a", dtypes=np.float32)
    assert not from_host and np.array_equal(same.copy_to_host(), a)


@pytest.mark.parametrize(
    "value, message",
    [
        ([1.0, 2.0], r"np.asarray\(a, dtype=np.float32\)"),
        (np.ones(4, dtype=np.int8), r"has dtype int8.*a.astype\(np.float32\)"),
        (np.ones((2, 2), dtype=np.float32), "must be 1-D"),
        (np.ones(0, dtype=np.float32), "is empty"),
        (np.ones(8, dtype=np.float32)[::2], r"np.ascontiguousarray\(a\)"),
    ],
)
def test_bad_inputs_name_the_fix(value, message):
    with pytest.raises((TypeError, ValueError), match=message):
        launch.device_input(value, name="a", dtypes=np.float32, ndim=1)


def test_a_rank_out_of_several_is_named():
    with pytest.raises(ValueError, match="must be 2-D or 3-D"):
        launch.device_input(np.ones(4, np.uint8), name="image", dtypes=np.uint8, ndim=(2, 3))


def test_output_checks():
    out = cuda.device_array(4, dtype=np.float32)
    assert launch.device_output(out, (4,), np.float32).device is out
    assert launch.device_output(None, (3, 2), np.float64).device.shape == (3, 2)
    with pytest.raises(ValueError, match="must have shape"):
        launch.device_output(out, (5,), np.float32)
    with pytest.raises(TypeError, match="NumPy array or a device array"):
        launch.device_output([0.0] * 4, (4,), np.float32)


def test_host_in_host_out_device_in_device_out(rng):
    a = rng.random(37, dtype=np.float32)
    assert isinstance(plus_one(a), np.ndarray)
    got = plus_one(cuda.to_device(a))
    assert launch.is_device_array(got)
    np.testing.assert_array_equal(got.copy_to_host(), a + 1)


def test_a_numpy_out_is_filled_and_returned(rng):
    a = rng.random(37, dtype=np.float32)
    out = np.full(37, np.nan, dtype=np.float32)
    assert plus_one(a, out=out) is out
    np.testing.assert_array_equal(out, a + 1)


def test_out_aliasing_a_device_input_is_refused(rng):
    a = cuda.to_device(rng.random(64, dtype=np.float32))
    with pytest.raises(ValueError, match="shares memory with an input"):
        plus_one(a, out=a)


def test_a_host_out_aliasing_a_host_input_is_safe(rng):
    """The kernel reads a device copy, so writing the result back into the input is correct."""
    a = rng.random(64, dtype=np.float32)
    expected = a + 1
    assert plus_one(a, out=a) is a
    np.testing.assert_array_equal(a, expected)


def test_out_overlapping_part_of_the_input_is_refused(rng):
    d = cuda.to_device(rng.random(64, dtype=np.float32))
    with pytest.raises(ValueError, match="shares memory"):
        plus_one(d[:32], out=d[16:48])
    np.testing.assert_allclose(
        plus_one(d[:32], out=cuda.device_array(32, np.float32)).copy_to_host(),
        d.copy_to_host()[:32] + 1,
    )


def test_interleaved_shapes_each_get_their_own_grid(rng):
    """In the simulator kernel[grid, block] mutates the kernel: a kept launch would reuse a grid."""
    small, large = rng.random(5, dtype=np.float32), rng.random(300, dtype=np.float32)
    prepared_large = plus_one.prepare(large)
    np.testing.assert_array_equal(plus_one(small), small + 1)
    np.testing.assert_array_equal(prepared_large.result(), large + 1)
    np.testing.assert_array_equal(plus_one(small), small + 1)


def test_prepare_returns_a_launch_that_runs_only_the_kernel(rng):
    a = cuda.to_device(rng.random(40, dtype=np.float32))
    out = cuda.device_array(40, np.float32)
    prepared = plus_one.prepare(a, out=out)
    assert isinstance(prepared, launch.Launch) and prepared() is None
    np.testing.assert_array_equal(out.copy_to_host(), a.copy_to_host() + 1)


def test_the_wrapper_shows_its_real_signature():
    assert str(inspect.signature(plus_one)) == "(a, *, out=None, block: int = 32)"
    assert plus_one.__doc__ == "a + 1, on the device."


def test_a_failed_call_leaves_nothing_behind(rng):
    a = rng.random(10, dtype=np.float32)
    with pytest.raises(ValueError):
        plus_one(a, block=4096)
    np.testing.assert_array_equal(plus_one(a), a + 1)


def test_block_shapes_and_shared_memory_limits():
    assert launch.block_shape(256) == (256,) and launch.block_shape((32, 8)) == (32, 8)
    with pytest.raises(ValueError, match="at most 1024"):
        launch.block_shape((64, 32))
    for bad in (0, -1, 2.5, True, (32, 0), (1, 1, 1, 1)):
        with pytest.raises(ValueError, match="block"):
            launch.block_shape(bad)
    with pytest.raises(ValueError, match="48"):
        launch.check_shared_memory(64 * 1024)


def test_positive_int_names_the_option():
    assert launch.positive_int(np.int64(3), "tile") == 3
    for bad in (0, 1.5, "4", True, None):
        with pytest.raises(ValueError, match="tile must be an integer >= 1"):
            launch.positive_int(bad, "tile")


def test_grids():
    assert launch.blocks_for(257, 256) == 2 and launch.blocks_for(256, 256) == 1
    assert launch.grid_1d(0, 256) == 1
    assert launch.grid_2d((5, 70), (32, 8)) == (3, 1)
    with pytest.raises(ValueError, match="65535"):
        launch.grid_2d((16_777_217, 1), (32, 32))


def test_row_bands_cover_a_tall_shape_within_the_grid_limits():
    bands = launch.row_bands((16_777_217, 1), (32, 32))
    assert bands[0][0] == 0 and bands[-1][1] == 16_777_217
    assert all(end == nxt for (_, end, _), (nxt, _, _) in zip(bands, bands[1:]))
    assert all(grid[1] <= launch.MAX_GRID_YZ for _, _, grid in bands)
    assert launch.row_bands((5, 7), (32, 8)) == [(0, 5, (1, 1))]


def test_zero_fill_clears_any_shape(rng):
    for shape in ((1,), (7, 3), (2, 3, 5)):
        a = cuda.to_device(rng.random(shape))
        fill.zero_step(a).run()
        assert not a.copy_to_host().any()
    assert fill.zeros((3, 4), np.int32).copy_to_host().sum() == 0


def test_a_device_out_comes_back_even_for_host_inputs(rng):
    a = rng.random(20, dtype=np.float32)
    out = cuda.device_array(20, np.float32)
    assert plus_one(a, out=out) is out
    np.testing.assert_array_equal(out.copy_to_host(), a + 1)


# ---- calls seen before: the checked launch is reused ----------------------------------------

builds = []


@launch.op
def counted_plus(a, *, out=None, weights=None, block: int = BLOCK):
    """plus_one that counts its builds, with an optional small host array among its arguments."""
    builds.append(block)
    return plus_one.prepare(a, out=out, block=block)


def test_a_call_with_the_same_device_arrays_reuses_its_launch(rng):
    builds.clear()
    d_a = cuda.to_device(rng.random(40, dtype=np.float32))
    out = cuda.device_array(40, np.float32)
    for _ in range(3):
        assert counted_plus(d_a, out=out) is out
    assert len(builds) == 1
    d_a.copy_to_device(rng.random(40, dtype=np.float32))  # new values, same array: still right
    np.testing.assert_array_equal(counted_plus(d_a, out=out).copy_to_host(), d_a.copy_to_host() + 1)
    other = cuda.device_array(40, np.float32)  # another out, another block: built again
    assert counted_plus(d_a, out=other) is other
    counted_plus(d_a, out=out, block=64)
    assert len(builds) == 3
    np.testing.assert_array_equal(other.copy_to_host(), d_a.copy_to_host() + 1)


def test_a_bad_input_after_a_good_call_still_gets_its_error(rng):
    d_a = cuda.to_device(rng.random(40, dtype=np.float32))
    out = cuda.device_array(40, np.float32)
    counted_plus(d_a, out=out)
    with pytest.raises(ValueError, match="shares memory"):
        counted_plus(d_a, out=d_a)
    with pytest.raises(ValueError, match="must have shape"):
        counted_plus(d_a, out=cuda.device_array(41, np.float32))
    with pytest.raises(ValueError, match="at most 1024"):
        counted_plus(d_a, out=out, block=4096)


def test_an_output_the_wrapper_allocates_is_new_every_call(rng):
    builds.clear()
    d_a = cuda.to_device(rng.random(40, dtype=np.float32))
    first, second = counted_plus(d_a), counted_plus(d_a)
    assert first is not second and len(builds) == 2
    np.testing.assert_array_equal(first.copy_to_host(), second.copy_to_host())


def test_small_host_arguments_are_kept_by_content(rng):
    builds.clear()
    d_a = cuda.to_device(rng.random(40, dtype=np.float32))
    out = cuda.device_array(40, np.float32)
    weights = np.ones(5, np.float32)
    counted_plus(d_a, out=out, weights=weights)
    counted_plus(d_a, out=out, weights=weights.copy())
    assert len(builds) == 1
    weights[0] = 2
    counted_plus(d_a, out=out, weights=weights)
    counted_plus(d_a, out=out, weights=np.ones(launch.SMALL_HOST_ARRAY + 1, np.float32))
    counted_plus(d_a, out=out, weights=[1, 2])  # not hashable: built every time
    assert len(builds) == 4


def test_a_host_out_or_large_host_input_is_built_every_call(rng):
    builds.clear()
    a = rng.random(launch.SMALL_HOST_ARRAY + 1, dtype=np.float32)
    host_out = np.empty(4, np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(counted_plus(a), a + 1)
        np.testing.assert_array_equal(counted_plus(a[:4], out=host_out), a[:4] + 1)
    assert len(builds) == 4


def test_kept_launches_go_with_their_arrays_and_are_bounded(rng):
    import gc

    kept = counted_plus.kept
    d_a = cuda.to_device(rng.random(8, dtype=np.float32))
    out = cuda.device_array(8, np.float32)
    counted_plus(d_a, out=out)
    assert any(id(d_a) in k.arrays for k in kept.entries.values())
    del d_a
    gc.collect()
    assert len(kept.watched) == 2 * len(kept.entries)  # each entry: its input and its out
    assert not any(id(out) in k.arrays for k in kept.entries.values())
    outs = [cuda.device_array(8, np.float32) for _ in range(launch.KEPT_CALLS + 3)]
    d_b = cuda.to_device(rng.random(8, dtype=np.float32))
    for o in outs:
        counted_plus(d_b, out=o)
    assert len(kept.entries) == launch.KEPT_CALLS
    assert set(kept.watched) == set().union(*(k.arrays for k in kept.entries.values()))


def test_a_launch_that_fails_while_running_is_not_kept(rng, monkeypatch):
    builds.clear()
    d_a = cuda.to_device(rng.random(8, dtype=np.float32))
    out = cuda.device_array(8, np.float32)
    counted_plus(d_a, out=out)

    def broken(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(launch.Step, "run", broken)
    with pytest.raises(KeyboardInterrupt):
        counted_plus(d_a, out=out)
    monkeypatch.undo()
    counted_plus(d_a, out=out)
    assert len(builds) == 2
    np.testing.assert_array_equal(out.copy_to_host(), d_a.copy_to_host() + 1)


def test_resident_blocks_follow_the_device_limits(monkeypatch):
    """A T4: 40 SMs of 1,024 threads and 16 blocks each (sm_90: 2,048 threads, 32 blocks)."""
    t4 = hardware.SMLimits(sms=40, threads=1024, blocks=16, registers=65536)
    monkeypatch.setattr(hardware, "sm_limits", lambda: t4)
    assert hardware.resident_blocks(256) == 40 * 4
    assert hardware.resident_blocks(1024) == 40
    assert hardware.resident_blocks(32) == 40 * 16  # the blocks-per-SM limit, not the threads'
    assert hardware.resident_blocks(256, 8) == 40 * 4  # never more than an SM holds
    assert hardware.resident_blocks(256, 2) == 40 * 2
    assert hardware.resident_blocks(256, registers=128) == 40 * 2  # 65536 / (128 x 256)
    assert hardware.resident_blocks(1024, registers=255) == 40  # at least one block per SM
    h200 = hardware.SMLimits(sms=132, threads=2048, blocks=32, registers=65536)
    monkeypatch.setattr(hardware, "sm_limits", lambda: h200)
    assert hardware.resident_blocks(256) == 132 * 8


def test_a_sum_fills_a_t4_with_the_blocks_a_t4_holds(monkeypatch, rng):
    from types import SimpleNamespace

    from gpgpu_lessons.l05_atomics_vs_reduction import fast

    t4 = hardware.SMLimits(sms=40, threads=1024, blocks=16, registers=65536)
    monkeypatch.setattr(hardware, "sm_limits", lambda: t4)
    # the grid a GPU gets (the simulator's is one block)
    monkeypatch.setattr(hardware, "runtime", SimpleNamespace(is_simulator=lambda: False))
    d_a = cuda.to_device(rng.random(2**18, dtype=np.float32))  # 256 blocks' worth of float4
    (step,) = fast.sum_grid_stride.prepare(d_a).steps
    per_sm = min(fast.SUM_BLOCKS_PER_SM, 1024 // fast.SUM_BLOCK)
    assert step.grid == 40 * per_sm and step.block == fast.SUM_BLOCK

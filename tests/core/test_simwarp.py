"""Warp intrinsics: the simulator's emulation (gpgpu_lessons.simwarp) against hand-computed results.

Every kernel here also runs on a GPU, where the same expectations check the hardware: that is how
the emulation is tested against the GPU. Entries a GPU leaves undefined (a shuffle that reads a lane
taking no part) are never compared; the simulator-only tests check that they come out poisoned.
"""

import time

import numpy as np
import pytest
from numba import cuda, float64

from gpgpu_lessons import runtime, simwarp

FULL = 0xFFFFFFFF
SIM = runtime.is_simulator()
simulator_only = pytest.mark.skipif(
    not SIM,
    reason="checks the simulator's emulation itself "
    "(undefined behaviour or Python-level errors on a GPU)",
)
DTYPES = (np.int32, np.int64, np.float32, np.float64)
MODES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")


# ----------------------------------------------------------------------------------------------
# Kernels (each also compiles for a GPU)


@cuda.jit
def shuffle_every_mode(x, arg, out):
    """out[m, i]: mode m of x[i] with the per-lane argument arg[i]; mask = the lanes that exist."""
    i = cuda.threadIdx.x
    lane = i % 32
    live = min(32, cuda.blockDim.x - (i - lane))
    mask = (1 << live) - 1
    v = x[i]
    b = arg[i]
    out[0, i] = cuda.shfl_sync(mask, v, b)
    out[1, i] = cuda.shfl_up_sync(mask, v, b)
    out[2, i] = cuda.shfl_down_sync(mask, v, b)
    out[3, i] = cuda.shfl_xor_sync(mask, v, b)


@cuda.jit
def rotate_after_early_exit(x, n, out, count):
    """Threads i >= n return first; the others rotate values among the lanes left in their warp."""
    i = cuda.threadIdx.x
    if i >= n:
        return
    lane = i % 32
    live = min(32, n - (i - lane))
    mask = (1 << live) - 1
    out[i] = cuda.shfl_sync(mask, x[i], (lane + 1) % live)
    count[i] = cuda.popc(cuda.ballot_sync(mask, True))


@cuda.jit
def segment_shuffles(x, width, out):
    """CUDA C's `width` argument, done by hand: rotate, shift down and butterfly-sum in segments."""
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = x[i]
    start = lane - lane % width
    out[0, i] = cuda.shfl_sync(FULL, v, start + (lane + 1) % width)
    down = cuda.shfl_down_sync(FULL, v, 1)
    if lane % width + 1 >= width:
        down = v
    out[1, i] = down
    total = v
    offset = width // 2
    while offset > 0:
        total += cuda.shfl_xor_sync(FULL, total, offset)
        offset //= 2
    out[2, i] = total


@cuda.jit
def warp_sums(x, out, total):
    """Tree with shfl_down_sync: lane 0 of each warp writes its warp's sum and adds it to total."""
    i = cuda.grid(1)
    v = x[0] - x[0]
    if i < x.size:
        v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL, v, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        out[i // 32] = v
        cuda.atomic.add(total, 0, v)


@cuda.jit
def warp_allreduce(x, out):
    """Butterfly with shfl_xor_sync: every lane ends with its warp's sum."""
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_xor_sync(FULL, v, offset)
        offset //= 2
    out[i] = v


@cuda.jit
def votes(x, out):
    """ballot/all/any/eq of x > 0 over full warps, and popc/ffs of the ballot."""
    i = cuda.grid(1)
    p = x[i] > 0
    ballot = cuda.ballot_sync(FULL, p)
    out[0, i] = ballot
    out[1, i] = cuda.all_sync(FULL, p)
    out[2, i] = cuda.any_sync(FULL, p)
    out[3, i] = cuda.eq_sync(FULL, p)
    out[4, i] = cuda.popc(ballot)
    out[5, i] = cuda.ffs(ballot)


@cuda.jit
def ballot_in_groups(x, out):
    """Four groups of lanes (lane % 4) vote at the same time with four different masks."""
    i = cuda.threadIdx.x
    p = x[i] > 0
    g = i % 4
    if g == 0:
        out[i] = cuda.ballot_sync(0x11111111, p)
    elif g == 1:
        out[i] = cuda.ballot_sync(0x22222222, p)
    elif g == 2:
        out[i] = cuda.ballot_sync(0x44444444, p)
    else:
        out[i] = cuda.ballot_sync(0x88888888, p)


@cuda.jit
def active_lanes(n, out):
    """activemask in divergent branches and after an early exit; lanemask_lt."""
    i = cuda.threadIdx.x
    if i % 2 == 0:
        out[0, i] = cuda.activemask()
    else:
        out[0, i] = cuda.activemask()
    out[1, i] = cuda.lanemask_lt()
    if i >= n:
        return
    out[2, i] = cuda.activemask()


@cuda.jit
def matches(x, out):
    """match_any_sync and match_all_sync over full warps."""
    i = cuda.grid(1)
    out[0, i] = cuda.match_any_sync(FULL, x[i])
    mask, same = cuda.match_all_sync(FULL, x[i])
    out[1, i] = mask
    out[2, i] = same


@cuda.jit
def syncwarp_broadcast(x, scratch, out):
    """Lane 0 of each warp writes scratch, syncwarp, then every lane reads it."""
    i = cuda.threadIdx.x
    lane = i % 32
    live = min(32, cuda.blockDim.x - (i - lane))
    if lane == 0:
        scratch[i // 32] = x[i]
    cuda.syncwarp((1 << live) - 1)
    out[i] = scratch[i // 32]


@cuda.jit(device=True)
def warp_reduce(v):
    """Sum over the 32 lanes of a full warp; lane 0 holds the result."""
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL, v, offset)
        offset //= 2
    return v


@cuda.jit
def block_sum_shared_then_shuffle(x, total):
    """Lesson-style block sum: shared-memory tree down to 64 values, then one warp shuffles."""
    partial = cuda.shared.array(128, float64)
    tid = cuda.threadIdx.x
    acc = 0.0
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[j]
    partial[tid] = acc
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step >= 64:
        if tid < step:
            partial[tid] += partial[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid < 32:
        v = warp_reduce(partial[tid] + partial[tid + 32])
        if tid == 0:
            cuda.atomic.add(total, 0, v)


@cuda.jit
def shuffle_in_block_of_dims(x, out):
    """A 2-D or 3-D block is cut into warps along the linear id x + X * (y + Y * z)."""
    t, d = cuda.threadIdx, cuda.blockDim
    i = t.x + d.x * (t.y + d.y * t.z)
    out[i] = cuda.shfl_down_sync(FULL, x[i], cuda.blockDim.x)


# Kernels with undefined behaviour on a GPU: launched in the simulator only.


@cuda.jit
def shuffle_against_syncthreads(out):
    """Lane 0 shuffles with the full mask while lanes 1-31 wait at the block barrier."""
    i = cuda.threadIdx.x
    if i == 0:
        out[i] = cuda.shfl_sync(FULL, i, 0)
    else:
        cuda.syncthreads()


@cuda.jit
def shuffle_modes_disagree(out):
    """Lanes 0-7 call shfl_down_sync, the others shfl_xor_sync, all with the full mask."""
    i = cuda.threadIdx.x
    if i < 8:
        out[i] = cuda.shfl_down_sync(FULL, i, 1)
    else:
        out[i] = cuda.shfl_xor_sync(FULL, i, 1)


@cuda.jit
def shuffle_without_self(out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_sync(0x1, i, 0)


@cuda.jit
def shuffle_full_mask_in_partial_warp(x, out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_down_sync(FULL, x[i], 16)


def _sleep_in_lane_one():
    time.sleep(1.0)


@cuda.jit
def one_lane_late(out):
    i = cuda.threadIdx.x
    if i == 1:
        _sleep_in_lane_one()
    out[i] = cuda.shfl_sync(0x3, i, 1)


@cuda.jit
def shuffle_bool(out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_sync(FULL, i > 0, 0)


# ----------------------------------------------------------------------------------------------
# Expected values, computed by hand


def expected_shuffles(x, arg, threads):
    """(values, defined) for the four modes, from the PTX rules; lanes that exist = the mask."""
    values = np.zeros((4, threads), dtype=x.dtype)
    defined = np.zeros((4, threads), dtype=bool)
    for i in range(threads):
        lane, base = i % 32, i - i % 32
        live = min(32, threads - base)
        b = int(arg[i]) & 31
        up = lane - b if lane - b >= 0 else lane
        down = lane + b if lane + b <= 31 else lane
        for m, src in enumerate((b, up, down, lane ^ b)):
            defined[m, i] = src < live
            values[m, i] = x[base + src] if src < live else 0
    return values, defined


def random_values(rng, dtype, n):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    return (rng.standard_normal(n) * 1e3).astype(dtype)


def poisoned(dtype, shape):
    if np.issubdtype(dtype, np.integer):
        return np.full(shape, 0x5A5A5A5A, dtype=dtype)
    return np.full(shape, np.inf, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# Shuffles


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("threads", [32, 33, 48, 64, 100])
def test_shuffles_match_hand_computed_lanes(rng, dtype, threads):
    x = random_values(rng, dtype, threads)
    arg = rng.integers(0, 32, size=threads).astype(np.int32)
    arg[:4] = (0, 1, 16, 31)
    out = poisoned(dtype, (4, threads))
    shuffle_every_mode[1, threads](x, arg, out)
    expected, defined = expected_shuffles(x, arg, threads)
    for m, mode in enumerate(MODES):
        np.testing.assert_array_equal(out[m][defined[m]], expected[m][defined[m]], err_msg=mode)
    if SIM:  # what a GPU leaves undefined comes out poisoned, so it cannot pass for a result
        undefined = out[~defined]
        if np.issubdtype(dtype, np.floating):
            assert np.isnan(undefined).all()
        else:
            assert (
                undefined == np.array([0xDEADBEEFDEADBEEF], np.uint64).view(np.int64).astype(dtype)
            ).all()


@pytest.mark.parametrize("delta", [0, 1, 3, 16, 31])
def test_uniform_deltas_on_two_full_warps(delta):
    x = np.arange(64, dtype=np.int32) * 10
    arg = np.full(64, delta, dtype=np.int32)
    out = poisoned(np.int32, (4, 64))
    shuffle_every_mode[1, 64](x, arg, out)
    lane = np.arange(64) % 32
    base = np.arange(64) - lane
    np.testing.assert_array_equal(out[0], x[base + delta])
    np.testing.assert_array_equal(out[1], np.where(lane >= delta, x - 10 * delta, x))
    np.testing.assert_array_equal(out[2], np.where(lane + delta <= 31, x + 10 * delta, x))
    np.testing.assert_array_equal(out[3], x[base + (lane ^ delta)])


def test_shfl_sync_source_lane_is_taken_modulo_32():
    x = np.arange(32, dtype=np.float32)
    arg = np.full(32, 37, dtype=np.int32)
    out = poisoned(np.float32, (4, 32))
    shuffle_every_mode[1, 32](x, arg, out)
    np.testing.assert_array_equal(out[0], np.full(32, 5, dtype=np.float32))


@pytest.mark.parametrize("n", [1, 5, 31, 32, 33, 40, 63, 64])
def test_lanes_that_exited_early_and_are_not_in_the_mask(rng, n):
    x = rng.integers(1, 1000, size=64).astype(np.int64)
    out = np.full(64, -1, dtype=np.int64)
    count = np.full(64, -1, dtype=np.int32)
    rotate_after_early_exit[1, 64](x, n, out, count)
    expected = np.full(64, -1, dtype=np.int64)
    live = np.full(64, -1, dtype=np.int32)
    for i in range(n):
        base = i - i % 32
        k = min(32, n - base)
        expected[i] = x[base + (i % 32 + 1) % k]
        live[i] = k
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(count, live)


@pytest.mark.parametrize("width", [1, 2, 4, 8, 16, 32])
def test_segments_narrower_than_a_warp(rng, width):
    x = rng.integers(-100, 100, size=64).astype(np.int32)
    out = poisoned(np.int32, (3, 64))
    segment_shuffles[2, 32](x, width, out)
    seg = x.reshape(-1, width)
    np.testing.assert_array_equal(out[0], np.roll(seg, -1, axis=1).ravel())
    shifted = np.concatenate([seg[:, 1:], seg[:, -1:]], axis=1) if width > 1 else seg
    np.testing.assert_array_equal(out[1], shifted.ravel())
    np.testing.assert_array_equal(out[2], np.repeat(seg.sum(axis=1), width))


# ----------------------------------------------------------------------------------------------
# Reductions


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 31, 33, 200])
def test_warp_sum_reduction_matches_numpy(rng, dtype, n):
    x = random_values(rng, dtype, n)
    if np.issubdtype(dtype, np.integer):
        x = (x % 1000).astype(dtype)
    threads = 64
    blocks = -(-n // threads)
    out = poisoned(dtype, blocks * threads // 32)
    total = np.zeros(1, dtype=dtype)
    warp_sums[blocks, threads](x, out, total)
    padded = np.zeros(blocks * threads, dtype=np.float64)
    padded[:n] = x
    expected = padded.reshape(-1, 32).sum(axis=1)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=rtol, atol=1e-3 * rtol)
    np.testing.assert_allclose(float(total[0]), expected.sum(), rtol=rtol, atol=1e-3 * rtol)


def test_butterfly_gives_every_lane_the_warp_sum(rng):
    x = rng.standard_normal(96)
    out = np.full(96, np.nan)
    warp_allreduce[3, 32](x, out)
    np.testing.assert_allclose(out, np.repeat(x.reshape(-1, 32).sum(axis=1), 32), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 127, 1000])
def test_shared_memory_tree_finished_by_a_device_function_shuffle(rng, n):
    x = rng.standard_normal(n)
    total = np.zeros(1)
    block_sum_shared_then_shuffle[3, 128](x, total)
    np.testing.assert_allclose(total[0], x.sum(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(8, 8), (16, 3), (4, 4, 2)])
def test_warps_of_a_multidimensional_block(rng, shape):
    threads = int(np.prod(shape))
    x = rng.integers(0, 1000, size=threads).astype(np.int64)
    out = np.full(threads, -1, dtype=np.int64)
    shuffle_in_block_of_dims[1, shape](x, out)
    lane = np.arange(threads) % 32
    src = lane + shape[0]
    live = np.minimum(32, threads - (np.arange(threads) - lane))
    defined = (src > 31) | (src < live)
    expected = np.where(src <= 31, np.arange(threads) + shape[0], np.arange(threads))
    np.testing.assert_array_equal(out[defined], x[expected[defined]])


# ----------------------------------------------------------------------------------------------
# Votes, matches, activemask, syncwarp


def as_int32(bits):
    return np.array(bits, dtype=np.uint64).astype(np.uint32).view(np.int32)


def test_votes_and_ballot_bits(rng):
    x = np.ones(128, dtype=np.float32)
    x[32:64] = -1  # warp 1: nobody
    x[64:96] = rng.choice([-1.0, 1.0], size=32)  # warp 2: a mix
    x[96:127] = -1  # warp 3: lane 31 only (the int32 sign bit)
    out = np.full((6, 128), -7, dtype=np.int32)
    votes[2, 64](x, out)
    for w in range(4):
        p = x[32 * w : 32 * (w + 1)] > 0
        bits = sum(1 << lane for lane in range(32) if p[lane])
        lanes = slice(32 * w, 32 * (w + 1))
        assert (out[0, lanes] == as_int32(bits)).all(), w
        assert (out[1, lanes] == int(p.all())).all(), w
        assert (out[2, lanes] == int(p.any())).all(), w
        assert (out[3, lanes] == int(p.all() or not p.any())).all(), w
        assert (out[4, lanes] == p.sum()).all(), w
        assert (out[5, lanes] == (np.argmax(p) + 1 if p.any() else 0)).all(), w


def test_ballot_with_four_masks_at_once(rng):
    x = rng.standard_normal(64)
    out = np.full(64, -7, dtype=np.int32)
    ballot_in_groups[1, 64](x, out)
    for i in range(64):
        base, g = i - i % 32, i % 4
        bits = sum(1 << lane for lane in range(g, 32, 4) if x[base + lane] > 0)
        assert out[i] == as_int32(bits), i


@pytest.mark.parametrize("threads,n", [(32, 32), (48, 40), (64, 17), (100, 70)])
def test_activemask_and_lanemask_lt(threads, n):
    out = np.full((3, threads), 7, dtype=np.uint32)
    active_lanes[1, threads](n, out)
    for i in range(threads):
        lane, base = i % 32, i - i % 32
        exists = (1 << min(32, threads - base)) - 1
        parity = 0x55555555 if lane % 2 == 0 else 0xAAAAAAAA
        assert out[0, i] == exists & parity, i
        assert out[1, i] == (1 << lane) - 1, i
        assert out[2, i] == (((1 << min(32, n - base)) - 1) if i < n else 7), i


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_match_any_and_match_all(rng, dtype):
    x = rng.integers(0, 4, size=64).astype(dtype)
    x[32:] = 3  # the second warp agrees
    out = np.full((3, 64), -7, dtype=np.int32)
    matches[2, 32](x, out)
    for i in range(64):
        base = i - i % 32
        warp = x[base : base + 32]
        same = sum(1 << lane for lane in range(32) if warp[lane] == x[i])
        assert out[0, i] == as_int32(same), i
        all_same = (warp == warp[0]).all()
        assert out[1, i] == (as_int32(FULL) if all_same else 0), i
        assert out[2, i] == int(all_same), i


@pytest.mark.parametrize("threads", [32, 33, 100])
def test_syncwarp_orders_a_write_before_the_reads(rng, threads):
    x = rng.integers(1, 1000, size=threads).astype(np.int64)
    scratch = np.full(4, -1, dtype=np.int64)
    out = np.full(threads, -2, dtype=np.int64)
    syncwarp_broadcast[1, threads](x, scratch, out)
    np.testing.assert_array_equal(out, x[np.arange(threads) - np.arange(threads) % 32])


# ----------------------------------------------------------------------------------------------
# The emulation itself: install, errors for what is undefined on a GPU


def test_install_is_idempotent_and_only_for_the_simulator():
    """On a GPU install() does nothing (the tracer alone installs it there, `anywhere=True`)."""
    before = simwarp.installed()
    assert simwarp.install() is SIM
    assert simwarp.install() is SIM
    assert simwarp.installed() is (SIM or before)


@simulator_only
def test_deadlock_against_syncthreads_names_mask_and_lanes():
    with pytest.raises(
        simwarp.WarpDeadlockError,
        match=r"lanes 0 wait in shfl_sync\(mask=0xffffffff\) for lanes 1-31.*"
        r"lanes 1-31 wait in cuda.syncthreads\(\)",
    ):
        shuffle_against_syncthreads[1, 32](np.zeros(32, dtype=np.int64))


@simulator_only
def test_deadlock_between_two_kinds_of_shuffle():
    with pytest.raises(
        simwarp.WarpDeadlockError,
        match=r"shfl_(down|xor)_sync\(mask=0xffffffff\).*undefined behaviour",
    ):
        shuffle_modes_disagree[1, 32](np.zeros(32, dtype=np.int64))
    out = np.zeros(32, dtype=np.int64)  # the simulator is usable afterwards
    warp_allreduce[1, 32](np.ones(32), out.view(np.float64))
    assert (out.view(np.float64) == 32).all()


@simulator_only
def test_timeout_backstop(monkeypatch):
    monkeypatch.setattr(simwarp, "TIMEOUT_S", 0.2)
    with pytest.raises(
        simwarp.WarpDeadlockError,
        match=r"lanes 0 .* waited 0.2 s in shfl_sync\(mask=0x00000003\) for lanes 1",
    ):
        one_lane_late[1, 2](np.zeros(2, dtype=np.int64))


@simulator_only
def test_lane_outside_its_own_mask_is_an_error():
    with pytest.raises(
        simwarp.WarpUsageError, match=r"lane 1 called shfl_sync with mask 0x00000001"
    ):
        shuffle_without_self[1, 2](np.zeros(2, dtype=np.int64))


@simulator_only
def test_reading_a_lane_beyond_the_block_is_poison_or_an_error(monkeypatch):
    x = np.arange(48, dtype=np.float64)
    out = np.zeros(48)
    shuffle_full_mask_in_partial_warp[1, 48](x, out)
    np.testing.assert_array_equal(out[:16], x[16:32])
    assert np.isnan(out[32:48]).all()  # warp 1 has lanes 0-15 only: lane 0 reads lane 16
    monkeypatch.setattr(simwarp, "UNDEFINED", "raise")
    with pytest.raises(
        simwarp.WarpUndefinedError,
        match=r"reads lane (1[6-9]|2[0-9]|3[01]) .* does not exist in this block",
    ):
        shuffle_full_mask_in_partial_warp[1, 48](x, out)


@simulator_only
def test_bool_values_are_refused_as_on_a_gpu():
    with pytest.raises(TypeError, match="32- and 64-bit ints and floats"):
        shuffle_bool[1, 32](np.zeros(32, dtype=np.int64))


@simulator_only
def test_bit_helpers_use_the_gpu_width():
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    module = FakeCUDAModule((1, 1, 1), (1, 1, 1), 0)
    minus_one = simwarp._int32(FULL)
    assert minus_one == -1
    assert module.popc(minus_one) == 32 and module.popc(np.int32(-1)) == 32
    assert module.popc(-1) == 64 and module.popc(np.int64(-1)) == 64
    assert module.ffs(simwarp._int32(0x80000000)) == 32 and module.ffs(0) == 0
    assert module.clz(np.int32(1)) == 31 and module.clz(np.uint64(1)) == 63
    assert module.brev(np.uint32(1)) == 0x80000000

"""The kernel tracer: hand-worked counters, planted races found with their lines, clear errors.

The tracer runs kernels on the simulator's machinery in every mode, so these tests run on a GPU
machine too (there, and in compile-only mode, the kernels are real Numba dispatchers).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda, float32, float64

from gpgpu_lessons.device import vector
from gpgpu_lessons.trace import TraceError, UnsupportedError, model, trace_kernel

TILE = 32
ROWS = 8
PADDED = TILE + 1  # shapes are constants: a GPU compiles no expression in the call
CELLS = TILE * TILE
N = 64
LUT = np.arange(64, dtype=np.float32)


def line_of(kernel, text: str) -> int:
    """Source line number of the first line of `kernel` that contains `text`."""
    import inspect

    source, first = inspect.getsourcelines(kernel.py_func)
    return first + next(k for k, s in enumerate(source) if text in s and '"""' not in s)


# ---- kernels: global memory ----------------------------------------------------------------


@cuda.jit
def copy(a, b):
    """b[i] = a[i]: neighbouring lanes, neighbouring elements."""
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


@cuda.jit
def strided(a, b):
    """b[i] = a[32 i]: every lane in its own sector."""
    i = cuda.grid(1)
    if i * 32 < a.size:
        b[i] = a[i * 32]


@cuda.jit
def wide_copy(a, b):
    """Four float32 per lane as one 16-byte access (device.vector)."""
    i = cuda.grid(1)
    if 4 * i < a.size:
        vector.store_vector(b, 4 * i, vector.load_vector(a, 4 * i, 4))


@cuda.jit
def complex_wide_copy(a, b):
    """One complex128 per lane as one 16-byte access (device.vector)."""
    i = cuda.grid(1)
    if i < a.size:
        vector.store_vector(b, i, vector.load_vector(a, i, 1))


@pytest.mark.parametrize("dtype, sectors", [(np.float32, 4), (np.float64, 8), (np.int8, 1)])
def test_coalesced_read_moves_its_bytes_in_sectors(dtype, sectors):
    a, b = np.arange(N).astype(dtype), np.zeros(N, dtype)
    trace = trace_kernel(copy, 2, 32, a, b)
    load = trace.line(line_of(copy, "b[i] = a[i]"), "global", "load")
    assert load.requests == 2 and load.per_request("sectors") == sectors
    assert load.ideal_sectors == load.sectors and load.verdict == "coalesced"
    assert np.array_equal(b, a)


def test_stride_32_float32_read_is_32_sectors_per_request():
    a, b = np.ones(32 * 32, np.float32), np.zeros(32, np.float32)
    trace = trace_kernel(strided, 1, 32, a, b)
    load = trace.line(line_of(strided, "a[i * 32]"), "global", "load")
    assert (load.requests, load.sectors, load.ideal_sectors) == (1, 32, 4)
    assert load.verdict.startswith("uncoalesced (8.0x")
    assert trace.line(load.line, "global", "store").per_request("sectors") == 4


def test_complex128_is_two_8_byte_requests_unless_one_wide_access():
    a = (np.arange(32) + 1j).astype(np.complex128)
    trace = trace_kernel(copy, 1, 32, a, np.zeros_like(a))
    load = trace.line(line_of(copy, "b[i] = a[i]"), "global", "load")
    # each half's request spans the lanes' 16-byte elements: 16 sectors, as a packed warp needs
    assert (load.requests, load.sectors, load.ideal_sectors) == (2, 32, 32)
    assert load.verdict == "coalesced"
    b = np.zeros_like(a)
    trace = trace_kernel(complex_wide_copy, 1, 32, a, b)
    load = trace.line(line_of(complex_wide_copy, "load_vector"), "global", "load")
    assert (load.requests, load.sectors, load.ideal_sectors) == (1, 16, 16)
    assert np.array_equal(b, a)


def test_device_vector_float32x4_is_one_request_of_16_sectors():
    a, b = np.arange(128, dtype=np.float32), np.zeros(128, np.float32)
    trace = trace_kernel(wide_copy, 1, 32, a, b)
    line = line_of(wide_copy, "load_vector")
    load = trace.line(line, "global", "load")
    assert (load.requests, load.sectors) == (1, 16)
    assert trace.line(line, "global", "store").sectors == 16
    assert np.array_equal(b, a)


# ---- kernels: shared memory, bank conflicts --------------------------------------------------


@cuda.jit
def column_read(out):
    """Fill a 32 x 32 float32 tile by rows, read it by columns: all lanes in one bank."""
    tile = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.threadIdx.x, cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[y + j, x] = x + y + j
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[x, y + j]


@cuda.jit
def column_read_padded(out):
    """The same with a padding column: lane i reads bank (i + c) % 32."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    x, y = cuda.threadIdx.x, cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[y + j, x] = x + y + j
    cuda.syncthreads()
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[x, y + j]


@pytest.mark.parametrize("kernel, ways", [(column_read, 32), (column_read_padded, 1)])
def test_tile_column_read_32_way_unless_padded(kernel, ways):
    out = np.zeros((TILE, TILE), np.float32)
    trace = trace_kernel(kernel, 1, (TILE, ROWS), out)
    read = trace.line(line_of(kernel, "= tile[x, y + j]"), "shared", "load")
    write = trace.line(line_of(kernel, "tile[y + j, x] ="), "shared", "store")
    assert read.requests == TILE and read.per_request("wavefronts") == ways
    assert read.per_request("ideal_wavefronts") == 1
    assert write.per_request("wavefronts") == 1 and write.verdict == "conflict-free"
    assert (read.verdict == "conflict-free") == (ways == 1)
    assert trace.hazards == []
    expected = np.add.outer(np.arange(TILE), np.arange(TILE)).astype(np.float32)
    assert np.array_equal(out, expected)


@cuda.jit
def f64_reads(out, stride):
    """Lane i reads tile[i * stride] of a float64 array: 8-byte lanes."""
    tile = cuda.shared.array(CELLS, float64)
    i = cuda.threadIdx.x
    for j in range(TILE):
        tile[i * TILE + j] = j
    cuda.syncthreads()
    out[i] = tile[i * stride]


@pytest.mark.parametrize(
    "stride, wavefronts, ideal", [(1, 2, 2), (0, 1, 1), (16, 32, 2), (17, 2, 2)]
)
def test_float64_shared_reads_as_the_h200_counts_them(stride, wavefronts, ideal):
    """Nsight Compute on an H200: 2, 1 (a broadcast), 32 and 2 wavefronts per request."""
    out = np.zeros(TILE, np.float64)
    trace = trace_kernel(f64_reads, 1, TILE, out, stride)
    read = trace.line(line_of(f64_reads, "tile[i * stride]"), "shared", "load")
    assert read.requests == 1 and read.wavefronts == wavefronts and read.ideal_wavefronts == ideal


def test_bank_rule_scalar_functions():
    column = [r * TILE * 4 for r in range(32)]
    assert model.wavefronts(column, 4) == 32
    assert model.wavefronts([r * (TILE + 1) * 4 for r in range(32)], 4) == 1
    assert model.wavefronts([8 * k for k in range(32)], 8) == 2
    assert model.wavefronts([16 * k for k in range(32)], 16) == 4
    assert model.wavefronts([64] * 32, 8) == 1  # every lane reads one float64: a broadcast
    assert model.sectors([4 * k for k in range(32)], 4) == 4
    assert model.bank_of(132) == 1 and model.sector_of(64) == 2


# ---- constant memory and atomics ------------------------------------------------------------


@cuda.jit
def lut_read(out, per_lane):
    """Every lane reads LUT[0] (broadcast) or LUT[lane] (serialised)."""
    lut = cuda.const.array_like(LUT)
    i = cuda.threadIdx.x
    out[i] = lut[i] if per_lane else lut[0]


@pytest.mark.parametrize("per_lane, addresses", [(0, 1), (1, 32)])
def test_constant_reads_count_distinct_addresses(per_lane, addresses):
    out = np.zeros(32, np.float32)
    trace = trace_kernel(lut_read, 1, 32, out, per_lane)
    read = trace.line(line_of(lut_read, "out[i] ="), "constant", "load")
    assert read.requests == 1 and read.addresses == addresses
    assert (read.verdict == "broadcast") == (addresses == 1)
    assert np.array_equal(out, LUT[:32] if per_lane else np.zeros(32, np.float32))


@cuda.jit
def lut_global(out):
    """A module-level NumPy array in a kernel is frozen into constant memory by Numba."""
    i = cuda.threadIdx.x
    out[i] = LUT[i % 4]


@cuda.jit
def lut_write(out):
    """Writing a constant array: a GPU kernel cannot (Numba refuses to compile it)."""
    lut = cuda.const.array_like(LUT)
    lut[0] = out[0]


@cuda.jit
def dynamic_reverse(a):
    """Reverse 64 values through dynamic shared memory (its size given at launch)."""
    s = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    a[t] = s[63 - t]


def test_global_arrays_are_constant_memory_and_read_only():
    out = np.zeros(32, np.float32)
    read = trace_kernel(lut_global, 1, 32, out).line(line_of(lut_global, "LUT[i % 4]"), "constant")
    assert read.addresses == 4 and read.arrays == ("LUT",)
    assert np.array_equal(out, np.tile(LUT[:4], 8))
    with pytest.raises(UnsupportedError, match="read-only"):
        trace_kernel(lut_write, 1, 1, out)


def test_dynamic_shared_memory():
    a = np.arange(64, dtype=np.float32)
    trace = trace_kernel(dynamic_reverse, 1, 64, a, dynamic_shared=64 * 4)
    assert trace.hazards == [] and np.array_equal(a, np.arange(64, dtype=np.float32)[::-1])
    assert trace.line(line_of(dynamic_reverse, "a[t] = s[63 - t]"), "shared").wavefronts == 2


@cuda.jit
def count_atomics(counts, spread):
    """Every lane adds 1 to counts[0], or to its own counts[lane]."""
    i = cuda.threadIdx.x
    cuda.atomic.add(counts, i if spread else 0, 1)


@pytest.mark.parametrize("spread, lanes", [(0, 32), (1, 1)])
def test_atomics_on_one_address_contend(spread, lanes):
    counts = np.zeros(32, np.int32)
    trace = trace_kernel(count_atomics, 2, 32, counts, spread)
    add = trace.line(line_of(count_atomics, "atomic.add"), "global", "atomic")
    assert add.requests == 2 and add.per_request("contention") == lanes
    assert ("contention" in add.verdict) == (lanes > 1)
    # Nsight Compute on an H200: 32 lanes on one int32 cost 32 sectors a request, spread ones 4
    assert add.per_request("sectors") == (32 if lanes == 32 else 4)
    assert counts.sum() == 64 and trace.hazards == []


# ---- races: planted and correct -------------------------------------------------------------


def _transpose_kernel(barrier):
    @cuda.jit
    def transpose(a, b):
        """Tiled transpose of one 32 x 32 tile, with or without its barrier."""
        tile = cuda.shared.array((TILE, PADDED), float32)
        x, y = cuda.threadIdx.x, cuda.threadIdx.y
        for j in range(0, TILE, ROWS):
            tile[y + j, x] = a[y + j, x]
        if barrier:
            cuda.syncthreads()
        for j in range(0, TILE, ROWS):
            b[y + j, x] = tile[x, y + j]

    return transpose


def _reduce_kernel(barrier):
    @cuda.jit
    def tree_sum(a, out):
        """Shared-memory tree sum of 64 values, with or without a barrier per step."""
        s = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncthreads()
        step = 32
        while step > 0:
            if t < step:
                s[t] += s[t + step]
            if barrier:
                cuda.syncthreads()
            step //= 2
        if t == 0:
            out[0] = s[0]

    return tree_sum


def _reverse_kernel(barrier):
    @cuda.jit
    def reverse(a):
        """Reverse a block's 64 values through shared memory, with or without the barrier."""
        s = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        if barrier:
            cuda.syncthreads()
        a[t] = s[63 - t]

    return reverse


def _overwrite_kernel(barrier):
    @cuda.jit
    def rolling(a, out):
        """Two chunks through one tile: the second overwrites it (WAR without the 2nd barrier)."""
        tile = cuda.shared.array(64, float32)
        t = cuda.threadIdx.x
        total = float32(0)
        for chunk in range(2):
            tile[t] = a[chunk * 64 + t]
            cuda.syncthreads()
            total += tile[(t + 1) % 64]
            if barrier:
                cuda.syncthreads()
        out[t] = total

    return rolling


@cuda.jit
def one_slot_each(out):
    """Each thread its own slot: no race."""
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    out[t] = s[t]


@cuda.jit
def two_per_slot(out):
    """Threads 2k and 2k + 1 both write slot k: WAW."""
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t // 2] = t
    cuda.syncthreads()
    out[t] = s[t // 2]


@cuda.jit
def barrier_in_branch(out):
    """Only the first half of the block reaches the barrier."""
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = t
    if t < 32:
        cuda.syncthreads()
    out[t] = s[t]


@cuda.jit
def barrier_in_both_branches(out):
    """Two different syncthreads, one per side of a branch."""
    t = cuda.threadIdx.x
    if t < 32:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    out[t] = t


def _kinds(trace):
    return sorted({(h.kind, h.space, h.lines) for h in trace.hazards})


def test_missing_barrier_in_tiled_transpose_is_a_raw_race():
    a = np.arange(TILE * TILE, dtype=np.float32).reshape(TILE, TILE)
    racy, good = _transpose_kernel(False), _transpose_kernel(True)
    store, load = line_of(racy, "tile[y + j, x] ="), line_of(racy, "= tile[x, y + j]")
    assert _kinds(trace_kernel(racy, 1, (TILE, ROWS), a, np.zeros_like(a))) == [
        ("RAW", "shared", (store, load))
    ]
    b = np.zeros_like(a)
    assert trace_kernel(good, 1, (TILE, ROWS), a, b).hazards == [] and np.array_equal(b, a.T)


def test_missing_barrier_in_reduction_tree_is_a_raw_race():
    a = np.arange(64, dtype=np.float32)
    racy, good = _reduce_kernel(False), _reduce_kernel(True)
    tree = line_of(racy, "s[t] += s[t + step]")
    kinds = _kinds(trace_kernel(racy, 1, 64, a, np.zeros(1, np.float32)))
    assert ("RAW", "shared", (tree, tree)) in kinds
    assert all(
        kind == "RAW" and set(lines) <= {tree, line_of(racy, "out[0] = s[0]")}
        for kind, _, lines in kinds
    )
    out = np.zeros(1, np.float32)
    assert trace_kernel(good, 1, 64, a, out).hazards == [] and out[0] == a.sum()


def test_missing_barrier_in_block_reverse_is_a_raw_race_with_threads():
    racy = _reverse_kernel(False)
    trace = trace_kernel(racy, 1, 64, np.arange(64, dtype=np.float32))
    [race] = trace.hazards
    assert (race.kind, race.space, race.array) == ("RAW", "shared", "s")
    assert race.lines == (line_of(racy, "s[t] = a[t]"), line_of(racy, "a[t] = s[63 - t]"))
    (writer,), (reader,) = race.threads
    assert writer + reader == 63 and race.index == (writer,) and race.block == (0,)
    assert race.count == 64
    a = np.arange(64, dtype=np.float32)
    assert trace_kernel(_reverse_kernel(True), 1, 64, a).hazards == []
    assert np.array_equal(a, np.arange(64, dtype=np.float32)[::-1])


def test_tile_overwritten_before_all_have_read_is_a_war_race():
    racy, good = _overwrite_kernel(False), _overwrite_kernel(True)
    a = np.arange(128, dtype=np.float32)
    read, write = line_of(racy, "total += tile"), line_of(racy, "tile[t] = a[")
    assert _kinds(trace_kernel(racy, 1, 64, a, np.zeros(64, np.float32))) == [
        ("WAR", "shared", (read, write))
    ]
    out = np.zeros(64, np.float32)
    assert trace_kernel(good, 1, 64, a, out).hazards == []
    assert np.array_equal(out, np.roll(a[:64], -1) + np.roll(a[64:], -1))


def test_two_threads_writing_one_slot_is_a_waw_race():
    store = line_of(two_per_slot, "s[t // 2] = t")
    assert _kinds(trace_kernel(two_per_slot, 1, 64, np.zeros(64, np.float32))) == [
        ("WAW", "shared", (store, store))
    ]
    assert trace_kernel(one_slot_each, 1, 64, np.zeros(64, np.float32)).hazards == []


def test_one_shared_array_per_line_however_many_threads_race_to_declare_it():
    trace = trace_kernel(one_slot_each, 1, 256, np.zeros(256, np.float32))
    assert [v.name for v in trace.views if v.space == "shared"] == ["s"]
    assert trace.hazards == []
    store = trace.line(line_of(one_slot_each, "s[t] = t"), "shared", "store")
    assert store.requests == 8 and store.wavefronts == 8


def test_barrier_reached_by_part_of_the_block():
    trace = trace_kernel(barrier_in_branch, 1, 64, np.zeros(64, np.float32))
    [barrier] = [h for h in trace.hazards if h.kind == "barrier"]
    assert barrier.lines == (line_of(barrier_in_branch, "cuda.syncthreads()"),)
    assert "32 of 64 threads" in barrier.message
    trace = trace_kernel(barrier_in_both_branches, 1, 64, np.zeros(64, np.int64))
    [barrier] = trace.hazards
    assert barrier.kind == "barrier" and len(barrier.lines) == 2


@cuda.jit
def global_race(a, out):
    """Every thread of the block writes out[0]: WAW in global memory (unless one value for all)."""
    out[0] = a[cuda.threadIdx.x]


@cuda.jit
def shared_histogram(values, hist, zero):
    """A shared histogram, zeroed first or not (then it reads memory nobody wrote)."""
    counts = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    if zero and t < 8:
        counts[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(counts, values[t], 1)
    cuda.syncthreads()
    if t < 8:
        hist[t] = counts[t]


def test_global_race_within_a_block_and_atomics_never_race():
    a = np.arange(32, dtype=np.float32)
    [race] = trace_kernel(global_race, 1, 32, a, np.zeros(1)).hazards
    assert (race.kind, race.space) == ("WAW", "global")
    assert trace_kernel(global_race, 1, 32, np.ones(32), np.zeros(1)).hazards == []  # same value
    values = np.arange(64, dtype=np.int64) % 8
    hist = np.zeros(8, np.float32)
    assert trace_kernel(shared_histogram, 1, 64, values, hist, 1).hazards == []
    assert np.array_equal(hist, np.full(8, 8))


def test_uninitialised_shared_reads():
    values = np.arange(64, dtype=np.int64) % 8
    trace = trace_kernel(shared_histogram, 1, 64, values, np.zeros(8, np.float32), 0)
    [found] = trace.hazards
    assert found.kind == "uninitialised" and found.lines == (line_of(shared_histogram, "atomic"),)
    assert found.count == 64


@cuda.jit
def shifted(a, b):
    """b[i] = a[i + 1]: the last thread reads past the end."""
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[i + 1]


def test_out_of_bounds_reported_with_thread_line_and_shape():
    a, b = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    trace = trace_kernel(shifted, 2, 32, a, b)
    [oob] = trace.hazards
    assert (oob.kind, oob.array) == ("out-of-bounds", "a")
    assert oob.lines == (line_of(shifted, "a[i + 1]"),)
    assert oob.block == (1,) and oob.threads == ((31,),) and oob.index == (64,)
    assert "(64,)" in oob.message
    assert np.array_equal(b[:63], a[1:]) and np.isnan(b[63])


# ---- sampling, summaries, pictures, warp intrinsics -----------------------------------------


def test_blocks_samples_the_grid():
    a, b = np.arange(8 * 32, dtype=np.float32), np.zeros(8 * 32, np.float32)
    trace = trace_kernel(copy, 8, 32, a, b, blocks=2)
    assert trace.blocks == [(0, 0, 0), (7, 0, 0)]
    assert trace.line(line_of(copy, "b[i] = a[i]"), "global", "load").requests == 2
    assert np.array_equal(b[:32], a[:32]) and not b[32:224].any()
    assert trace_kernel(copy, 8, 32, a, b, blocks=[3]).blocks == [(3, 0, 0)]
    with pytest.raises(ValueError, match="outside the grid"):
        trace_kernel(copy, 8, 32, a, b, blocks=[8])


def test_a_huge_trace_stops_at_a_block_boundary_with_a_warning(monkeypatch):
    from gpgpu_lessons.trace import record

    monkeypatch.setattr(record, "MAX_RECORDS", 10)
    a, b = np.arange(4 * 32, dtype=np.float32), np.zeros(4 * 32, np.float32)
    with pytest.warns(UserWarning, match="stops after 1 of 4 blocks"):
        trace = trace_kernel(copy, 4, 32, a, b)
    assert trace.blocks == [(0, 0, 0)] and "(1 of 4 blocks)" in trace.summary()


def test_summary_html_and_picture():
    trace = trace_kernel(column_read, 1, (TILE, ROWS), np.zeros((TILE, TILE), np.float32))
    line = line_of(column_read, "= tile[x, y + j]")
    assert f"{line}  shared   load" in trace.summary() and "32.0-way bank conflict" in str(trace)
    assert "32.0-way bank conflict" in trace._repr_html_() and "<table>" in trace._repr_html_()
    lanes = trace.lanes(line, space="shared")
    assert [bank for *_, bank in lanes] == [0] * 32
    row = next(r for r in trace.rows(line) if r.space == "shared" and r.thread == (1, 0, 0))
    assert (
        row.block,
        row.thread,
        row.warp,
        row.lane,
        row.array,
        row.op,
        row.index,
        row.interval,
    ) == ((0, 0, 0), (1, 0, 0), 0, 1, "tile", "load", (1, 0), 1)
    assert row.address == 4 * TILE
    fig = trace.figure(line, space="shared")
    assert "32.0 wavefronts per request" in fig.axes[0].get_title(loc="left")
    global_fig = trace_kernel(
        strided, 1, 32, np.ones(1024, np.float32), np.zeros(32, np.float32)
    ).figure(line_of(strided, "a[i * 32]"), space="global", op="load")
    assert "32 lanes -> 32 sector(s)" in global_fig.axes[0].get_title(loc="left")


@cuda.jit
def warp_shuffle_sum(a, out):
    """A warp sum with shuffles, then lane 0 stores it."""
    i = cuda.threadIdx.x
    value = a[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if i % 32 == 0:
        out[i // 32] = value


@cuda.jit
def warp_exchange(out, sync):
    """Lane i writes s[i], reads s[i ^ 1]: a race unless a syncwarp separates them."""
    s = cuda.shared.array(32, float32)
    i = cuda.threadIdx.x
    s[i] = i
    if sync:
        cuda.syncwarp()
    out[i] = s[i ^ 1]


def test_warp_intrinsics_and_syncwarp():
    a, out = np.arange(64, dtype=np.float32), np.zeros(2, np.float32)
    assert trace_kernel(warp_shuffle_sum, 1, 64, a, out).hazards == []
    assert np.array_equal(out, [a[:32].sum(), a[32:].sum()])
    assert trace_kernel(warp_exchange, 1, 32, np.zeros(32, np.float32), 1).hazards == []
    assert [h.kind for h in trace_kernel(warp_exchange, 1, 32, np.zeros(32), 0).hazards] == ["RAW"]


# ---- bad input ------------------------------------------------------------------------------


def plain(a):
    a[0] = 1


@cuda.jit(device=True)
def device_function(a):
    return a[0]


@cuda.jit
def grid_sync(a):
    """Cooperative groups: not supported by the tracer."""
    cuda.cg.this_grid().sync()
    a[0] = 1


def test_bad_input_gets_a_clear_error():
    a = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match="plain Python function.*@cuda.jit"):
        trace_kernel(plain, 1, 1, a)
    with pytest.raises(TypeError, match="device function"):
        trace_kernel(device_function, 1, 1, a)
    with pytest.raises(ValueError, match="launch shape"):
        trace_kernel(copy, None, None, a, a)
    with pytest.raises(ValueError, match="positive"):
        trace_kernel(copy, 0, 32, a, a)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        trace_kernel(copy, 1, 32, a)
    with pytest.raises(UnsupportedError, match="cooperative groups"):
        trace_kernel(grid_sync, 1, 1, a)
    assert issubclass(UnsupportedError, TraceError)


def test_package_exposes_trace_kernel_lazily():
    code = (
        "import sys, gpgpu_lessons; print('gpgpu_lessons.trace' in sys.modules, "
        "gpgpu_lessons.trace_kernel.__module__)"
    )
    env = dict(os.environ, GPGPU_LESSONS_QUIET="1")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    assert out == ["False", "gpgpu_lessons.trace.tracer"]


GPU_MODE_SCRIPT = textwrap.dedent("""
    import numpy as np
    import gpgpu_lessons
    from numba import cuda, float32
    from numba.cuda.dispatcher import CUDADispatcher
    from gpgpu_lessons.device import vector, warp

    LUT = np.arange(4, dtype=np.float32)

    @cuda.jit(device=True)
    def twice(x):
        return 2 * x

    @cuda.jit
    def kernel(a, out, total):
        s = cuda.shared.array(64, float32)
        held = cuda.local.array(4, float32)
        lut = cuda.const.array_like(LUT)
        i = cuda.grid(1)
        held[0], held[1], held[2], held[3] = vector.load_vector(a, 4 * i, 4)
        s[cuda.threadIdx.x] = twice(held[0] + held[1] + held[2] + held[3]) + lut[1]
        cuda.syncthreads()
        value = warp.warp_sum(s[63 - cuda.threadIdx.x])
        if i % 32 == 0:
            out[i // 32] = value
            cuda.atomic.add(total, 0, value)

    assert isinstance(kernel, CUDADispatcher)
    a, out, total = np.arange(256, dtype=np.float32), np.zeros(2, np.float32), np.zeros(1)
    trace = gpgpu_lessons.trace_kernel(kernel, 1, 64, a, out, total)
    sums = 2 * a.reshape(64, 4).sum(axis=1)[::-1] + 1
    assert np.allclose(out, [sums[:32].sum(), sums[32:].sum()]), out
    assert total[0] == out.sum() and trace.hazards == [], trace
    print(*[f"{r.space}-{r.op}-{r.requests}" for r in trace.lines])
""")


def test_real_gpu_mode_runs_py_func_on_the_simulator_machinery():
    """On a GPU machine the kernel is a CUDADispatcher: compile-only mode has the same objects."""
    env = dict(os.environ, GPGPU_LESSONS_COMPILE_ONLY="1", GPGPU_LESSONS_QUIET="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    run = subprocess.run(
        [sys.executable, "-c", GPU_MODE_SCRIPT],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [
        "global-load-2",
        "local-store-8",
        "shared-store-2",
        "constant-load-2",
        "local-load-8",
        "shared-load-2",
        "global-store-2",
        "global-atomic-2",
    ], run.stdout

"""Races racecheck does not report: between blocks in global memory, and atomics mixed with plain
accesses of one address; and the patterns that are not races (no false positives)."""

import inspect

import numpy as np
import pytest
from numba import cuda, float32, int32

from gpgpu_lessons import exercises
from gpgpu_lessons.device import handover
from gpgpu_lessons.trace import trace_kernel

BINS = 16
B = 64


def line_of(kernel, text):
    lines, first = inspect.getsourcelines(kernel.py_func)
    return first + next(k for k, line in enumerate(lines) if text in line and '"""' not in line)


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GPGPU_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


@cuda.jit
def histogram_merged_plainly(values, bins):
    """Block-private bins, merged with a plain += (every block updates every bin)."""
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        bins[t] += local[t]


@cuda.jit
def histogram(values, bins):
    """The correct one: the merge is an atomic."""
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def histogram_no_first_barrier(values, bins):
    """Zeroes the bins, then atomics on them, with no barrier between."""
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def histogram_no_second_barrier(values, bins):
    """Atomics on the bins, then reads them, with no barrier between."""
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def dot_plain_add(x, y, out):
    """A per-block tree, then out[0] += part[0] from every block (no atomic)."""
    part = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[j] * y[j]
    part[t] = acc
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            part[t] += part[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] += part[0]


@cuda.jit
def own_elements(a, out):
    """Each block writes its own elements only."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * a[i]


@cuda.jit
def same_flag(flag):
    """Every block writes the same value to one place: benign."""
    flag[0] = 1


@cuda.jit
def read_what_block_zero_writes(a, out):
    """Block 0 writes a[0]; the other blocks read it."""
    i = cuda.grid(1)
    if i == 0:
        a[0] = 5.0
    if cuda.threadIdx.x == 0 and cuda.blockIdx.x > 0:
        out[cuda.blockIdx.x] = a[0]


@cuda.jit
def summed_with_hand_over(x, total, acc, tickets):
    """device.handover: the last block moves the sum over (atomics and a ticket)."""
    value = float32(0)
    if cuda.threadIdx.x == 0:
        for j in range(cuda.blockIdx.x * B, (cuda.blockIdx.x + 1) * B):
            value += x[j]
        handover.add_and_hand_over(value, total, acc, tickets)


def _values(rng, n=500):
    return rng.integers(0, 256, n).astype(np.int32)


def kinds(found):
    return {h.kind for h in found.hazards}


def test_a_plain_merge_of_block_private_bins_is_a_race_between_blocks():
    found = trace_kernel(
        histogram_merged_plainly, 4, B, _values(np.random.default_rng(1)), np.zeros(BINS, np.int32)
    )
    races = [h for h in found.hazards if h.kind == "race between blocks"]
    assert races, found.hazards
    line = line_of(histogram_merged_plainly, "bins[t] += local[t]")
    assert races[0].lines == (line, line)
    assert "not atomically" in races[0].message and "cuda.atomic.add" in races[0].message
    assert races[0].array == "bins"


def test_a_plain_add_of_each_block_total_is_a_race_between_blocks():
    rng = np.random.default_rng(2)
    x, y = rng.random(300, dtype=np.float32), rng.random(300, dtype=np.float32)
    found = trace_kernel(dot_plain_add, 3, B, x, y, np.zeros(1, np.float32))
    races = [h for h in found.hazards if h.kind == "race between blocks"]
    assert races and races[0].array == "out", found.hazards
    assert line_of(dot_plain_add, "out[0] += part[0]") in races[0].lines


def test_reading_what_another_block_writes_is_a_race_between_blocks():
    found = trace_kernel(
        read_what_block_zero_writes, 3, 32, np.ones(4, np.float32), np.zeros(3, np.float32)
    )
    assert "race between blocks" in kinds(found)


@pytest.mark.parametrize(
    "kernel, plain",
    [(histogram_no_first_barrier, "local[t] = 0"), (histogram_no_second_barrier, "bins, t, local")],
)
def test_atomics_mixed_with_plain_accesses_without_a_barrier(kernel, plain):
    found = trace_kernel(kernel, 2, B, _values(np.random.default_rng(3)), np.zeros(BINS, np.int32))
    mixed = [h for h in found.hazards if h.kind == "atomic race"]
    assert mixed and mixed[0].space == "shared" and mixed[0].array == "local", found.hazards
    assert line_of(kernel, plain) in mixed[0].lines
    assert line_of(kernel, "cuda.atomic.add(local") in mixed[0].lines
    assert "no syncthreads between them" in mixed[0].message


@pytest.mark.parametrize(
    "kernel, args",
    [
        (histogram, lambda rng: (_values(rng), np.zeros(BINS, np.int32))),
        (own_elements, lambda rng: (rng.random(100, dtype=np.float32), np.zeros(100, np.float32))),
        (same_flag, lambda rng: (np.zeros(1, np.int32),)),
        (
            summed_with_hand_over,
            lambda rng: (
                rng.random(4 * B, dtype=np.float32),
                np.zeros(1, np.float32),
                np.zeros(1, np.float32),
                np.zeros(1, np.uint32),
            ),
        ),
    ],
)
def test_legitimate_patterns_are_not_flagged(kernel, args):
    values = args(np.random.default_rng(4))
    found = trace_kernel(kernel, 4, B, *values)
    assert not found.hazards, found.hazards
    if kernel is summed_with_hand_over:
        assert np.isclose(values[1][0], values[0].sum(), rtol=1e-5)


def test_the_grader_rejects_the_races_between_blocks():
    @cuda.jit
    def histogram(values, bins):
        local = cuda.shared.array(BINS, int32)
        t = cuda.threadIdx.x
        if t < BINS:
            local[t] = 0
        cuda.syncthreads()
        for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
            cuda.atomic.add(local, values[j] >> 4, 1)
        cuda.syncthreads()
        if t < BINS:
            bins[t] += local[t]

    answer = exercises.grade("05.4", histogram, seed=1)
    assert not answer.passed
    assert "race between blocks" in str(answer) and "not atomically" in str(answer), str(answer)

    @cuda.jit
    def dot(x, y, out):
        partial = cuda.shared.array(128, float32)
        t = cuda.threadIdx.x
        acc = float32(0)
        for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
            acc += x[j] * y[j]
        partial[t] = acc
        cuda.syncthreads()
        s = 64
        while s > 0:
            if t < s:
                partial[t] += partial[t + s]
            cuda.syncthreads()
            s //= 2
        if t == 0:
            out[0] += partial[0]

    answer = exercises.grade("05.5", dot, seed=1)
    assert not answer.passed
    assert "race between blocks" in str(answer), str(answer)


def test_the_grader_rejects_atomics_mixed_with_plain_accesses():
    answer = exercises.grade("05.4", _no_barrier(), seed=1)
    assert not answer.passed
    assert "atomic race" in str(answer), str(answer)


def _no_barrier():
    @cuda.jit
    def histogram(values, bins):
        local = cuda.shared.array(BINS, int32)
        t = cuda.threadIdx.x
        if t < BINS:
            local[t] = 0
        cuda.syncthreads()
        for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
            cuda.atomic.add(local, values[j] >> 4, 1)
        if t < BINS:
            cuda.atomic.add(bins, t, local[t])

    return histogram

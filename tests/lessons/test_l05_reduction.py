"""Lesson 05's sums: every rung and the tuned sum against float64; what the tracer counts."""

from collections import Counter

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons import runtime, trace_kernel
from gpgpu_lessons.l05_atomics_vs_reduction import fast, figures, tables, textbook, tracing
from gpgpu_lessons.timing import Timing


def poisoned_total():
    """A one-element output holding NaN, so a sum that is never written shows."""
    return cuda.to_device(np.full(1, np.nan, dtype=np.float32))


def check_sum(got, a):
    expected = a.sum(dtype=np.float64)
    assert np.isclose(got, expected, rtol=1e-5, atol=1e-6), (got, expected)


@pytest.mark.parametrize("variant", textbook.LADDER)
def test_every_rung_matches_numpy_on_interleaved_sizes(rng, variant):
    """Sizes not a multiple of a block, in one process: nothing kept from one call to the next."""
    for n in (1, 600):  # one block, then several
        a = rng.random(n, dtype=np.float32) - np.float32(0.25)  # mixed signs
        got = textbook.parallel_sum(a, variant=variant)
        assert isinstance(got, float)
        check_sum(got, a)


@pytest.mark.parametrize(
    "variant", [textbook.GRID_STRIDE, "warp-shuffle finish", textbook.ATOMIC_PER_ELEMENT]
)
def test_out_is_overwritten_never_added_to(rng, variant):
    a = rng.random(257, dtype=np.float32)
    out = cuda.to_device(np.full(1, 1000, dtype=np.float32))
    for _ in range(2):
        assert textbook.parallel_sum(cuda.to_device(a), variant=variant, out=out) is out
        check_sum(out.copy_to_host()[0], a)
    host_out = np.full(1, np.nan, dtype=np.float32)
    assert textbook.parallel_sum(a, variant=variant, out=host_out) is host_out
    check_sum(host_out[0], a)


def test_bad_options_are_named():
    good = np.ones(4, dtype=np.float32)
    with pytest.raises(ValueError, match="unknown variant"):
        textbook.parallel_sum(good, variant="magic")
    with pytest.raises(ValueError, match="multiple of 32"):
        fast.sum_grid_stride(good, block=48)
    with pytest.raises(ValueError, match="at most 1024"):
        fast.sum_grid_stride(good, block=2048)
    with pytest.raises(ValueError, match="vector must be 1 or 4"):
        fast.sum_grid_stride(good, vector=2)
    with pytest.raises(ValueError, match="items"):
        fast.sum_grid_stride(good, items=0)


@pytest.mark.parametrize("config", fast.OTHER_SUMS, ids=str)
def test_grid_stride_configurations(rng, config):
    """Whole loads, a ragged tail, the last floats; two blocks, so the hand-over has a last one."""
    block, items, vector, readonly, hand_over = config
    for n in (1027, 3):
        a = rng.random(n, dtype=np.float32) - np.float32(0.25)
        out = poisoned_total()
        fast.sum_grid_stride(
            cuda.to_device(a),
            out=out,
            block=block,
            items=items,
            vector=vector,
            readonly=readonly,
            hand_over=hand_over,
            blocks=2,
        )
        check_sum(out.copy_to_host()[0], a)


def test_tuned_sum_matches_numpy_and_returns_a_float(rng):
    a = rng.random(4099, dtype=np.float32)
    got = fast.sum_grid_stride(a)
    assert isinstance(got, float)
    check_sum(got, a)
    check_sum(fast.sum_grid_stride(a[1:]), a[1:])  # a view off 16-byte alignment


@pytest.mark.skipif(
    not runtime.is_simulator(), reason="an out-of-bounds store loses a GPU's context"
)
def test_a_hand_over_that_fails_midway_leaves_nothing_for_the_next_call():
    """Issue 13: a failed launch left its partial sum in a module-level accumulator (10100 for
    1..100 after it); now the accumulator belongs to the call."""
    one_to_100 = np.arange(1, 101, dtype=np.float32)
    acc, tickets = cuda.to_device(np.zeros(1, np.float32)), cuda.to_device(np.zeros(1, np.uint32))
    d_a, no_room = cuda.to_device(one_to_100), cuda.device_array(0, np.float32)
    with pytest.raises(IndexError):  # no room for the total: the last block fails after its add
        fast.sum_grid_stride_tuned[1, fast.SUM_BLOCK](d_a, no_room, acc, tickets)
    assert acc.copy_to_host()[0] == 5050
    assert fast.sum_grid_stride(one_to_100) == 5050
    assert textbook.parallel_sum(one_to_100) == 5050


def test_hand_over_state_is_per_call_in_the_simulator_and_per_context_on_a_gpu(rng):
    """A simulated kernel can stop halfway (Ctrl-C); a GPU launch completes or ends the context."""
    d_a = cuda.to_device(rng.random(10, dtype=np.float32))
    first, second = fast.sum_grid_stride.prepare(d_a), fast.sum_grid_stride.prepare(d_a)
    shared = first.steps[-1].args[2] is second.steps[-1].args[2]
    assert shared is not runtime.is_simulator()
    assert len(first.steps) == 1  # one launch: no step that clears the total
    for prepared in (first, second, first):  # launches run again and again
        check_sum(prepared.result(), d_a.copy_to_host())


@pytest.mark.parametrize("n", [1, 31, 4099, 20011, 5])
def test_sums_and_dots_of_changing_sizes_share_the_hand_over_state(rng, n):
    """Grids of other sizes, one after another, each leave the scratch as they found it."""
    from gpgpu_lessons.l01_coalescing import fast as coalescing

    a = rng.random(n, dtype=np.float32) + 0.5
    for _ in range(2):
        check_sum(fast.sum_grid_stride(a), a)
        np.testing.assert_allclose(coalescing.dot(a, a), np.dot(a.astype(np.float64), a), 1e-5)


def test_every_configuration_is_its_own_kernel():
    configs = (fast.TUNED_SUM, *fast.OTHER_SUMS)
    names = {fast.grid_stride_kernel(*c).py_func.__name__ for c in configs}
    assert len(names) == 1 + len(fast.OTHER_SUMS)
    assert fast.grid_stride_kernel(*fast.TUNED_SUM) is fast.sum_grid_stride_tuned
    assert set(fast.TUNING["space"]) == set(fast.TUNING["chosen"])
    for name, value in fast.TUNING["chosen"].items():
        assert value in fast.TUNING["space"][name]


def test_the_tuning_case_builds_a_launch():
    prepared, nbytes = fast.TUNING["case"](**fast.TUNING["chosen"])
    assert nbytes == 4 * runtime.pick(gpu=2**28, simulator=2**10)  # the GPU tunes at 1 GiB
    assert np.isfinite(prepared.result().copy_to_host()[0])


@pytest.mark.parametrize("variant", figures.TREE_ORDER)
def test_tree_pairs_follow_the_kernel_formulas(variant):
    steps = figures.tree_pairs(variant, threads=8)
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
    with pytest.raises(ValueError, match="power of two"):
        figures.tree_pairs(variant, threads=6)


def test_trees_figure_reads_from_the_back_of_the_room_and_bad_tree():
    fig = figures.trees()
    assert len(fig.axes) == 3 and fig.get_size_inches()[0] >= 12
    texts = [t for ax in fig.axes for t in ax.texts] + [ax.title for ax in fig.axes]
    assert texts and min(t.get_fontsize() for t in texts) >= 13
    assert len(figures.trees(threads=4).axes) == 3
    with pytest.raises(ValueError, match="tree_pairs draws"):
        figures.tree_pairs(textbook.GRID_STRIDE)


# ---- the ladder through the tracer --------------------------------------------------------


@pytest.fixture(scope="module")
def ladder_traces():
    a = np.random.default_rng(2).random(tracing.TRACED_SUM, dtype=np.float32)
    rungs = (
        textbook.ATOMIC_PER_ELEMENT,
        "interleaved, divergent",
        "interleaved, bank conflicts",
        "sequential addressing",
        textbook.GRID_STRIDE,
    )
    return tracing.trace_ladder(a, rungs)


@pytest.fixture(scope="module")
def ladder_counts(ladder_traces):
    return {rung: tracing.ladder_counts(t) for rung, t in ladder_traces.items()}


def test_the_tracer_counts_what_the_notes_say(ladder_counts):
    """The counts lesson 05's notes cite, for 512 floats (two blocks of a tree rung)."""
    atomic = ladder_counts[textbook.ATOMIC_PER_ELEMENT]
    assert atomic["global atomic adds"] == 512 and atomic["lanes on one address"] == 32
    assert atomic["shared requests"] == 0
    divergent = ladder_counts["interleaved, divergent"]
    conflicts = ladder_counts["interleaved, bank conflicts"]
    sequential = ladder_counts["sequential addressing"]
    assert divergent["shared requests"] == 300 and divergent["wavefronts per request"] == 1
    assert divergent["busy lanes per request"] == pytest.approx(6.8, abs=0.05)
    assert conflicts["shared requests"] == sequential["shared requests"] == 90
    assert conflicts["wavefronts per request"] == pytest.approx(3.3, abs=0.05)
    assert sequential["wavefronts per request"] == 1
    assert sequential["busy lanes per request"] == pytest.approx(22.7, abs=0.05)
    stride = ladder_counts[textbook.GRID_STRIDE]
    assert stride["global atomic adds"] == 1 and stride["lanes on one address"] == 1


def test_rung_3_at_stride_4_is_an_8_way_bank_conflict():
    """The pictured request: the third pass (s = 4) reads 8 words from each of 4 banks."""
    kernel = textbook.sum_interleaved_bank_conflicts
    a = np.random.default_rng(2).random(textbook.BLOCK, dtype=np.float32)
    trace = trace_kernel(kernel, 1, textbook.BLOCK, a, np.zeros(1, np.float32))
    assert tracing.RUNG_3_ADD == tracing.line_of(kernel, "partial[2 * s * tid] +=")
    lanes = trace.lanes(tracing.RUNG_3_ADD, space="shared", op="load", occurrence=2)
    assert [index for _, _, index, *_ in lanes[:3]] == [(0,), (8,), (16,)]
    banks = Counter(bank for *_, bank in lanes)
    assert sorted(banks) == [0, 8, 16, 24] and set(banks.values()) == {8}


def test_rung_launches_and_bad_names():
    assert tracing.rung_launch("first add during load", 512)[1] == 1
    assert tracing.rung_launch(textbook.ATOMIC_PER_ELEMENT, 513)[1] == 3
    with pytest.raises(ValueError, match="unknown variant"):
        tracing.rung_launch("magic", 512)
    with pytest.raises(ValueError, match="has no line"):
        tracing.line_of(textbook.sum_sequential, "not in the kernel")


def test_the_ladder_table_puts_gpu_times_beside_the_counts(ladder_traces):
    timings = [Timing(r, [1.0 + k]) for k, r in enumerate(ladder_traces)]
    timings.append(Timing("cupy.sum (CUB)", [0.5]))  # a library sum: nothing of ours to trace
    header, rows = tables.beside_counts(timings, ladder_traces)
    assert header[:3] == ["rung", "time", "shared requests"]
    assert [row[0] for row in rows] == list(ladder_traces)
    assert rows[0] == [textbook.ATOMIC_PER_ELEMENT, "1 ms", 0, "-", "-", "512 (32)"]
    assert rows[2][1:5] == ["3 ms", 90, "22.7", "3.3"]
    # grid stride: 8 warps store their sums (one lane each), warp 0 reads the 8 back
    assert rows[-1][1:] == ["5 ms", 9, "1.8", "1.0", "1 (1)"]


def test_a_sampled_trace_of_the_hand_over_leaves_later_sums_right(rng):
    """The H200 run: tracing one block of the dot wrote its half-done hand-over state back to the
    GPU, and every later dot was off by a block's partial sum; a sampled trace writes nothing."""
    a = rng.random(20011, dtype=np.float32) + 0.5  # 4 blocks of 4096 floats a step, then a tail
    d_a = cuda.to_device(a)
    step = fast.sum_grid_stride.prepare(d_a, blocks=4).steps[0]
    trace_kernel(step.kernel, step.grid, step.block, *step.args, blocks=1)
    for _ in range(2):
        check_sum(fast.sum_grid_stride(d_a), a)

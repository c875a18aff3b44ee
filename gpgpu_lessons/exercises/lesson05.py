"""Exercises of lesson 05 (atomics vs reduction): counts, shuffles, histogram, dot, compaction."""

from __future__ import annotations

import re

import numpy as np

from . import checks, data, figures
from .registry import Case, Exercise

TITLE = "Atomics vs reduction"

BLOCK = 64
THRESHOLD = np.float32(1.2)


def _ties(values, every, value, name="x") -> str:
    """Set every `every`-th element (the only one, when there is one) to the threshold itself:
    "above" means `>`, and only a tie tells `>` from `>=`. Returns the case's label."""
    # the two after each tie: right below and right above it (a comparison off by a hair); the
    # last element: right above (a kernel that skips it, or reads it for threads past the end)
    below, above = data.next_to(value, values.dtype)
    values[::every] = value
    values[1::every] = below
    values[2::every] = above
    if values.size > 1:
        values[-1] = above
    ties, beside = values[::every].size, values[1::every].size + values[2::every].size
    return f"n = {values.size}, " + (
        f"{name}[0] equal to the threshold"
        if values.size == 1
        else f"{ties} equal to the threshold, {beside} right next to it"
    )


def _count_verify(values, threshold):
    """A check of count[0] that names the slip `>=` for `>` (the ties are counted)."""
    expected = int(np.count_nonzero(values > threshold))
    with_ties = int(np.count_nonzero(values >= threshold))

    def verify(got):
        count = int(got["count"][0])
        if count == expected:
            return None
        if count == with_ties:
            return (
                f"count[0] is {count}, expected {expected}: you count the "
                f"{with_ties - expected} element(s) equal to the threshold too; 'above' "
                "means `>`, not `>=`"
            )
        if expected and count > expected and count % expected == 0:
            return (
                f"count[0] is {count}, {count // expected}x the expected {expected}: several "
                "threads add the same count (only one lane of each warp, lane 0, should)"
            )
        return f"count[0] is {count}, expected {expected}"

    return verify


def _edges(rng, values, every) -> str:
    """Values within 1e-3 of the data's edges (0.5, 1.5) from the fourth on; the label's words."""
    values[3::every] = data.edges(rng, values[3::every].size)
    return f", {values[3::every].size} within 1e-3 of 0.5 or 1.5" if values.size > 3 else ""


def _count_case(rng, n, block=BLOCK):
    x = data.floats(rng, n)
    edges = _edges(rng, x, 5)
    return _count_case_of(x, THRESHOLD, _ties(x, 5, THRESHOLD) + edges, block)


def _count_case_of(x, threshold, label, block=BLOCK):
    """The case of 05.1 on these values (the hidden cases choose theirs)."""
    expected = np.array([np.count_nonzero(x > threshold)], np.int32)
    return Case(
        label,
        {"x": x, "threshold": threshold, "count": data.empty(1, np.int32)},
        {"count": expected},
        data.blocks(x.size, block),
        block,
        verify=_count_verify(x, threshold),
        zeros=("count",),
        write_once=False,
        bytes_moved=4 * x.size,
    )


COUNT = Exercise(
    id="05.1",
    name="count_above",
    title="Count with an atomic",
    statement="""\
Count the elements of `x` above `threshold` into `count[0]` (which starts at 0), one thread per
element, blocks of 64. Many threads add to the same counter at the same time: `count[0] += 1`
loses updates (two threads read the same old value). Use `cuda.atomic.add`. `n = 1`,
`n = 300`.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def count_above(x, threshold, count):
    """count[0] = the number of elements of x above threshold."""
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        count[0] += 1  # TODO: a read-modify-write that other threads interrupt
''',
    params=("x", "threshold", "count"),
    hints=(
        "`count[0] += 1` is three steps (read, add, write); another thread can write between your "
        "read and your write.",
        "`cuda.atomic.add(array, index, value)` does the three steps as one that no other thread "
        "can interrupt. It returns the old value, which this exercise does not need.",
    ),
    cases=lambda rng, gpu: (
        [_count_case(rng, 1), _count_case(rng, 300)]
        + ([_count_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(),
    next="Next: 05.2, a warp adds up its 32 values without shared memory.",
    performance=lambda rng: _count_case(rng, 2**25),
)


def _nan_sum(got, k: int, empty: bool) -> str:
    """Why sums[k] is NaN, as far as the launch tells (`empty`: warp k has no element of x):
    never written (the store counts), a shuffle that read a lane taking no part (only for a
    kernel that shuffles), or a sum added into an output that starts as NaN."""
    writes = (getattr(got, "writes", None) or {}).get("sums")
    kernel = getattr(got, "kernel", None)
    shuffles = checks.source_calls(kernel, ("shfl_",)) if kernel is not None else None
    stores = None if writes is None else int(writes[k])
    unwritten = (
        ": it was never written: no thread stored to it, and outputs start as NaN. Lane 0 of "
        "every warp writes its warp's sum"
        + (f" (warp {k} has no element of x: its sum is 0)" if empty else "")
    )
    if stores == 0:
        return unwritten
    shuffle = (
        "NaN is what a shuffle gives in the simulator when it reads a lane that takes no part "
        "(one that returned early or skipped the shuffle under an `if`; on a GPU: garbage). "
        "Every lane of the warp must shuffle; lanes past the end contribute 0"
    )
    if shuffles and stores is None:
        return f": either no lane wrote it (outputs start as NaN), or it took in a NaN: {shuffle}"
    if shuffles:
        return f": it was written, so its sum took in a NaN: {shuffle}"
    code = checks.source_text(kernel) or ""
    adds = bool(re.search(r"\bsums\s*\[[^\]]*\]\s*\+=|atomic\.\w+\(\s*sums\b", code))
    if stores is None:
        return (
            ": NaN is the value outputs start with (the grader does not zero them): no lane "
            "stored a finished sum there"
            + ("; adding to sums (`+=`, an atomic) keeps the NaN" if adds else "")
        )
    more = (
        ": outputs start as NaN here (the grader does not zero them), and adding to an "
        "element (`+=`, `cuda.atomic.add`) keeps the NaN; store each warp's finished sum "
        "once, with `=`"
        if adds
        else ": the value stored was NaN"
    )
    return f": it was written ({stores} store(s)) but holds NaN{more}"


def _warp_sums_case(rng, n, block=BLOCK):
    x = data.signed(rng, n)
    warps = data.blocks(n, block) * block // 32
    padded = np.zeros(warps * 32, np.float64)
    padded[:n] = x

    expected = padded.reshape(-1, 32).sum(axis=1)

    def verify(got):
        sums = got["sums"].astype(np.float64)
        wrong = ~np.isclose(sums, expected, rtol=1e-5, atol=1e-5)
        if not wrong.any():
            return None
        k = int(np.flatnonzero(wrong)[0])
        why = _nan_sum(got, k, 32 * k >= n) if np.isnan(sums[k]) else ""
        return (
            f"{int(wrong.sum())} of {sums.size} warp sums are wrong; the first, sums[{k}]: "
            f"expected {expected[k]:.6g}, got {sums[k]:.6g}{why}"
        )

    return Case(
        f"n = {n}",
        {"x": x, "sums": data.empty(warps)},
        {"sums": np.zeros(warps)},
        data.blocks(n, block),
        block,
        verify=verify,
        bytes_moved=4 * n,
    )


WARP_SUM = Exercise(
    id="05.2",
    name="warp_sums",
    title="A warp-shuffle sum",
    statement="""\
`sums[w]` = the sum of the 32 elements of warp `w` (elements past the end count as 0), blocks
of 64 threads. No shared memory: each lane holds one value, and `cuda.shfl_down_sync(mask,
value, offset)` hands it the value of the lane `offset` places up. Offsets 16, 8, 4, 2, 1
leave the warp's total in lane 0, which writes it. `n = 40` and `n = 300`.""",
    skeleton='''\
from numba import cuda

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_sums(x, sums):
    """sums[w] = the sum of warp w's 32 elements, with shuffles."""
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    value = x[i] if i < x.size else 0.0
    # TODO: offset = 16, 8, 4, 2, 1: value += cuda.shfl_down_sync(FULL_MASK, value, offset)
    if lane == 0:
        sums[i // 32] = value
''',
    params=("x", "sums"),
    hints=(
        "After the step with offset 16, lane k holds x[k] + x[k + 16]; after 8, four elements; ... "
        "after 1, lane 0 holds all 32.",
        "A loop that starts at 16 and halves the offset until it is 0 does the five steps. Every "
        "lane must run every step: a shuffle that some lanes skip waits for them (the grader "
        "reports a stuck warp).",
    ),
    cases=lambda rng, gpu: (
        [_warp_sums_case(rng, 40), _warp_sums_case(rng, 300)]
        + ([_warp_sums_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.SourceUses(
            ("shfl_",), "a warp shuffle (`cuda.shfl_down_sync`, `cuda.shfl_xor_sync`)"
        ),
    ),
    figure=figures.shuffle_tree,
    next="Next: 05.3, one atomic per warp with a ballot.",
    performance=lambda rng: _warp_sums_case(rng, 2**25),
)

BRIGHT = 200


def _bright_case(rng, n, block=BLOCK):
    pixels = data.pixels(rng, n)
    return _bright_case_of(pixels, BRIGHT, _ties(pixels, 5, BRIGHT, "pixels"), block)


def _bright_case_of(pixels, threshold, label, block=BLOCK):
    """The case of 05.3 on these pixels (the hidden cases choose theirs)."""
    expected = np.array([np.count_nonzero(pixels > threshold)], np.int32)
    return Case(
        label,
        {"pixels": pixels, "threshold": np.int32(threshold), "count": data.empty(1, np.int32)},
        {"count": expected},
        data.blocks(pixels.size, block),
        block,
        verify=_count_verify(pixels, threshold),
        zeros=("count",),
        write_once=False,
        bytes_moved=pixels.size,
    )


BALLOT = Exercise(
    id="05.3",
    name="count_bright",
    title="One atomic per warp",
    statement="""\
The skeleton counts bright pixels (`> threshold`) with one atomic per bright pixel: every bright
lane of a warp updates the same address, and those atomics wait for each other. Make it **one
atomic per warp**: every lane calls `cuda.ballot_sync(0xFFFFFFFF, is_bright)` (a 32-bit mask of
the bright lanes), and lane 0 adds `cuda.popc(mask)`. All 32 lanes must reach the ballot: no
early return for `i >= n`. Blocks of 64; `n = 1` and `n = 300`.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def count_bright(pixels, threshold, count):
    """count[0] = the number of pixels above threshold (make it one atomic per warp)."""
    i = cuda.grid(1)
    if i < pixels.size and pixels[i] > threshold:
        cuda.atomic.add(count, 0, 1)
''',
    params=("pixels", "threshold", "count"),
    hints=(
        "The ballot needs every lane of the warp: no lane may return early or skip it. A lane past "
        "the end of `pixels` votes too, with False.",
        "The ballot returns the same 32-bit mask to every lane. One lane of the warp, lane 0 "
        "(`cuda.threadIdx.x % 32` is the lane), adds the number of its set bits to `count`; the "
        "other lanes do no atomic.",
        "If every lane adds the popcount, the count is 32 times too large: the grader says so.",
    ),
    cases=lambda rng, gpu: (
        [_bright_case(rng, 1), _bright_case(rng, 300)]
        + ([_bright_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.NoReturnBefore(
            ("ballot_sync",),
            "the ballot",
            "Let the lanes past the end vote False instead: `is_bright = i < pixels.size and "
            "pixels[i] > threshold`, and no `return` before the ballot.",
        ),
        checks.NoAtomicContention("global"),
    ),
    next="Next: 05.4, a histogram with bins in shared memory.",
    performance=lambda rng: _bright_case(rng, 2**25),
)

BINS = 16
HIST_GRID = 2


def _histogram_case(rng, n, grid=HIST_GRID, block=BLOCK):
    values = data.pixels(rng, n, 0)
    if n > 20:  # a crowded bin, as in real images: contention shows
        values[: n // 3] = rng.integers(96, 112, size=n // 3, dtype=np.uint8)
    edges = np.array([0, 15, 16, 255, 240], np.uint8)[:n]  # the first and last bins' edges
    values[-edges.size :] = edges
    expected = np.bincount(values >> 4, minlength=BINS).astype(np.int32)
    return Case(
        f"n = {n} with {grid} blocks of {block}",
        {"values": values, "bins": data.empty(BINS, np.int32)},
        {"bins": expected},
        grid,
        block,
        zeros=("bins",),
        write_once=False,
        bytes_moved=n,
    )


HISTOGRAM = Exercise(
    id="05.4",
    name="histogram",
    title="A histogram with shared bins",
    statement="""\
A 16-bin histogram of uint8 `values` (bin `v >> 4`) into `bins` (which starts at 0). 2 blocks
of 64 threads walk the data with a grid-stride loop. Atomics straight into global `bins` pile up
on the popular bins; instead, each block counts into its **own 16 bins in shared memory**
(zeroed first), then adds them to `bins`: 16 global atomics per block. `n = 5` and `n = 1000`.""",
    skeleton='''\
from numba import cuda, int32

BINS = 16


@cuda.jit
def histogram(values, bins):
    """bins[b] += how many values have v >> 4 == b (make the bins per block, in shared memory)."""
    i = cuda.grid(1)
    for j in range(i, values.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, values[j] >> 4, 1)
''',
    params=("values", "bins"),
    hints=(
        "Three phases, a barrier between each: zero the shared bins (threads t < 16), count into "
        "them with `cuda.atomic.add` on the shared array, add them to `bins`.",
        "The shared array holds `BINS` int32 counters and starts with garbage: zero it before "
        "counting. The grid-stride loop stays; only the array it counts into changes.",
        "In the last phase 16 threads each add one shared bin into the same bin of `bins`, with an "
        "atomic: the other block adds into it too, and a plain `+=` would lose its counts on a "
        "GPU.",
    ),
    cases=lambda rng, gpu: (
        [_histogram_case(rng, 5), _histogram_case(rng, 1000)]
        + ([_histogram_case(rng, 1_000_003, 1056)] if gpu else [])
    ),
    trace_case=1,
    checks=(
        checks.UsesShared("the bins of each block live in shared memory"),
        checks.NoAtomicContention("global"),
    ),
    next="Next: 05.5, a dot product that beats one atomic per element.",
    performance=lambda rng: _histogram_case(rng, 2**25, 4224),
)

DOT_GRID = 2


def _dot_case(rng, n, grid=DOT_GRID, block=BLOCK):
    x, y = data.floats(rng, n), data.floats(rng, n)
    expected = np.array([np.dot(x.astype(np.float64), y.astype(np.float64))], np.float32)
    # float32 additions in any order (atomics): the error grows like sqrt(n) rounding steps
    rtol = max(1e-5, 3e-7 * np.sqrt(n))
    return Case(
        f"n = {n} with {grid} blocks of {block}",
        {"x": x, "y": y, "out": data.empty(1)},
        {"out": expected},
        grid,
        block,
        zeros=("out",),
        write_once=False,
        rtol=rtol,
        atol=0,
        bytes_moved=8 * n,
    )


DOT = Exercise(
    id="05.5",
    name="dot",
    title="A dot product with one atomic per block",
    statement="""\
`out[0] = x . y` (float32; `out` starts at 0), with 2 blocks of 64 threads and a grid-stride
loop. The skeleton does one atomic per element: all of them on one address, one after the other.
Let each thread add up its products in a register, the block combine its 64 partial sums (a tree
in shared memory, or warp shuffles), and one thread per block do **one** atomic. `n = 3` and
`n = 1000`.""",
    skeleton='''\
from numba import cuda, float32

B = 64


@cuda.jit
def dot(x, y, out):
    """out[0] = the dot product of x and y (make it one atomic per block)."""
    i = cuda.grid(1)
    for j in range(i, x.size, cuda.gridsize(1)):
        cuda.atomic.add(out, 0, x[j] * y[j])
''',
    params=("x", "y", "out"),
    hints=(
        "Three stages: each thread sums its products over the grid-stride loop in a local variable "
        "(a register); the block adds its 64 sums in shared memory; one thread adds the block's "
        "total to `out[0]`.",
        "The block's sum is lesson 03's tree with sequential addressing (exercise 03.3), on a "
        "shared array of `B` floats that each thread fills with its own sum; a barrier after "
        "filling it and after each step.",
        "Only thread 0 does the atomic, after the tree, with the total it finds in element 0. Two "
        "blocks add into `out[0]`: there an atomic is still needed, one per block.",
    ),
    cases=lambda rng, gpu: (
        [_dot_case(rng, 3), _dot_case(rng, 1000)]
        + ([_dot_case(rng, 1_000_003, 264, 64)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.NoAtomicContention("global"),),
    next="Next: 05.6, stream compaction: where does each lane write?",
    performance=lambda rng: _dot_case(rng, 2**25, 4224, 64),
)

KEEP = np.float32(0.9)


def _compact_case(rng, n, block=BLOCK, timed_only=False):
    x = data.floats(rng, n)
    edges = _edges(rng, x, 6)
    return _compact_case_of(x, KEEP, _ties(x, 6, KEEP) + edges, block, timed_only)


def _compact_slots(got, count: int, kept) -> str:
    """What is wrong with out[:count] (count is right), by the store counts where the simulator
    gives them: slots shifted by one, two lanes on one slot, or slots never written."""
    everything = got["out"]
    out = everything[:count]
    writes = (getattr(got, "writes", None) or {}).get("out")
    moved = everything[1 : count + 1]  # one slot too early would have crashed at out[-1]
    if count and moved.size == count and np.array_equal(np.sort(moved), kept):
        return (
            f"the kept elements are in out[1:{count + 1}], shifted by one from out[:count] "
            "(out[0] was never written): each lane writes one slot too far (base + rank + 1?). "
            "A kept lane's slot is base + its rank, the number of kept lanes below it (0 for "
            "the first)"
        )
    if writes is not None and (writes > 1).any():
        twice = int(np.flatnonzero(writes > 1)[0])
        return (
            f"out[{twice}] was written {int(writes[twice])} times: two lanes wrote to the same "
            "slot. Each kept lane needs its own slot: base + its rank among the kept lanes"
        )
    unwritten = np.flatnonzero(np.isnan(out))
    if unwritten.size:
        if writes is None:
            where = ": the kept lanes did not each store to a slot of their own in out[:count]"
        elif writes[count:].any():
            where = f": {int(writes[count:].sum())} store(s) landed past out[:count] instead"
        else:
            where = f": {int(writes.sum())} store(s) for the {count} kept elements"
        return f"out[{int(unwritten[0])}] was never written, though count = {count}{where}"
    extra = [v for v in out if not np.isin(v, kept)]
    example = f": out holds {extra[0]:.6g}, which is not one of them" if extra else ""
    return (
        "out[:count] holds other values than the elements above the threshold (in any "
        f"order){example}"
    )


def _compact_case_of(x, threshold, label, block=BLOCK, timed_only=False):
    """The case of 05.6 on these values (the hidden cases choose theirs)."""
    n = x.size
    kept = x[x > threshold] if timed_only else np.sort(x[x > threshold])

    def verify(got):
        count = int(got["count"][0])
        if count != kept.size:
            ties = int(np.count_nonzero(x == threshold))
            slip = (
                f": you keep the {ties} element(s) equal to the threshold too; 'above' means "
                "`>`, not `>=`"
                if count == kept.size + ties
                else ""
            )
            return f"count is {count}, but {kept.size} elements of x are above the threshold{slip}"
        out = got["out"][:count]
        if np.isnan(out).any() or not np.array_equal(np.sort(out), kept):
            return _compact_slots(got, count, kept)
        return None

    return Case(
        label,
        {"x": x, "threshold": threshold, "out": data.empty(n), "count": data.empty(1, np.int32)},
        {"out": np.zeros(n, np.float32), "count": np.zeros(1, np.int32)},
        data.blocks(n, block),
        block,
        zeros=("count",),
        write_once=("out",),
        verify=verify,
        bytes_moved=4 * n + 4 * kept.size,
    )


COMPACT = Exercise(
    id="05.6",
    name="compact",
    title="Stream compaction with one atomic per warp",
    statement="""\
Copy the elements of `x` above `threshold` to the front of `out`, in any order, and their number
to `count[0]` (which starts at 0). The skeleton takes one slot per kept element with an atomic
on `count`. Use one atomic per warp: a ballot of the lanes that keep their element, lane 0
reserves `popc(ballot)` slots, `cuda.shfl_sync` hands the first slot to every lane, and each
kept lane adds its rank among the kept lanes below it. Blocks of 64; `n = 1` and `n = 300`.""",
    skeleton='''\
from numba import cuda


@cuda.jit
def compact(x, threshold, out, count):
    """out[:count] = the elements of x above threshold (make it one atomic per warp)."""
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        slot = cuda.atomic.add(count, 0, 1)
        out[slot] = x[i]
''',
    params=("x", "threshold", "out", "count"),
    hints=(
        "Every lane votes (past the end of `x` too, with False): the ballot has one bit per kept "
        "element of the warp, and `cuda.popc` of it is the number of slots the warp needs.",
        "Only lane 0 does the atomic; its result, the warp's first slot, is in lane 0 alone: "
        "`cuda.shfl_sync(mask, value, 0)` hands lane 0's value to every lane. Every lane runs the "
        "shuffle, so give the other lanes a value to pass in too.",
        "A kept lane's slot is the warp's first slot plus the number of kept lanes below it: `(1 "
        "<< lane) - 1` has a bit for each lane below this one; AND it with the ballot and count "
        "the bits.",
    ),
    cases=lambda rng, gpu: (
        [_compact_case(rng, 1), _compact_case(rng, 300)]
        + ([_compact_case(rng, 1_000_003)] if gpu else [])
    ),
    trace_case=1,
    checks=(checks.NoAtomicContention("global"),),
    next="That was the last one: exercises.progress() shows what is left.",
    performance=lambda rng: _compact_case(rng, 2**25, timed_only=True),
)

EXERCISES = [COUNT, WARP_SUM, BALLOT, HISTOGRAM, DOT, COMPACT]

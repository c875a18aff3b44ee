"""Lesson 05, the parallel-sum ladder: from one atomic per element to a grid-stride, warp-shuffle sum.

The steps follow Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007). Each
tree kernel writes one partial sum per block; the wrappers launch it again on the partial sums
until one value is left (Harris's recursion). The last rung needs one launch: every thread
sums many elements in a register (16-byte loads), the block sums its threads with warp
shuffles, one atomic per block adds the block's sum into an accumulator, and the last block to
finish moves it into the result and leaves the accumulator at zero for the next launch.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, float32, uint32

from .. import arrays, runtime

THREADS = 256                  # threads per block of every sum kernel (a multiple of 32)
FULL_MASK = 0xFFFFFFFF         # all 32 lanes of a warp take part in a shuffle
# The last rung's launch, measured on an H200 with .scratch/tune.py (2**28 float32, 2 rounds):
# 16-byte loads, the read-only (.nc) path and the hand-over were each worth 1-3 %; block shape
# and loads in flight mattered less. This one ran 1.02x cupy.sum in 3 alternating repeats.
SUM_THREADS = 256              # threads per block
SUM_ITEMS = 4                  # independent loads in flight per thread per grid-stride step
SUM_VECTOR = 4                 # floats per load: 4 = one 16-byte load (when the array is 16-byte aligned)
SUM_BLOCKS_PER_SM = 4          # blocks per SM: 4 x 256 threads: half of the 2048 threads an SM can hold
SUM_HINT = ".nc"               # PTX qualifier of the 16-byte loads: .nc = the read-only data path (__ldg)
SUM_HAND_OVER = True           # the last block moves the sum to the output: no zeroing launch


@cuda.jit
def sum_atomic_per_element(a, total):
    """Every thread adds its element to total[0] with a global atomic: 1 address, N updates in a row."""
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(total, 0, a[i])


@cuda.jit(device=True)
def tree_interleaved_divergent(partial, tid, keep):
    """Harris 1 (and seed 001): at stride s, threads with tid % 2s == 0 add; the warps stay divergent."""
    s = 1
    while s * keep < partial.size:
        if tid % (2 * s) == 0:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s *= 2


@cuda.jit(device=True)
def tree_interleaved_strided(partial, tid, keep):
    """Harris 2: thread tid adds at 2*s*tid; no divergence, but lanes collide in the same bank."""
    s = 1
    while s * keep < partial.size:
        index = 2 * s * tid
        if index < partial.size:
            partial[index] += partial[index + s]
        cuda.syncthreads()
        s *= 2


@cuda.jit(device=True)
def tree_sequential(partial, tid, keep):
    """Harris 3: the first half adds the second half; conflict-free, idle warps retire whole."""
    s = partial.size // 2
    while s >= keep:
        if tid < s:
            partial[tid] += partial[tid + s]
        cuda.syncthreads()
        s //= 2


@cuda.jit(device=True)
def warp_sum(value):
    """Sum over the 32 lanes of a warp with shfl_down_sync: lane 0 ends with the total."""
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


def _block_tree_kernel(tree, loads, warp_finish):
    """Build a one-partial-per-block tree sum: which tree, loads per thread (1 or 2), warp-shuffle finish."""
    keep = 64 if warp_finish else 1

    @cuda.jit
    def block_tree_sum(a, partials):
        """Load `loads` elements per thread into shared memory, tree-sum them, write the block's sum."""
        partial = cuda.shared.array(THREADS, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (THREADS * loads) + tid
        value = a[i] if i < a.size else float32(0)
        if loads == 2 and i + THREADS < a.size:
            value += a[i + THREADS]              # first add during load
        partial[tid] = value
        cuda.syncthreads()
        tree(partial, tid, keep)
        if warp_finish:
            if tid < 32:                         # the last 64 values: one warp, no barriers
                value = warp_sum(partial[tid] + partial[tid + 32])
        else:
            value = partial[0]
        if tid == 0:
            partials[cuda.blockIdx.x] = value

    return block_tree_sum


@cuda.jit(device=True)
def block_sum_shuffle(value, warp_sums):
    """Sum a value over a block: shuffles within each warp, then warp 0 shuffles the warps' sums."""
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    value = warp_sum(value)
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()
    if warp == 0:
        value = warp_sums[lane] if lane < warp_sums.size else float32(0)
        value = warp_sum(value)
    return value


def load_float32x4(a, i):
    """(a[i], ..., a[i+3]) as ONE 16-byte load on a GPU: i a multiple of 4, a 16-byte aligned."""
    return a[i], a[i + 1], a[i + 2], a[i + 3]


_loaders = {"": load_float32x4}


def float32x4_loader(hint: str = ""):
    """load_float32x4, or on a GPU the same load as PTX `ld.global<hint>.v4.f32` (e.g. hint ".nc")."""
    if hint not in _loaders and not runtime.is_simulator():
        _loaders[hint] = _ptx_float32x4_load(hint)
    return _loaders.get(hint, load_float32x4)


if not runtime.is_simulator():
    # Numba has no float32x4 type, so on a GPU this loads an LLVM vector of 4 floats aligned to
    # 16 bytes (one ld.global.v4.f32) and hands back its 4 lanes as a tuple.
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic, overload

    def _element_pointer(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        return cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]], wraparound=False)

    @intrinsic
    def _load_float32x4(typingctx, array, index):
        def codegen(context, builder, sig, args):
            vector = ir.VectorType(ir.FloatType(), 4)
            ptr = builder.bitcast(_element_pointer(context, builder, sig, args), vector.as_pointer())
            words = builder.load(ptr, align=16)
            lanes = [builder.extract_element(words, ir.Constant(ir.IntType(32), k)) for k in range(4)]
            return context.make_tuple(builder, sig.return_type, lanes)

        return types.UniTuple(types.float32, 4)(array, index), codegen

    @overload(load_float32x4, target="cuda")
    def _load_float32x4_gpu(a, i):
        if a.dtype == types.float32:
            return lambda a, i: _load_float32x4(a, i)

    def _ptx_float32x4_load(hint):
        """An intrinsic for `ld.global<hint>.v4.f32` written in PTX (cache hints Numba cannot express)."""
        text = f"ld.global{hint}.v4.f32 {{$0, $1, $2, $3}}, [$4];"

        @intrinsic
        def load(typingctx, array, index):
            def codegen(context, builder, sig, args):
                fnty = ir.FunctionType(ir.LiteralStructType([ir.FloatType()] * 4), [ir.IntType(64)])
                asm = ir.InlineAsm(fnty, text, "=f,=f,=f,=f,l", side_effect=False)
                address = builder.ptrtoint(_element_pointer(context, builder, sig, args), ir.IntType(64))
                got = builder.call(asm, [address])
                return context.make_tuple(builder, sig.return_type, [builder.extract_value(got, k) for k in range(4)])

            return types.UniTuple(types.float32, 4)(array, index), codegen

        return load


@cuda.jit(device=True)
def add_and_hand_over(value, total, acc, tickets):
    """Thread 0 of each block: one atomic into acc; the last block to finish moves acc into total[0]
    and leaves acc and tickets at 0 for the next launch (no zeroing launch needed)."""
    cuda.atomic.add(acc, 0, value)
    cuda.threadfence()                               # our add lands before our ticket
    last = uint32(cuda.gridDim.x - 1)
    if cuda.atomic.inc(tickets, 0, last) == last:    # inc wraps to 0 after the last block
        total[0] = cuda.atomic.add(acc, 0, float32(0))
        acc[0] = 0


def _grid_stride_kernel(threads, items, vector, hint="", hand_over=False):
    """Build the last rung: block size, loads in flight per thread, floats per load (1 or 4), the
    load's PTX cache hint, and whether the last block hands the sum over (else total is zeroed first)."""
    warps = threads // 32
    load4 = float32x4_loader(hint)

    @cuda.jit(device=True)
    def load_sum(a, j):
        """The sum of the j-th group of `vector` floats: one 16-byte load when vector is 4."""
        if vector == 4:
            x = load4(a, 4 * j)
            return (x[0] + x[1]) + (x[2] + x[3])
        return a[j]

    @cuda.jit
    def sum_grid_stride_atomic(a, total, acc, tickets):
        """Many elements per thread (grid stride, `items` loads in flight), block sum by shuffles,
        1 atomic per block."""
        warp_sums = cuda.shared.array(warps, float32)
        stride, first = cuda.gridsize(1), cuda.grid(1)
        loads = a.size // vector                     # whole loads; a.size % vector floats after
        value = float32(0)
        i = first
        while i + (items - 1) * stride < loads:     # full steps: `items` independent loads
            for k in range(items):
                value += load_sum(a, i + k * stride)
            i += items * stride
        while i < loads:                             # the ragged tail of whole loads
            value += load_sum(a, i)
            i += stride
        if first < a.size - vector * loads:          # the last few floats, one per thread
            value += a[vector * loads + first]
        value = block_sum_shuffle(value, warp_sums)
        if cuda.threadIdx.x == 0:
            if hand_over:
                add_and_hand_over(value, total, acc, tickets)
            else:
                cuda.atomic.add(total, 0, value)

    return sum_grid_stride_atomic


@cuda.jit
def zero_first(total):
    """Set total[0] = 0 on the device (the atomic sums add into it)."""
    total[0] = 0


# The ladder, in teaching order: name -> (tree, loads per thread, warp-shuffle finish).
TREE_STEPS = {
    "interleaved, divergent": (tree_interleaved_divergent, 1, False),
    "interleaved, bank conflicts": (tree_interleaved_strided, 1, False),
    "sequential addressing": (tree_sequential, 1, False),
    "first add during load": (tree_sequential, 2, False),
    "warp-shuffle finish": (tree_sequential, 2, True),
}
block_tree_sum = {name: _block_tree_kernel(*step) for name, step in TREE_STEPS.items()}

ATOMIC_PER_ELEMENT = "one atomic per element"
GRID_STRIDE = "grid stride, 1 atomic per block"
LADDER = (ATOMIC_PER_ELEMENT, *TREE_STEPS, GRID_STRIDE)
"""Every rung of the ladder, slowest first: the names `parallel_sum(..., variant=)` takes."""

_scratch: dict[tuple[int, int], object] = {}


def _partials(level: int, count: int):
    """A cached device buffer for one level of partial sums (allocation stays out of timed launches)."""
    key = (level, count)
    if key not in _scratch:
        _scratch[key] = cuda.device_array(count, dtype=np.float32)
    return _scratch[key]


_grid_stride_kernels: dict[tuple, object] = {}
_hand_over_state: list = []


def grid_stride_blocks(n: int, threads: int = SUM_THREADS, vector: int = 1,
                       blocks_per_sm: int = SUM_BLOCKS_PER_SM) -> int:
    """Blocks for the grid-stride sum: blocks_per_sm on every SM, no more than the data needs."""
    info = runtime.device_info()
    fill = 1 if info.simulator else info.sm_count * blocks_per_sm
    return max(1, min(arrays.blocks_for(max(1, n // vector), threads), fill))


def sum_grid_stride(d_a, total, *, threads: int = SUM_THREADS, items: int = SUM_ITEMS,
                    vector: int = SUM_VECTOR, blocks_per_sm: int = SUM_BLOCKS_PER_SM,
                    hint: str = SUM_HINT, hand_over: bool = SUM_HAND_OVER, zero: bool = True,
                    blocks: int | None = None):
    """Launch the last rung on a float32 device array into total[0] (zeroed first unless zero=False
    or the last block hands the sum over); `blocks` overrides the grid (tests)."""
    if vector == 4 and not runtime.is_simulator() and d_a.__cuda_array_interface__["data"][0] % 16:
        vector = 1                                   # a view that starts off a 16-byte boundary
    key = (threads, items, vector, hint, hand_over)
    if key not in _grid_stride_kernels:
        _grid_stride_kernels[key] = _grid_stride_kernel(*key)
    if not _hand_over_state:                         # acc and tickets: zero once, left at zero by each launch
        _hand_over_state.extend([cuda.to_device(np.zeros(1, np.float32)), cuda.to_device(np.zeros(1, np.uint32))])
    if zero and not hand_over:
        zero_first[1, 1](total)
    blocks = blocks or grid_stride_blocks(d_a.size, threads, vector, blocks_per_sm)
    _grid_stride_kernels[key][blocks, threads](d_a, total, *_hand_over_state)
    return total


sum_grid_stride_atomic = _grid_stride_kernel(SUM_THREADS, SUM_ITEMS, SUM_VECTOR, SUM_HINT, SUM_HAND_OVER)
"""The last rung as configured, for show_source."""
_grid_stride_kernels[(SUM_THREADS, SUM_ITEMS, SUM_VECTOR, SUM_HINT, SUM_HAND_OVER)] = sum_grid_stride_atomic


def parallel_sum(a, *, variant: str = GRID_STRIDE, out=None):
    """Sum a 1-D float32 array with one rung of the ladder; returns a NumPy float32 scalar.

    With `out` (a one-element float32 device array) the sum is written there and `out` is
    returned without synchronising, which is what a benchmark wants.
    """
    if variant not in LADDER:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(LADDER)}")
    d_a, _ = arrays.device_input(a, name="a", dtypes=np.float32, ndim=1)
    total = arrays.device_output(out, (1,), np.float32)
    if variant == ATOMIC_PER_ELEMENT:
        zero_first[1, 1](total)
        sum_atomic_per_element[arrays.blocks_for(d_a.size, THREADS), THREADS](d_a, total)
    elif variant == GRID_STRIDE:
        sum_grid_stride(d_a, total)
    else:
        loads = TREE_STEPS[variant][1]
        kernel, values, level = block_tree_sum[variant], d_a, 0
        while True:                              # Harris's recursion: sum the partial sums again
            blocks = arrays.blocks_for(values.size, THREADS * loads)
            partials = total if blocks == 1 else _partials(level, blocks)
            kernel[blocks, THREADS](values, partials)
            if blocks == 1:
                break
            values, level = partials, level + 1
    return total if out is not None else total.copy_to_host()[0]


_numba_reduce = None


def numba_reduce_sum(a, *, out=None):
    """Numba's built-in `cuda.reduce` with +, the library peer of the ladder; same return rules."""
    global _numba_reduce
    if _numba_reduce is None:
        _numba_reduce = cuda.reduce(lambda x, y: x + y)
    d_a, _ = arrays.device_input(a, name="a", dtypes=np.float32, ndim=1)
    if out is None:
        return np.float32(_numba_reduce(d_a))
    total = arrays.device_output(out, (1,), np.float32)
    _numba_reduce(d_a, res=total)
    return total


def tree_pairs(variant: str, threads: int = 16) -> list[list[tuple[int, int, int]]]:
    """(thread, destination, source) of every addition a block tree makes, step by step, from the kernels' formulas.

    For drawing: one list per step, for a block of `threads` threads (a power of two).
    """
    if variant not in TREE_STEPS:
        raise ValueError(f"tree_pairs draws the tree kernels {list(TREE_STEPS)}, got {variant!r}")
    if threads < 2 or threads & (threads - 1):
        raise ValueError(f"threads must be a power of two >= 2, got {threads}")
    tree = TREE_STEPS[variant][0]
    steps = []
    if tree is tree_sequential:
        s = threads // 2
        while s >= 1:
            steps.append([(tid, tid, tid + s) for tid in range(threads) if tid < s])
            s //= 2
    else:
        s = 1
        while s < threads:
            if tree is tree_interleaved_divergent:
                steps.append([(tid, tid, tid + s) for tid in range(threads) if tid % (2 * s) == 0])
            else:
                steps.append([(tid, 2 * s * tid, 2 * s * tid + s) for tid in range(threads) if 2 * s * tid < threads])
            s *= 2
    return steps


def speedups(timings, ceiling=None) -> tuple[list[str], list[list]]:
    """Header and rows for the ladder table: time, bandwidth, % of the copy ceiling, step and cumulative speed-up."""
    header = ["variant", "ms", "GB/s", "% of copy", "step speed-up", "cumulative"]
    rows, first, previous = [], timings[0].median_ms, None
    for t in timings:
        share = 100 * t.gbs / ceiling.gbs if ceiling is not None and t.gbs is not None else None
        rows.append([t.name, t.median_ms, t.gbs, share,
                     None if previous is None else previous / t.median_ms, first / t.median_ms])
        previous = t.median_ms
    return header, rows

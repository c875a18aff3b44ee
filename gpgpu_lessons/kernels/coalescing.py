"""Lesson 01, memory coalescing: how a warp's addresses decide how many bytes really move.

The index formulas are plain Python functions (``strided_element``, ``dot_element``): the
notebook draws its sector diagrams with them, and the kernels call the very same functions
compiled as device functions.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .. import arrays, runtime

THREADS = 256
FLOATS = (np.float32, np.float64)
COPY_DTYPES = (np.float32, np.float64, np.int32, np.uint32)
DOT_UNROLL = 4           # element pairs each thread loads before it adds them up
WIDE_BYTES = (4, 8, 16)  # element widths of copy_wide, and the NumPy dtypes that give them:
WIDE_DTYPES = {4: np.dtype(np.uint32), 8: np.dtype(np.uint64), 16: np.dtype(np.complex128)}
UNROLLS = (1, 2, 4, 8)
RESIDENT_THREADS_PER_SM = 2048  # sm_90 (H100/H200) and sm_80; 1536 on sm_86/89: the waves absorb it


# ---- index formulas: plain Python, shared by the diagrams and (compiled) by the kernels ----

def strided_element(row, column, stride, offset, n):
    """Element copied by thread (row, column): neighbouring rows `stride` apart, `offset` in, -1 past the end.

    Rows and columns cover 0..n-1 exactly once (n elements seen as rows of `stride`); the
    offset shifts every access and wraps around, so the copy is a permutation of the array.
    """
    j = row * stride + column
    if j >= n:
        return -1
    j += offset
    if j >= n:
        j -= n
    return j


def dot_element(thread, k, threads, chunk):
    """Element read at step k by thread `thread` of `threads`: grid-stride when chunk == 0, else its own chunk."""
    if chunk == 0:
        return thread + k * threads   # seed 004's vec[id + i*32]: neighbours read neighbours
    return thread * chunk + k         # seed 004's vec[id*32768 + i]: neighbours `chunk` apart


strided_element_device = cuda.jit(device=True)(strided_element)
dot_element_device = cuda.jit(device=True)(dot_element)


# ---- one memory instruction per element, 16-byte elements included ----

def load_element(a, i):
    """a[i] as ONE load instruction, even for 16-byte elements (the simulator just indexes)."""
    return a[i]


def store_element(a, i, value):
    """a[i] = value as ONE store instruction, even for 16-byte elements."""
    a[i] = value


if not runtime.is_simulator():
    # Numba splits a complex128 (16-byte) element into two 8-byte accesses, and has no array
    # of float32x4; so on a GPU these two functions move a whole element through an LLVM
    # vector of 64-bit words, aligned to its size: one ld/st.global.v2 for 16 bytes.
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic, overload

    def _whole_element_pointer(context, builder, array_type, array, index):
        """Pointer to a[index] as a vector of 64-bit words, and the element's size in bytes."""
        ary = context.make_array(array_type)(context, builder, value=array)
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [index], wraparound=False)
        size = context.get_abi_sizeof(context.get_value_type(array_type.dtype))
        vector = ir.VectorType(ir.IntType(64), size // 8)
        return builder.bitcast(ptr, vector.as_pointer()), size

    @intrinsic
    def _load_whole(typingctx, array, index):
        def codegen(context, builder, sig, args):
            ptr, size = _whole_element_pointer(context, builder, sig.args[0], args[0], args[1])
            words = builder.load(ptr, align=size)
            parts = builder.bitcast(words, ir.VectorType(ir.DoubleType(), size // 8))
            value = ir.Constant(context.get_value_type(sig.return_type), ir.Undefined)
            for k in range(size // 8):
                value = builder.insert_value(value, builder.extract_element(parts, ir.Constant(ir.IntType(32), k)), k)
            return value

        return array.dtype(array, index), codegen

    @intrinsic
    def _store_whole(typingctx, array, index, value):
        def codegen(context, builder, sig, args):
            ptr, size = _whole_element_pointer(context, builder, sig.args[0], args[0], args[1])
            parts = ir.Constant(ir.VectorType(ir.DoubleType(), size // 8), ir.Undefined)
            for k in range(size // 8):
                parts = builder.insert_element(parts, builder.extract_value(args[2], k), ir.Constant(ir.IntType(32), k))
            builder.store(builder.bitcast(parts, ptr.type.pointee), ptr, align=size)
            return context.get_dummy_value()

        return types.void(array, index, value), codegen

    @overload(load_element, target="cuda")
    def _load_element_gpu(a, i):
        if a.dtype == types.complex128:
            return lambda a, i: _load_whole(a, i)
        return lambda a, i: a[i]

    @overload(store_element, target="cuda")
    def _store_element_gpu(a, i, value):
        if a.dtype == types.complex128:
            return lambda a, i, value: _store_whole(a, i, value)

        def store(a, i, value):
            a[i] = value
        return store


# ---- kernels ----

@cuda.jit
def copy_one_per_thread(src, dst):
    """Copy where thread i moves element i: a warp touches 32 neighbouring elements (coalesced)."""
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@cuda.jit
def copy_strided(src, dst, stride, offset):
    """Copy where neighbouring threads touch elements `stride` apart, starting `offset` elements in."""
    row, column = cuda.grid(2)
    j = strided_element_device(row, column, stride, offset, src.size)
    if j >= 0:
        dst[j] = src[j]


def _copy_unrolled_kernel(dtype, unroll, grid_stride):
    """Build the unrolled copy for one element type, unroll factor and loop choice (compile-time constants)."""

    @cuda.jit
    def copy_unrolled(src, dst):
        """Each thread copies `unroll` elements a block apart, loads before stores; grid_stride: then loops."""
        held = cuda.local.array(unroll, dtype)
        width = cuda.blockDim.x
        base = cuda.blockIdx.x * width * unroll + cuda.threadIdx.x
        while base < src.size:
            if base + (unroll - 1) * width < src.size:  # a whole step: no checks
                for k in range(unroll):       # loads first: they are all in flight together
                    held[k] = load_element(src, base + k * width)
                for k in range(unroll):
                    store_element(dst, base + k * width, held[k])
            else:                             # the last, partial step
                for k in range(unroll):
                    if base + k * width < src.size:
                        held[k] = load_element(src, base + k * width)
                for k in range(unroll):
                    if base + k * width < src.size:
                        store_element(dst, base + k * width, held[k])
            if not grid_stride:
                break                         # the grid covers the data: one step per thread
            base += cuda.gridDim.x * width * unroll

    return copy_unrolled


copy_unrolled = {(np.dtype(t), u, g): _copy_unrolled_kernel(numba.from_dtype(t), u, g)
                 for t in WIDE_DTYPES.values() for u in UNROLLS for g in (False, True)}


def _dot_partials_kernel(dtype):
    """Build seed 004's dot-product kernel for one accumulator dtype."""

    @cuda.jit
    def dot_partials(x, y, partials, chunk):
        """Seed 004: thread t sums its share of x*y into partials[t]; chunk picks coalesced (0) or chunked."""
        thread = cuda.grid(1)
        threads = cuda.gridsize(1)
        steps = chunk if chunk > 0 else (x.size + threads - 1) // threads
        acc = dtype(0)
        for k in range(steps):
            j = dot_element_device(thread, k, threads, chunk)
            if j < x.size:
                acc += x[j] * y[j]
        partials[thread] = acc

    return dot_partials


dot_partials = {np.dtype(t): _dot_partials_kernel(numba.from_dtype(t)) for t in FLOATS}


def _dot_grid_stride_kernel(dtype):
    """Build the best dot-product kernel for one accumulator dtype (shared arrays need a fixed type)."""

    @cuda.jit
    def dot_grid_stride(x, y, total):
        """Grid-stride partial sums (coalesced, DOT_UNROLL loads in flight), a shared-memory tree per block, one atomic per block."""
        partial = cuda.shared.array(THREADS, dtype)
        tid = cuda.threadIdx.x
        acc = dtype(0)
        step = cuda.gridDim.x * THREADS * DOT_UNROLL
        for base in range(cuda.blockIdx.x * THREADS * DOT_UNROLL + tid, x.size, step):
            for k in range(DOT_UNROLL):
                if base + k * THREADS < x.size:
                    acc += x[base + k * THREADS] * y[base + k * THREADS]
        partial[tid] = acc
        cuda.syncthreads()
        half = THREADS // 2
        while half > 0:
            if tid < half:
                partial[tid] += partial[tid + half]
            cuda.syncthreads()
            half //= 2
        if tid == 0:
            cuda.atomic.add(total, 0, partial[0])

    return dot_grid_stride


dot_grid_stride = {np.dtype(t): _dot_grid_stride_kernel(numba.from_dtype(t)) for t in FLOATS}


# ---- host wrappers ----

def fill_blocks(threads: int, waves: int = 4) -> int:
    """Blocks that keep every SM busy: `waves` rounds of full residency (one block in the simulator)."""
    info = runtime.device_info()
    if info.simulator:
        return 1
    return waves * info.sm_count * max(1, RESIDENT_THREADS_PER_SM // threads)


def copy(a, *, out=None, threads: int = THREADS):
    """Copy a 1-D array with one element per thread; returns NumPy for NumPy input."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=COPY_DTYPES, ndim=1)
    d_out = arrays.device_output(out, d_a.shape, d_a.dtype)
    threads = arrays.check_threads(threads)
    copy_one_per_thread[arrays.blocks_for(d_a.size, threads), threads](d_a, d_out)
    return arrays.returned(d_out, to_host)


def copy_with_stride(a, *, stride: int = 1, offset: int = 0, out=None, threads: int = THREADS):
    """Copy a 1-D array where neighbouring threads are `stride` elements apart and start `offset` in."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=COPY_DTYPES, ndim=1)
    d_out = arrays.device_output(out, d_a.shape, d_a.dtype)
    threads = arrays.check_threads(threads)
    if not isinstance(stride, (int, np.integer)) or not 1 <= stride <= 65535:
        raise ValueError(f"stride must be an integer from 1 to 65535 (one grid row per column), got {stride!r}")
    if not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ValueError(f"offset must be a non-negative integer number of elements, got {offset!r}")
    rows = arrays.blocks_for(d_a.size, stride)
    copy_strided[(arrays.blocks_for(rows, threads), stride), (threads, 1)](d_a, d_out, stride, offset % d_a.size)
    return arrays.returned(d_out, to_host)


def copy_wide(a, *, element_bytes: int = 16, unroll: int = 1, out=None, threads: int = THREADS,
              blocks: int | None = None):
    """Copy through `element_bytes`-wide elements (a view of the same bytes), `unroll` per thread.

    Any contiguous 1-D array whose size in bytes is a multiple of element_bytes. blocks=None
    gives the grid that covers the data (each thread one step); fewer blocks make each thread
    loop over several steps (grid-stride), e.g. blocks=fill_blocks(threads).
    """
    d_a, to_host = arrays.device_input(a, name="a", dtypes=COPY_DTYPES, ndim=1)
    d_out = arrays.device_output(out, d_a.shape, d_a.dtype)
    _copy_wide_launch(d_a, d_out, element_bytes, unroll, threads, blocks)()
    return arrays.returned(d_out, to_host)


def copy_wide_launcher(a, out, *, element_bytes: int = 16, unroll: int = 1, threads: int = THREADS,
                       blocks: int | None = None):
    """Check everything once; return launch(), which starts copy_wide(a, out=out, ...) with no checks.

    For benchmarks: a kernel of half a millisecond cannot hide the wrapper's checks in Python.
    a and out must be device arrays.
    """
    for name, array in (("a", a), ("out", out)):
        if not arrays.is_device_array(array):
            raise TypeError(f"{name} must be a device array (cuda.to_device, cuda.device_array), "
                            f"got {type(array).__name__}")
    d_a, _ = arrays.device_input(a, name="a", dtypes=COPY_DTYPES, ndim=1)
    d_out = arrays.device_output(out, d_a.shape, d_a.dtype)
    return _copy_wide_launch(d_a, d_out, element_bytes, unroll, threads, blocks)


def _copy_wide_launch(d_a, d_out, element_bytes, unroll, threads, blocks):
    """Check copy_wide's own arguments and return a zero-argument launch of the kernel."""
    threads = arrays.check_threads(threads)
    if element_bytes not in WIDE_BYTES:
        raise ValueError(f"element_bytes must be one of {WIDE_BYTES}, got {element_bytes!r}")
    if unroll not in UNROLLS:
        raise ValueError(f"unroll must be one of {UNROLLS}, got {unroll!r}")
    if d_a.nbytes % element_bytes:
        raise ValueError(f"a has {d_a.nbytes} bytes, not a multiple of element_bytes={element_bytes}: "
                         f"pad it, or use a narrower element")
    if not runtime.is_simulator() and d_a.__cuda_array_interface__["data"][0] % element_bytes:
        raise ValueError(f"a does not start on a {element_bytes}-byte boundary (a slice?): wide accesses "
                         f"need aligned addresses; copy it to a fresh device array first")
    wide = WIDE_DTYPES[element_bytes]
    src, dst = d_a.view(wide), d_out.view(wide)
    needed = arrays.blocks_for(src.size, threads * unroll)
    if blocks is None:
        blocks = needed
    elif not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise ValueError(f"blocks must be a positive integer, got {blocks!r}")
    grid_stride = blocks < needed
    configured = copy_unrolled[wide, unroll, grid_stride][min(blocks, needed), threads]
    return lambda: configured(src, dst)


def _dot_inputs(x, y):
    """Check x and y: 1-D float32/float64 device or NumPy arrays of the same shape and dtype."""
    d_x, _ = arrays.device_input(x, name="x", dtypes=FLOATS, ndim=1)
    d_y, _ = arrays.device_input(y, name="y", dtypes=FLOATS, ndim=1)
    if d_x.shape != d_y.shape or d_x.dtype != d_y.dtype:
        raise ValueError(f"x and y must have the same shape and dtype, got {d_x.shape} {d_x.dtype} "
                         f"and {d_y.shape} {d_y.dtype}")
    return d_x, d_y


def dot_partial_sums(x, y, *, blocks: int, threads: int, chunked: bool = False, out=None):
    """Seed 004's dot products: blocks*threads partial sums (the host adds them), one per thread.

    chunked=False: thread t reads x[t + k*T] (coalesced); chunked=True: it reads its own
    contiguous chunk x[t*chunk + k] (neighbouring threads far apart). Returns NumPy for NumPy x.
    """
    d_x, d_y = _dot_inputs(x, y)
    threads = arrays.check_threads(threads)
    if not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise ValueError(f"blocks must be a positive integer, got {blocks!r}")
    total = blocks * threads
    d_out = arrays.device_output(out, (total,), d_x.dtype)
    chunk = arrays.blocks_for(d_x.size, total) if chunked else 0
    dot_partials[d_x.dtype][blocks, threads](d_x, d_y, d_out, chunk)
    return arrays.returned(d_out, not arrays.is_device_array(x))


def dot_blocks(n: int) -> int:
    """Enough blocks to fill the GPU (a few waves), never more than the data needs."""
    return max(1, min(arrays.blocks_for(n, THREADS * DOT_UNROLL), fill_blocks(THREADS)))


def dot(x, y, *, out=None):
    """Dot product accumulated in the inputs' precision (float32 or float64); returns a NumPy scalar.

    With `out` (a one-element device array of the same dtype) it adds into it and returns it
    without synchronising, which is what a benchmark wants.
    """
    d_x, d_y = _dot_inputs(x, y)
    kernel = dot_grid_stride[d_x.dtype]
    if out is not None:
        total = arrays.device_output(out, (1,), d_x.dtype)
        kernel[dot_blocks(d_x.size), THREADS](d_x, d_y, total)
        return total
    total = cuda.to_device(np.zeros(1, dtype=d_x.dtype))
    kernel[dot_blocks(d_x.size), THREADS](d_x, d_y, total)
    return total.copy_to_host()[0]

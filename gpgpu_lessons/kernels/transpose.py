"""Lesson 03, bank conflicts: the matrix transpose from naive to the copy ceiling (seeds 000 and 003).

Every kernel moves a TILE x TILE tile with a block of TILE x ROWS threads (each thread moves
TILE / ROWS elements, one per tile row it visits). The kernels are built by small factories
that close over the tile shape, the padding and the element type as compile-time constants,
so "tiled" and "padded" are one kernel with pad=0 and pad=1, not two copies. Each thread first
loads all its elements into registers (``held``) and only then stores them, so all its loads
are in flight together: that is what keeps enough bytes moving to approach the copy ceiling.

The shared tile is a flat array indexed through ``tile_slot`` (seed 003's ``index_tile``); the
same Python function is compiled into the kernels and called by ``gpgpu_lessons.banks`` to draw
which bank each lane of a warp hits.

``wide`` is the fast one: each global access moves ``vec`` neighbours (8 or 16 bytes) through two
small intrinsics, and blocks take their tiles in the order of ``tile_of_block`` (groups of tile
rows). Every kernel makes its indices unsigned with ``at()`` (lesson 04's helper) so that Numba
adds no negative-index wraparound code.
"""
from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from .. import arrays, runtime
from .filters import at

FOUR_BYTE = (np.float32, np.uint32, np.int32)
EIGHT_BYTE = (np.float64, np.uint64, np.int64)
DTYPES = FOUR_BYTE + EIGHT_BYTE
TILE, ROWS = 32, 8          # Mark Harris's shape: 32 x 8 threads move a 32 x 32 tile
SEED_TILE = 16              # seed 000: 16 x 16 threads, one element each
WIDE_TILE, WIDE_ROWS = 64, 16   # the wide kernel: 32 x 16 threads move a 64 x 64 tile ...
WIDE_VEC = 2                    # ... 2 neighbouring elements (8 bytes of float32) per access
GROUP = 1                       # ... blocks take the tiles row by row (tile_of_block)


def tile_slot(row, col, width):
    """Position of element (row, col) in a flat shared tile with `width` slots per row."""
    return row * width + col


tile_slot_gpu = cuda.jit(device=True)(tile_slot)


@functools.cache
def _direct_kernel(tile: int, rows: int, transpose: bool, dtype):
    """Build the copy (transpose=False) or the naive transpose with the given tiling."""
    per_thread = tile // rows

    @cuda.jit
    def copy_or_transpose_direct(a, out):
        """Without shared memory: a warp reads a row; the naive transpose writes it as a column."""
        held = cuda.local.array(per_thread, dtype)   # registers: a thread's loads all in flight
        h, w = a.shape
        x = cuda.blockIdx.x * tile + cuda.threadIdx.x
        y0 = cuda.blockIdx.y * tile + cuda.threadIdx.y
        for k in range(per_thread):
            if x < w and y0 + k * rows < h:
                held[k] = a[at(y0 + k * rows), at(x)]
        for k in range(per_thread):
            if x < w and y0 + k * rows < h:
                if transpose:
                    out[at(x), at(y0 + k * rows)] = held[k]   # lanes write h elements apart
                else:
                    out[at(y0 + k * rows), at(x)] = held[k]

    return copy_or_transpose_direct


@functools.cache
def _shared_kernel(tile: int, rows: int, pad: int, dtype):
    """Build the transpose through a shared tile of tile x (tile + pad) elements of `dtype`."""
    width, slots = tile + pad, tile * (tile + pad)   # shared array sizes must be constants
    per_thread = tile // rows

    @cuda.jit
    def transpose_through_shared(a, out):
        """Read a tile by rows, write it transposed by rows; pad > 0 spreads columns over banks."""
        buf = cuda.shared.array(slots, dtype)
        held = cuda.local.array(per_thread, dtype)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        h, w = a.shape
        x = cuda.blockIdx.x * tile + tx
        y0 = cuda.blockIdx.y * tile
        for k in range(per_thread):
            if x < w and y0 + ty + k * rows < h:
                held[k] = a[at(y0 + ty + k * rows), at(x)]
        for k in range(per_thread):
            buf[at(tile_slot_gpu(ty + k * rows, tx, width))] = held[k]   # a warp writes a tile row
        cuda.syncthreads()
        for k in range(per_thread):
            held[k] = buf[at(tile_slot_gpu(tx, ty + k * rows, width))]   # a warp reads a column
        ox = cuda.blockIdx.y * tile + tx                              # output column = input row
        oy0 = cuda.blockIdx.x * tile + ty                             # output row = input column
        for k in range(per_thread):
            if ox < h and oy0 + k * rows < w:
                out[at(oy0 + k * rows), at(ox)] = held[k]

    return transpose_through_shared


def tile_of_block(block, tiles_y, tiles_x, group):
    """(tile row, tile column) of 1-D block `block`: blocks walk down `group` tile rows, then right.

    group = 1 is the usual row-by-row order. A larger group makes the blocks resident at the same
    time cover a squarer patch of tiles, so both the rows they read and the rows they write (the
    output's rows are the input's columns) are long contiguous runs in DRAM.
    """
    first = (block // (group * tiles_x)) * group          # first tile row of this block's group
    rows_here = min(group, tiles_y - first)               # the last group may be shorter
    inside = block - first * tiles_x
    return first + inside % rows_here, inside // rows_here


tile_of_block_gpu = cuda.jit(device=True)(tile_of_block)


def _vector_access(vec: int):
    """(load, store) that move a[y, x], ..., a[y, x + vec - 1] from/to held[k, 0 .. vec - 1] as ONE access.

    Numba has no float32x4 type, so on a GPU these are intrinsics that read or write the vec
    neighbours through an LLVM vector aligned to its size: one ld/st.global.v2 or .v4 instruction.
    In the simulator (and for vec = 1) they are the plain loops below.
    """
    def load(a, y, x, held, k):
        for j in range(vec):
            held[k, j] = a[y, x + j]

    def store(out, y, x, held, k):
        for j in range(vec):
            out[y, x + j] = held[k, j]

    if runtime.is_simulator():
        return load, store
    if vec == 1:
        return cuda.jit(device=True)(load), cuda.jit(device=True)(store)
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic

    def pointers(context, builder, sig, args):
        """The vector pointer to global a[y, x] and the pointers to held[k, 0 .. vec - 1]."""
        aty, yty, xty, hty, kty = sig.args
        av, yv, xv, hv, kv = args
        index = [context.cast(builder, yv, yty, types.intp), context.cast(builder, xv, xty, types.intp)]
        first = cgutils.get_item_pointer(context, builder, aty, context.make_array(aty)(context, builder, av),
                                         index, wraparound=False)
        element = context.get_value_type(aty.dtype)
        vector = ir.VectorType(element, vec)
        held = context.make_array(hty)(context, builder, hv)
        k = context.cast(builder, kv, kty, types.intp)
        slots = [cgutils.get_item_pointer(context, builder, hty, held, [k, context.get_constant(types.intp, j)],
                                          wraparound=False) for j in range(vec)]
        return builder.bitcast(first, vector.as_pointer()), vec * context.get_abi_sizeof(element), slots

    @intrinsic
    def load_vector(typingctx, a, y, x, held, k):
        def codegen(context, builder, sig, args):
            ptr, align, slots = pointers(context, builder, sig, args)
            words = builder.load(ptr, align=align)
            for j, slot in enumerate(slots):
                builder.store(builder.extract_element(words, ir.Constant(ir.IntType(32), j)), slot)
            return context.get_dummy_value()
        return types.void(a, y, x, held, k), codegen

    @intrinsic
    def store_vector(typingctx, out, y, x, held, k):
        def codegen(context, builder, sig, args):
            ptr, align, slots = pointers(context, builder, sig, args)
            words = ir.Constant(ptr.type.pointee, ir.Undefined)
            for j, slot in enumerate(slots):
                words = builder.insert_element(words, builder.load(slot), ir.Constant(ir.IntType(32), j))
            builder.store(words, ptr, align=align)
            return context.get_dummy_value()
        return types.void(out, y, x, held, k), codegen

    return load_vector, store_vector


@functools.cache
def _vector_kernel(tile: int, rows: int, vec: int, pad: int, transpose: bool, dtype):
    """Build the transpose (or, transpose=False, the copy) that moves vec neighbours per global access."""
    width = tile + pad
    slots = tile * width if transpose else 1
    per_thread = tile // rows
    load, store = _vector_access(vec)

    @cuda.jit
    def transpose_vectors(a, out, group):
        """Each thread loads tile / rows runs of vec neighbours (one access each), then stores them."""
        buf = cuda.shared.array(slots, dtype)
        held = cuda.local.array((per_thread, vec), dtype)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        h, w = a.shape
        tiles_y, tiles_x = (h + tile - 1) // tile, (w + tile - 1) // tile
        tile_row, tile_col = tile_of_block_gpu(cuda.blockIdx.x, tiles_y, tiles_x, group)
        y0, x0 = tile_row * tile + ty, tile_col * tile + vec * tx
        for k in range(per_thread):
            if y0 + k * rows < h and x0 < w:
                load(a, at(y0 + k * rows), at(x0), held, k)
        if transpose:
            for k in range(per_thread):
                for j in range(vec):                    # a warp writes tile rows
                    buf[at(tile_slot_gpu(ty + k * rows, vec * tx + j, width))] = held[k, j]
            cuda.syncthreads()
            for k in range(per_thread):
                for j in range(vec):                    # vec neighbours of a tile column
                    held[k, j] = buf[at(tile_slot_gpu(vec * tx + j, ty + k * rows, width))]
            y0, x0 = tile_col * tile + ty, tile_row * tile + vec * tx
        oh, ow = out.shape
        for k in range(per_thread):
            if y0 + k * rows < oh and x0 < ow:
                store(out, at(y0 + k * rows), at(x0), held, k)

    return transpose_vectors


# ---- host wrappers -------------------------------------------------------------------------

# The wrappers below are called back to back when a kernel is timed: their Python work (checks, launch
# set-up) must stay well below a kernel's ~0.14 ms, or the timing measures Python. So the tiling check,
# the Numba type and the launch configuration are cached.

@functools.cache
def _check_tiling(tile: int, rows: int, pad: int, itemsize: int, threads_x: int) -> None:
    """Reject tilings a kernel cannot run: rows must divide the tile, the block and tile must fit."""
    for name, value, low in (("tile", tile, 1), ("rows", rows, 1), ("pad", pad, 0)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if tile % rows:
        raise ValueError(f"rows ({rows}) must divide tile ({tile}): each thread moves tile / rows elements")
    arrays.check_threads((threads_x, rows))
    arrays.check_shared_memory(tile * (tile + pad) * itemsize, f"a {tile} x {tile + pad} tile")


def _inputs(a, out, *, transposed: bool):
    """Validate a 2-D input and its output (transposed shape or same shape)."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=DTYPES, ndim=2)
    shape = d_a.shape[::-1] if transposed else d_a.shape
    return d_a, arrays.device_output(out, shape, d_a.dtype), to_host


@functools.cache
def _numba_type(dtype):
    return numba.from_dtype(dtype)


@functools.lru_cache(maxsize=256)
def _launcher(kernel, blocks, threads):
    """kernel[blocks, threads], configured once."""
    return kernel[blocks, threads]


def _grid(shape, tile: int) -> tuple[int, int]:
    """One block per tile: x over the columns, y over the rows."""
    h, w = shape
    return arrays.blocks_for(w, tile), arrays.blocks_for(h, tile)


def _direct(a, out, tile, rows, transpose):
    d_a, d_out, to_host = _inputs(a, out, transposed=transpose)
    _check_tiling(tile, rows, 0, 0, tile)
    kernel = _direct_kernel(tile, rows, transpose, _numba_type(d_a.dtype))
    _launcher(kernel, _grid(d_a.shape, tile), (tile, rows))(d_a, d_out)
    return arrays.returned(d_out, to_host)


def copy(a, *, out=None, tile: int = TILE, rows: int = ROWS):
    """Copy a 2-D array with the transposes' tiling: the ceiling a transpose should approach."""
    return _direct(a, out, tile, rows, transpose=False)


def naive(a, *, out=None, tile: int = TILE, rows: int = ROWS):
    """Transpose a 2-D array directly: coalesced reads, scattered writes (seed 000's first kernel)."""
    return _direct(a, out, tile, rows, transpose=True)


def tiled(a, *, out=None, tile: int = TILE, rows: int = ROWS, pad: int = 0):
    """Transpose through a shared tile of tile x (tile + pad) elements; pad=0 has bank conflicts."""
    d_a, d_out, to_host = _inputs(a, out, transposed=True)
    _check_tiling(tile, rows, pad, d_a.dtype.itemsize, tile)
    kernel = _shared_kernel(tile, rows, pad, _numba_type(d_a.dtype))
    _launcher(kernel, _grid(d_a.shape, tile), (tile, rows))(d_a, d_out)
    return arrays.returned(d_out, to_host)


def padded(a, *, out=None, tile: int = TILE, rows: int = ROWS):
    """Transpose through a padded tile of tile x (tile + 1) elements: no bank conflicts when tile = 32."""
    return tiled(a, out=out, tile=tile, rows=rows, pad=1)


def seed(a, *, out=None, pad: int = 1):
    """Seed 000's shape: 16 x 16 threads, one element each, through a 16 x (16 + pad) tile."""
    return tiled(a, out=out, tile=SEED_TILE, rows=SEED_TILE, pad=pad)


def _vector_launch(a, out, tile, rows, vec, pad, group, transpose):
    d_a, d_out, to_host = _inputs(a, out, transposed=transpose)
    itemsize = d_a.dtype.itemsize
    if vec not in (1, 2, 4) or vec * itemsize > 16:
        raise ValueError(f"vec must be 1, 2 or 4 with vec x itemsize <= 16 bytes, got vec={vec!r} for {d_a.dtype}")
    h, w = d_a.shape
    if w % vec or (transpose and h % vec):
        raise ValueError(f"wide accesses of {vec} elements need the rows{' and columns' if transpose else ''} "
                         f"to be a multiple of {vec} long, got shape {d_a.shape}; use padded() for such shapes")
    if not (runtime.is_simulator() or (d_a.device_ctypes_pointer.value % (vec * itemsize) == 0
                                       and d_out.device_ctypes_pointer.value % (vec * itemsize) == 0)):
        raise ValueError(f"wide accesses of {vec * itemsize} bytes need arrays aligned to {vec * itemsize} bytes")
    if not isinstance(group, (int, np.integer)) or group < 1:
        raise ValueError(f"group must be an integer >= 1, got {group!r}")
    if tile % vec:
        raise ValueError(f"vec ({vec}) must divide tile ({tile}): a thread moves vec neighbours of a tile row")
    _check_tiling(tile, rows, pad, itemsize if transpose else 0, tile // vec)
    kernel = _vector_kernel(tile, rows, vec, pad, transpose, _numba_type(d_a.dtype))
    blocks = arrays.blocks_for(h, tile) * arrays.blocks_for(w, tile)
    _launcher(kernel, blocks, (tile // vec, rows))(d_a, d_out, group)
    return arrays.returned(d_out, to_host)


def wide(a, *, out=None, tile: int = WIDE_TILE, rows: int = WIDE_ROWS, vec: int = WIDE_VEC, pad: int = 1,
         group: int = GROUP):
    """Transpose moving vec neighbours per global access (8 or 16 bytes), blocks in groups of tile rows.

    Both sides must be multiples of vec, and the arrays aligned to vec elements.
    """
    return _vector_launch(a, out, tile, rows, vec, pad, group, transpose=True)


def wide_copy(a, *, out=None, tile: int = WIDE_TILE, rows: int = WIDE_ROWS, vec: int = WIDE_VEC,
              group: int = GROUP):
    """Copy with exactly wide()'s tiling, accesses and block order: the ceiling wide() should approach."""
    return _vector_launch(a, out, tile, rows, vec, 0, group, transpose=False)


def _aligned(x, nbytes: int) -> bool:
    """A host array (copied to a fresh, aligned device array) or a device array aligned to nbytes."""
    return runtime.is_simulator() or not arrays.is_device_array(x) or x.device_ctypes_pointer.value % nbytes == 0


def transpose(a, *, out=None):
    """The fastest transpose here: wide() where it applies (4-byte elements, sides multiples of 4), else padded()."""
    shape, dtype = getattr(a, "shape", ()), getattr(a, "dtype", None)
    if (len(shape) == 2 and dtype in FOUR_BYTE and 0 not in shape and shape[0] % WIDE_VEC == 0
            and shape[1] % WIDE_VEC == 0 and _aligned(a, 4 * WIDE_VEC) and (out is None or _aligned(out, 4 * WIDE_VEC))):
        return wide(a, out=out)
    return padded(a, out=out)


def kernel(kind: str, *, tile: int = TILE, rows: int = ROWS, pad: int = 1, vec: int = WIDE_VEC,
           dtype=np.float32):
    """The kernel a wrapper launches ("copy", "naive", "shared" or "wide"), e.g. to show its source."""
    numba_type = numba.from_dtype(np.dtype(dtype))
    builders = {"copy": lambda: _direct_kernel(tile, rows, False, numba_type),
                "naive": lambda: _direct_kernel(tile, rows, True, numba_type),
                "shared": lambda: _shared_kernel(tile, rows, pad, numba_type),
                "wide": lambda: _vector_kernel(tile, rows, vec, pad, True, numba_type)}
    if kind not in builders:
        raise ValueError(f"kind must be one of {sorted(builders)}, got {kind!r}")
    return builders[kind]()


# Every variant the lesson times, name -> wrapper (all take (a, out=...)).
WIDE_NAME = f"{WIDE_TILE // WIDE_VEC}x{WIDE_ROWS}, {WIDE_TILE}x{WIDE_TILE} tile, {4 * WIDE_VEC} B"
VARIANTS = {
    "copy 32x8": copy,
    "naive 16x16 (seed)": functools.partial(naive, tile=SEED_TILE, rows=SEED_TILE),
    "tiled 16x16 (seed)": functools.partial(seed, pad=0),
    "padded 16x16 (seed)": seed,
    "naive 32x8": naive,
    "tiled 32x8": tiled,
    "padded 32x8": padded,
    f"copy {WIDE_NAME}": wide_copy,
    f"wide {WIDE_NAME}": wide,
    f"wide {WIDE_NAME}, group 8": functools.partial(wide, group=8),
}


# ---- why transposes matter -----------------------------------------------------------------

BINOMIAL_5 = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16


@cuda.jit
def filter_rows(a, taps, out):
    """Filter every row with a short 1-D kernel (edges clamped): each warp reads along a row."""
    x, y = cuda.grid(2)
    h, w = a.shape
    if y < h and x < w:
        r = len(taps) // 2
        acc = numba.float32(0)
        for k in range(len(taps)):
            acc += taps[k] * a[y, min(max(x + k - r, 0), w - 1)]
        out[y, x] = acc


def rows_filter(a, taps=BINOMIAL_5, *, out=None):
    """Filter every row of a float32 2-D array with `taps` (odd length, edges clamped)."""
    d_a, to_host = arrays.device_input(a, name="a", dtypes=np.float32, ndim=2)
    taps = np.asarray(taps, dtype=np.float32)
    if taps.ndim != 1 or len(taps) % 2 == 0:
        raise ValueError(f"taps must be a 1-D array of odd length, got shape {taps.shape}")
    d_out = arrays.device_output(out, d_a.shape, np.float32)
    threads = (32, 8)
    grid = (arrays.blocks_for(d_a.shape[1], threads[0]), arrays.blocks_for(d_a.shape[0], threads[1]))
    filter_rows[grid, threads](d_a, cuda.to_device(taps), d_out)
    return arrays.returned(d_out, to_host)


def separable_blur(a, taps=BINOMIAL_5):
    """Seed 000's recipe for a separable 2-D filter: filter rows, transpose, filter rows, transpose back."""
    return transpose(rows_filter(transpose(rows_filter(a, taps)), taps))


def fft2_by_transposes(a, xp=np):
    """Seed 003's 2-D FFT: FFT every row, transpose, FFT every row, transpose back (complex64).

    The row FFTs come from `xp` (NumPy on the host, or CuPy on the GPU); the transposes are
    ours, moving each complex64 value as one 8-byte word.
    """
    def transpose_complex(z):
        return xp.asarray(padded(z.view(xp.uint64))).view(xp.complex64)

    rows = xp.fft.fft(xp.asarray(a, dtype=xp.complex64), axis=1).astype(xp.complex64)
    rows = xp.fft.fft(transpose_complex(rows), axis=1).astype(xp.complex64)
    return transpose_complex(rows)

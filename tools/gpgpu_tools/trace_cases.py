"""Small kernels whose memory counts and races the tracer and the GPU's own tools must agree on.

`COUNTS`: kernels to compare with Nsight Compute (sectors and requests of global loads/stores,
wavefronts of shared loads/stores): coalesced, strided and offset copies, float64, complex128
(plain: two 8-byte accesses; device.vector: one 16-byte access), float32x4, the three
transposes, 8- and 16-byte shared reads (by half- and quarter-warps), matrix multiply naive
and tiled, array of structs vs struct of arrays, a 3-channel image row, Harris' interleaved
reduction, a stencil with a halo, a shared histogram, constant broadcast vs per-lane, atomics.
`RACES`: kernels to compare with compute-sanitizer (racecheck, synccheck): six broken ones and
their correct versions. Every kernel has its own name (Nsight Compute shows it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, float64, uint32

from gpgpu_lessons import runtime
from gpgpu_lessons.device import vector

TILE, ROWS = 32, 8
MM_TILE = 16
RADIUS = 3
BLOCK = 256
BINS = 256
LUT = np.linspace(0, 1, 256).astype(np.float32)
CELLS, HALO_BLOCK, QUADS = TILE * TILE, BLOCK + 2 * RADIUS, 4 * TILE  # shapes: constants

# line info lets compute-sanitizer name the source lines of a hazard (not in the simulator)
jit = cuda.jit if runtime.is_simulator() else functools.partial(cuda.jit, lineinfo=True)


@dataclass(frozen=True)
class Case:
    """A kernel, how to launch it on small inputs, and what it should show."""

    name: str
    kernel: object
    make: object  # rng -> (griddim, blockdim, args as NumPy arrays / scalars)
    expect: str = ""  # what a reader should see (the tracer's verdict, or the race)


def _named(name: str):
    """Decorator: give a kernel built in a factory its own name, then jit it."""

    def decorate(fn):
        fn.__name__ = fn.__qualname__ = name
        return jit(fn)

    return decorate


# ---- global memory ---------------------------------------------------------------------------


@jit
def verify_copy(a, b):
    """b[i] = a[i]."""
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[i]


@jit
def verify_copy_strided(a, b):
    """b[i] = a[32 i]: one sector per lane."""
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[32 * i]


@jit
def verify_copy_offset(a, b):
    """b[i] = a[i + 1]: every warp straddles one more sector."""
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[i + 1]


@jit
def verify_copy_c128_vector(a, b):
    """One complex128 per lane as ONE 16-byte access (ld.global.v2.f64)."""
    i = cuda.grid(1)
    if i < a.size:
        vector.store_vector(b, i, vector.load_vector(a, i, 1))


@jit
def verify_copy_f32x4(a, b):
    """Four float32 per lane as one 16-byte access (ld.global.v4.f32)."""
    i = cuda.grid(1)
    if 4 * i < a.size:
        vector.store_vector(b, 4 * i, vector.load_vector(a, 4 * i, 4))


@jit
def verify_aos(points, out):
    """Array of structs: points[i] = (x, y, z) as a row of an (n, 3) array."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = points[i, 0] + points[i, 1] + points[i, 2]


@jit
def verify_soa(points, out):
    """Struct of arrays: x, y, z as rows of a (3, n) array."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = points[0, i] + points[1, i] + points[2, i]


@jit
def verify_rgb_row(image, out):
    """A 3-channel uint8 image: lane x reads bytes 3x, 3x + 1, 3x + 2 of a row."""
    x, y = cuda.grid(2)
    if y < image.shape[0] and x < image.shape[1]:
        for c in range(3):
            out[y, x, c] = 255 - image[y, x, c]


# ---- shared memory ---------------------------------------------------------------------------


@jit
def verify_transpose_naive(a, b):
    """b[x, y] = a[y, x] straight from global memory: coalesced reads, strided writes."""
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        b[x, y + j] = a[y + j, x]


def _transpose(width: int, barrier: bool, name: str):
    @_named(name)
    def transpose(a, b):
        tile = cuda.shared.array((TILE, width), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
        for j in range(0, TILE, ROWS):
            tile[ty + j, tx] = a[y + j, x]
        if barrier:
            cuda.syncthreads()
        x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
        for j in range(0, TILE, ROWS):
            b[y + j, x] = tile[tx, ty + j]

    return transpose


verify_transpose_tiled = _transpose(TILE, True, "verify_transpose_tiled")
verify_transpose_padded = _transpose(TILE + 1, True, "verify_transpose_padded")
verify_race_transpose = _transpose(TILE + 1, False, "verify_race_transpose")


def _f64_read(stride: int, name: str):
    @_named(name)
    def read(out):
        tile = cuda.shared.array(CELLS, float64)
        i = cuda.threadIdx.x
        for j in range(TILE):
            tile[j * TILE + i] = i + j
        cuda.syncthreads()
        out[cuda.blockIdx.x * TILE + i] = tile[(i * stride) % (TILE * TILE)]

    return read


verify_f64_stride1 = _f64_read(1, "verify_f64_stride1")
verify_f64_stride16 = _f64_read(16, "verify_f64_stride16")
verify_f64_stride17 = _f64_read(17, "verify_f64_stride17")
verify_f64_broadcast = _f64_read(0, "verify_f64_broadcast")


@jit
def verify_matmul_naive(a, b, c):
    """c = a @ b, one output per thread, straight from global memory."""
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        total = float32(0)
        for k in range(a.shape[1]):
            total += a[row, k] * b[k, col]
        c[row, col] = total


@jit
def verify_matmul_tiled(a, b, c):
    """c = a @ b through MM_TILE x MM_TILE shared tiles of a and b (sides multiples of MM_TILE)."""
    sa = cuda.shared.array((MM_TILE, MM_TILE), float32)
    sb = cuda.shared.array((MM_TILE, MM_TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    total = float32(0)
    for t in range(a.shape[1] // MM_TILE):
        sa[ty, tx] = a[row, t * MM_TILE + tx]
        sb[ty, tx] = b[t * MM_TILE + ty, col]
        cuda.syncthreads()
        for k in range(MM_TILE):
            total += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = total


@jit
def verify_reduce_interleaved(a, out):
    """Harris' reduction #2: interleaved addressing, strided index (bank conflicts)."""
    s = cuda.shared.array(BLOCK, float32)
    tid = cuda.threadIdx.x
    s[tid] = a[cuda.grid(1)]
    cuda.syncthreads()
    step = 1
    while step < BLOCK:
        index = 2 * step * tid
        if index < BLOCK:
            s[index] += s[index + step]
        cuda.syncthreads()
        step *= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


@jit
def verify_stencil(a, out):
    """out[i] = sum of a[i - RADIUS .. i + RADIUS] through a shared tile with a halo."""
    s = cuda.shared.array(HALO_BLOCK, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x + RADIUS
    s[t] = a[i + RADIUS]
    if cuda.threadIdx.x < RADIUS:
        s[t - RADIUS] = a[i]
        s[t + BLOCK] = a[i + RADIUS + BLOCK]
    cuda.syncthreads()
    total = float32(0)
    for k in range(-RADIUS, RADIUS + 1):
        total += s[t + k]
    out[i] = total


@jit
def verify_histogram(values, bins):
    """Block-private bins in shared memory, added to the global ones at the end."""
    local = cuda.shared.array(BINS, uint32)
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    cuda.atomic.add(local, values[cuda.grid(1)], 1)
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, BINS, cuda.blockDim.x):
        cuda.atomic.add(bins, b, local[b])


# ---- constant memory, atomics, local memory -------------------------------------------------


@jit
def verify_lut_broadcast(index, out):
    """Every lane of a warp reads the same entry of a constant table."""
    lut = cuda.const.array_like(LUT)
    i = cuda.grid(1)
    out[i] = lut[index[i // 32]]


@jit
def verify_lut_per_lane(index, out):
    """Every lane reads its own entry: 32 addresses per request."""
    lut = cuda.const.array_like(LUT)
    i = cuda.grid(1)
    out[i] = lut[index[i]]


@jit
def verify_atomic_one_address(total):
    """Every thread adds 1 to total[0]."""
    cuda.atomic.add(total, 0, 1)


@jit
def verify_atomic_spread(counts):
    """Every thread adds 1 to its own counter."""
    cuda.atomic.add(counts, cuda.grid(1), 1)


@jit
def verify_local(a, out, pick):
    """A local array indexed by a run-time value: it lives in local memory, not registers."""
    held = cuda.local.array(8, float32)
    i = cuda.grid(1)
    for k in range(8):
        held[k] = a[k * out.size + i]
    out[i] = held[pick[i] % 8]


# ---- races: broken and correct ---------------------------------------------------------------


def _tree(barrier: bool, name: str):
    @_named(name)
    def tree(a, out):
        s = cuda.shared.array(BLOCK, float32)
        t = cuda.threadIdx.x
        s[t] = a[cuda.grid(1)]
        cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if t < step:
                s[t] += s[t + step]
            if barrier:
                cuda.syncthreads()
            step //= 2
        if t == 0:
            out[cuda.blockIdx.x] = s[0]

    return tree


def _reverse(barrier: bool, name: str):
    @_named(name)
    def reverse(a):
        s = cuda.shared.array(BLOCK, float32)
        t = cuda.threadIdx.x
        s[t] = a[cuda.grid(1)]
        if barrier:
            cuda.syncthreads()
        a[cuda.grid(1)] = s[BLOCK - 1 - t]

    return reverse


def _overwrite(barrier: bool, name: str):
    @_named(name)
    def overwrite(a, out):
        tile = cuda.shared.array(BLOCK, float32)
        t = cuda.threadIdx.x
        total = float32(0)
        for chunk in range(2):
            tile[t] = a[chunk * BLOCK + t]
            cuda.syncthreads()
            total += tile[(t + 1) % BLOCK]
            if barrier:
                cuda.syncthreads()
        out[t] = total

    return overwrite


def _slot(per_slot: int, name: str):
    @_named(name)
    def slot(out):
        s = cuda.shared.array(BLOCK, float32)
        t = cuda.threadIdx.x
        s[t // per_slot] = t
        cuda.syncthreads()
        out[t] = s[t // per_slot]

    return slot


def _branch_barrier(in_branch: bool, name: str):
    @_named(name)
    def branch(a, out):
        s = cuda.shared.array(BLOCK, float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        if in_branch:
            if t < BLOCK // 2:
                cuda.syncthreads()
        else:
            cuda.syncthreads()
        out[t] = s[BLOCK - 1 - t]

    return branch


verify_race_tree, verify_tree = _tree(False, "verify_race_tree"), _tree(True, "verify_tree")
verify_race_reverse = _reverse(False, "verify_race_reverse")
verify_reverse = _reverse(True, "verify_reverse")
verify_race_overwrite = _overwrite(False, "verify_race_overwrite")
verify_overwrite = _overwrite(True, "verify_overwrite")
verify_race_two_per_slot, verify_one_per_slot = (
    _slot(2, "verify_race_two_per_slot"),
    _slot(1, "verify_one_per_slot"),
)
verify_race_barrier_in_branch = _branch_barrier(True, "verify_race_barrier_in_branch")
verify_barrier = _branch_barrier(False, "verify_barrier")


# ---- 8- and 16-byte shared reads: a half-warp (quarter-warp) at a time -------------------


@jit
def verify_f64_half_warp_conflict(out):
    """Each half-warp reads doubles 0-7 and 16-23 (or 8-15 and 24-31): 2-way inside each half."""
    tile = cuda.shared.array(CELLS, float64)
    i = cuda.threadIdx.x
    for j in range(TILE):
        tile[j * TILE + i] = i + j
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE + i] = tile[i % 8 + 16 * (i // 8 % 2) + 8 * (i // 16)]


@jit
def verify_f64_halves_same(out):
    """Both half-warps read the same 16 doubles: one 128-byte pass each."""
    tile = cuda.shared.array(CELLS, float64)
    i = cuda.threadIdx.x
    for j in range(TILE):
        tile[j * TILE + i] = i + j
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE + i] = tile[i % 16]


@jit
def verify_f32x4_quarters_same(out):
    """Every quarter-warp reads the same 8 float32x4 (one 16-byte access per lane)."""
    tile = cuda.shared.array(QUADS, float32)
    i = cuda.threadIdx.x
    for j in range(4):
        tile[j * TILE + i] = i + j
    cuda.syncthreads()
    v = vector.load_vector(tile, 4 * (i % 8), 4)
    out[cuda.blockIdx.x * TILE + i] = v[0] + v[1] + v[2] + v[3]


# ---- the cases -------------------------------------------------------------------------------


def _f32(rng, *shape):
    return rng.random(shape, dtype=np.float32) + 0.5


def _copy(n, size, dtype=np.float32):
    def make(rng):
        a = rng.random(size) + (1j * rng.random(size) if np.dtype(dtype).kind == "c" else 0)
        a = a.astype(dtype)
        return -(-n // BLOCK), BLOCK, (a, np.zeros(n, dtype))

    return make


def _square(side=64):
    def make(rng):
        return (
            (side // TILE, side // TILE),
            (TILE, ROWS),
            (_f32(rng, side, side), np.zeros((side, side), np.float32)),
        )

    return make


def _matmul(block):
    def make(rng):
        return (
            (64 // block, 64 // block),
            (block, block),
            (_f32(rng, 64, 64), _f32(rng, 64, 64), np.zeros((64, 64), np.float32)),
        )

    return make


COUNTS = [
    Case("verify_copy", verify_copy, _copy(4096, 4096), "4 sectors/request"),
    Case("verify_copy_strided", verify_copy_strided, _copy(1024, 32 * 1024), "32 sectors/request"),
    Case("verify_copy_offset", verify_copy_offset, _copy(4096, 4097), "5 sectors/request (loads)"),
    Case("verify_copy_f64", verify_copy, _copy(4096, 4096, np.float64), "8 sectors/request"),
    Case(
        "verify_copy_c128",
        verify_copy,
        _copy(4096, 4096, np.complex128),
        "2 requests of 16 sectors per warp (Numba splits a complex128)",
    ),
    Case(
        "verify_copy_c128_vector",
        verify_copy_c128_vector,
        _copy(4096, 4096, np.complex128),
        "1 request of 16 sectors per warp",
    ),
    Case("verify_copy_f32x4", verify_copy_f32x4, _copy(4096, 4096), "16 sectors/request"),
    Case(
        "verify_aos",
        verify_aos,
        lambda rng: (16, BLOCK, (_f32(rng, 4096, 3), np.zeros(4096, np.float32))),
        "12 sectors/request, ideal 4",
    ),
    Case(
        "verify_soa",
        verify_soa,
        lambda rng: (16, BLOCK, (_f32(rng, 3, 4096), np.zeros(4096, np.float32))),
        "4 sectors/request",
    ),
    Case(
        "verify_rgb_row",
        verify_rgb_row,
        lambda rng: (
            (2, 32),
            (32, 8),
            (rng.integers(0, 256, (256, 64, 3), dtype=np.uint8), np.zeros((256, 64, 3), np.uint8)),
        ),
        "3 sectors/request, ideal 1",
    ),
    Case("verify_transpose_naive", verify_transpose_naive, _square(), "stores 32 sectors/request"),
    Case("verify_transpose_tiled", verify_transpose_tiled, _square(), "shared loads 32-way"),
    Case("verify_transpose_padded", verify_transpose_padded, _square(), "shared conflict-free"),
    *(
        Case(k.__name__, k, lambda rng: (2, TILE, (np.zeros(2 * TILE, np.float64),)), e)
        for k, e in (
            (verify_f64_stride1, "2 wavefronts"),
            (verify_f64_stride16, "32 wavefronts"),
            (verify_f64_stride17, "2 wavefronts"),
            (verify_f64_broadcast, "2 wavefronts"),
            (verify_f64_half_warp_conflict, "4 wavefronts/request (2-way in each half-warp)"),
            (verify_f64_halves_same, "2 wavefronts/request (a pass per half-warp)"),
        )
    ),
    Case(
        "verify_f32x4_quarters_same",
        verify_f32x4_quarters_same,
        lambda rng: (2, TILE, (np.zeros(2 * TILE, np.float32),)),
        "4 wavefronts/request (a pass per quarter-warp)",
    ),
    Case("verify_matmul_naive", verify_matmul_naive, _matmul(16), "a: 1 sector (broadcast)"),
    Case("verify_matmul_tiled", verify_matmul_tiled, _matmul(MM_TILE), "shared: sb conflict-free"),
    Case(
        "verify_reduce_interleaved",
        verify_reduce_interleaved,
        lambda rng: (8, BLOCK, (_f32(rng, 8 * BLOCK), np.zeros(8, np.float32))),
        "shared: 2-, 4-, 8-... way",
    ),
    Case(
        "verify_stencil",
        verify_stencil,
        lambda rng: (
            8,
            BLOCK,
            (_f32(rng, 8 * BLOCK + 2 * RADIUS), np.zeros(8 * BLOCK, np.float32)),
        ),
        "shared loads conflict-free",
    ),
    Case(
        "verify_histogram",
        verify_histogram,
        lambda rng: (
            8,
            BLOCK,
            (rng.integers(0, BINS, 8 * BLOCK).astype(np.int32), np.zeros(BINS, np.uint32)),
        ),
        "shared atomics",
    ),
    Case(
        "verify_lut_broadcast",
        verify_lut_broadcast,
        lambda rng: (
            8,
            BLOCK,
            (rng.integers(0, 256, 64).astype(np.int32), np.zeros(8 * BLOCK, np.float32)),
        ),
        "constant: 1 address/request",
    ),
    Case(
        "verify_lut_per_lane",
        verify_lut_per_lane,
        lambda rng: (
            8,
            BLOCK,
            (rng.integers(0, 256, 8 * BLOCK).astype(np.int32), np.zeros(8 * BLOCK, np.float32)),
        ),
        "constant: ~30 addresses/request",
    ),
    Case(
        "verify_atomic_one_address",
        verify_atomic_one_address,
        lambda rng: (8, BLOCK, (np.zeros(1, np.float32),)),
        "32 lanes on one address",
    ),
    Case(
        "verify_atomic_spread",
        verify_atomic_spread,
        lambda rng: (8, BLOCK, (np.zeros(8 * BLOCK, np.float32),)),
        "1 lane per address",
    ),
    Case(
        "verify_local",
        verify_local,
        lambda rng: (
            8,
            BLOCK,
            (
                _f32(rng, 64 * BLOCK),
                np.zeros(8 * BLOCK, np.float32),
                rng.integers(0, 8, 8 * BLOCK).astype(np.int32),
            ),
        ),
        "local: interleaved",
    ),
]


def _per_block(*kinds):
    """Two blocks of BLOCK threads; each argument random float32 ('a') or zeros ('out')."""

    def make(rng):
        return (
            2,
            BLOCK,
            tuple(
                _f32(rng, 2 * BLOCK) if kind == "a" else np.zeros(2 * BLOCK, np.float32)
                for kind in kinds
            ),
        )

    return make


RACES = [
    Case("verify_race_transpose", verify_race_transpose, _square(), "RAW, shared"),
    Case("verify_transpose_padded", verify_transpose_padded, _square(), "clean"),
    Case("verify_race_tree", verify_race_tree, _per_block("a", "out"), "RAW, shared"),
    Case("verify_tree", verify_tree, _per_block("a", "out"), "clean"),
    Case("verify_race_reverse", verify_race_reverse, _per_block("a"), "RAW, shared"),
    Case("verify_reverse", verify_reverse, _per_block("a"), "clean"),
    Case("verify_race_overwrite", verify_race_overwrite, _per_block("a", "out"), "WAR, shared"),
    Case("verify_overwrite", verify_overwrite, _per_block("a", "out"), "clean"),
    Case("verify_race_two_per_slot", verify_race_two_per_slot, _per_block("out"), "WAW, shared"),
    Case("verify_one_per_slot", verify_one_per_slot, _per_block("out"), "clean"),
    Case(
        "verify_race_barrier_in_branch",
        verify_race_barrier_in_branch,
        _per_block("a", "out"),
        "barrier (synccheck), and a RAW for the threads that do not wait",
    ),
    Case("verify_barrier", verify_barrier, _per_block("a", "out"), "clean"),
]


def _numba_type(value) -> str:
    """The signature text of one launch argument: a C-contiguous array or a scalar."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{', '.join([':'] * (value.ndim - 1) + ['::1'])}]"
    return "float64" if isinstance(value, float) else "int64"


def _signatures() -> dict:
    """Every case's kernel with the signature its small inputs give it (for the PTX registry)."""
    found: dict = {}
    for case in COUNTS + RACES:
        _, _, args = case.make(np.random.default_rng(0))
        signature = f"void({', '.join(_numba_type(a) for a in args)})"
        found.setdefault(case.kernel, [])
        if signature not in found[case.kernel]:
            found[case.kernel].append(signature)
    return found


SIGNATURES = _signatures()

"""Lesson 03's padded transpose spelt another way, for the yardstick to time beside it.

Guarding each load with `if x < w and y + j < h` put every LDG behind its own branch, followed
by the STS that waits for it, so a thread had one load in flight (Harris's CUDA C, with no
bounds checks, issues its four LDGs back to back). The textbook kernels now clamp their loads
to the matrix (every thread loads; one past the edge loads an edge element it never writes), so
the four go together; the yardstick times them as "tiled" and "padded". The other spelling:

- `whole`: a thread whose four rows are all inside loads without checks; the others check;
- `full tiles`: a block whose whole tile is inside loads and stores without any check, as
  Harris's kernel does everywhere; the edge tiles check both;
- `unsigned`: the textbook kernel with uint32 indices. Numba reads a negative index from the
  end of its axis, so every signed index costs a shift, an and and an add (the wraparound) in
  the PTX; an unsigned one cannot be negative, and C has no such rule.
"""

from numba import cuda, float32, uint32

from gpgpu_lessons.l03_bank_conflicts.textbook import PADDED, ROWS, TILE


@cuda.jit
def padded_whole(a, out):
    """The padded transpose with unchecked loads where a thread's rows are all inside."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    if x < w and y + TILE - ROWS < h:  # all four rows inside: no check between the loads
        for j in range(0, TILE, ROWS):
            tile[ty + j, tx] = a[y + j, x]
    else:
        for j in range(0, TILE, ROWS):
            if x < w and y + j < h:
                tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        if x < h and y + j < w:
            out[y + j, x] = tile[tx, ty + j]


@cuda.jit
def padded_full_tiles(a, out):
    """The padded transpose with no checks at all in tiles wholly inside the matrix."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    inside = (cuda.blockIdx.x + 1) * TILE <= w and (cuda.blockIdx.y + 1) * TILE <= h
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    if inside:  # the four loads back to back, as in CUDA C
        for j in range(0, TILE, ROWS):
            tile[ty + j, tx] = a[y + j, x]
    else:
        for j in range(0, TILE, ROWS):
            if x < w and y + j < h:
                tile[ty + j, tx] = a[y + j, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    if inside:
        for j in range(0, TILE, ROWS):
            out[y + j, x] = tile[tx, ty + j]
    else:
        for j in range(0, TILE, ROWS):
            if x < h and y + j < w:
                out[y + j, x] = tile[tx, ty + j]


@cuda.jit
def padded_unsigned(a, out):
    """The padded transpose with unsigned indices: no negative-index wraparound."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = uint32(cuda.threadIdx.x), uint32(cuda.threadIdx.y)
    h, w = uint32(a.shape[0]), uint32(a.shape[1])
    x, y = uint32(cuda.blockIdx.x * TILE) + tx, uint32(cuda.blockIdx.y * TILE) + ty
    for j in range(0, TILE, ROWS):
        row = y + uint32(j)
        tile[ty + uint32(j), tx] = a[min(row, h - uint32(1)), min(x, w - uint32(1))]
    cuda.syncthreads()
    x, y = uint32(cuda.blockIdx.y * TILE) + tx, uint32(cuda.blockIdx.x * TILE) + ty
    for j in range(0, TILE, ROWS):
        row = y + uint32(j)
        if x < h and row < w:
            out[row, x] = tile[tx, ty + uint32(j)]


SPELLINGS = {
    "padded, whole-row loads": padded_whole,
    "padded, full tiles unchecked": padded_full_tiles,
    "padded, unsigned indices": padded_unsigned,
}
MATRIX = "void(float32[:, ::1], float32[:, ::1])"
SIGNATURES = {kernel: [MATRIX] for kernel in SPELLINGS.values()}

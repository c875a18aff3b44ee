"""Lesson 03's padded transpose spelt another way, for the yardstick to time beside it.

Guarding each load with `if x < w and y + j < h` put every LDG behind its own branch, followed
by the STS that waits for it, so a thread had one load in flight (Harris's CUDA C, with no
bounds checks, issues its four LDGs back to back). The textbook kernels now clamp their loads
to the matrix (every thread loads; one past the edge loads an edge element it never writes), so
the four go together; the yardstick times them as "tiled" and "padded". The other spelling:

- `whole`: a thread whose four rows are all inside loads without checks; the others check;
- `full tiles`: a block whose whole tile is inside loads and stores without any check, as
  Harris's kernel does everywhere; the edge tiles check both.
"""

from numba import cuda, float32

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


SPELLINGS = {
    "padded, whole-row loads": padded_whole,
    "padded, full tiles unchecked": padded_full_tiles,
}
MATRIX = "void(float32[:, ::1], float32[:, ::1])"
SIGNATURES = {kernel: [MATRIX] for kernel in SPELLINGS.values()}

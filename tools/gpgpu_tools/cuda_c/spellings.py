"""Lesson 03's transposes spelt so that a thread's four loads are in flight at once.

The textbook kernels guard each load with `if x < w and y + j < h`: in the SASS every LDG sits
behind its own branch, followed by the STS that waits for it, so a thread has one load in
flight (Harris's CUDA C, with no bounds checks, issues its four LDGs back to back). Two
spellings keep the checks and let the four loads go together; the yardstick times both beside
the textbook kernels, so the lesson can pick one on a measurement:

- `clamped`: every thread loads, its row and column clamped to the matrix (a thread past the
  edge loads an edge element it never writes); the store phase keeps its check;
- `whole`: a thread whose four rows are all inside loads without checks; the others check.
"""

from numba import cuda, float32

TILE = 32
ROWS = 8
PADDED = TILE + 1


@cuda.jit
def padded_clamped(a, out):
    """The padded transpose with clamped, unconditional loads: four loads in flight."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):  # clamped to the matrix: no branch between the loads
        tile[ty + j, tx] = a[min(y + j, h - 1), min(x, w - 1)]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        if x < h and y + j < w:
            out[y + j, x] = tile[tx, ty + j]


@cuda.jit
def tiled_clamped(a, out):
    """The unpadded tiled transpose with clamped loads (its bank conflicts unchanged)."""
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, ROWS):
        tile[ty + j, tx] = a[min(y + j, h - 1), min(x, w - 1)]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, ROWS):
        if x < h and y + j < w:
            out[y + j, x] = tile[tx, ty + j]


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


SPELLINGS = {
    "padded, clamped loads": padded_clamped,
    "tiled, clamped loads": tiled_clamped,
    "padded, whole-row loads": padded_whole,
}
MATRIX = "void(float32[:, ::1], float32[:, ::1])"
SIGNATURES = {kernel: [MATRIX] for kernel in SPELLINGS.values()}

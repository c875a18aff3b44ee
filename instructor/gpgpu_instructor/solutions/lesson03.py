"""Reference solutions of lesson 03's exercises (bank conflicts)."""

import math

from numba import cuda, float32

TILE, ROWS = 32, 8
PADDED = TILE + 1  # one extra column: a tile column spreads over all 32 banks
B = 64
T = 8


@cuda.jit
def transpose_padded(a, out):
    """out = a.T through a padded shared tile: one extra column, no bank conflicts."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < h and x < w:
            tile[ty + k, tx] = a[y + k, x]
    cuda.syncthreads()
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < w and x < h:
            out[y + k, x] = tile[tx, ty + k]


@cuda.jit
def mirror_distance(points, out):
    """Distance from each point to its mirror in the block: x and y in separate shared arrays."""
    xs = cuda.shared.array(B, float32)
    ys = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, points.shape[0] - start)
    if t < m:
        xs[t] = points[start + t, 0]
        ys[t] = points[start + t, 1]
    cuda.syncthreads()
    if t < m:
        dx = xs[t] - xs[m - 1 - t]
        dy = ys[t] - ys[m - 1 - t]
        out[start + t] = math.sqrt(dx * dx + dy * dy)


@cuda.jit
def block_sums(a, sums):
    """sums[b] = the sum of block b's elements, by a tree with sequential addressing."""
    buf = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    buf[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        sums[cuda.blockIdx.x] = buf[0]


@cuda.jit
def rotate(a, out):
    """out = np.rot90(a), through a padded shared tile."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < h and x < w:
            tile[ty + k, tx] = a[y + k, x]
    cuda.syncthreads()
    j = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        c = cuda.blockIdx.x * TILE + ty + k
        if c < w and j < h:
            out[w - 1 - c, j] = tile[tx, ty + k]


@cuda.jit
def matmul(a, b, c):
    """c = a @ b with T x T tiles of a and b in shared memory."""
    sa = cuda.shared.array((T, T), float32)
    sb = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0)
    for start in range(0, k, T):
        sa[ty, tx] = a[row, start + tx] if row < m and start + tx < k else 0
        sb[ty, tx] = b[start + ty, col] if start + ty < k and col < n else 0
        cuda.syncthreads()
        for j in range(T):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


REFERENCES = {
    "03.1": transpose_padded,
    "03.2": mirror_distance,
    "03.3": block_sums,
    "03.4": rotate,
    "03.5": matmul,
}
SHOWN_WITH = {
    "03.1": ["TILE, ROWS = 32, 8\nPADDED = TILE + 1"],
    "03.2": ["B = 64"],
    "03.3": ["B = 64"],
    "03.4": ["TILE, ROWS = 32, 8\nPADDED = TILE + 1"],
    "03.5": ["T = 8"],
}

_MATRIX = "void(float32[:, ::1], float32[:, ::1])"
SIGNATURES = {
    transpose_padded: [_MATRIX],
    mirror_distance: ["void(float32[:, ::1], float32[::1])"],
    block_sums: ["void(float32[::1], float32[::1])"],
    rotate: [_MATRIX],
    matmul: ["void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"],
}

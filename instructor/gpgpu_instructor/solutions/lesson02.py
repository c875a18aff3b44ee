"""Reference solutions of lesson 02's exercises (shared memory)."""

from numba import cuda, float32, int32

B = 64
WIDE = B + 2
TILE = 8
CELLS = TILE * TILE
HALO = TILE + 2


@cuda.jit
def block_reverse(a, out):
    """Reverse each segment of B elements (the last may be shorter) through shared memory."""
    tile = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, a.size - start)
    if t < m:
        tile[t] = a[start + t]
    cuda.syncthreads()
    if t < m:
        out[start + t] = tile[m - 1 - t]


@cuda.jit
def smooth(a, out):
    """3-point average with clamped ends, through a shared tile with a halo."""
    tile = cuda.shared.array(WIDE, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    i = start + t
    n = a.size
    m = min(B, n - start)
    if t < m:
        tile[t + 1] = a[i]
    if t == 0:
        tile[0] = a[max(i - 1, 0)]
    if t == m - 1:
        tile[m + 1] = a[min(i + 1, n - 1)]
    cuda.syncthreads()
    if t < m:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3


@cuda.jit
def mosaic(image, out):
    """Each TILE x TILE tile painted with its mean, summed by a tree in shared memory."""
    total = cuda.shared.array(CELLS, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = image.shape
    tid = ty * TILE + tx
    inside = y < h and x < w
    total[tid] = image[y, x] if inside else 0
    cuda.syncthreads()
    step = CELLS // 2
    while step > 0:
        if tid < step:
            total[tid] += total[tid + step]
        cuda.syncthreads()
        step //= 2
    rows = min(TILE, h - cuda.blockIdx.y * TILE)
    columns = min(TILE, w - cuda.blockIdx.x * TILE)
    if inside:
        out[y, x] = total[0] / (rows * columns)


@cuda.jit
def box_blur(image, out):
    """3 x 3 mean with clamped edges, from a (TILE + 2)^2 shared tile."""
    tile = cuda.shared.array((HALO, HALO), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE - 1, cuda.blockIdx.y * TILE - 1
    h, w = image.shape
    k = ty * TILE + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[min(max(y0 + r, 0), h - 1), min(max(x0 + c, 0), w - 1)]
        k += TILE * TILE
    cuda.syncthreads()
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        total = float32(0)
        for dy in range(3):
            for dx in range(3):
                total += tile[ty + dy, tx + dx]
        out[y, x] = total / 9


@cuda.jit
def block_scan(a, out):
    """Inclusive running sums of each block's segment (Hillis-Steele, in shared memory)."""
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        v = sums[t - d] if t >= d else 0
        cuda.syncthreads()
        sums[t] += v
        cuda.syncthreads()
        d *= 2
    if i < a.size:
        out[i] = sums[t]


REFERENCES = {
    "02.1": block_reverse,
    "02.2": smooth,
    "02.3": mosaic,
    "02.4": box_blur,
    "02.5": block_scan,
}
SHOWN_WITH = {
    "02.1": ["B = 64"],
    "02.2": ["B = 64\nWIDE = B + 2"],
    "02.3": ["TILE = 8\nCELLS = TILE * TILE"],
    "02.4": ["TILE = 8", "HALO = TILE + 2"],
    "02.5": ["B = 64"],
}

SIGNATURES = {
    block_reverse: ["void(float32[::1], float32[::1])"],
    smooth: ["void(float32[::1], float32[::1])"],
    mosaic: ["void(float32[:, ::1], float32[:, ::1])"],
    box_blur: ["void(float32[:, ::1], float32[:, ::1])"],
    block_scan: ["void(int32[::1], int32[::1])"],
}

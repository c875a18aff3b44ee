"""The corpus of typical wrong answers: kernels (and functions) that a student might write, each
with the kinds of finding the grader must report ("values", "out of bounds", a race kind, or the
name of a check) and a pattern its answer must match, so that the message names the actual
mistake. Three or more per exercise, including the slips issue 24 names."""

import math
import statistics
import time

import numpy as np
from numba import cuda, float32, int32

FULL = 0xFFFFFFFF
B = 64
TILE, ROWS = 32, 8
T = 8
HALO = 10
WIDE = B + 2  # shapes are module constants: a GPU compiles no expression in the call
CELLS = T * T
PADDED = TILE + 1
PAIRS = 2 * B
BINS = 16
COEFFS = np.array([0.5, -1.25, 0.75, 2.0, -0.5, 0.125, 0.0625], np.float32)
TAPS = np.array([1, 4, 6, 4, 1], np.float32) / 16
YCC = np.array(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], np.float32
)
OFFSET = np.array([0.0, 0.5, 0.5], np.float32)
GAMMA = (255 * (np.arange(256) / 255) ** (1 / 2.2)).round().astype(np.uint8)
SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


# --- lesson 00 ---------------------------------------------------------------------------------


@cuda.jit
def saxpy_no_bounds(a, x, y, out):
    i = cuda.grid(1)
    out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_misses_last(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size - 1:
        out[i] = a * x[i] + y[i]


def gbs_eight_bytes(n, ms):
    return 8 * n / (ms * 1e-3) / 1e9


def gbs_gib(n, ms):
    return 12 * n / (ms * 1e-3) / 2**30


def timer_no_warmup_no_sync(run, repeat=10):
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    return (time.perf_counter() - start) / repeat * 1e3


def timer_no_sync(run, repeat=10):
    run()
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    return (time.perf_counter() - start) / repeat * 1e3


def events_mean(run, repeat=15):
    run()
    samples = []
    for _ in range(repeat):
        start, end = cuda.event(), cuda.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return sum(samples) / len(samples)


def events_host_clock(run, repeat=15):
    run()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        cuda.synchronize()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def events_not_waited(run, repeat=15):
    run()
    start, end = cuda.event(), cuda.event()
    start.record()
    run()
    end.record()
    return start.elapsed_time(end)


@cuda.jit
def saxpy_no_loop(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def saxpy_block_stride(a, x, y, out):
    for i in range(cuda.grid(1), out.size, cuda.blockDim.x):
        out[i] = a * x[i] + y[i]


# --- lesson 01 ---------------------------------------------------------------------------------


@cuda.jit
def reverse_off_by_one(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[src.size - i]


@cuda.jit
def reverse_no_bounds(src, dst):
    i = cuda.grid(1)
    dst[i] = src[src.size - 1 - i]


@cuda.jit
def difference_bounds_of_a(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i + 1] - a[i]


@cuda.jit
def difference_backwards(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] - a[i - 1]


@cuda.jit
def partials_chunked(x, partials):
    t = cuda.grid(1)
    threads = cuda.gridsize(1)
    chunk = (x.size + threads - 1) // threads
    acc = 0.0
    for j in range(t * chunk, min((t + 1) * chunk, x.size)):
        acc += x[j]
    partials[t] = acc


@cuda.jit
def partials_block_stride(x, partials):
    t = cuda.grid(1)
    acc = 0.0
    for j in range(t, x.size, cuda.blockDim.x):
        acc += x[j]
    partials[t] = acc


@cuda.jit
def invert_per_pixel(image, out):
    i = cuda.grid(1)
    w = image.shape[1]
    if i < image.shape[0] * w:
        y, x = i // w, i % w
        for c in range(3):
            out[y, x, c] = 255 - image[y, x, c]


@cuda.jit
def invert_swaps_channels(image, out):
    i = cuda.grid(1)
    if i < image.size:
        p, c = i // 3, i % 3
        y, x = p // image.shape[1], p % image.shape[1]
        out[y, x, c] = 255 - image[y, x, 2 - c]


@cuda.jit
def split_per_point(points, xs, ys, zs):
    i = cuda.grid(1)
    if i < points.shape[0]:
        xs[i] = points[i, 0]
        ys[i] = points[i, 1]
        zs[i] = points[i, 2]


@cuda.jit
def split_swapped(points, xs, ys, zs):
    i = cuda.grid(1)
    if i < points.size:
        p, c = i // 3, i % 3
        if c == 0:
            xs[p] = points[p, c]
        elif c == 1:
            zs[p] = points[p, c]
        else:
            ys[p] = points[p, c]


# --- lesson 02 ---------------------------------------------------------------------------------


@cuda.jit
def block_reverse_no_barrier(a, out):
    tile = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, a.size - start)
    if t < m:
        tile[t] = a[start + t]
    if t < m:
        out[start + t] = tile[m - 1 - t]


@cuda.jit
def block_reverse_full_segment(a, out):
    tile = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, a.size - start)
    if t < m:
        tile[t] = a[start + t]
    cuda.syncthreads()
    if t < m:
        out[start + t] = tile[B - 1 - t]


@cuda.jit
def block_reverse_global(a, out):
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, a.size - start)
    if t < m:
        out[start + t] = a[start + m - 1 - t]


@cuda.jit
def smooth_no_halo(a, out):
    tile = cuda.shared.array(WIDE, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    n = a.size
    if i < n:
        tile[t + 1] = a[i]
    cuda.syncthreads()
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3


@cuda.jit
def smooth_global(a, out):
    i = cuda.grid(1)
    n = a.size
    if i < n:
        out[i] = (a[max(i - 1, 0)] + a[i] + a[min(i + 1, n - 1)]) / 3


@cuda.jit
def mosaic_barrier_in_branch(image, out):
    total = cuda.shared.array(CELLS, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = image.shape
    tid = ty * T + tx
    inside = y < h and x < w
    total[tid] = image[y, x] if inside else 0
    cuda.syncthreads()
    step = T * T // 2
    while step > 0:
        if tid < step:
            total[tid] += total[tid + step]
            cuda.syncthreads()
        step //= 2
    rows = min(T, h - cuda.blockIdx.y * T)
    columns = min(T, w - cuda.blockIdx.x * T)
    if inside:
        out[y, x] = total[0] / (rows * columns)


@cuda.jit
def mosaic_divides_by_64(image, out):
    total = cuda.shared.array(CELLS, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = image.shape
    tid = ty * T + tx
    inside = y < h and x < w
    total[tid] = image[y, x] if inside else 0
    cuda.syncthreads()
    step = T * T // 2
    while step > 0:
        if tid < step:
            total[tid] += total[tid + step]
        cuda.syncthreads()
        step //= 2
    if inside:
        out[y, x] = total[0] / (T * T)


@cuda.jit
def blur_global(image, out):
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        total = float32(0)
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                total += image[min(max(y + dy, 0), h - 1), min(max(x + dx, 0), w - 1)]
        out[y, x] = total / 9


@cuda.jit
def blur_no_barrier(image, out):
    tile = cuda.shared.array((HALO, HALO), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * T - 1, cuda.blockIdx.y * T - 1
    h, w = image.shape
    k = ty * T + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[min(max(y0 + r, 0), h - 1), min(max(x0 + c, 0), w - 1)]
        k += T * T
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        total = float32(0)
        for dy in range(3):
            for dx in range(3):
                total += tile[ty + dy, tx + dx]
        out[y, x] = total / 9


@cuda.jit
def scan_no_barriers(a, out):
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        if t >= d:
            sums[t] += sums[t - d]
        d *= 2
    if i < a.size:
        out[i] = sums[t]


@cuda.jit
def scan_barrier_in_branch(a, out):
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        if t >= d:
            v = sums[t - d]
            cuda.syncthreads()
            sums[t] += v
        cuda.syncthreads()
        d *= 2
    if i < a.size:
        out[i] = sums[t]


# --- lesson 03 ---------------------------------------------------------------------------------


@cuda.jit
def transpose_unpadded(a, out):
    tile = cuda.shared.array((TILE, TILE), float32)
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
def transpose_no_barrier(a, out):
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < h and x < w:
            tile[ty + k, tx] = a[y + k, x]
    x, y = cuda.blockIdx.y * TILE + tx, cuda.blockIdx.x * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < w and x < h:
            out[y + k, x] = tile[tx, ty + k]


@cuda.jit
def pairs_interleaved(points, out):
    pts = cuda.shared.array(PAIRS, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, points.shape[0] - start)
    if t < m:
        pts[2 * t] = points[start + t, 0]
        pts[2 * t + 1] = points[start + t, 1]
    cuda.syncthreads()
    if t < m:
        dx = pts[2 * t] - pts[2 * (m - 1 - t)]
        dy = pts[2 * t + 1] - pts[2 * (m - 1 - t) + 1]
        out[start + t] = math.sqrt(dx * dx + dy * dy)


@cuda.jit
def pairs_full_mirror(points, out):
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
        dx = xs[t] - xs[B - 1 - t]
        dy = ys[t] - ys[B - 1 - t]
        out[start + t] = math.sqrt(dx * dx + dy * dy)


@cuda.jit
def sums_interleaved(a, sums):
    buf = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    buf[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    s = 1
    while s < B:
        index = 2 * s * t
        if index < B:
            buf[index] += buf[index + s]
        cuda.syncthreads()
        s *= 2
    if t == 0:
        sums[cuda.blockIdx.x] = buf[0]


@cuda.jit
def sums_no_barrier(a, sums):
    buf = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    buf[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        s //= 2
    if t == 0:
        sums[cuda.blockIdx.x] = buf[0]


@cuda.jit
def rotate_unpadded(a, out):
    tile = cuda.shared.array((TILE, TILE), float32)
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
def rotate_as_transpose(a, out):
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
            out[c, j] = tile[tx, ty + k]


@cuda.jit
def matmul_no_barriers(a, b, c):
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
        for j in range(T):
            acc += sa[ty, j] * sb[j, tx]
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def matmul_one_barrier(a, b, c):
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
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def matmul_no_bounds(a, b, c):
    sa = cuda.shared.array((T, T), float32)
    sb = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    acc = float32(0)
    for start in range(0, a.shape[1], T):
        sa[ty, tx] = a[row, start + tx]
        sb[ty, tx] = b[start + ty, col]
        cuda.syncthreads()
        for j in range(T):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


# --- lesson 04 ---------------------------------------------------------------------------------


@cuda.jit
def poly_no_bounds(x, out):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    v = x[i]
    acc = c[6]
    for k in range(5, -1, -1):
        acc = acc * v + c[k]
    out[i] = acc


@cuda.jit
def poly_reversed(x, out):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i < out.size:
        v = x[i]
        acc = c[0]
        for k in range(1, 7):
            acc = acc * v + c[k]
        out[i] = acc


@cuda.jit
def blur_taps_global(image, taps, out):
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        acc = float32(0)
        for d in range(5):
            acc += taps[d] * image[y, min(max(x + d - 2, 0), w - 1)]
        out[y, x] = acc


@cuda.jit
def blur_unclamped(image, taps, out):
    c = cuda.const.array_like(TAPS)
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        acc = float32(0)
        for d in range(5):
            acc += c[d] * image[y, x + d - 2]
        out[y, x] = acc


@cuda.jit
def ycbcr_no_offset(image, out):
    m = cuda.const.array_like(YCC)
    p = cuda.grid(1)
    w = image.shape[1]
    if p < image.shape[0] * w:
        y, x = p // w, p % w
        for k in range(3):
            out[y, x, k] = (
                m[k, 0] * image[y, x, 0] + m[k, 1] * image[y, x, 1] + m[k, 2] * image[y, x, 2]
            )


@cuda.jit
def ycbcr_transposed(image, out):
    m = cuda.const.array_like(YCC)
    o = cuda.const.array_like(OFFSET)
    p = cuda.grid(1)
    w = image.shape[1]
    if p < image.shape[0] * w:
        y, x = p // w, p % w
        for k in range(3):
            out[y, x, k] = (
                o[k]
                + m[0, k] * image[y, x, 0]
                + m[1, k] * image[y, x, 1]
                + m[2, k] * image[y, x, 2]
            )


@cuda.jit
def gamma_constant(pixels, lut, out):
    table = cuda.const.array_like(GAMMA)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = table[pixels[i]]


@cuda.jit
def gamma_shifted(pixels, lut, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = lut[pixels[i] - 1]


@cuda.jit
def sharpen_unclamped(image, out):
    tile = cuda.shared.array((HALO, HALO), float32)
    weights = cuda.const.array_like(SHARPEN)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * T - 1, cuda.blockIdx.y * T - 1
    h, w = image.shape
    k = ty * T + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[y0 + r, x0 + c]
        k += T * T
    cuda.syncthreads()
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        acc = float32(0)
        for dy in range(3):
            for dx in range(3):
                acc += weights[dy, dx] * tile[ty + dy, tx + dx]
        out[y, x] = acc


@cuda.jit
def sharpen_no_barrier(image, out):
    tile = cuda.shared.array((HALO, HALO), float32)
    weights = cuda.const.array_like(SHARPEN)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * T - 1, cuda.blockIdx.y * T - 1
    h, w = image.shape
    k = ty * T + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[min(max(y0 + r, 0), h - 1), min(max(x0 + c, 0), w - 1)]
        k += T * T
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        acc = float32(0)
        for dy in range(3):
            for dx in range(3):
                acc += weights[dy, dx] * tile[ty + dy, tx + dx]
        out[y, x] = acc


# --- lesson 05 ---------------------------------------------------------------------------------


@cuda.jit
def count_plain_increment(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        count[0] += 1


@cuda.jit
def count_no_bounds(x, threshold, count):
    i = cuda.grid(1)
    if x[i] > threshold:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def warp_sums_early_return(x, sums):
    i = cuda.grid(1)
    if i >= x.size:
        return
    value = x[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL, value, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        sums[i // 32] = value


@cuda.jit
def warp_sums_half_warp(x, sums):
    i = cuda.grid(1)
    value = x[i] if i < x.size else 0.0
    if cuda.threadIdx.x % 32 < 16:
        value += cuda.shfl_down_sync(FULL, value, 16)
    cuda.syncthreads()
    if cuda.threadIdx.x % 32 == 0:
        sums[i // 32] = value


@cuda.jit
def warp_sums_missing_step(x, sums):
    i = cuda.grid(1)
    value = x[i] if i < x.size else 0.0
    offset = 16
    while offset > 1:
        value += cuda.shfl_down_sync(FULL, value, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        sums[i // 32] = value


@cuda.jit
def warp_sums_shared(x, sums):
    buf = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if t % 32 == 0:
        total = float32(0)
        for k in range(32):
            total += buf[t + k]
        sums[i // 32] = total


@cuda.jit
def bright_one_per_pixel(pixels, threshold, count):
    i = cuda.grid(1)
    if i < pixels.size and pixels[i] > threshold:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def bright_every_lane(pixels, threshold, count):
    i = cuda.grid(1)
    mask = cuda.ballot_sync(FULL, i < pixels.size and pixels[i] > threshold)
    cuda.atomic.add(count, 0, cuda.popc(mask))


@cuda.jit
def histogram_global(values, bins):
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, values[j] >> 4, 1)


@cuda.jit
def histogram_not_zeroed(values, bins):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def dot_atomic_per_element(x, y, out):
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        cuda.atomic.add(out, 0, x[j] * y[j])


@cuda.jit
def dot_no_barrier(x, y, out):
    partial = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[j] * y[j]
    partial[t] = acc
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            partial[t] += partial[t + s]
        s //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])


@cuda.jit
def dot_no_grid_stride(x, y, out):
    partial = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = x[i] * y[i] if i < x.size else 0
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            partial[t] += partial[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])


@cuda.jit
def compact_one_atomic_each(x, threshold, out, count):
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        slot = cuda.atomic.add(count, 0, 1)
        out[slot] = x[i]


@cuda.jit
def compact_no_broadcast(x, threshold, out, count):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    keep = i < x.size and x[i] > threshold
    ballot = cuda.ballot_sync(FULL, keep)
    base = 0
    if lane == 0:
        base = cuda.atomic.add(count, 0, cuda.popc(ballot))
    if keep:
        out[base + cuda.popc(ballot & ((1 << lane) - 1))] = x[i]


# --- more wrong answers: the slips of issue 24, and a third per exercise ------------------------


@cuda.jit
def saxpy_thread_index_only(a, x, y, out):
    i = cuda.threadIdx.x  # ignores blockIdx: every block does the first block's elements
    if i < out.size:
        out[i] = a * x[i] + y[i]


def gbs_milliseconds(n, ms):
    return 12 * n / ms / 1e9


def timer_sync_no_warmup(run, repeat=10):
    start = time.perf_counter()
    for _ in range(repeat):
        run()
    cuda.synchronize()
    return (time.perf_counter() - start) / repeat * 1e3


def events_first_included(run, repeat=15):
    samples = []
    for _ in range(repeat):
        start, end = cuda.event(), cuda.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return sum(samples) / len(samples)


@cuda.jit
def saxpy_stride_one_block(a, x, y, out):
    i = cuda.grid(1)
    while i < out.size:
        out[i] = a * x[i] + y[i]
        i += cuda.blockDim.x * 4  # a stride that is not the grid's thread count


@cuda.jit
def reverse_forward(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


@cuda.jit
def difference_swapped(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] - a[i + 1]


@cuda.jit
def partials_misses_tail(x, partials):
    t = cuda.grid(1)
    threads = cuda.gridsize(1)
    acc = 0.0
    for j in range(t, x.size - threads, threads):
        acc += x[j]
    partials[t] = acc


@cuda.jit
def invert_per_pixel_bytes_unbounded(image, out):
    i = cuda.grid(1)
    w = image.shape[1]
    p, c = i // 3, i % 3
    out[p // w, p % w, c] = 255 - image[p // w, p % w, c]


@cuda.jit
def split_no_bounds(points, xs, ys, zs):
    i = cuda.grid(1)
    p, c = i // 3, i % 3
    value = points[p, c]
    if c == 0:
        xs[p] = value
    elif c == 1:
        ys[p] = value
    else:
        zs[p] = value


@cuda.jit
def smooth_no_barrier(a, out):
    tile = cuda.shared.array(WIDE, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    i = start + t
    n = a.size
    m = min(B, n - start)
    tile[t + 1] = a[min(i, n - 1)]
    if t == 0:
        tile[0] = a[max(i - 1, 0)]
    if t == m - 1:
        tile[m + 1] = a[min(i + 1, n - 1)]
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3


@cuda.jit
def mosaic_no_tree_barrier(image, out):
    total = cuda.shared.array(CELLS, float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = image.shape
    tid = ty * T + tx
    total[tid] = image[y, x] if y < h and x < w else 0
    cuda.syncthreads()
    step = T * T // 2
    while step > 0:
        if tid < step:
            total[tid] += total[tid + step]
        step //= 2
    cuda.syncthreads()
    count = min(T, h - cuda.blockIdx.y * T) * min(T, w - cuda.blockIdx.x * T)
    if y < h and x < w:
        out[y, x] = total[0] / count


@cuda.jit
def blur_tile_unclamped(image, out):
    tile = cuda.shared.array((HALO, HALO), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * T - 1, cuda.blockIdx.y * T - 1
    h, w = image.shape
    k = ty * T + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[y0 + r, x0 + c]
        k += T * T
    cuda.syncthreads()
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        acc = float32(0)
        for dy in range(3):
            for dx in range(3):
                acc += tile[ty + dy, tx + dx]
        out[y, x] = acc / 9


@cuda.jit
def transpose_write_bounds_of_a(a, out):
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
        if y + k < h and x < w:  # a's bounds: out is w x h
            out[y + k, x] = tile[tx, ty + k]


@cuda.jit
def pairs_no_barrier(points, out):
    xs = cuda.shared.array(B, float32)
    ys = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, points.shape[0] - start)
    if t < m:
        xs[t] = points[start + t, 0]
        ys[t] = points[start + t, 1]
        dx = xs[t] - xs[m - 1 - t]
        dy = ys[t] - ys[m - 1 - t]
        out[start + t] = math.sqrt(dx * dx + dy * dy)


@cuda.jit
def sums_garbage_tail(a, sums):
    buf = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    if i < a.size:
        buf[t] = a[i]
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
def rotate_no_barrier(a, out):
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    h, w = a.shape
    x, y = cuda.blockIdx.x * TILE + tx, cuda.blockIdx.y * TILE + ty
    for k in range(0, TILE, ROWS):
        if y + k < h and x < w:
            tile[ty + k, tx] = a[y + k, x]
    j = cuda.blockIdx.y * TILE + tx
    for k in range(0, TILE, ROWS):
        c = cuda.blockIdx.x * TILE + ty + k
        if c < w and j < h:
            out[w - 1 - c, j] = tile[tx, ty + k]


@cuda.jit
def poly_lowest_first(x, out):
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i < out.size:
        v = x[i]
        acc = c[0]
        for k in range(1, 7):
            acc = acc * v + c[k]
        out[i] = acc


@cuda.jit
def blur_rows_three_taps(image, taps, out):
    c = cuda.const.array_like(TAPS)
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        acc = float32(0)
        for d in range(1, 4):
            acc += c[d] * image[y, min(max(x + d - 2, 0), w - 1)]
        out[y, x] = acc


@cuda.jit
def ycbcr_no_bounds(image, out):
    m = cuda.const.array_like(YCC)
    o = cuda.const.array_like(OFFSET)
    p = cuda.grid(1)
    w = image.shape[1]
    y, x = p // w, p % w
    for k in range(3):
        out[y, x, k] = (
            o[k] + m[k, 0] * image[y, x, 0] + m[k, 1] * image[y, x, 1] + m[k, 2] * image[y, x, 2]
        )


@cuda.jit
def scan_one_barrier(a, out):
    sums = cuda.shared.array(B, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d = 1
    while d < B:
        v = sums[t - d] if t >= d else 0
        cuda.syncthreads()
        sums[t] += v  # no barrier after the write: the next step reads it
        d *= 2
    if i < a.size:
        out[i] = sums[t]


@cuda.jit
def transpose_reads_tile_by_rows(a, out):
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
            out[y + k, x] = tile[ty + k, tx]  # the tile read by rows: a copy, not a transpose


@cuda.jit
def gamma_no_bounds(pixels, lut, out):
    i = cuda.grid(1)
    out[i] = lut[pixels[i]]


@cuda.jit
def sharpen_global_image(image, out):
    weights = cuda.const.array_like(SHARPEN)
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        acc = float32(0)
        for dy in range(3):
            for dx in range(3):
                yy, xx = min(max(y + dy - 1, 0), h - 1), min(max(x + dx - 1, 0), w - 1)
                acc += weights[dy, dx] * image[yy, xx]
        out[y, x] = acc


@cuda.jit
def count_greater_equal(x, threshold, count):
    i = cuda.grid(1)
    if i < x.size and x[i] >= threshold:  # the slip: `>=` for "above"
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def warp_sums_every_lane_writes(x, sums):
    i = cuda.grid(1)
    value = x[i] if i < x.size else 0.0
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL, value, offset)
        offset //= 2
    sums[i // 32] = value  # every lane writes: only lane 0 holds the warp's sum


@cuda.jit
def bright_greater_equal(pixels, threshold, count):
    i = cuda.grid(1)
    mask = cuda.ballot_sync(FULL, i < pixels.size and pixels[i] >= threshold)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(count, 0, cuda.popc(mask))


@cuda.jit
def histogram_plain_merge(values, bins):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        bins[t] += local[t]  # blocks race on bins: a plain read-modify-write


@cuda.jit
def histogram_shift_five(values, bins):
    local = cuda.shared.array(BINS, int32)
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, min(values[j] >> 5, BINS - 1), 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def dot_plain_merge(x, y, out):
    part = cuda.shared.array(B, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[j] * y[j]
    part[t] = acc
    cuda.syncthreads()
    s = B // 2
    while s > 0:
        if t < s:
            part[t] += part[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] += part[0]  # blocks race on out[0]: a plain read-modify-write


@cuda.jit
def compact_greater_equal(x, threshold, out, count):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    keep = i < x.size and x[i] >= threshold
    ballot = cuda.ballot_sync(FULL, keep)
    base = 0
    if lane == 0:
        base = cuda.atomic.add(count, 0, cuda.popc(ballot))
    base = cuda.shfl_sync(FULL, base, 0)
    if keep:
        out[base + cuda.popc(ballot & ((1 << lane) - 1))] = x[i]


# --- shapes written as expressions: the simulator runs them, a GPU does not compile them ------
# (each kernel is right otherwise; the grader refuses the shape before running anything)


@cuda.jit
def block_reverse_two_warps(a, out):
    tile = cuda.shared.array(2 * 32, float32)  # wrong on purpose: expression shape
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, a.size - start)
    if t < m:
        tile[t] = a[start + t]
    cuda.syncthreads()
    if t < m:
        out[start + t] = tile[m - 1 - t]


@cuda.jit
def smooth_halo_expression(a, out):
    tile = cuda.shared.array(B + 2, float32)  # wrong on purpose: expression shape
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    i, n = start + t, a.size
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
def mosaic_cells_expression(image, out):
    total = cuda.shared.array(T * T, float32)  # wrong on purpose: expression shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = image.shape
    tid = ty * T + tx
    inside = y < h and x < w
    total[tid] = image[y, x] if inside else 0
    cuda.syncthreads()
    step = CELLS // 2
    while step > 0:
        if tid < step:
            total[tid] += total[tid + step]
        cuda.syncthreads()
        step //= 2
    rows, columns = min(T, h - cuda.blockIdx.y * T), min(T, w - cuda.blockIdx.x * T)
    if inside:
        out[y, x] = total[0] / (rows * columns)


@cuda.jit
def blur_halo_expression(image, out):
    tile = cuda.shared.array((T + 2, T + 2), float32)  # wrong on purpose: expression shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * T - 1, cuda.blockIdx.y * T - 1
    h, w = image.shape
    k = ty * T + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[min(max(y0 + r, 0), h - 1), min(max(x0 + c, 0), w - 1)]
        k += T * T
    cuda.syncthreads()
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        total = float32(0)
        for dy in range(3):
            for dx in range(3):
                total += tile[ty + dy, tx + dx]
        out[y, x] = total / 9


@cuda.jit
def scan_double_buffer_expression(a, out):
    sums = cuda.shared.array(2 * B, int32)  # wrong on purpose: expression shape
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * B + t
    sums[t] = a[i] if i < a.size else 0
    cuda.syncthreads()
    d, src = 1, 0
    while d < B:
        dst = B - src
        sums[dst + t] = sums[src + t] + (sums[src + t - d] if t >= d else 0)
        cuda.syncthreads()
        d, src = 2 * d, dst
    if i < a.size:
        out[i] = sums[src + t]


@cuda.jit
def transpose_padded_expression(a, out):
    tile = cuda.shared.array((TILE, TILE + 1), float32)  # wrong on purpose: expression shape
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
def pairs_halves_expression(points, out):
    xy = cuda.shared.array(2 * B, float32)  # wrong on purpose: expression shape
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * B
    m = min(B, points.shape[0] - start)
    if t < m:
        xy[t] = points[start + t, 0]
        xy[B + t] = points[start + t, 1]
    cuda.syncthreads()
    if t < m:
        dx = xy[t] - xy[m - 1 - t]
        dy = xy[B + t] - xy[B + m - 1 - t]
        out[start + t] = math.sqrt(dx * dx + dy * dy)


@cuda.jit
def sums_square_expression(a, sums):
    buf = cuda.shared.array(T * T, float32)  # wrong on purpose: expression shape
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
def rotate_padded_expression(a, out):
    tile = cuda.shared.array((TILE, TILE + 1), float32)  # wrong on purpose: expression shape
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
def matmul_flat_tiles_expression(a, b, c):
    sa = cuda.shared.array(T * T, float32)  # wrong on purpose: expression shape
    sb = cuda.shared.array(T * T, float32)  # wrong on purpose: expression shape
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    m, k = a.shape
    n = b.shape[1]
    acc = float32(0)
    for start in range(0, k, T):
        sa[ty * T + tx] = a[row, start + tx] if row < m and start + tx < k else 0
        sb[ty * T + tx] = b[start + ty, col] if start + ty < k and col < n else 0
        cuda.syncthreads()
        for j in range(T):
            acc += sa[ty * T + j] * sb[j * T + tx]
        cuda.syncthreads()
    if row < m and col < n:
        c[row, col] = acc


@cuda.jit
def sharpen_halo_expression(image, out):
    tile = cuda.shared.array((T + 2, T + 2), float32)  # wrong on purpose: expression shape
    weights = cuda.const.array_like(SHARPEN)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * T - 1, cuda.blockIdx.y * T - 1
    h, w = image.shape
    k = ty * T + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[min(max(y0 + r, 0), h - 1), min(max(x0 + c, 0), w - 1)]
        k += T * T
    cuda.syncthreads()
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        acc = float32(0)
        for dy in range(3):
            for dx in range(3):
                acc += weights[dy, dx] * tile[ty + dy, tx + dx]
        out[y, x] = acc


@cuda.jit
def histogram_bins_expression(values, bins):
    local = cuda.shared.array(256 // 16, int32)  # wrong on purpose: expression shape
    t = cuda.threadIdx.x
    if t < BINS:
        local[t] = 0
    cuda.syncthreads()
    for j in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(local, values[j] >> 4, 1)
    cuda.syncthreads()
    if t < BINS:
        cuda.atomic.add(bins, t, local[t])


@cuda.jit
def dot_warp_partials_expression(x, y, out):
    partial = cuda.shared.array(B // 32, float32)  # wrong on purpose: expression shape
    t = cuda.threadIdx.x
    acc = float32(0)
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[j] * y[j]
    for offset in (16, 8, 4, 2, 1):
        acc += cuda.shfl_down_sync(FULL, acc, offset)
    if t % 32 == 0:
        partial[t // 32] = acc
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.add(out, 0, partial[0] + partial[1])


# --- the wrong answers and what the grader must say --------------------------------------------

TRACED = {
    "RAW",
    "WAR",
    "WAW",
    "barrier",
    "uninitialised",
    "Coalesced",
    "NoBankConflicts",
    "UsesShared",
    "GlobalReadsAtMost",
    "UsesConstant",
    "NoSerialisedConstant",
    "NoAtomicContention",
}

WRONG = [
    ("00.1", saxpy_no_bounds, {"out of bounds"}, r"thread \(\d+, 0, 0\) of block .* line \d+"),
    ("00.1", saxpy_misses_last, {"values"}, r"1 of 1 elements differ; the first at 0.*never"),
    ("00.2", gbs_eight_bytes, {"values"}, r"you count 8 bytes per element"),
    ("00.2", gbs_gib, {"values"}, r"2\^30 \(GiB\)"),
    ("00.3", timer_no_warmup_no_sync, {"values"}, r"first call compiles"),
    ("00.3", timer_no_sync, {"values"}, r"cuda.synchronize\(\)"),
    ("00.4", events_mean, {"values"}, r"median"),
    ("00.4", events_host_clock, {"values"}, r"records no CUDA events"),
    ("00.4", events_not_waited, {"values"}, r"CUDA_ERROR_NOT_READY"),
    ("00.5", saxpy_no_loop, {"values"}, r"872 of 1000 elements differ.*never written"),
    ("00.5", saxpy_block_stride, {"written twice"}, r"written more than once"),
    ("01.1", reverse_off_by_one, {"out of bounds"}, r"thread \(0, 0, 0\).*index 1 is out"),
    ("01.1", reverse_no_bounds, {"out of bounds"}, r"Out of bounds"),
    ("01.2", difference_bounds_of_a, {"out of bounds"}, r"line \d+ `out\[i\] = a\[i \+ 1\]"),
    ("01.2", difference_backwards, {"out of bounds"}, r"index -1 is negative"),
    ("01.3", partials_chunked, {"Coalesced"}, r"reads \d+\.\d sectors per request; a coalesced"),
    ("01.3", partials_block_stride, {"values"}, r"counted more than once"),
    ("01.4", invert_per_pixel, {"Coalesced"}, r"sectors per request"),
    ("01.4", invert_swaps_channels, {"values"}, r"Wrong values in `out`.*red wrong|Wrong values"),
    ("01.5", split_per_point, {"Coalesced"}, r"sectors per request"),
    ("01.5", split_swapped, {"values"}, r"Wrong values in `ys`"),
    ("02.1", block_reverse_no_barrier, {"RAW"}, r"syncthreads"),
    ("02.1", block_reverse_full_segment, {"values", "uninitialised"}, r"Wrong values in `out`"),
    ("02.1", block_reverse_global, {"UsesShared"}, r"never goes through shared memory"),
    ("02.2", smooth_no_halo, {"values", "uninitialised"}, r"Wrong values in `out`"),
    ("02.2", smooth_global, {"UsesShared", "GlobalReadsAtMost"}, r"shared"),
    ("02.3", mosaic_barrier_in_branch, {"barrier"}, r"reached by only part of the block"),
    ("02.3", mosaic_divides_by_64, {"values"}, r"Wrong values in `out` for a 1 x 13 image"),
    ("02.4", blur_global, {"UsesShared", "GlobalReadsAtMost"}, r"shared memory"),
    ("02.4", blur_no_barrier, {"RAW"}, r"A race"),
    (
        "02.5",
        scan_no_barriers,
        {"RAW"},
        r"in one statement \(line \d+ `sums\[t\] \+= sums\[t - d\]`\).*Split it",
    ),
    ("02.5", scan_barrier_in_branch, {"barrier"}, r"part of the block"),
    ("03.1", transpose_unpadded, {"NoBankConflicts"}, r"32-way bank conflict on line \d+"),
    ("03.1", transpose_no_barrier, {"RAW"}, r"A race"),
    ("03.2", pairs_interleaved, {"NoBankConflicts"}, r"2-way bank conflict"),
    ("03.2", pairs_full_mirror, {"values", "uninitialised"}, r"Wrong values in `out`"),
    ("03.3", sums_interleaved, {"NoBankConflicts"}, r"-way bank conflict"),
    ("03.3", sums_no_barrier, {"RAW"}, r"A race"),
    ("03.4", rotate_unpadded, {"NoBankConflicts"}, r"32-way bank conflict"),
    ("03.4", rotate_as_transpose, {"values"}, r"Wrong values in `out`"),
    ("03.5", matmul_no_barriers, {"RAW"}, r"A race"),
    ("03.5", matmul_one_barrier, {"WAR"}, r"A race \(WAR\)"),
    ("03.5", matmul_no_bounds, {"out of bounds"}, r"Out of bounds"),
    ("04.1", poly_no_bounds, {"out of bounds"}, r"Out of bounds"),
    ("04.1", poly_reversed, {"values"}, r"Wrong values in `out`"),
    ("04.2", blur_taps_global, {"UsesConstant"}, r"cuda.const.array_like"),
    ("04.2", blur_unclamped, {"out of bounds"}, r"is negative"),
    ("04.3", ycbcr_no_offset, {"values"}, r"Wrong values in `out` for a 1 x 5"),
    ("04.3", ycbcr_transposed, {"values"}, r"Wrong values in `out`"),
    ("04.4", gamma_constant, {"NoSerialisedConstant"}, r"different addresses of constant memory"),
    ("04.4", gamma_shifted, {"values", "out of bounds"}, r""),
    ("04.5", sharpen_unclamped, {"out of bounds"}, r"Out of bounds: thread \(\d+, \d+, 0\)"),
    ("04.5", sharpen_no_barrier, {"RAW"}, r"A race"),
    ("05.1", count_plain_increment, {"values", "RAW", "WAW", "WAR"}, r""),
    ("05.1", count_no_bounds, {"out of bounds"}, r"Out of bounds"),
    ("05.2", warp_sums_early_return, {"values"}, r"NaN is what a shuffle gives"),
    ("05.2", warp_sums_missing_step, {"values"}, r"warp sums are wrong"),
    ("05.2", warp_sums_half_warp, {"deadlock"}, r"The warp got stuck at line \d+ .*lanes 16-31"),
    ("05.2", warp_sums_shared, {"SourceUses"}, r"warp shuffle"),
    ("05.3", bright_one_per_pixel, {"NoAtomicContention"}, r"lanes of a warp \(on average\) do"),
    ("05.3", bright_every_lane, {"values"}, r"count\[0\] is \d+, 32x the expected.*lane 0"),
    ("05.4", histogram_global, {"UsesShared", "NoAtomicContention"}, r"atomics on one address"),
    ("05.4", histogram_not_zeroed, {"values", "uninitialised"}, r""),
    ("05.5", dot_atomic_per_element, {"NoAtomicContention"}, r"do atomics on one address"),
    ("05.5", dot_no_barrier, {"RAW", "WAR"}, r"A race"),
    ("05.5", dot_no_grid_stride, {"values"}, r"Wrong values in `out` for n = 1000"),
    ("05.6", compact_one_atomic_each, {"NoAtomicContention"}, r"atomics on one address"),
    ("05.6", compact_no_broadcast, {"values", "written twice"}, r""),
    (
        "00.1",
        saxpy_thread_index_only,
        {"values"},
        r"only the first 128 elements.*`cuda.blockIdx.x`",
    ),
    ("00.2", gbs_milliseconds, {"values"}, r"the time is in milliseconds"),
    ("00.3", timer_sync_no_warmup, {"values"}, r"first call compiles"),
    ("00.4", events_first_included, {"values"}, r"something extra is timed|median"),
    ("00.5", saxpy_stride_one_block, {"values", "written twice"}, r"written more than once|Wrong"),
    ("01.1", reverse_forward, {"values"}, r"Wrong values in `dst` for n = 200"),
    ("01.2", difference_swapped, {"values"}, r"Wrong values in `out` for n = 2: 1 of 1"),
    ("01.3", partials_misses_tail, {"values"}, r"counted never"),
    ("01.4", invert_per_pixel_bytes_unbounded, {"out of bounds"}, r"Out of bounds|out of bounds"),
    ("01.5", split_no_bounds, {"out of bounds"}, r"out of bounds"),
    ("02.2", smooth_no_barrier, {"RAW"}, r"A race \(RAW\) on shared memory.*syncthreads"),
    ("02.3", mosaic_no_tree_barrier, {"RAW", "WAR"}, r"A race .*syncthreads"),
    (
        "02.4",
        blur_tile_unclamped,
        {"out of bounds"},
        r"`tile\[r, c\] = image\[y0 \+ r, x0 \+ c\]`.*(negative|out of bounds)",
    ),
    (
        "03.1",
        transpose_write_bounds_of_a,
        {"out of bounds"},
        r"index \d+ is out of bounds for axis 1",
    ),
    ("03.2", pairs_no_barrier, {"RAW"}, r"A race \(RAW\) on shared memory"),
    ("03.3", sums_garbage_tail, {"uninitialised", "values"}, r"no thread of the block has written"),
    ("03.4", rotate_no_barrier, {"RAW"}, r"A race \(RAW\) on shared memory"),
    ("04.1", poly_lowest_first, {"values"}, r"Wrong values in `out` for n = 1"),
    ("04.2", blur_rows_three_taps, {"values"}, r"Wrong values in `out` for a 1 x 37 image"),
    ("04.3", ycbcr_no_bounds, {"out of bounds"}, r"Out of bounds"),
    ("02.5", scan_one_barrier, {"RAW", "WAR"}, r"A race"),
    # one column of output: every wrong element sits on a block's edge; not a halo problem
    ("03.1", transpose_reads_tile_by_rows, {"values"}, r"^(?!.*halo).*Wrong values in `out`"),
    ("04.4", gamma_no_bounds, {"out of bounds"}, r"Out of bounds"),
    ("04.5", sharpen_global_image, {"UsesShared", "GlobalReadsAtMost"}, r"shared"),
    (
        "05.1",
        count_greater_equal,
        {"values"},
        r"for n = 1, x\[0\] equal to the threshold: count\[0\] is 1, expected 0: you count "
        r"the 1 element\(s\) equal to the threshold too; 'above' means `>`",
    ),
    (
        "05.2",
        warp_sums_every_lane_writes,
        {"values", "WAW"},
        r"Several threads write one element: only one of them should",
    ),
    ("05.3", bright_greater_equal, {"values"}, r"equal to the threshold too; 'above' means `>`"),
    ("05.4", histogram_shift_five, {"values"}, r"Wrong values in `bins` for n = 5"),
    ("05.6", compact_greater_equal, {"values"}, r"equal to the threshold too; 'above' means `>`"),
]

# Races between blocks: the simulator runs blocks one after another, so the values come out
# right; only the tracer's race-between-blocks hazard (the trace helper's branch) rejects them.
# Shapes a GPU cannot compile, one per exercise with shared memory: the same message for each.
SHAPE = r"line \d+: `cuda\.shared\.array\(.*\)`: a shared array's size must be a constant Numba"
WRONG += [
    (exercise_id, kernel, {"shape"}, SHAPE)
    for exercise_id, kernel in [
        ("02.1", block_reverse_two_warps),
        ("02.2", smooth_halo_expression),
        ("02.3", mosaic_cells_expression),
        ("02.4", blur_halo_expression),
        ("02.5", scan_double_buffer_expression),
        ("03.1", transpose_padded_expression),
        ("03.2", pairs_halves_expression),
        ("03.3", sums_square_expression),
        ("03.4", rotate_padded_expression),
        ("03.5", matmul_flat_tiles_expression),
        ("04.5", sharpen_halo_expression),
        ("05.4", histogram_bins_expression),
        ("05.5", dot_warp_partials_expression),
    ]
]

BETWEEN_BLOCKS = [
    ("05.4", histogram_plain_merge, {"race between blocks"}, r"(?i)between blocks"),
    ("05.5", dot_plain_merge, {"race between blocks"}, r"(?i)between blocks"),
]


def _name(item):
    return f"{item[0]}-{getattr(item[1], '__name__', item[1])}"


# On a GPU, Numba wraps a negative index as Python does (a[-1] is the last element): no crash,
# and the rehearsal on the simulator (the tracer, which wraps it too) lets the kernel run.
ON_A_GPU = {
    "01.2-difference_backwards": ({"values"}, r"Wrong values in `out` for n = 2"),
    "04.2-blur_unclamped": ({"out of bounds"}, r"index 37 is out of bounds for axis 1"),
    # the GPU's rehearsal counts the stores first: 32 lanes store each warp's sum (H100 run)
    "05.2-warp_sums_every_lane_writes": ({"written twice"}, r"written more than once .* 32 stores"),
}


def _expected(item, gpu):
    """(kinds, pattern) the grader must answer for a wrong answer, in this mode."""
    return ON_A_GPU.get(_name(item), item[2:]) if gpu else tuple(item[2:])

"""Exercises: every reference solution passes its grader, typical wrong answers get the feedback
meant for them, bad calls get clear messages, and the notebook cells follow the slide rules.

The wrong answers are written here, two or more per exercise, each with the kind of finding the
grader must report ("values", "out of bounds", a race kind, or the name of the check).
"""

import json
import math
import re
import statistics
import time

import numpy as np
import pytest
from numba import cuda, float32, int32

from gpgpu_lessons import exercises, runtime
from gpgpu_lessons.exercises import (
    cells,
    grader,
    performance,
    registry,
    rehearsal,
    running,
    solutions,
    tracing,
)

SEED = 7
FULL = 0xFFFFFFFF
B = 64
TILE, ROWS = 32, 8
T = 8
HALO = 10
BINS = 16
COEFFS = np.array([0.5, -1.25, 0.75, 2.0, -0.5, 0.125, 0.0625], np.float32)
TAPS = np.array([1, 4, 6, 4, 1], np.float32) / 16
YCC = np.array(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], np.float32
)
OFFSET = np.array([0.0, 0.5, 0.5], np.float32)
GAMMA = (255 * (np.arange(256) / 255) ** (1 / 2.2)).round().astype(np.uint8)
SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    """Progress goes to a temporary file, never beside the repository's notebooks."""
    path = tmp_path / "progress.json"
    monkeypatch.setenv("GPGPU_LESSONS_PROGRESS", str(path))
    return path


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
    tile = cuda.shared.array(B + 2, float32)
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
    total = cuda.shared.array(T * T, float32)
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
    total = cuda.shared.array(T * T, float32)
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
    tile = cuda.shared.array((TILE, TILE + 1), float32)
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
    pts = cuda.shared.array(2 * B, float32)
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
    tile = cuda.shared.array((TILE, TILE + 1), float32)
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
    ("02.5", scan_no_barriers, {"RAW"}, r"A race"),
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
    ("05.3", bright_every_lane, {"values"}, r"Wrong values in `count`"),
    ("05.4", histogram_global, {"UsesShared", "NoAtomicContention"}, r"atomics on one address"),
    ("05.4", histogram_not_zeroed, {"values", "uninitialised"}, r""),
    ("05.5", dot_atomic_per_element, {"NoAtomicContention"}, r"do atomics on one address"),
    ("05.5", dot_no_barrier, {"RAW", "WAR"}, r"A race"),
    ("05.5", dot_no_grid_stride, {"values"}, r"Wrong values in `out` for n = 1000"),
    ("05.6", compact_one_atomic_each, {"NoAtomicContention"}, r"atomics on one address"),
    ("05.6", compact_no_broadcast, {"values", "written twice"}, r""),
]


def _name(item):
    return f"{item[0]}-{getattr(item[1], '__name__', item[1])}"


# On a GPU, Numba wraps a negative index as Python does (a[-1] is the last element): no crash,
# and the rehearsal on the simulator (the tracer, which wraps it too) lets the kernel run.
ON_A_GPU = {
    "01.2-difference_backwards": ({"values"}, r"Wrong values in `out` for n = 2"),
    "04.2-blur_unclamped": ({"out of bounds"}, r"index 37 is out of bounds for axis 1"),
}


def _expected(item, gpu):
    """(kinds, pattern) the grader must answer for a wrong answer, in this mode."""
    return ON_A_GPU.get(_name(item), item[2:]) if gpu else tuple(item[2:])


@pytest.mark.parametrize("exercise_id", [e.id for e in exercises.catalog()])
def test_the_reference_solution_passes(exercise_id, progress_file):
    answer = exercises.grade(exercise_id, solutions.reference(exercise_id), seed=SEED)
    assert answer.passed, str(answer)
    assert str(answer).splitlines()[0].startswith(f"✓ solved · {exercise_id}")
    assert len(str(answer).splitlines()) <= 3, str(answer)  # one line, and what to try next
    assert "Next" in str(answer) or "last one" in str(answer)
    assert exercise_id in json.loads(progress_file.read_text())


@pytest.mark.parametrize("item", WRONG, ids=[_name(w) for w in WRONG])
def test_a_typical_wrong_answer_gets_the_feedback_meant_for_it(item, progress_file):
    exercise_id, answer_fn = item[:2]
    kinds, pattern = _expected(item, grader.on_gpu())
    if kinds <= TRACED and not tracing.available():
        pytest.skip("needs the kernel tracer")
    answer = exercises.grade(exercise_id, answer_fn, seed=SEED)
    text = str(answer)
    assert not answer.passed, text
    assert answer.kinds & kinds, f"expected one of {kinds}, got {answer.kinds}:\n{text}"
    assert re.search(pattern, text, re.S), text
    assert not progress_file.exists()


def test_every_exercise_has_at_least_two_wrong_answers_tested():
    counted = {}
    for exercise_id, *_ in WRONG:
        counted[exercise_id] = counted.get(exercise_id, 0) + 1
    assert {e.id for e in exercises.catalog()} == set(counted)
    assert min(counted.values()) >= 2


def test_the_catalogue_has_at_least_four_exercises_per_lesson_and_thirty_in_all():
    rows = exercises.catalog()
    assert len(rows) >= 30
    for lesson in registry.LESSONS:
        assert len(exercises.catalog(lesson)) >= 4, lesson
    assert rows[0] == ("00.1", "00", "saxpy", "saxpy, one element per thread")
    assert "03.1  03      transpose_padded" in str(rows)


# --- bad calls ---------------------------------------------------------------------------------


def plain_saxpy(a, x, y, out):
    out[:] = a * x + y


@cuda.jit(device=True)
def device_saxpy(a, x):
    return a * x


@cuda.jit
def saxpy_three(a, x, out):
    pass


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: exercises.grade("00.1", plain_saxpy),
            r"plain Python function, not a kernel: put `@cuda.jit`",
        ),
        (lambda: exercises.grade("00.1", device_saxpy), r"device function"),
        (
            lambda: exercises.grade("00.1", saxpy_three),
            r"takes 3 parameter\(s\) \(a, x, out\); "
            r"exercise 00.1 launches it as `saxpy\(a, x, y, out\)`",
        ),
        (lambda: exercises.grade("00.1", 42), r"grades a @cuda.jit kernel"),
        (
            lambda: exercises.grade("00.2", solutions.reference("00.1")),
            r"plain Python function .* not a @cuda.jit kernel",
        ),
        (lambda: exercises.grade("00.2", lambda n: n), r"calls it as `saxpy_gbs\(n, ms\)`"),
    ],
    ids=[
        "plain-function",
        "device-function",
        "wrong-signature",
        "not-callable",
        "kernel-for-a-function",
        "function-signature",
    ],
)
def test_bad_calls_get_clear_messages(call, message):
    with pytest.raises(exercises.GradingError, match=message):
        call()


@pytest.mark.parametrize(
    "exercise_id, message",
    [("03.9", r"lesson 03 has 03.1, 03.2"), ("9.1", r"ids look like"), (3.2, r"a string")],
)
def test_unknown_exercises_are_named(exercise_id, message):
    with pytest.raises((ValueError, TypeError), match=message):
        exercises.grade(exercise_id, saxpy_no_loop)


@cuda.jit
def saxpy_divides_by_zero(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i] + 1 // (i - i)


@cuda.jit
def saxpy_calls_numpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = np.linalg.det(x)


def test_a_kernel_that_crashes_is_explained_not_raised():
    answer = exercises.grade("00.1", saxpy_divides_by_zero, seed=SEED)
    assert not answer.passed and "error" in answer.kinds
    assert re.search(
        r"ZeroDivisionError in thread \(0, 0, 0\) of block \(0, 0, 0\) at line \d+", str(answer)
    )
    answer = exercises.grade("00.1", saxpy_calls_numpy, seed=SEED)
    assert not answer.passed and answer.kinds & {"error", "compile"}, str(answer)


def test_a_timer_that_raises_is_explained():
    def broken(run, repeat=10):
        raise RuntimeError("oops")

    answer = exercises.grade("00.3", broken)
    assert not answer.passed and "RuntimeError: oops" in str(answer)


def test_a_wrong_matrix_comes_with_a_picture():
    answer = exercises.grade("02.3", mosaic_divides_by_64, seed=SEED)
    assert answer.picture_png and answer.picture_png.startswith(b"\x89PNG")
    assert "data:image/png;base64," in answer._repr_html_()


def test_the_pretend_gpu_is_removed_after_grading():
    before = cuda.synchronize
    exercises.grade("00.3", timer_no_sync)
    assert cuda.synchronize is before


# --- hints, progress, solutions ----------------------------------------------------------------


def test_hints_come_in_levels():
    first = exercises.hint("03.1")
    assert first.startswith("**Hint 1/2 for 03.1:**") and "level=2" in first
    last = exercises.hint("03.1", level=2)
    assert "TILE + 1" in last and "last hint" in last
    assert exercises.hint("03.1", level=9) == last
    with pytest.raises(ValueError, match="level must be an integer >= 1"):
        exercises.hint("03.1", level=0)
    assert all(len(e.hints) >= 2 for e in registry.all_exercises())


def test_progress_lists_every_exercise_solved_or_not_yet(progress_file):
    assert {row.status for row in exercises.progress()} == {"not yet"}
    exercises.grade("00.2", solutions.reference("00.2"))
    rows = {row.id: row.status for row in exercises.progress()}
    assert rows["00.2"].startswith("solved ") and rows["00.1"] == "not yet"
    assert len(rows) == len(exercises.catalog())


def test_progress_lives_beside_the_notebooks(tmp_path, monkeypatch):
    from gpgpu_lessons.exercises import progress_file as progress

    monkeypatch.delenv("GPGPU_LESSONS_PROGRESS")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path)
    assert progress.path() == tmp_path / "notebooks" / ".progress.json"
    (tmp_path / "notebooks" / "00_timing.ipynb").write_text("{}")
    monkeypatch.chdir(tmp_path / "notebooks")
    assert progress.path() == tmp_path / "notebooks" / ".progress.json"


def test_solutions_need_the_instructor():
    with pytest.raises(PermissionError, match="for instructors"):
        exercises.solution("03.1")
    shown = exercises.solution("03.1", i_am_the_instructor=True)
    assert "TILE, ROWS = 32, 8" in shown and "(TILE, PADDED)" in shown


def test_every_reference_kernel_is_in_its_module_signatures():
    import importlib

    for lesson in registry.LESSONS:
        module = importlib.import_module(f"gpgpu_lessons.exercises.solutions.lesson{lesson}")
        kernels = [k for k in module.REFERENCES.values() if hasattr(k, "py_func")]
        assert set(kernels) == set(module.SIGNATURES), lesson


def test_statements_skeletons_and_figures():
    for e in registry.all_exercises():
        text = exercises.statement(e.id)
        assert text.startswith(f"## Exercise {e.id} · {e.title}") and f'grade("{e.id}"' in text
        assert f"def {e.name}(" in e.skeleton
        if e.kind == "kernel":
            assert "@cuda.jit" in e.skeleton
    assert exercises.figure("03.1")._repr_png_().startswith(b"\x89PNG")
    assert exercises.figure("00.1") is None


# --- notebook cells ----------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", list(registry.LESSONS))
def test_notebook_cells_follow_the_slide_conventions(lesson):
    import nbformat
    from gpgpu_tools import slides

    title = {
        "cell_type": "markdown",
        "id": "title0",
        "metadata": {"slideshow": {"slide_type": "slide"}},
        "source": f"# Lesson {lesson} · Sample\n\nGoals:\n- one\n- two",
    }
    nb = {
        "cells": [title, *exercises.notebook_cells(lesson)],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    notebook = nbformat.reads(json.dumps(nb), as_version=4)
    nbformat.validate(notebook)
    assert slides.problems(notebook, f"{lesson}_sample.ipynb") == []
    for cell in nb["cells"][1:]:
        assert cell["metadata"]["slideshow"]["slide_type"]
        if "@cuda.jit" in "".join(cell["source"]):
            assert cell["metadata"]["tags"] == ["exercise"]


def test_append_replaces_earlier_exercise_cells(tmp_path):
    path = tmp_path / "03_sample.ipynb"
    path.write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["# Lesson 03"]}
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    added = cells.append(path)
    assert cells.append(path) == added
    notebook = json.loads(path.read_text())
    assert len(notebook["cells"]) == 1 + added
    assert path.read_text().endswith("}\n")


def test_the_solutions_deck(tmp_path):
    path = cells.solutions_notebook(tmp_path / "solutions.ipynb")
    text = path.read_text()
    assert text.count("```python") == len(exercises.catalog())


@pytest.mark.parametrize("exercise_id", ["01.3", "03.1", "05.3"])
def test_a_skeleton_runs_and_is_not_yet_solved(exercise_id, tmp_path, monkeypatch):
    """Skeletons run from a file (as a notebook cell would) and get 'not yet', never an error."""
    import importlib.util

    exercise = registry.get(exercise_id)
    path = tmp_path / f"skeleton_{exercise_id.replace('.', '_')}.py"
    path.write_text(
        "import numpy as np\nfrom numba import cuda, float32, int32\n\n" + exercise.skeleton
    )
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    answer = exercises.grade(exercise_id, getattr(module, exercise.name), seed=SEED)
    assert not answer.passed and "grader" not in answer.kinds, str(answer)


@pytest.mark.skipif(runtime.is_simulator(), reason="bandwidth is measured on a GPU only")
def test_on_a_gpu_a_pass_reports_its_bandwidth():
    answer = exercises.grade("00.1", solutions.reference("00.1"), seed=SEED)
    assert re.search(r"GB/s, \d+% of the device copy", str(answer)), str(answer)


# --- on a GPU: every launch rehearsed on the simulator first ------------------------------------


@pytest.fixture
def gpu_path(monkeypatch):
    """The grader's GPU path (a rehearsal on the simulator before each launch, guarded arrays,
    store counts from the rehearsal), timing left out. In the simulator its 'GPU' launches run on
    the simulator, where an index out of bounds raises: every launch that raised is recorded, and
    none may, since the rehearsal must stop such a kernel before its launch."""
    monkeypatch.setattr(grader, "on_gpu", lambda: True)
    monkeypatch.setattr(performance, "compare", lambda exercise, fn, rng: ("(not timed)", []))
    raised = []
    run = running.run

    def recorded(kernel, case, params, **options):
        try:
            return run(kernel, case, params, **options)
        except Exception as error:
            raised.append(f"{kernel.__name__} on {case.label}: {type(error).__name__}: {error}")
            raise

    monkeypatch.setattr(running, "run", recorded)
    return raised


REHEARSED = [
    w
    for w in WRONG
    if w[2] & {"out of bounds", "barrier", "deadlock"}
    or _name(w) in ("00.5-saxpy_block_stride", "00.5-saxpy_no_loop")
]


@pytest.mark.parametrize("item", REHEARSED, ids=[_name(w) for w in REHEARSED])
def test_on_a_gpu_the_rehearsal_stops_a_kernel_before_it_goes_out_of_bounds(item, gpu_path):
    kinds, pattern = _expected(item, gpu=True)
    answer = exercises.grade(item[0], item[1], seed=SEED)
    assert not answer.passed and answer.kinds & kinds, f"expected {kinds}:\n{answer}"
    assert re.search(pattern, str(answer), re.S), str(answer)
    assert gpu_path == []


@pytest.mark.parametrize("exercise_id", ["00.5", "03.1", "05.6"])
def test_on_a_gpu_a_reference_solution_passes_its_rehearsals(exercise_id, gpu_path):
    answer = exercises.grade(exercise_id, solutions.reference(exercise_id), seed=SEED)
    assert answer.passed, str(answer)
    assert gpu_path == []


@cuda.jit
def saxpy_uses_the_grid_group(a, x, y, out):
    i = cuda.grid(1)
    cuda.cg.this_grid()
    if i < out.size:
        out[i] = a * x[i] + y[i]


def test_on_a_gpu_a_kernel_the_simulator_cannot_run_is_not_launched(gpu_path, monkeypatch):
    launched = []
    monkeypatch.setattr(running, "run", lambda *args, **options: launched.append(args))
    answer = exercises.grade("00.1", saxpy_uses_the_grid_group, seed=SEED)
    assert answer.kinds == {"not rehearsed"} and "cooperative groups" in str(answer), str(answer)
    assert launched == []


def test_a_large_launch_is_rehearsed_on_its_first_and_last_blocks():
    exercise = registry.get("00.1")
    large = exercise.cases(np.random.default_rng(SEED), True)[-1]
    assert large.grid == 7813 and rehearsal.sample(large.grid)[0] == [(7812, 0, 0), (0, 0, 0)]
    assert rehearsal.sample((3, 2)) is None  # a small grid: every block
    first_and_last, more = rehearsal.sample((30, 20))
    assert first_and_last == [(29, 19, 0), (0, 0, 0)] and {(29, 0, 0), (0, 19, 0)} <= set(more)
    found = rehearsal.rehearse(exercise, saxpy_no_bounds, large)
    assert not found.safe and not found.complete
    assert re.search(
        r"thread \(\d+, 0, 0\) of block \(7812, 0, 0\).*index 1000003 is out of "
        r"bounds for axis 0 with size 1000003, in `x`",
        found.problems[0][1],
    )
    assert rehearsal.rehearse(exercise, solutions.reference("00.1"), large).safe


@cuda.jit
def saxpy_writes_past_the_end_in_block_one(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
    if cuda.blockIdx.x == 1 and cuda.threadIdx.x == 0:
        out[out.size + 5] = 0


def test_what_a_sampled_rehearsal_misses_the_guard_zones_catch(monkeypatch):
    monkeypatch.setattr(rehearsal, "ALL_BLOCKS_UP_TO", 256)  # sample blocks of a small launch
    exercise = registry.get("00.1")
    n = 2011
    x, y = np.ones(n, np.float32), np.ones(n, np.float32)
    case = registry.Case(
        f"n = {n}",
        {"a": np.float32(2), "x": x, "y": y, "out": np.empty_like(x)},
        {"out": 2 * x + y},
        -(-n // 128),
        128,
    )
    assert 1 not in [block[0] for part in rehearsal.sample(case.grid) for block in part]
    assert rehearsal.rehearse(exercise, saxpy_writes_past_the_end_in_block_one, case).safe
    # on a GPU the store lands in the guard zone; the simulator's view of `out` raises instead
    error = IndexError if runtime.is_simulator() else running.GuardDamaged
    with pytest.raises(error) as caught:
        running.run(
            saxpy_writes_past_the_end_in_block_one,
            case,
            exercise.params,
            count_writes=False,
            simulator=False,
        )
    if not runtime.is_simulator():
        assert "4 bytes past its end (the furthest 24 bytes past it)" in str(caught.value)
    got, _ = running.run(
        solutions.reference("00.1"), case, exercise.params, count_writes=False, simulator=False
    )
    assert np.array_equal(got["out"], 2 * x + y)


def test_a_write_into_a_guard_zone_is_explained():
    guarded = running.Guarded(np.ones((3, 4), np.float32), "out")
    assert guarded.damage() is None and guarded.array.shape == (3, 4)
    guarded.buffer[guarded.pad + 12 + 2] = 0  # what a store to out[3, 2] does on a GPU
    with pytest.raises(running.GuardDamaged) as caught:
        running.check_guards([guarded])
    crash = running.explain(caught.value, saxpy_no_bounds)
    assert crash.kind == "out of bounds"
    assert "`out` (shape (3, 4)): 4 bytes past its end (the furthest 12 bytes past" in crash.text


def test_timed_launches_clear_the_outputs_that_start_at_zero():
    """05.6 reserves slots with an atomic counter: without clearing it, the second timed launch
    would write past the end of `out` (the simulator raises; a GPU would overwrite)."""
    exercise = registry.get("05.6")
    case = exercise.cases(np.random.default_rng(SEED), False)[-1]
    timed = performance.time_kernel(solutions.reference("05.6"), case, exercise.params, "mine")
    assert timed.median_ms > 0


def test_the_large_cases_launch_the_blocks_the_statements_name():
    """A kernel sized for the statement's block (a shared array of 64, say) must fit every case
    a GPU runs; 00.5 and 01.3 announce their larger GPU launches."""
    rng = np.random.default_rng(SEED)
    for exercise in registry.all_exercises():
        if exercise.kind != "kernel" or exercise.id in ("00.5", "01.3"):
            continue
        stated = {str(case.block) for case in exercise.cases(rng, False)}
        assert {str(case.block) for case in exercise.cases(rng, True)} == stated, exercise.id

"""Reference solutions of lesson 05's exercises (atomics vs reduction)."""

from numba import cuda, float32, int32

FULL_MASK = 0xFFFFFFFF
BINS = 16
B = 64


@cuda.jit
def count_above(x, threshold, count):
    """count[0] = the number of elements of x above threshold, with an atomic add."""
    i = cuda.grid(1)
    if i < x.size and x[i] > threshold:
        cuda.atomic.add(count, 0, 1)


@cuda.jit
def warp_sums(x, sums):
    """sums[w] = the sum of warp w's 32 elements, with shuffles."""
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    value = x[i] if i < x.size else 0.0
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    if lane == 0:
        sums[i // 32] = value


@cuda.jit
def count_bright(pixels, threshold, count):
    """count[0] = the number of pixels above threshold: a ballot, one atomic per warp."""
    i = cuda.grid(1)
    is_bright = i < pixels.size and pixels[i] > threshold
    mask = cuda.ballot_sync(FULL_MASK, is_bright)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(count, 0, cuda.popc(mask))


@cuda.jit
def histogram(values, bins):
    """bins[b] += how many values have v >> 4 == b, counted per block in shared memory."""
    local = cuda.shared.array(BINS, int32)
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
def dot(x, y, out):
    """out[0] = x . y: a register per thread, a tree per block, one atomic per block."""
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
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])


@cuda.jit
def compact(x, threshold, out, count):
    """out[:count] = the elements of x above threshold, one atomic per warp."""
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    keep = i < x.size and x[i] > threshold
    ballot = cuda.ballot_sync(FULL_MASK, keep)
    base = 0
    if lane == 0:
        base = cuda.atomic.add(count, 0, cuda.popc(ballot))
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    if keep:
        out[base + cuda.popc(ballot & ((1 << lane) - 1))] = x[i]


REFERENCES = {
    "05.1": count_above,
    "05.2": warp_sums,
    "05.3": count_bright,
    "05.4": histogram,
    "05.5": dot,
    "05.6": compact,
}
SHOWN_WITH = {
    "05.2": ["FULL_MASK = 0xFFFFFFFF"],
    "05.3": ["FULL_MASK = 0xFFFFFFFF"],
    "05.4": ["BINS = 16"],
    "05.5": ["B = 64"],
    "05.6": ["FULL_MASK = 0xFFFFFFFF"],
}

SIGNATURES = {
    count_above: ["void(float32[::1], float32, int32[::1])"],
    warp_sums: ["void(float32[::1], float32[::1])"],
    count_bright: ["void(uint8[::1], int32, int32[::1])"],
    histogram: ["void(uint8[::1], int32[::1])"],
    dot: ["void(float32[::1], float32[::1], float32[::1])"],
    compact: ["void(float32[::1], float32, float32[::1], int32[::1])"],
}

"""Lesson 02's textbook kernels: seed 002's negative, flips and mosaics as the slides show them.

Images are uint8, (height, width) gray or (height, width, 3) RGB; the kernels see every image as
(height, width, channels). Mosaic rounding: a tile's mean is (sum + count // 2) // count over
its real pixels (edge tiles of an image that the tile size does not divide are smaller).
"""

from __future__ import annotations

from numba import cuda, int32, uint8

from .. import launch
from . import checks

BLOCK = (32, 8)  # threads (x, y) of the one-pixel kernels: a warp reads 32 neighbours
MAX_TILE = checks.MAX_TILE  # the largest mosaic tile: one thread per pixel, 32 x 32 = 1024 threads
CHANNELS = checks.CHANNELS  # RGB; a gray image is seen as (height, width, 1)
PARALLEL_THREADS = 256  # the parallel mosaic's block: size x (256 // size) threads at most


# ---- negative and flips: one pixel per thread ----------------------------------------------


@cuda.jit
def negative_one_pixel_per_thread(src, dst):
    """Negative, one thread per pixel: dst = 255 - src."""
    x, y = cuda.grid(2)
    if y < src.shape[0] and x < src.shape[1]:
        for c in range(src.shape[2]):
            dst[y, x, c] = 255 - src[y, x, c]


@cuda.jit
def flip_horizontal_one_pixel_per_thread(src, dst):
    """Left-right mirror, one thread per pixel: pixel (y, x) comes from (y, width - 1 - x)."""
    x, y = cuda.grid(2)
    width = src.shape[1]
    if y < src.shape[0] and x < width:
        for c in range(src.shape[2]):
            dst[y, x, c] = src[y, width - 1 - x, c]


@cuda.jit
def flip_vertical_one_pixel_per_thread(src, dst):
    """Top-bottom mirror, one thread per pixel: pixel (y, x) comes from (height - 1 - y, x)."""
    x, y = cuda.grid(2)
    height = src.shape[0]
    if y < height and x < src.shape[1]:
        for c in range(src.shape[2]):
            dst[y, x, c] = src[height - 1 - y, x, c]


# ---- the mosaic: one block per tile ---------------------------------------------------------


@cuda.jit(device=True)
def tile_mean(pixels, y0, x0, rows, cols, c):
    """The mean of channel c over rows x cols pixels from (y0, x0), rounded half up."""
    total = int32(0)  # not a Python 0: in the simulator uint8 + 0 stays uint8 and overflows
    for j in range(rows):
        for i in range(cols):
            total += pixels[y0 + j, x0 + i, c]
    return (total + rows * cols // 2) // (rows * cols)


@cuda.jit
def mosaic_one_thread_per_block(src, dst, size):
    """Seed 002's first mosaic: thread (0, 0) of each block reads, averages and writes its tile."""
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        y0, x0 = cuda.blockIdx.y * size, cuda.blockIdx.x * size
        rows, cols = min(size, src.shape[0] - y0), min(size, src.shape[1] - x0)
        for c in range(src.shape[2]):
            mean = tile_mean(src, y0, x0, rows, cols, c)
            for j in range(rows):
                for i in range(cols):
                    dst[y0 + j, x0 + i, c] = mean


@cuda.jit
def mosaic_shared(src, dst, size):
    """Seed 002's second mosaic: the tile in shared memory, thread (0, 0) averages, two barriers."""
    tile = cuda.shared.array((MAX_TILE, MAX_TILE, CHANNELS), uint8)
    mean = cuda.shared.array(CHANNELS, int32)
    tx, ty, (x, y) = cuda.threadIdx.x, cuda.threadIdx.y, cuda.grid(2)  # the block is size x size
    channels = src.shape[2] if y < src.shape[0] and x < src.shape[1] else 0  # 0: outside
    for c in range(channels):
        tile[ty, tx, c] = src[y, x, c]  # every thread loads its pixel: coalesced
    cuda.syncthreads()  # wait until the whole tile is in shared memory
    for c in range(src.shape[2] if tx == 0 and ty == 0 else 0):  # thread (0, 0) only
        mean[c] = tile_mean(tile, 0, 0, min(size, src.shape[0] - y), min(size, src.shape[1] - x), c)
    cuda.syncthreads()  # wait until thread (0, 0) has written the mean
    for c in range(channels):
        dst[y, x, c] = mean[c]


@cuda.jit
def mosaic_shared_no_barrier(src, dst, size):
    """mosaic_shared without its two barriers: a data race, wrong tiles on a GPU."""
    tile = cuda.shared.array((MAX_TILE, MAX_TILE, CHANNELS), uint8)
    mean = cuda.shared.array(CHANNELS, int32)
    tx, ty, (x, y) = cuda.threadIdx.x, cuda.threadIdx.y, cuda.grid(2)  # the block is size x size
    channels = src.shape[2] if y < src.shape[0] and x < src.shape[1] else 0  # 0: outside
    for c in range(channels):
        tile[ty, tx, c] = src[y, x, c]
    # no barrier: thread (0, 0) may sum pixels that other warps have not loaded yet
    for c in range(src.shape[2] if tx == 0 and ty == 0 else 0):  # thread (0, 0) only
        mean[c] = tile_mean(tile, 0, 0, min(size, src.shape[0] - y), min(size, src.shape[1] - x), c)
    # no barrier: other threads may read mean before thread (0, 0) has written it
    for c in range(channels):
        dst[y, x, c] = mean[c]


@cuda.jit(device=True)
def tree_sum(partial, t, n, channels):
    """partial[c, 0] = the sum of partial[c, 0..n-1], by threads t = 0..n-1 halving the rest."""
    step = 1
    while 2 * step < n:
        step *= 2  # the largest power of two below n
    while step > 0:
        if t < step and t + step < n:  # the first `step` threads add the next ones
            for c in range(channels):
                partial[c, t] += partial[c, t + step]
        cuda.syncthreads()  # every addition of this step is done
        step //= 2


@cuda.jit(device=True)
def strip_sum(src, x, c, first, end, step):
    """Channel c of column x over rows first, first + step, ... below end; 0 outside the image."""
    total = int32(0)
    if x < src.shape[1]:
        for y in range(first, end, step):  # a warp reads along a row
            total += src[y, x, c]
    return total


@cuda.jit
def mosaic_shared_parallel(src, dst, size):
    """All threads sum the tile: each a strip of its column, then a tree in shared memory."""
    partial = cuda.shared.array((CHANNELS, PARALLEL_THREADS), int32)
    tx, ty, step = cuda.threadIdx.x, cuda.threadIdx.y, cuda.blockDim.y
    y0, x = cuda.blockIdx.y * size, cuda.blockIdx.x * size + tx
    rows, cols = min(size, src.shape[0] - y0), min(size, src.shape[1] - cuda.blockIdx.x * size)
    for c in range(src.shape[2]):  # rows ty, ty + step, ... of the tile
        partial[c, ty * size + tx] = strip_sum(src, x, c, y0 + ty, y0 + rows, step)
    cuda.syncthreads()
    tree_sum(partial, ty * size + tx, size * step, src.shape[2])
    for c in range(src.shape[2] if x < src.shape[1] else 0):
        mean = (partial[c, 0] + rows * cols // 2) // (rows * cols)
        for j in range(ty, rows, step):
            dst[y0 + j, x, c] = mean


# ---- wrappers --------------------------------------------------------------------------------


def _launch(steps, output: launch.Output, to_host: bool) -> launch.Launch:
    return launch.Launch(
        tuple(steps),
        out=output.device,
        to_host=to_host,
        host_out=output.host,
        out_given=output.given,
    )


def pixel_launch(
    kernel, image, out, *, mirror_rows: bool = False, works_in_place: bool = False
) -> launch.Launch:
    """A one-pixel-per-thread kernel over the image, in bands of rows that fit CUDA's grid.

    `mirror_rows`: band rows first..end of the output read rows height-end..height-first.
    """
    d_src, to_host, shape = checks.image_input(image)
    output, d_dst = checks.image_output(out, d_src, shape, works_in_place=works_in_place)
    height = shape[0]
    steps = []
    for first, end, grid in launch.row_bands(shape[:2], BLOCK):
        src = d_src[height - end : height - first] if mirror_rows else d_src[first:end]
        steps.append(launch.Step(kernel, grid, BLOCK, (src, d_dst[first:end])))
    return _launch(steps, output, to_host)


@launch.op
def negative(image, *, out=None):
    """255 - every pixel, one thread per pixel (seed 002's kernel); out may be the image itself."""
    return pixel_launch(negative_one_pixel_per_thread, image, out, works_in_place=True)


@launch.op
def flip_horizontal(image, *, out=None):
    """Mirror left-right, one thread per pixel (seed 002's kernel)."""
    return pixel_launch(flip_horizontal_one_pixel_per_thread, image, out)


@launch.op
def flip_vertical(image, *, out=None):
    """Mirror top-bottom, one thread per pixel (seed 002's kernel)."""
    return pixel_launch(flip_vertical_one_pixel_per_thread, image, out, mirror_rows=True)


def _mosaic_launch(
    kernel, image, size, out, *, works_in_place: bool = True, parallel: bool = False
) -> launch.Launch:
    """One block per tile, in bands of tile rows that fit CUDA's grid."""
    d_src, to_host, shape = checks.image_input(image)
    size = checks.mosaic_size(size)
    output, d_dst = checks.image_output(out, d_src, shape, works_in_place=works_in_place)
    block = (size, min(size, max(1, PARALLEL_THREADS // size))) if parallel else (size, size)
    steps = [
        launch.Step(kernel, grid, block, (d_src[first:end], d_dst[first:end], size))
        for first, end, grid in launch.row_bands(shape[:2], (size, size))
    ]
    return _launch(steps, output, to_host)


@launch.op
def mosaic_one_thread(image, size, *, out=None):
    """Mosaic of size x size tiles, one working thread per tile (seed 002's first version)."""
    return _mosaic_launch(mosaic_one_thread_per_block, image, size, out)


@launch.op
def mosaic_shared_one_thread(image, size, *, out=None):
    """Mosaic with the tile in shared memory, one thread averaging (seed 002's second version)."""
    return _mosaic_launch(mosaic_shared, image, size, out)


@launch.op
def mosaic_shared_race(image, size, *, out=None):
    """The shared-memory mosaic without its barriers: a data race, wrong pictures on a GPU."""
    return _mosaic_launch(mosaic_shared_no_barrier, image, size, out, works_in_place=False)


@launch.op
def mosaic_parallel(image, size, *, out=None):
    """Mosaic where all threads of a tile's block sum it, finishing with a shared-memory tree."""
    return _mosaic_launch(mosaic_shared_parallel, image, size, out, parallel=True)


IMAGE = "uint8[:, :, ::1]"
SIGNATURES = {
    negative_one_pixel_per_thread: [f"void({IMAGE}, {IMAGE})"],
    flip_horizontal_one_pixel_per_thread: [f"void({IMAGE}, {IMAGE})"],
    flip_vertical_one_pixel_per_thread: [f"void({IMAGE}, {IMAGE})"],
    mosaic_one_thread_per_block: [f"void({IMAGE}, {IMAGE}, int64)"],
    mosaic_shared: [f"void({IMAGE}, {IMAGE}, int64)"],
    mosaic_shared_no_barrier: [f"void({IMAGE}, {IMAGE}, int64)"],
    mosaic_shared_parallel: [f"void({IMAGE}, {IMAGE}, int64)"],
}

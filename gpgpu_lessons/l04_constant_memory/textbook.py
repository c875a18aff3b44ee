"""Lesson 04's textbook kernels: where the filter lives (global, constant, frozen), a tiled filter
with a halo in shared memory, and a lookup table in global vs constant memory.

Every filter is a correlation with clamp-to-edge borders (seed 002 leaves the border pixels out;
we compute them): out[y, x] = sum of weights[dy, dx] * image[y + dy - ky // 2, x + dx - kx // 2],
a neighbour outside the image reading the nearest edge pixel (`reference.reference`).

Constant memory in Numba is filled at compile time (``cuda.const.array_like`` copies a host
array's bytes into the kernel), so there is one constant-memory kernel per named filter;
any other filter goes to `filter_global`, or to `fast.filter2d`, which compiles a kernel per filter.
The filter kernels take the first row they cover last: a tall image (more than 65535 blocks
along y) runs as several launches, one per band of rows.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import launch
from . import checks
from .filters import BOX_BLUR, GAUSSIAN_5, LAPLACIAN, TONE_CURVE

BLOCK = (32, 8)  # (x, y) threads per block of the one-pixel-per-thread kernels: a warp per row
TILE = 16  # the tiled kernel: TILE x TILE threads, one output pixel each
RADIUS = 2  # GAUSSIAN_5 reaches RADIUS pixels around its centre
HALO_TILE = TILE + 2 * RADIUS  # the tile plus a halo of RADIUS pixels on every side


@cuda.jit(device=True)
def clamped_pixel(image, y, x):
    """Pixel (y, x), or the nearest edge pixel when (y, x) lies outside the image."""
    return image[min(max(y, 0), image.shape[0] - 1), min(max(x, 0), image.shape[1] - 1)]


@cuda.jit(device=True)
def correlate(image, weights, y, x):
    """Output pixel (y, x): every filter weight times its neighbour of (y, x), summed."""
    ky, kx = weights.shape
    acc = float32(0)
    for dy in range(ky):
        for dx in range(kx):
            pixel = clamped_pixel(image, y + dy - ky // 2, x + dx - kx // 2)
            acc += weights[dy, dx] * float32(pixel)
    return acc


@cuda.jit(device=True)
def weighted_sum(pixels, weights, y, x):
    """Every filter weight times the pixel under it, the filter's corner on (y, x): no clamps."""
    acc = float32(0)
    for dy in range(weights.shape[0]):
        for dx in range(weights.shape[1]):
            acc += weights[dy, dx] * pixels[y + dy, x + dx]
    return acc


@cuda.jit
def filter_global(image, weights, out, first_row):
    """One thread per pixel; the filter is an argument, read from global memory (seed 002)."""
    x, y = cuda.grid(2)
    y += first_row  # this launch's first row (a tall image takes several)
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = correlate(image, weights, y, x)


@cuda.jit
def gaussian5_constant(image, out, first_row):
    """The same with GAUSSIAN_5 in constant memory: the threads of a warp read the same weight."""
    x, y = cuda.grid(2)
    y += first_row
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = correlate(image, cuda.const.array_like(GAUSSIAN_5), y, x)


@cuda.jit
def laplacian_constant(image, out, first_row):
    """Seed 002's edge filter, LAPLACIAN, in constant memory."""
    x, y = cuda.grid(2)
    y += first_row
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = correlate(image, cuda.const.array_like(LAPLACIAN), y, x)


@cuda.jit
def box_blur_constant(image, out, first_row):
    """Seed 002's blur, BOX_BLUR, in constant memory."""
    x, y = cuda.grid(2)
    y += first_row
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = correlate(image, cuda.const.array_like(BOX_BLUR), y, x)


@cuda.jit
def gaussian5_frozen(image, out, first_row):
    """GAUSSIAN_5 read as a plain global array: Numba freezes it into constant memory too."""
    x, y = cuda.grid(2)
    y += first_row
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = correlate(image, GAUSSIAN_5, y, x)


@cuda.jit
def gaussian5_tiled(image, out, first_row):
    """Stage the block's pixels and a halo of RADIUS in shared memory once; filter from there."""
    tile = cuda.shared.array((HALO_TILE, HALO_TILE), float32)
    weights = cuda.const.array_like(GAUSSIAN_5)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    top = first_row + cuda.blockIdx.y * TILE - RADIUS  # the image row of tile[0, :]
    left = cuda.blockIdx.x * TILE - RADIUS  # the image column of tile[:, 0]
    for r in range(ty, HALO_TILE, TILE):  # the tile and its halo:
        for c in range(tx, HALO_TILE, TILE):  # 1 to 4 pixels per thread
            tile[r, c] = clamped_pixel(image, top + r, left + c)
    cuda.syncthreads()  # the whole tile is loaded
    y, x = top + RADIUS + ty, left + RADIUS + tx
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = weighted_sum(tile, weights, ty, tx)  # the halo is there: no clamps


@cuda.jit
def lookup_global(image, table, out):
    """out = table[pixel], the table in global memory: a warp's different entries come from L1."""
    x, y = cuda.grid(2)
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = table[image[y, x]]


@cuda.jit
def tone_curve_constant(image, out):
    """The same with TONE_CURVE in constant memory: a warp's different entries are serialised."""
    table = cuda.const.array_like(TONE_CURVE)
    x, y = cuda.grid(2)
    if y < image.shape[0] and x < image.shape[1]:
        out[y, x] = table[image[y, x]]


# ---- wrappers --------------------------------------------------------------------------------

MEMORIES = ("global", "constant", "frozen")
COMPILED_IN = {  # the kernels that have their filter compiled in, by memory
    "constant": (
        ("LAPLACIAN", LAPLACIAN, laplacian_constant),
        ("BOX_BLUR", BOX_BLUR, box_blur_constant),
        ("GAUSSIAN_5", GAUSSIAN_5, gaussian5_constant),
    ),
    "frozen": (("GAUSSIAN_5", GAUSSIAN_5, gaussian5_frozen),),
}


def kernel_with(weights, memory: str):
    """The kernel with `weights` compiled in (memory 'constant' or 'frozen'), or a clear error."""
    for _, named, kernel in COMPILED_IN[memory]:
        if np.array_equal(weights, named):
            return kernel
    names = " or ".join(name for name, _, _ in COMPILED_IN[memory])
    raise ValueError(
        f"Numba compiles constant memory into the kernel, so the textbook has a "
        f"{memory} kernel only for {names} (l04_constant_memory.filters); "
        "for another filter use memory='global', or fast.filter2d(image, weights), "
        "which compiles a kernel for each filter"
    )


@launch.op
def filter2d(image, weights, *, memory: str = "global", block=BLOCK, out=None):
    """Filter a 2-D float32 or uint8 image (clamp-to-edge) into float32, one thread per pixel."""
    memory = checks.memory(memory, MEMORIES)
    weights = checks.weights(weights, constant=memory != "global")
    block = checks.block_2d(block)
    d_image, to_host, output = checks.image_and_output(image, out)
    if memory == "global":
        kernel, args = filter_global, (d_image, cuda.to_device(weights), output.device)
    else:
        kernel, args = kernel_with(weights, memory), (d_image, output.device)
    return checks.banded(kernel, d_image.shape, block, block, args, output, to_host)


@launch.op
def filter2d_tiled(image, weights, *, out=None):
    """Filter a 2-D float32 or uint8 image with GAUSSIAN_5 through a shared tile with a halo."""
    if not np.array_equal(checks.weights(weights), GAUSSIAN_5):
        raise ValueError(
            "the textbook's tiled kernel has GAUSSIAN_5 compiled in (RADIUS = 2); for "
            "another filter use fast.filter2d(image, weights), tiled for any filter"
        )
    d_image, to_host, output = checks.image_and_output(image, out)
    return checks.banded(
        gaussian5_tiled,
        d_image.shape,
        (TILE, TILE),
        (TILE, TILE),
        (d_image, output.device),
        output,
        to_host,
    )


@launch.op
def lookup(image, table, *, memory: str = "global", block=BLOCK, out=None):
    """out[y, x] = table[image[y, x]] for a uint8 image and a 256-entry float32 table."""
    memory = checks.memory(memory, ("global", "constant"))
    table = checks.table(table)
    if memory == "constant" and not np.array_equal(table, TONE_CURVE):
        raise ValueError(
            "Numba compiles constant memory into the kernel, so the textbook has a "
            "constant lookup kernel only for TONE_CURVE (gpgpu_lessons."
            "l04_constant_memory.filters); for another table use memory='global'"
        )
    block = checks.block_2d(block)
    d_image, to_host, output = checks.image_and_output(image, out, dtypes=np.uint8)
    kernel = lookup_global if memory == "global" else tone_curve_constant
    table_arg = (cuda.to_device(table),) if memory == "global" else ()
    steps = tuple(
        launch.Step(
            kernel,
            grid,
            block,  # elementwise: views of the bands
            (d_image[first:end], *table_arg, output.device[first:end]),
        )
        for first, end, grid in launch.row_bands(d_image.shape, block)
    )
    return launch.Launch(steps, output.device, to_host, output.host, False, output.given)


IMAGES = checks.IMAGE_TYPES  # the image dtypes the filter wrappers accept
SIGNATURES = {
    filter_global: [f"void({image}, float32[:, ::1], float32[:, ::1], int64)" for image in IMAGES],
    **{
        kernel: [f"void({image}, float32[:, ::1], int64)" for image in IMAGES]
        for kernel in (
            gaussian5_constant,
            laplacian_constant,
            box_blur_constant,
            gaussian5_frozen,
            gaussian5_tiled,
        )
    },
    lookup_global: ["void(uint8[:, ::1], float32[::1], float32[:, ::1])"],
    tone_curve_constant: ["void(uint8[:, ::1], float32[:, ::1])"],
}

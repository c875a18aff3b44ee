"""Lesson 02, shared memory: image basics (negative, flips) and seed 002's mosaic, made fast.

Images are uint8 arrays, (height, width) grayscale or (height, width, 3) RGB. Kernels see every
image as (height, width, channels); the wrappers add the channel axis of a grayscale image.

Mosaic rounding rule: a tile's mean is rounded to the nearest integer, halves up, in exact
integer arithmetic: mean = (sum + count // 2) // count, where count is the number of real pixels
of the tile (edge tiles of an image that the tile size does not divide are smaller).
"""
from __future__ import annotations

import functools

import numpy as np
from numba import complex128, cuda, int32, uint32, uint64

from .. import arrays
from .coalescing import load_element, store_element

WORDS_PER_THREAD = 4  # 4-byte words each thread of a word kernel moves: 16 bytes in flight per thread
WORD_THREADS = 256
WORD_TYPES = {4: uint32, 8: uint64, 16: complex128}  # a complex128 view moves 16 bytes per access
# The fast flips' launch, tuned on an H200 (16384 x 16384 gray and 9472 x 9472 RGB): the widest word a row
# allows, up to FLIP_WORD_BYTES[(horizontal, channels)]; FLIP_PER_THREAD words per thread; blocks of
# FLIP_THREADS x FLIP_ROWS threads. RGB mirrors in 4-byte words: shuffling 24 bytes of 8-byte words cost more.
FLIP_WORD_BYTES = {(False, 1): 16, (False, 3): 16, (True, 1): 8, (True, 3): 4}
FLIP_PER_THREAD = 4
FLIP_THREADS = 256
FLIP_ROWS = 1
PIXEL_BLOCK = (32, 8)  # (x, y) threads of the one-pixel-per-thread kernels: a warp reads 32 neighbours
MAX_TILE = 32  # a mosaic tile is one block of tile x tile threads: at most 32 x 32 = 1024
PARALLEL_THREADS = 256  # the parallel mosaic's block: size x (256 // size) threads, each adding a strip of rows
MAX_CHANNELS = 3
MAX_GRID_Y = 65535  # CUDA's limit on gridDim.y
ALL_ONES = np.uint32(0xFFFFFFFF)


# ---- image basics: one pixel per thread ---------------------------------------------------------

@cuda.jit
def negative_one_pixel_per_thread(src, dst):
    """Negative with one thread per pixel: each thread reads and writes single bytes."""
    x, y = cuda.grid(2)
    if y < src.shape[0] and x < src.shape[1]:
        for c in range(src.shape[2]):
            dst[y, x, c] = 255 - src[y, x, c]


@cuda.jit
def flip_one_pixel_per_thread(src, dst, horizontal):
    """Mirror with one thread per pixel: thread (x, y) copies the pixel at the mirrored place."""
    x, y = cuda.grid(2)
    height, width = src.shape[0], src.shape[1]
    if y < height and x < width:
        sy = y if horizontal else height - 1 - y
        sx = width - 1 - x if horizontal else x
        for c in range(src.shape[2]):
            dst[y, x, c] = src[sy, sx, c]


# ---- image basics: 4-byte words, several per thread --------------------------------------------

@cuda.jit
def negative_words(src_words, dst_words, src_bytes, dst_bytes):
    """Negative on 4-byte words: 255 - b is NOT b, so one XOR inverts four pixels at once."""
    first = cuda.blockIdx.x * cuda.blockDim.x * WORDS_PER_THREAD + cuda.threadIdx.x
    held = cuda.local.array(WORDS_PER_THREAD, uint32)  # registers: the constant-length loops are unrolled
    for k in range(WORDS_PER_THREAD):  # all loads first: WORDS_PER_THREAD loads in flight per thread
        i = first + k * cuda.blockDim.x  # neighbouring threads, neighbouring words: coalesced
        if i < src_words.size:
            held[k] = src_words[i]
    for k in range(WORDS_PER_THREAD):
        i = first + k * cuda.blockDim.x
        if i < src_words.size:
            dst_words[i] = held[k] ^ ALL_ONES
    if cuda.grid(1) == 0:  # the last size % 4 bytes, which do not fill a word
        for b in range(4 * src_words.size, src_bytes.size):
            dst_bytes[b] = 255 - src_bytes[b]


def _flip_words_kernel(horizontal: bool, channels: int, word_bytes: int, per_thread: int):
    """Build a word-wise flip for compile-time constants: direction, channels, word size, words per thread."""
    word = WORD_TYPES[word_bytes]  # uint32, uint64 or (vertical only) complex128: 16 bytes in one access
    held_words = per_thread * channels  # a compile-time constant: the local array lives in registers

    @cuda.jit
    def flip_vertical_words(src, dst, height, words):
        """Vertical flip on words: row y of dst is row height-1-y of src, several words per thread."""
        first = cuda.blockIdx.y * cuda.blockDim.x * per_thread + cuda.threadIdx.x
        held = cuda.local.array(held_words, word)
        y = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y  # rows on grid x: up to 2**31 - 1
        if y < height:
            for k in range(per_thread):  # all loads first: per_thread loads in flight per thread
                i = first + k * cuda.blockDim.x  # thread t, word t of a warp's run: coalesced
                if i < words:
                    held[k] = load_element(src, (height - 1 - y) * words + i)
            for k in range(per_thread):
                i = first + k * cuda.blockDim.x
                if i < words:
                    store_element(dst, y * words + i, held[k])

    @cuda.jit
    def flip_horizontal_words(src, dst, height, words):
        """Horizontal flip on words: mirror groups of word_bytes pixels, reverse the pixels inside."""
        groups = words // channels  # a group: word_bytes pixels in `channels` words
        first = cuda.blockIdx.y * cuda.blockDim.x * per_thread + cuda.threadIdx.x
        held = cuda.local.array(held_words, word)
        y = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y
        if y < height:
            row = y * words
            for k in range(per_thread):  # load mirrored groups: a warp reads a run backwards
                g = first + k * cuda.blockDim.x
                if g < groups:
                    for w in range(channels):
                        held[k * channels + w] = src[row + (groups - 1 - g) * channels + w]
            for k in range(per_thread):  # reverse the pixels of each group, store
                g = first + k * cuda.blockDim.x
                if g < groups:
                    for w in range(channels):
                        out = word(0)
                        for b in range(word_bytes):  # gray: a byte swap (the compiler: 2 prmt)
                            j = word_bytes * w + b  # output byte j: pixel j // channels
                            s = (word_bytes - 1 - j // channels) * channels + j % channels  # its source
                            byte = held[k * channels + s // word_bytes] >> word(8 * (s % word_bytes))
                            out |= (byte & word(0xFF)) << word(8 * b)
                        dst[row + g * channels + w] = out

    return flip_horizontal_words if horizontal else flip_vertical_words


@functools.lru_cache(maxsize=None)
def flip_words_kernel(horizontal: bool, channels: int, word_bytes: int, per_thread: int):
    """The word-wise flip kernel for these constants (compiled once per combination)."""
    if word_bytes not in WORD_TYPES or (horizontal and word_bytes == 16):
        raise ValueError(f"word_bytes must be 4 or 8 (16 for the vertical flip), got {word_bytes}")
    return _flip_words_kernel(horizontal, channels, word_bytes, per_thread)


# the kernels the fast wrappers use on aligned rows of whole words (the notebook shows these)
flip_vertical_words = flip_words_kernel(False, 1, FLIP_WORD_BYTES[(False, 1)], FLIP_PER_THREAD)
flip_horizontal_words = {c: flip_words_kernel(True, c, FLIP_WORD_BYTES[(True, c)], FLIP_PER_THREAD)
                         for c in (1, MAX_CHANNELS)}


# ---- mosaic: one block per tile -----------------------------------------------------------------

@cuda.jit
def mosaic_one_thread_per_block(src, dst, size):
    """Seed 002's first mosaic: thread (0, 0) of each block reads, averages and writes its tile alone."""
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        y0, x0 = cuda.blockIdx.y * size, cuda.blockIdx.x * size
        rows, cols = min(size, src.shape[0] - y0), min(size, src.shape[1] - x0)
        count = rows * cols
        for c in range(src.shape[2]):
            total = int32(0)  # not a Python 0: in the simulator uint8 + 0 would stay uint8 and overflow
            for j in range(rows):
                for i in range(cols):
                    total += src[y0 + j, x0 + i, c]
            mean = (total + count // 2) // count
            for j in range(rows):
                for i in range(cols):
                    dst[y0 + j, x0 + i, c] = mean


def _mosaic_shared_kernel(barriers):
    """Build seed 002's shared-memory mosaic, with its two barriers or (to show the race) without."""

    @cuda.jit
    def mosaic_shared(src, dst, size):
        """Every thread caches its pixel in shared memory; thread (0, 0) averages the cache; all write."""
        cache = cuda.shared.array((MAX_TILE, MAX_TILE, MAX_CHANNELS), np.uint8)
        mean = cuda.shared.array(MAX_CHANNELS, int32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        y, x = cuda.blockIdx.y * size + ty, cuda.blockIdx.x * size + tx
        rows, cols = min(size, src.shape[0] - cuda.blockIdx.y * size), min(size, src.shape[1] - cuda.blockIdx.x * size)
        inside = y < src.shape[0] and x < src.shape[1]
        if inside:
            for c in range(src.shape[2]):
                cache[ty, tx, c] = src[y, x, c]  # coalesced: neighbouring threads, neighbouring pixels
        if barriers:
            cuda.syncthreads()  # wait until every pixel of the tile is in the cache
        if tx == 0 and ty == 0:
            count = rows * cols
            for c in range(src.shape[2]):
                total = int32(0)  # not a Python 0: in the simulator uint8 + 0 would stay uint8 and overflow
                for j in range(rows):
                    for i in range(cols):
                        total += cache[j, i, c]
                mean[c] = (total + count // 2) // count
        if barriers:
            cuda.syncthreads()  # wait until thread (0, 0) has written the mean
        if inside:
            for c in range(src.shape[2]):
                dst[y, x, c] = mean[c]

    return mosaic_shared


mosaic_shared = _mosaic_shared_kernel(barriers=True)
mosaic_shared_no_barrier = _mosaic_shared_kernel(barriers=False)


@cuda.jit
def mosaic_shared_parallel(src, dst, size, tree_start):
    """All threads reduce the tile: each adds a column strip of it, then a shared-memory tree adds the threads' sums."""
    partial = cuda.shared.array((MAX_CHANNELS, PARALLEL_THREADS), int32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    y0, x = cuda.blockIdx.y * size, cuda.blockIdx.x * size + tx
    rows, cols = min(size, src.shape[0] - y0), min(size, src.shape[1] - cuda.blockIdx.x * size)
    tid, n = ty * size + tx, size * cuda.blockDim.y
    for c in range(src.shape[2]):
        total = int32(0)
        if x < src.shape[1]:
            for j in range(ty, rows, cuda.blockDim.y):  # rows ty, ty + blockDim.y, ...: a warp reads along a row
                total += src[y0 + j, x, c]
        partial[c, tid] = total  # threads outside the image add 0
    cuda.syncthreads()
    step = tree_start  # the largest power of two below n: each step halves the threads still adding
    while step > 0:
        if tid < step and tid + step < n:
            for c in range(src.shape[2]):
                partial[c, tid] += partial[c, tid + step]
        cuda.syncthreads()
        step //= 2
    if x < src.shape[1]:
        count = rows * cols
        for c in range(src.shape[2]):
            mean = (partial[c, 0] + count // 2) // count
            for j in range(ty, rows, cuda.blockDim.y):
                dst[y0 + j, x, c] = mean


# ---- host wrappers ------------------------------------------------------------------------------
# Each wrapper checks its input and plans a launch (a configured kernel and its arguments), then runs
# it. launcher() hands out the planned launch alone, for benchmarks.

def _image(image, name: str = "image"):
    """Check an image and return (device array as (h, w, channels), came_from_host, original shape)."""
    d_image, to_host = arrays.device_input(image, name=name, dtypes=np.uint8)
    shape = tuple(d_image.shape)
    if not (len(shape) == 2 or (len(shape) == 3 and shape[2] == MAX_CHANNELS)):
        raise ValueError(f"{name} must be (height, width) grayscale or (height, width, 3) RGB, got shape {shape}")
    channels = 1 if len(shape) == 2 else MAX_CHANNELS
    return d_image.reshape(shape[0], shape[1], channels), to_host, shape


def _output(out, shape):
    """The output device array in the image's own shape, and its (h, w, channels) view."""
    d_out = arrays.device_output(out, shape, np.uint8)
    return d_out, d_out.reshape(shape[0], shape[1], 1 if len(shape) == 2 else MAX_CHANNELS)


def _word_threads(words: int) -> int:
    """Threads per block of a word kernel: WORD_THREADS, fewer (whole warps) when a row has few words."""
    return min(WORD_THREADS, 32 * arrays.blocks_for(max(1, arrays.blocks_for(words, WORDS_PER_THREAD)), 32))


def _plan_negative(image, *, out=None):
    d_src, to_host, shape = _image(image)
    d_out, d_dst = _output(out, shape)
    bx, by = PIXEL_BLOCK
    blocks = (arrays.blocks_for(shape[1], bx), arrays.blocks_for(shape[0], by))
    return d_out, to_host, negative_one_pixel_per_thread[blocks, PIXEL_BLOCK], (d_src, d_dst)


def _plan_flip(image, *, out=None, horizontal: bool):
    d_src, to_host, shape = _image(image)
    d_out, d_dst = _output(out, shape)
    bx, by = PIXEL_BLOCK
    blocks = (arrays.blocks_for(shape[1], bx), arrays.blocks_for(shape[0], by))
    return d_out, to_host, flip_one_pixel_per_thread[blocks, PIXEL_BLOCK], (d_src, d_dst, horizontal)


def _plan_negative_fast(image, *, out=None):
    d_src, to_host, shape = _image(image)
    d_out, d_dst = _output(out, shape)
    n = d_src.size
    src_bytes, dst_bytes = d_src.reshape(n), d_dst.reshape(n)
    whole = 4 * (n // 4)
    src_words, dst_words = src_bytes[:whole].view(np.uint32), dst_bytes[:whole].view(np.uint32)
    threads = _word_threads(n // 4)
    blocks = max(1, arrays.blocks_for(n // 4, threads * WORDS_PER_THREAD))
    return d_out, to_host, negative_words[blocks, threads], (src_words, dst_words, src_bytes, dst_bytes)


def _address(d_array) -> int:
    """The device address of an array's first byte (in the simulator: of the host array behind it)."""
    interface = getattr(d_array, "__cuda_array_interface__", None)
    return interface["data"][0] if interface else d_array._ary.ctypes.data


def flip_word_bytes(d_image, shape, horizontal: bool, widest: int | None = None) -> int:
    """The widest word (16, 8 or 4 bytes; 0: none) that whole rows split into, aligned in memory.

    Vertical: each row's bytes are whole words. Horizontal: each group of `word_bytes` pixels is
    `channels` whole words, so the width must be a multiple of the word size.
    """
    channels = 1 if len(shape) == 2 else shape[2]
    widest = FLIP_WORD_BYTES[(horizontal, channels)] if widest is None else widest
    row_bytes = d_image.size // max(1, shape[0])
    address = _address(d_image)
    for word_bytes in (16, 8, 4):
        whole = (shape[1] if horizontal else row_bytes) % word_bytes == 0
        if word_bytes <= widest and whole and address % word_bytes == 0:
            return word_bytes
    return 0


def _plan_flip_fast(image, *, out=None, horizontal: bool, word_bytes=None, per_thread=None, threads=None,
                    rows=None):
    """The word-wise flip with the widest word that fits; the one-pixel kernel when no word fits.

    word_bytes, per_thread, threads, rows override the module's tuned FLIP_* constants (for tuning).
    """
    d_src, to_host, shape = _image(image)
    d_out, d_dst = _output(out, shape)
    word_bytes = min(flip_word_bytes(d_src, shape, horizontal, word_bytes),
                     flip_word_bytes(d_dst, shape, horizontal, word_bytes))
    if word_bytes == 0:
        d_out, _, kernel, kernel_args = _plan_flip(d_src.reshape(shape), out=d_out, horizontal=horizontal)
        return d_out, to_host, kernel, kernel_args
    per_thread = per_thread or FLIP_PER_THREAD
    height, channels = shape[0], d_src.shape[2] if horizontal else 1  # a vertical flip moves rows whole
    kernel = flip_words_kernel(horizontal, channels, word_bytes, per_thread)
    dtype = np.complex128 if word_bytes == 16 else np.dtype(f"u{word_bytes}")
    src, dst = d_src.reshape(d_src.size).view(dtype), d_dst.reshape(d_dst.size).view(dtype)
    words = src.size // height
    units = words // channels if horizontal else words  # what one thread's k-th step moves: a group or a word
    threads = min(threads or FLIP_THREADS, 32 * arrays.blocks_for(arrays.blocks_for(units, per_thread), 32))
    rows = min(rows or FLIP_ROWS, height)
    blocks = (arrays.blocks_for(height, rows), arrays.blocks_for(units, threads * per_thread))  # (rows, runs)
    if blocks[1] > MAX_GRID_Y:
        raise ValueError(f"rows of {units} words need {blocks[1]} blocks in y, more than CUDA's {MAX_GRID_Y}")
    return d_out, to_host, kernel[blocks, (threads, rows)], (src, dst, height, words)


def check_mosaic_size(size, shape) -> int:
    """Validate a mosaic tile size: 1 <= size <= 32 (one thread per pixel of a tile) and <= both image sides."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"mosaic size must be an integer number of pixels, got {size!r}")
    if size < 1:
        raise ValueError(f"mosaic size must be at least 1 pixel, got {size}")
    if size > min(shape[0], shape[1]):
        raise ValueError(f"mosaic size {size} is larger than the image ({shape[0]} x {shape[1]}): "
                         f"use at most {min(shape[0], shape[1])}")
    if size > MAX_TILE:
        raise ValueError(f"mosaic size {size} needs a block of {size} x {size} = {size * size} threads, "
                         f"more than the 1024 CUDA allows: use at most {MAX_TILE}")
    return int(size)


def _tree_start(n: int) -> int:
    """The first stride of a tree reduction over n values: the largest power of two below n (0 for n = 1)."""
    return 1 << ((n - 1).bit_length() - 1) if n > 1 else 0


def _plan_mosaic(image, size, *, out=None, kernel):
    """One block per tile, edge tiles included: size x size threads (the parallel tree: at most 256)."""
    d_src, to_host, shape = _image(image)
    size = check_mosaic_size(size, shape)
    d_out, d_dst = _output(out, shape)
    blocks = (arrays.blocks_for(shape[1], size), arrays.blocks_for(shape[0], size))
    if blocks[1] > MAX_GRID_Y:
        raise ValueError(f"{shape[0]} rows in tiles of {size} need {blocks[1]} blocks in y, more than "
                         f"CUDA's {MAX_GRID_Y}: use a larger mosaic size")
    if kernel is mosaic_shared_parallel:
        threads = (size, min(size, max(1, PARALLEL_THREADS // size)))
        return d_out, to_host, kernel[blocks, threads], (d_src, d_dst, size, _tree_start(threads[0] * threads[1]))
    return d_out, to_host, kernel[blocks, (size, size)], (d_src, d_dst, size)


def _wrapper(plan, doc: str, name: str, **fixed):
    """A public wrapper: plan the launch, launch, return NumPy for NumPy input (device arrays stay put)."""

    def wrapper(image, *args, out=None):
        d_out, to_host, kernel, kernel_args = plan(image, *args, out=out, **fixed)
        kernel(*kernel_args)
        return arrays.returned(d_out, to_host)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = doc
    _PLANS[wrapper] = lambda image, *args, out: plan(image, *args, out=out, **fixed)
    return wrapper


_PLANS = {}
negative = _wrapper(_plan_negative, "255 - every byte, one pixel per thread (the seed's kernel).", "negative")
negative_fast = _wrapper(_plan_negative_fast, "255 - every byte on 4-byte words, several per thread (any size: "
                         "the last bytes one by one).", "negative_fast")
flip_horizontal = _wrapper(_plan_flip, "Mirror left-right, one pixel per thread (the seed's kernel).",
                           "flip_horizontal", horizontal=True)
flip_vertical = _wrapper(_plan_flip, "Mirror top-bottom, one pixel per thread (the seed's kernel).",
                         "flip_vertical", horizontal=False)
flip_horizontal_fast = _wrapper(_plan_flip_fast, "Mirror left-right on 4-byte words; widths that are not a "
                                "multiple of 4 use the one-pixel kernel.", "flip_horizontal_fast", horizontal=True)
flip_vertical_fast = _wrapper(_plan_flip_fast, "Mirror top-bottom on 4-byte words; widths that are not a "
                              "multiple of 4 use the one-pixel kernel.", "flip_vertical_fast", horizontal=False)
mosaic_one_thread = _wrapper(_plan_mosaic, "mosaic_one_thread(image, size): one working thread per tile "
                             "(seed 002's first version: slow).", "mosaic_one_thread",
                             kernel=mosaic_one_thread_per_block)
mosaic_shared_one_thread = _wrapper(_plan_mosaic, "mosaic_shared_one_thread(image, size): the tile cached in shared "
                                    "memory, one thread averaging, two barriers (seed 002's second version).",
                                    "mosaic_shared_one_thread", kernel=mosaic_shared)
mosaic_shared_race = _wrapper(_plan_mosaic, "mosaic_shared_race(image, size): the shared-memory mosaic with its "
                              "barriers removed: a data race, wrong pictures on a GPU.", "mosaic_shared_race",
                              kernel=mosaic_shared_no_barrier)
mosaic_parallel = _wrapper(_plan_mosaic, "mosaic_parallel(image, size): all threads of the tile's block sum it in a "
                           "shared-memory tree.", "mosaic_parallel", kernel=mosaic_shared_parallel)


def launcher(wrapper, image, *args, out):
    """A zero-argument callable that launches only the kernel behind wrapper(image, *args, out=out).

    For timing.benchmark: the checks, reshapes and word views of the wrapper (tens of microseconds of
    Python, as long as a fast kernel on a 256 MB image) are done once here instead of at every launch.
    """
    if wrapper not in _PLANS:
        raise ValueError(f"launcher() takes one of this module's wrappers, e.g. negative_fast; got {wrapper!r}")
    _, _, kernel, kernel_args = _PLANS[wrapper](image, *args, out=out)
    return lambda: kernel(*kernel_args)


# ---- NumPy references ---------------------------------------------------------------------------

def negative_reference(image: np.ndarray) -> np.ndarray:
    """NumPy negative."""
    return 255 - image


def flip_horizontal_reference(image: np.ndarray) -> np.ndarray:
    """NumPy left-right mirror (a contiguous copy, as the kernels write)."""
    return np.ascontiguousarray(image[:, ::-1])


def flip_vertical_reference(image: np.ndarray) -> np.ndarray:
    """NumPy top-bottom mirror (a contiguous copy)."""
    return np.ascontiguousarray(image[::-1])


def mosaic_reference(image: np.ndarray, size: int) -> np.ndarray:
    """NumPy mosaic: exact tile sums, mean = (sum + count // 2) // count, edge tiles over their real pixels."""
    size = check_mosaic_size(size, image.shape)
    height, width = image.shape[:2]
    tiles_y, tiles_x = -(-height // size), -(-width // size)
    padded = image
    if (tiles_y * size, tiles_x * size) != (height, width):  # pad with zeros: they add nothing to the sums
        padded = np.zeros((tiles_y * size, tiles_x * size) + image.shape[2:], dtype=np.uint8)
        padded[:height, :width] = image
    tiles = padded.reshape(tiles_y, size, tiles_x, size, *image.shape[2:])
    sums = tiles.sum(axis=(1, 3), dtype=np.int64)
    rows = np.minimum(size, height - size * np.arange(tiles_y))  # real pixels per tile, as in the kernels
    cols = np.minimum(size, width - size * np.arange(tiles_x))
    counts = np.multiply.outer(rows, cols).reshape(tiles_y, tiles_x, *([1] * (image.ndim - 2)))
    means = ((sums + counts // 2) // counts).astype(np.uint8)
    spread = np.broadcast_to(means[:, None, :, None], tiles.shape).reshape(padded.shape)
    return np.ascontiguousarray(spread[:height, :width])

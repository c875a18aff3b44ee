"""Lesson 02's fast kernels: the negative and flips at the copy ceiling ("Reaching the ceiling").

A warp of one-pixel threads asks for 32 bytes per load instruction, and each thread has one
small load in flight: far from what the memory system can deliver. The tricks, one per slide:

1. words: view the image as 4-, 8- or 16-byte words; one instruction moves a whole word;
2. several words per thread, all loaded before the first store: more loads in flight;
3. thread t of a block takes words t, t + T, t + 2T, ... (T threads): each load instruction of
   a warp reads one contiguous run of memory (coalesced);
4. negative: 255 - b is NOT b for a byte, so one XOR inverts four pixels;
5. vertical flip: rows move whole, in 16-byte words (one ld.global.v2 each, device.vector);
6. horizontal flip: read the mirrored group of pixels, reverse the pixels inside the group.

Rows that do not split into whole, aligned words fall back to the textbook kernels.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from numba import complex128, cuda, uint32, uint64

from .. import launch
from ..device.vector import load_vector, store_vector
from . import checks, textbook

# The negative: 4-byte words, WORDS_PER_THREAD of them per thread, all loaded before the first
# store (16 bytes in flight per thread, as in the flips), in blocks of the flips' 256 threads.
WORDS_PER_THREAD = 4
WORD_THREADS = 256
ALL_ONES = np.uint32(0xFFFFFFFF)

# The flips' launch, chosen on an H200 (16384 x 16384 gray, 9472 x 9472 RGB) by timing the
# space in TUNING below (`python -m gpgpu_lessons.tune flips`; its table is recorded in
# gpgpu_lessons/recorded/tuning/): the widest word a row allows, up to VERTICAL_WORD_BYTES or
# HORIZONTAL_WORD_BYTES[channels]; FLIP_PER_THREAD words per thread; blocks of FLIP_BLOCK
# (threads along a row, rows). RGB mirrors in 4-byte words: shuffling 24 bytes of 8-byte words
# cost more than it saved.
VERTICAL_WORD_BYTES = 16
HORIZONTAL_WORD_BYTES = {1: 8, 3: 4}
FLIP_PER_THREAD = 4
FLIP_BLOCK = (256, 1)


# ---- the negative: XOR on 4-byte words -------------------------------------------------------


@cuda.jit
def negative_words(src_words, dst_words, src_bytes, dst_bytes):
    """Negative on 4-byte words: 255 - b is NOT b, so one XOR inverts four pixels at once."""
    first = cuda.blockIdx.x * cuda.blockDim.x * WORDS_PER_THREAD + cuda.threadIdx.x
    held = cuda.local.array(WORDS_PER_THREAD, uint32)  # registers: constant-length loops unroll
    for k in range(WORDS_PER_THREAD):  # all loads first: WORDS_PER_THREAD loads in flight
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


# ---- the flips: words, several per thread ----------------------------------------------------


def flip_vertical_kernel(word_bytes: int, per_thread: int):
    """The vertical flip on `word_bytes`-byte words, `per_thread` words per thread."""
    word = {4: uint32, 8: uint64, 16: complex128}[word_bytes]  # any type of that size will do

    def flip_vertical_words(src, dst, height, words, first_run):
        """Row y of dst is row height-1-y of src, moved as words: several loads, then the stores."""
        y = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y  # rows on grid x: 2**31 - 1
        first = (first_run + cuda.blockIdx.y) * cuda.blockDim.x * per_thread + cuda.threadIdx.x
        held = cuda.local.array(per_thread, word)  # registers: the loops over k unroll
        if y < height:
            for k in range(per_thread):  # all loads first: per_thread loads in flight
                i = first + k * cuda.blockDim.x  # thread t, word t of a warp's run: coalesced
                if i < words:
                    held[k] = load_vector(src, (height - 1 - y) * words + i, 1)[0]
            for k in range(per_thread):
                i = first + k * cuda.blockDim.x
                if i < words:
                    store_vector(dst, y * words + i, (held[k],))

    name = f"flip_vertical_words_{word_bytes}B_x{per_thread}"  # each instance its own name
    flip_vertical_words.__name__ = flip_vertical_words.__qualname__ = name
    return cuda.jit(flip_vertical_words)


def pixel_reverser(channels: int, word_bytes: int):
    """A device function: word w of a group of word_bytes pixels, with the pixels reversed."""
    if word_bytes not in (4, 8):
        raise ValueError(f"a horizontal flip's words are 4 or 8 bytes, got {word_bytes}")
    word = {4: uint32, 8: uint64}[word_bytes]

    @cuda.jit(device=True, inline="always")
    def reversed_word(held, first, w):
        """Word w of the group held[first:first + channels], its pixels in reverse order."""
        out = word(0)
        for b in range(word_bytes):  # gray: a byte swap (the compiler: 2 prmt)
            j = word_bytes * w + b  # output byte j: pixel j // channels
            s = (word_bytes - 1 - j // channels) * channels + j % channels  # its source byte
            byte = held[first + s // word_bytes] >> word(8 * (s % word_bytes))
            out |= (byte & word(0xFF)) << word(8 * b)
        return out

    return reversed_word


def flip_horizontal_kernel(channels: int, word_bytes: int, per_thread: int):
    """The horizontal flip of 1- or 3-channel pixels on 4- or 8-byte words."""
    reversed_word = pixel_reverser(channels, word_bytes)  # checks word_bytes
    word, held_words = {4: uint32, 8: uint64}[word_bytes], per_thread * channels  # constants

    def flip_horizontal_words(src, dst, height, words, first_run):
        """Mirror groups of word_bytes pixels (channels words each), reversing the pixels inside."""
        groups = words // channels  # a group: word_bytes pixels in `channels` words
        y = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y
        first = (first_run + cuda.blockIdx.y) * cuda.blockDim.x * per_thread + cuda.threadIdx.x
        held = cuda.local.array(held_words, word)  # a constant size: registers
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
                        dst[row + g * channels + w] = reversed_word(held, k * channels, w)

    name = f"flip_horizontal_words_{'gray' if channels == 1 else 'rgb'}_{word_bytes}B_x{per_thread}"
    flip_horizontal_words.__name__ = flip_horizontal_words.__qualname__ = name
    return cuda.jit(flip_horizontal_words)


@functools.cache
def flip_kernel(horizontal: bool, channels: int, word_bytes: int, per_thread: int):
    """The flip kernel for these constants, built and compiled once per combination."""
    if horizontal:
        return flip_horizontal_kernel(channels, word_bytes, per_thread)
    return flip_vertical_kernel(word_bytes, per_thread)


# ---- wrappers --------------------------------------------------------------------------------


def _as_given(inner: launch.Launch, output: launch.Output, to_host: bool) -> launch.Launch:
    """A launch built on checked device arrays, returning its result as the caller's call asks."""
    return dataclasses.replace(inner, to_host=to_host, host_out=output.host, out_given=output.given)


@launch.op
def negative_fast(image, *, out=None):
    """255 - every pixel on 4-byte words, several per thread; out may be the image itself."""
    d_src, to_host, shape = checks.image_input(image)
    output, d_dst = checks.image_output(out, d_src, shape, works_in_place=True)
    if checks.address(d_src) % 4 or checks.address(d_dst) % 4:  # words must be aligned
        inner = textbook.pixel_launch(
            textbook.negative_one_pixel_per_thread,
            d_src.reshape(shape),
            output.device,
            works_in_place=True,
        )
        return _as_given(inner, output, to_host)
    n = d_src.size
    src_bytes, dst_bytes = d_src.reshape(n), d_dst.reshape(n)
    whole = 4 * (n // 4)
    src_words, dst_words = src_bytes[:whole].view(np.uint32), dst_bytes[:whole].view(np.uint32)
    # whole warps, fewer than WORD_THREADS when the image has few words
    per_words = max(1, launch.blocks_for(n // 4, WORDS_PER_THREAD))
    threads = min(WORD_THREADS, 32 * launch.blocks_for(per_words, 32))
    blocks = launch.grid_1d(n // 4, threads * WORDS_PER_THREAD)
    return launch.single(
        negative_words,
        blocks,
        threads,
        src_words,
        dst_words,
        src_bytes,
        dst_bytes,
        out=output,
        to_host=to_host,
    )


def flip_word_bytes(d_image, shape, horizontal: bool, widest: int) -> int:
    """The widest word (16, 8 or 4 bytes, at most `widest`; 0: none) whole rows split into.

    Vertical: each row's bytes are whole words. Horizontal: each group of `word_bytes` pixels is
    `channels` whole words, so the width must be a multiple of the word size. The image must
    start at an address that is a multiple of the word size.
    """
    row_bytes = d_image.size // max(1, shape[0])
    start = checks.address(d_image)
    for word_bytes in (16, 8, 4):
        whole = (shape[1] if horizontal else row_bytes) % word_bytes == 0
        if word_bytes <= widest and whole and start % word_bytes == 0:
            return word_bytes
    return 0


@launch.op
def flip_words(image, *, horizontal: bool, out=None, word_bytes=None, per_thread=None, block=None):
    """A flip on the widest aligned words rows split into (the textbook kernel when none fits).

    word_bytes (the widest word to use), per_thread (words per thread) and block (threads along
    a row, rows) default to the tuned VERTICAL_/HORIZONTAL_WORD_BYTES, FLIP_PER_THREAD, FLIP_BLOCK.
    """
    d_src, to_host, shape = checks.image_input(image)
    output, d_dst = checks.image_output(out, d_src, shape)
    channels = d_src.shape[2] if horizontal else 1  # a vertical flip moves rows whole
    if word_bytes is None:
        word_bytes = HORIZONTAL_WORD_BYTES[channels] if horizontal else VERTICAL_WORD_BYTES
    if word_bytes not in ((4, 8) if horizontal else (4, 8, 16)):
        raise ValueError(
            f"word_bytes must be 4 or 8{'' if horizontal else ' or 16'} for a "
            f"{'horizontal' if horizontal else 'vertical'} flip, got {word_bytes!r}"
        )
    per_thread = (
        FLIP_PER_THREAD if per_thread is None else launch.positive_int(per_thread, "per_thread")
    )
    dims = launch.block_shape(FLIP_BLOCK if block is None else block)
    if len(dims) == 3:
        raise ValueError(f"block is (threads along a row, rows) for a flip, got {block!r}")
    threads, rows = dims if len(dims) == 2 else (dims[0], 1)
    word_bytes = min(
        flip_word_bytes(d_src, shape, horizontal, word_bytes),
        flip_word_bytes(d_dst, shape, horizontal, word_bytes),
    )
    if word_bytes == 0:
        kernel = (
            textbook.flip_horizontal_one_pixel_per_thread
            if horizontal
            else textbook.flip_vertical_one_pixel_per_thread
        )
        inner = textbook.pixel_launch(
            kernel, d_src.reshape(shape), output.device, mirror_rows=not horizontal
        )
        return _as_given(inner, output, to_host)
    kernel = flip_kernel(horizontal, channels, word_bytes, per_thread)
    dtype = np.complex128 if word_bytes == 16 else np.dtype(f"u{word_bytes}")
    src, dst = d_src.reshape(d_src.size).view(dtype), d_dst.reshape(d_dst.size).view(dtype)
    height = shape[0]
    words = src.size // height
    units = words // channels if horizontal else words  # what a thread moves per step
    threads = min(threads, 32 * launch.blocks_for(launch.blocks_for(units, per_thread), 32))
    rows = min(rows, height)
    runs = launch.blocks_for(units, threads * per_thread)  # runs of a row: grid y, in chunks
    bands = launch.blocks_for(height, rows)  # bands of rows: grid x
    steps = [
        launch.Step(
            kernel,
            (bands, min(launch.MAX_GRID_YZ, runs - run)),
            (threads, rows),
            (src, dst, height, words, run),
        )
        for run in range(0, runs, launch.MAX_GRID_YZ)
    ]
    return launch.Launch(
        tuple(steps),
        out=output.device,
        to_host=to_host,
        host_out=output.host,
        out_given=output.given,
    )


@launch.op
def flip_horizontal_fast(image, *, out=None):
    """Mirror left-right on 8-byte words of gray pixels (4-byte for RGB), several per thread."""
    return flip_words.prepare(image, horizontal=True, out=out)


@launch.op
def flip_vertical_fast(image, *, out=None):
    """Mirror top-bottom moving whole rows in 16-byte words, several per thread."""
    return flip_words.prepare(image, horizontal=False, out=out)


# ---- tuning ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _tuning_image(image: str):
    """The image the flips were tuned on: random 16384 x 16384 gray or 9472 x 9472 RGB."""
    shape = (16384, 16384) if image == "gray" else (9472, 9472, 3)
    return cuda.to_device(np.random.default_rng(2).integers(0, 256, size=shape, dtype=np.uint8))


def tuning_case(*, image, direction, word_bytes, per_thread, block):
    """One combination of TUNING's space: (the Launch to time, bytes it moves)."""
    d_image = _tuning_image(image)
    prepared = flip_words.prepare(
        d_image,
        horizontal=direction == "horizontal",
        out=cuda.device_array_like(d_image),
        word_bytes=word_bytes,
        per_thread=per_thread,
        block=block,
    )
    return prepared, 2 * d_image.nbytes


TUNING = {
    "family": "flips",
    # the best word size differs by direction and channels: read the table per image and direction
    "space": {
        "image": ["gray", "rgb"],
        "direction": ["vertical", "horizontal"],
        "word_bytes": [4, 8, 16],
        "per_thread": [1, 2, 4, 8],
        "block": [(128, 1), (256, 1), (512, 1), (128, 2), (64, 4)],
    },
    "chosen": {
        "word_bytes": {
            "vertical": VERTICAL_WORD_BYTES,
            "horizontal gray": HORIZONTAL_WORD_BYTES[1],
            "horizontal rgb": HORIZONTAL_WORD_BYTES[3],
        },
        "per_thread": FLIP_PER_THREAD,
        "block": FLIP_BLOCK,
    },
    "case": tuning_case,
}


def _flip_signature(word_bytes: int) -> str:
    words = {4: "uint32", 8: "uint64", 16: "complex128"}[word_bytes] + "[::1]"
    return f"void({words}, {words}, int64, int64, int64)"


# every flip instance the wrappers launch: the tuned words per thread, each word size a row allows
SIGNATURES = {
    negative_words: ["void(uint32[::1], uint32[::1], uint8[::1], uint8[::1])"],
    **{
        flip_kernel(False, 1, b, FLIP_PER_THREAD): [_flip_signature(b)]
        for b in (4, 8, 16)
        if b <= VERTICAL_WORD_BYTES
    },
    **{
        flip_kernel(True, c, b, FLIP_PER_THREAD): [_flip_signature(b)]
        for c, widest in HORIZONTAL_WORD_BYTES.items()
        for b in (4, 8)
        if b <= widest
    },
}

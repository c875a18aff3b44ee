"""Lesson 02's flips where every row is whole aligned words: the lessons' images (the bulk path).

An image whose rows split into whole words, aligned in memory, needs no funnel shifts and no
edge bytes: each thread moves FLIP_PER_THREAD words, all loaded before the first store, the
vertical flip in 16-byte words (one ld.global.v2 each, device.vector), the horizontal flip in
8-byte words of gray pixels (4-byte for RGB) whose pixels it reverses. On an H200 these ran at
0.97-0.98x the device copy on 16384 x 16384 gray and 0.93-0.95x on 9216 x 9216 RGB, where the
general kernels of `fast` (any row, any alignment) ran at 0.65-0.7x. `fast.flip_words` takes
this path whenever the rows allow it, unless they are short (`fast.flip_short_rows`).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import complex128, cuda, uint32, uint64

from .. import launch
from ..device.vector import load_vector, store_vector
from ..hardware import WARP_SIZE
from ..specialise import specialise
from . import checks

VERTICAL_WORD_BYTES = 16  # the widest word a row allows, up to these (tuned on the H200)
HORIZONTAL_WORD_BYTES = {1: 8, 3: 4}
FLIP_PER_THREAD = 4
FLIP_BLOCK = (256, 1)


# The constants the kernels below read; `flip_kernel` compiles them with other values
# (`specialise`). As written: 8-byte words of gray pixels.
WORD = uint64  # the word a thread moves: uint32, uint64 or (16 bytes, vertical) complex128
BYTES_PER_WORD = 8  # its size
GROUP_WORDS = 1  # a horizontal flip's group: BYTES_PER_WORD pixels in GROUP_WORDS words
PER_THREAD = FLIP_PER_THREAD  # words (groups) a thread moves
HELD_WORDS = PER_THREAD * GROUP_WORDS  # words a thread holds: a local array's size is a constant
WORD_TYPES = {4: uint32, 8: uint64, 16: complex128}  # any type of that size will do


@cuda.jit
def flip_vertical_whole_rows(src, dst, height, words, first_run):
    """Row y of dst is row height-1-y of src, moved as words: several loads, then the stores."""
    y = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y  # rows on grid x: 2**31 - 1
    first = (first_run + cuda.blockIdx.y) * cuda.blockDim.x * PER_THREAD + cuda.threadIdx.x
    held = cuda.local.array(PER_THREAD, WORD)  # registers: the loops over k unroll
    if y < height:
        for k in range(PER_THREAD):  # all loads first: PER_THREAD loads in flight
            i = first + k * cuda.blockDim.x  # thread t, word t of a warp's run: coalesced
            if i < words:
                held[k] = load_vector(src, (height - 1 - y) * words + i, 1)[0]
        for k in range(PER_THREAD):
            i = first + k * cuda.blockDim.x
            if i < words:
                store_vector(dst, y * words + i, (held[k],))


@cuda.jit(device=True, inline="always")
def reversed_word(held, first, w):
    """Word w of the group held[first:first + GROUP_WORDS], its pixels in reverse order."""
    out = WORD(0)
    for b in range(BYTES_PER_WORD):  # gray: a byte swap (the compiler: 2 prmt)
        j = BYTES_PER_WORD * w + b  # output byte j: pixel j // GROUP_WORDS
        s = (BYTES_PER_WORD - 1 - j // GROUP_WORDS) * GROUP_WORDS + j % GROUP_WORDS  # its source
        byte = held[first + s // BYTES_PER_WORD] >> WORD(8 * (s % BYTES_PER_WORD))
        out |= (byte & WORD(0xFF)) << WORD(8 * b)
    return out


@cuda.jit
def flip_horizontal_whole_rows(src, dst, height, words, first_run):
    """Mirror groups of pixels (GROUP_WORDS words each), reversing the pixels inside."""
    groups = words // GROUP_WORDS
    y = cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y
    first = (first_run + cuda.blockIdx.y) * cuda.blockDim.x * PER_THREAD + cuda.threadIdx.x
    held = cuda.local.array(HELD_WORDS, WORD)  # a constant size: registers
    if y < height:
        row = y * words
        for k in range(PER_THREAD):  # load mirrored groups: a warp reads a run backwards
            g = first + k * cuda.blockDim.x
            if g < groups:
                for w in range(GROUP_WORDS):
                    held[k * GROUP_WORDS + w] = src[row + (groups - 1 - g) * GROUP_WORDS + w]
        for k in range(PER_THREAD):  # reverse the pixels of each group, store
            g = first + k * cuda.blockDim.x
            if g < groups:
                for w in range(GROUP_WORDS):
                    dst[row + g * GROUP_WORDS + w] = reversed_word(held, k * GROUP_WORDS, w)


@functools.cache
def flip_kernel(horizontal: bool, channels: int, word_bytes: int, per_thread: int):
    """The whole-row flip for these constants, compiled once under its own name (`specialise`)."""
    constants = dict(WORD=WORD_TYPES[word_bytes], BYTES_PER_WORD=word_bytes, PER_THREAD=per_thread)
    if not horizontal:
        name = f"flip_vertical_whole_rows_{word_bytes}B_x{per_thread}"
        return specialise(flip_vertical_whole_rows, name, **constants)
    if word_bytes not in (4, 8):
        raise ValueError(f"a horizontal flip's words are 4 or 8 bytes, got {word_bytes}")
    kind = "gray" if channels == 1 else "rgb"
    name = f"flip_horizontal_whole_rows_{kind}_{word_bytes}B_x{per_thread}"
    return specialise(
        flip_horizontal_whole_rows,
        name,
        device_functions=[reversed_word],
        inline_device_functions=True,
        GROUP_WORDS=channels,
        HELD_WORDS=per_thread * channels,
        **constants,
    )


def word_bytes_of(d_image, shape, horizontal: bool, widest: int) -> int:
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


def launch_whole_rows(d_src, d_dst, shape, horizontal: bool, output, to_host):
    """The whole-row flip of d_src into d_dst, or None when its rows are not whole aligned words."""
    channels = d_src.shape[2] if horizontal else 1  # a vertical flip moves rows whole
    widest = HORIZONTAL_WORD_BYTES[channels] if horizontal else VERTICAL_WORD_BYTES
    word_bytes = min(
        word_bytes_of(d_src, shape, horizontal, widest),
        word_bytes_of(d_dst, shape, horizontal, widest),
    )
    if word_bytes == 0 or shape[1] == 1:  # no whole words; N x 1: the general kernels' case
        return None
    kernel = flip_kernel(horizontal, channels, word_bytes, FLIP_PER_THREAD)
    dtype = np.complex128 if word_bytes == 16 else np.dtype(f"u{word_bytes}")
    src, dst = d_src.reshape(d_src.size).view(dtype), d_dst.reshape(d_dst.size).view(dtype)
    height = shape[0]
    words = src.size // height
    units = words // channels if horizontal else words  # what a thread moves per step
    threads, rows = FLIP_BLOCK
    warps = launch.blocks_for(launch.blocks_for(units, FLIP_PER_THREAD), WARP_SIZE)
    threads = min(threads, WARP_SIZE * warps)  # whole warps, no more than the row needs
    rows = min(rows, height)
    runs = launch.blocks_for(units, threads * FLIP_PER_THREAD)  # runs of a row: grid y
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
    return launch.Launch(tuple(steps), output.device, to_host, output.host, out_given=output.given)


def _signature(word_bytes: int) -> str:
    words = {4: "uint32", 8: "uint64", 16: "complex128"}[word_bytes] + "[::1]"
    return f"void({words}, {words}, int64, int64, int64)"


# every instance launch_whole_rows launches: each word size a row allows
SIGNATURES = {
    flip_vertical_whole_rows: [_signature(BYTES_PER_WORD)],  # as written: the module's constants
    flip_horizontal_whole_rows: [_signature(BYTES_PER_WORD)],
    **{flip_kernel(False, 1, b, FLIP_PER_THREAD): [_signature(b)] for b in (4, 8, 16)},
    **{
        flip_kernel(True, c, b, FLIP_PER_THREAD): [_signature(b)]
        for c, widest in HORIZONTAL_WORD_BYTES.items()
        for b in (4, 8)
        if b <= widest
    },
}

"""Lesson 02's fast kernels: the negative and flips at the copy ceiling ("Reaching the ceiling").

A warp of one-pixel threads asks for 32 bytes per load instruction, and each thread has one
small load in flight: far from what the memory system can deliver. The tricks, one per slide:

1. words: view the image as 4- or 8-byte words; one instruction moves a whole word;
2. several words per thread, all loaded before the first store: more loads in flight;
3. thread t of a block takes words t, t + T, t + 2T, ... (T threads): each load instruction of
   a warp reads one contiguous run of memory (coalesced);
4. negative: 255 - b is NOT b for a byte, so one XOR inverts four pixels;
5. vertical flip: rows move whole, as words;
6. horizontal flip: read the mirrored group of pixels, reverse the pixels inside the group;
7. rows of any length (`row_layout`): an output row is a few head bytes, aligned words, a few
   tail bytes; the row's first threads copy those edge bytes, one each, while their words are in
   flight. The bytes an aligned output word needs may start anywhere in the source
   (`read_words`): two aligned loads and a funnel shift;
8. one pixel per row: an N x 1 image's vertical flip mirrors the pixels of ONE row (1 x N), and
   its horizontal flip is a copy (the vertical flip of one row);
9. short rows (`flip_short_rows`): threads over the output's words, not rows; bytes gathered.

The shifts and edges cost instructions and registers: these general kernels run below the copy
(the bench's awkward shapes: `python -m gpgpu_tools.bench --record`, recorded in
gpgpu_lessons/recorded/bench/<gpu>.json). Where every row is whole aligned words (the lessons'
images), `flip_words` takes the bulk path of `whole_rows` instead: no shifts, no edges, 16-byte
words for the vertical flip (experiment 02_shared_memory/image_basics of
gpgpu_lessons/recorded/<gpu>.json; docs/results.md shows both records).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from numba import cuda, int64, uint32, uint64

from .. import launch
from ..hardware import WARP_SIZE
from ..specialise import specialise
from . import checks, textbook, whole_rows
from .whole_rows import reversed_word

# The negative: 4-byte words, WORDS_PER_THREAD of them per thread, all loaded before the first
# store (16 bytes in flight per thread, as in the flips), in blocks of the flips' 256 threads.
WORDS_PER_THREAD = 4
WORD_THREADS = 256
ALL_ONES = np.uint32(0xFFFFFFFF)

# The general flips' launch: words of VERTICAL_WORD_BYTES or HORIZONTAL_WORD_BYTES[channels],
# FLIP_PER_THREAD[horizontal] words per thread, blocks of FLIP_BLOCK (threads along a row, rows;
# rows shorter than the block's run share it). Chosen by `python -m gpgpu_tools.tune flips`
# (TUNING below), recorded in gpgpu_lessons/recorded/tuning/flips-<gpu>.json. A word may be
# shifted into place, so it is at most 8 bytes, the widest integer. With 32-bit indices, 2 words
# a thread have the best worst case and mean of the vertical flip over the odd and narrow shapes,
# 4 those of the horizontal flip (`python -m gpgpu_tools.narrow_flips` compares 2, 4 and 8 beside
# the device copy; gpgpu_lessons/recorded/narrow_flips/<gpu>.json).
VERTICAL_WORD_BYTES = 8
HORIZONTAL_WORD_BYTES = {1: 8, 3: 8}
FLIP_PER_THREAD = {False: 2, True: 4}  # by `horizontal`: the vertical flip's, the horizontal's
FLIP_BLOCK = (128, 1)
WORD_BYTES = (4, 8)  # the word sizes flip_words takes
WORD_DTYPES = {4: np.uint32, 8: np.uint64}  # the kernels see aligned words as these


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


# ---- the flips: words from any byte, several per thread --------------------------------------

# The constants the device functions and kernels below read; `flip_kernel` compiles them with
# other values (`specialise`). As written: 8-byte words of gray pixels, the tuned flips, 32-bit
# indices.
WORD = uint64  # the word a thread moves: uint32 or uint64
BYTES_PER_WORD = 8  # its size
GROUP_WORDS = 1  # words a thread moves per step: a horizontal flip's channels, 1 for vertical
PER_THREAD = FLIP_PER_THREAD[False]  # groups a thread moves (the vertical flip's)
HELD_WORDS = PER_THREAD * GROUP_WORDS  # words a thread holds: a local array's size is a constant
WORD_TYPES = {4: uint32, 8: uint64}
# INDEX: the index arithmetic, uint32 for images below INDEX_32_BYTES, int64 above. Unsigned,
# a division or % by a word size is a shift or an and, and Numba adds no check for negative
# indices (the wraparound: a shift, an and, an add per access). Numba widens uint32 arithmetic
# to 64 bits, and an int makes it signed: each index is cast back to INDEX where it is used.
INDEX = uint32
INDEX_32_BYTES = 2**31  # images below this many bytes index with 32-bit arithmetic
INDEX_TYPES = {32: uint32, 64: int64}


@cuda.jit(device=True, inline="always")
def funnel(lo, hi, shift):
    """Bytes shift.. of lo, then hi's first bytes (little-endian); shift 0 gives lo."""
    bits = WORD(8 * shift)  # hi << (8 * BYTES_PER_WORD - bits) is undefined for bits = 0: 2 shifts
    return WORD((lo >> bits) | ((hi << (WORD(8 * BYTES_PER_WORD - 1) - bits)) << WORD(1)))


@cuda.jit(device=True, inline="always")
def divide(a, b):
    """(a // b, a % b) in INDEX arithmetic, for a >= 0 (unsigned, by a power of two: >>, &)."""
    quotient, remainder = divmod(INDEX(a), INDEX(b))
    return INDEX(quotient), INDEX(remainder)


@cuda.jit(device=True, inline="always")
def source_word(start, lead):
    """(i, shift): bytes from src[start] on begin `shift` bytes into aligned word i - 1 of src,
    whose first aligned word starts `lead` bytes in (i >= 0: INDEX may be unsigned)."""
    return divide(start + BYTES_PER_WORD - lead, BYTES_PER_WORD)


@cuda.jit(device=True, inline="always")
def read_words(src, words, start, i, shift, held, at):
    """held[at:at + GROUP_WORDS] = the words of bytes src[start:], `shift` bytes into aligned
    word i - 1 of words (source_word)."""
    end = INDEX(i + GROUP_WORDS if shift else i + GROUP_WORDS - 1)  # they end before word end
    if i == 0 or end > INDEX(words.size):  # a partial word at an end of src: byte by byte
        for w in range(GROUP_WORDS):
            held[at + w] = WORD(0)
            for b in range(BYTES_PER_WORD):
                byte = src[INDEX(start + w * BYTES_PER_WORD + b)]
                held[at + w] |= WORD(byte) << WORD(8 * b)
    else:
        for w in range(GROUP_WORDS):  # two aligned loads a word, one when shift is 0
            lo = words[INDEX(i - 1 + w)]
            held[at + w] = funnel(lo, words[INDEX(i + w)] if shift else lo, shift)


@cuda.jit(device=True, inline="always")
def row_layout(row, row_bytes, dst_lead):
    """(head, groups, out): bytes before the row's first aligned group, whole groups, its word."""
    r = source_word(row, dst_lead)[1]  # the row starts r bytes into an aligned word of dst
    head = divide(BYTES_PER_WORD - r, BYTES_PER_WORD)[1]  # bytes to dst's next aligned word
    while head % GROUP_WORDS:  # RGB: on to an aligned word that starts a pixel (twice at most)
        head += BYTES_PER_WORD
    out = INDEX(source_word(INDEX(row + head), dst_lead)[0] - 1)  # the aligned word there
    head = INDEX(min(head, row_bytes))  # (a row of no whole group: no word)
    groups = divide(row_bytes - head, GROUP_WORDS * BYTES_PER_WORD)[0]
    return head, groups, out


@cuda.jit(device=True, inline="always")
def mirrored_byte(row_bytes, b):
    """Where byte b of an output row comes from in its row: the mirrored pixel, same channel."""
    pixel, channel = divide(b, GROUP_WORDS)
    return row_bytes - (pixel + 1) * GROUP_WORDS + channel


@cuda.jit(device=True, inline="always")
def move_edge(src, dst, row, source, row_bytes, head, groups, first, mirrored):
    """The bytes before and after the row's groups, one per thread of the row's first run;
    mirrored (a horizontal flip): each from the mirrored pixel."""
    group = GROUP_WORDS * BYTES_PER_WORD
    if first < cuda.blockDim.x:  # the first run: `first` is the thread's x
        for j in range(first, row_bytes - groups * group, cuda.blockDim.x):
            b = j if j < head else j + groups * group  # byte b of the output row
            c = mirrored_byte(row_bytes, b) if mirrored else b  # from byte c of its source row
            dst[INDEX(row + b)] = src[INDEX(source + c)]


@cuda.jit
def flip_vertical_words(
    src, dst, src_words, dst_words, src_lead, dst_lead, height, row_bytes, first_run
):
    """Row y of dst is row height-1-y of src: aligned words (loads, then stores), edge bytes."""
    y = INDEX(cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y)  # rows on grid x: 2**31 - 1
    first = INDEX((first_run + cuda.blockIdx.y) * cuda.blockDim.x * PER_THREAD + cuda.threadIdx.x)
    held = cuda.local.array(PER_THREAD, WORD)  # registers: the k loops unroll
    if y < height:
        row, mirror = INDEX(y * row_bytes), INDEX((height - 1 - y) * row_bytes)
        head, words, out = row_layout(row, row_bytes, dst_lead)
        source = INDEX(mirror + head)  # the bytes of the row's first aligned output word
        i, shift = source_word(source, src_lead)  # once a row
        for k in range(PER_THREAD):  # all loads first: thread t, word t of a warp's run
            g = INDEX(first + k * cuda.blockDim.x)
            if g < words:
                start = INDEX(source + g * BYTES_PER_WORD)
                read_words(src, src_words, start, INDEX(i + g), shift, held, k)
        move_edge(src, dst, row, mirror, row_bytes, head, words, first, False)  # loads in flight
        for k in range(PER_THREAD):
            g = INDEX(first + k * cuda.blockDim.x)
            if g < words:
                dst_words[INDEX(out + g)] = held[k]


@cuda.jit(device=True, inline="always")
def write_reversed(words, j, held, first):
    """words[j:j + GROUP_WORDS] = the group held[first:first + GROUP_WORDS], pixels reversed."""
    for w in range(GROUP_WORDS):
        words[INDEX(j + w)] = reversed_word(held, first, w)


@cuda.jit
def flip_horizontal_words(
    src, dst, src_words, dst_words, src_lead, dst_lead, height, row_bytes, first_run
):
    """Mirror groups of BYTES_PER_WORD pixels (reversing the pixels inside), then the edge."""
    y = INDEX(cuda.blockIdx.x * cuda.blockDim.y + cuda.threadIdx.y)
    first = INDEX((first_run + cuda.blockIdx.y) * cuda.blockDim.x * PER_THREAD + cuda.threadIdx.x)
    held = cuda.local.array(HELD_WORDS, WORD)  # registers: a constant size
    if y < height:
        row = INDEX(y * row_bytes)
        head, groups, out = row_layout(row, row_bytes, dst_lead)
        end = INDEX(row + row_bytes - head)  # group g mirrors the group ending g groups before end
        i, shift = source_word(end, src_lead)  # a word past the row's last group, once a row
        for k in range(PER_THREAD):  # load mirrored groups: a warp reads a run backwards
            g = INDEX(first + k * cuda.blockDim.x)
            if g < groups:
                back = INDEX((g + 1) * GROUP_WORDS)  # words back from end
                start = INDEX(end - back * BYTES_PER_WORD)
                read_words(src, src_words, start, INDEX(i - back), shift, held, k * GROUP_WORDS)
        move_edge(src, dst, row, row, row_bytes, head, groups, first, True)  # loads in flight
        for k in range(PER_THREAD):  # reverse the pixels of each group, store
            g = INDEX(first + k * cuda.blockDim.x)
            if g < groups:
                write_reversed(dst_words, out + g * GROUP_WORDS, held, k * GROUP_WORDS)


DEVICE_FUNCTIONS = (
    divide,
    source_word,
    funnel,
    read_words,
    row_layout,
    mirrored_byte,
    move_edge,
    reversed_word,
    write_reversed,
)


@functools.cache
def flip_kernel(
    horizontal: bool, channels: int, word_bytes: int, per_thread: int, index_bits: int = 32
):
    """The flip kernel for these constants, compiled once, under its own name in a profiler."""
    if word_bytes not in WORD_BYTES:
        raise ValueError(f"a flip's words are 4 or 8 bytes, got {word_bytes}")
    if horizontal:
        kernel, kind = (
            flip_horizontal_words,
            f"horizontal_words_{'gray' if channels == 1 else 'rgb'}",
        )
    else:
        kernel, kind, channels = flip_vertical_words, "vertical_words", 1
    return specialise(
        kernel,
        f"flip_{kind}_{word_bytes}B_x{per_thread}_i{index_bits}",
        device_functions=DEVICE_FUNCTIONS,
        inline_device_functions=True,
        WORD=WORD_TYPES[word_bytes],
        BYTES_PER_WORD=word_bytes,
        GROUP_WORDS=channels,
        PER_THREAD=per_thread,
        HELD_WORDS=per_thread * channels,
        INDEX=INDEX_TYPES[index_bits],
    )


# ---- short rows: threads over the output's words, not its rows ---------------------------------

# The row kernels give each row whole warps, and each row its own edge bytes and index math: the
# bulk path's warp moves up to 32 x 4 words of 16 bytes of a row (2048 bytes), the general path's
# block 128 x 2 words of 8 bytes (2048; RGB 6144), so a row of 3 bytes keeps 3 lanes of 32 busy.
# Below SHORT_ROW_BYTES, `flip_short_rows` spreads the threads over the output's aligned words
# instead: its work per byte does not depend on the rows. `python -m gpgpu_tools.narrow_flips`
# times both sides of the threshold and SHORT_PER_THREAD's choices beside the device copy
# (recorded in gpgpu_lessons/recorded/narrow_flips/<gpu>.json): rows of 40 bytes go faster here,
# rows of 777 on the general kernels; where between they cross is not measured. Images under
# SHORT_MIN_BYTES stay on the row kernels: a launch's time whichever kernel runs (and the
# kernels the lesson shows, on its small images).
SHORT_ROW_BYTES = 512
SHORT_MIN_BYTES = 2**20
SHORT_WORD_BYTES = 8  # the output word a thread writes
SHORT_PER_THREAD = 4  # output words a thread writes, all loaded first (narrow_flips)
SHORT_THREADS = 256

# The constants of flip_short_rows (with WORD, BYTES_PER_WORD, GROUP_WORDS: the pixel's channels,
# PER_THREAD, INDEX: one 32-bit division a word); `short_rows_kernel` compiles them with other
# values. As written: vertical, 32-bit.
MIRRORED = False  # a horizontal flip: each output byte from the mirrored pixel of its row


@cuda.jit(device=True, inline="always")
def source_place(j, height, row_bytes):
    """(where it comes from, its byte in the row, its channel) of output byte j."""
    y, c = divmod(INDEX(j), INDEX(row_bytes))  # uint32: one 32-bit division
    y, c = INDEX(y), INDEX(c)
    if MIRRORED:  # horizontal: the same row, the mirrored pixel
        source = y * row_bytes + mirrored_byte(row_bytes, c)
    else:  # vertical: the same byte of row height-1-y
        source = (height - 1 - y) * row_bytes + c
    return INDEX(source), c, INDEX(c % GROUP_WORDS)


@cuda.jit(device=True, inline="always")
def next_source(s, c, channel, row_bytes):
    """source_place of the next output byte, from this one's: along the row, then the next row."""
    s, c, channel = s + 1, c + 1, channel + 1
    if c == row_bytes:  # the row done: the next source row (horizontal) or the one above
        s, c = (s + 2 * row_bytes if MIRRORED else s - 2 * row_bytes), 0
    # the pixel done (after the row's step: s never goes below 0): the mirrored pixel's left
    if MIRRORED and channel == GROUP_WORDS:
        s, channel = s - 2 * GROUP_WORDS, 0
    return INDEX(s), INDEX(c), INDEX(channel)


@cuda.jit(device=True, inline="always")
def gathered_word(src, start, height, row_bytes):
    """The output word of bytes start.., each byte read from its place in the source."""
    s, c, channel = source_place(start, height, row_bytes)
    row_bytes = INDEX(row_bytes)  # the steps in INDEX arithmetic
    word = WORD(src[s])
    for b in range(1, BYTES_PER_WORD):
        s, c, channel = next_source(s, c, channel, row_bytes)
        word |= WORD(src[s]) << WORD(8 * b)
    return word


@cuda.jit
def flip_short_rows(src, dst, dst_words, dst_lead, height, row_bytes):
    """Thread t writes aligned output words t, t + T, ...: each byte gathered, whatever the rows."""
    first = cuda.blockIdx.x * cuda.blockDim.x * PER_THREAD + cuda.threadIdx.x
    held = cuda.local.array(PER_THREAD, WORD)  # registers: the k loops unroll
    for k in range(PER_THREAD):  # all loads first: a warp's bytes lie in a few cache lines
        i = first + k * cuda.blockDim.x
        if i < dst_words.size:
            held[k] = gathered_word(src, dst_lead + i * BYTES_PER_WORD, height, row_bytes)
    j = cuda.grid(1)  # the bytes before dst's first aligned word and after its last: one a thread
    if j < dst.size - dst_words.size * BYTES_PER_WORD:
        b = j if j < dst_lead else j + dst_words.size * BYTES_PER_WORD
        dst[INDEX(b)] = src[source_place(b, height, row_bytes)[0]]
    for k in range(PER_THREAD):
        i = first + k * cuda.blockDim.x
        if i < dst_words.size:
            dst_words[INDEX(i)] = held[k]


@functools.cache
def short_rows_kernel(horizontal: bool, channels: int, index_bits: int, per_thread: int):
    """flip_short_rows for this flip, pixel, index width and words per thread, compiled once."""
    kind = f"horizontal_{'gray' if channels == 1 else 'rgb'}" if horizontal else "vertical"
    return specialise(
        flip_short_rows,
        f"flip_short_rows_{kind}_{SHORT_WORD_BYTES}B_x{per_thread}_i{index_bits}",
        device_functions=(divide, mirrored_byte, source_place, next_source, gathered_word),
        inline_device_functions=True,
        WORD=WORD_TYPES[SHORT_WORD_BYTES],
        BYTES_PER_WORD=SHORT_WORD_BYTES,
        GROUP_WORDS=channels if horizontal else 1,
        PER_THREAD=per_thread,
        INDEX=INDEX_TYPES[index_bits],
        MIRRORED=horizontal,
    )


def index_bits(size: int) -> int:
    """The index arithmetic of the flips of an image of `size` bytes: 32 or 64 bits."""
    return 32 if size < INDEX_32_BYTES else 64


def takes_short_rows(shape, size: int) -> bool:
    """Whether the tuned flip of an image of this (height, width, channels) takes flip_short_rows;
    N x 1 does not: its flips are those of ONE row (see flip_words)."""
    height, width, _ = shape
    return width > 1 and size >= SHORT_MIN_BYTES and size // height < SHORT_ROW_BYTES


def short_rows_steps(d_src, d_dst, horizontal: bool, per_thread: int = SHORT_PER_THREAD) -> tuple:
    """The launch of flip_short_rows flipping the (height, width, channels) d_src into d_dst."""
    height, _, channels = d_src.shape
    src, dst = d_src.reshape(d_src.size), d_dst.reshape(d_dst.size)
    dst_lead, dst_words = aligned_words(dst, SHORT_WORD_BYTES)
    channels = channels if horizontal else 1  # a vertical flip moves bytes: one kernel for all
    kernel = short_rows_kernel(horizontal, channels, index_bits(src.size), per_thread)
    per_thread_words = launch.blocks_for(dst_words.size, per_thread)
    threads = min(SHORT_THREADS, WARP_SIZE * max(1, launch.blocks_for(per_thread_words, WARP_SIZE)))
    blocks = launch.grid_1d(dst_words.size, threads * per_thread)
    args = (src, dst, dst_words, dst_lead, height, src.size // height)
    return (launch.Step(kernel, blocks, threads, args),)


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
    threads = min(WORD_THREADS, WARP_SIZE * launch.blocks_for(per_words, WARP_SIZE))
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


def check_word_bytes(word_bytes, horizontal: bool) -> None:
    """Refuse a word size the flip does not take (None: the tuned one)."""
    if word_bytes is not None and word_bytes not in WORD_BYTES:
        raise ValueError(
            "word_bytes must be 4 or 8 for a "
            f"{'horizontal' if horizontal else 'vertical'} flip, got {word_bytes!r}"
        )


@launch.op
def flip_words(image, *, horizontal: bool, out=None, word_bytes=None, per_thread=None, block=None):
    """A flip of any image on aligned words, several per thread, and each row's few edge bytes.

    word_bytes (the word size), per_thread (words per thread) and block (threads along a row,
    rows) default to the tuned VERTICAL_/HORIZONTAL_WORD_BYTES, FLIP_PER_THREAD, FLIP_BLOCK.
    An N x 1 image takes the other flip of one row, and that flip's words per thread.
    """
    d_src, to_host, shape = checks.image_input(image)
    output, d_dst = checks.image_output(out, d_src, shape)
    if word_bytes is None and per_thread is None and block is None:  # the tuned launch
        if takes_short_rows(d_src.shape, d_src.size):  # rows of a few bytes: threads over words
            steps = short_rows_steps(d_src, d_dst, horizontal)
            return launch.Launch(steps, output.device, to_host, output.host, out_given=output.given)
        bulk = whole_rows.launch_whole_rows(d_src, d_dst, shape, horizontal, output, to_host)
        if bulk is not None:  # rows of whole aligned words: no shifts, no edge bytes
            return bulk
    height, width, channels = d_src.shape
    check_word_bytes(word_bytes, horizontal)
    dims = launch.block_shape(FLIP_BLOCK if block is None else block)
    if len(dims) == 3:
        raise ValueError(f"block is (threads along a row, rows) for a flip, got {block!r}")
    if width == 1:  # one pixel per row: the other flip, of ONE row holding every pixel
        horizontal, height = not horizontal, 1  # vertical: mirror the pixels; horizontal: copy
    per_thread = (
        FLIP_PER_THREAD[horizontal]
        if per_thread is None
        else launch.positive_int(per_thread, "per_thread")
    )
    if word_bytes is None:
        word_bytes = HORIZONTAL_WORD_BYTES[channels] if horizontal else VERTICAL_WORD_BYTES
    channels = channels if horizontal else 1  # a vertical flip moves bytes: rows stay whole
    kernel = flip_kernel(horizontal, channels, word_bytes, per_thread, index_bits(d_src.size))
    src, dst = d_src.reshape(d_src.size), d_dst.reshape(d_dst.size)
    group = channels * word_bytes  # bytes a thread moves per step: one word, or RGB's three
    steps = flip_steps(kernel, src, dst, height, word_bytes, group, per_thread, dims)
    return launch.Launch(
        steps, out=output.device, to_host=to_host, host_out=output.host, out_given=output.given
    )


def aligned_words(d_bytes, word_bytes: int):
    """(lead, words): d_bytes' bytes before its first aligned word, and its aligned words."""
    lead = min(-checks.address(d_bytes) % word_bytes, d_bytes.size)
    whole = (d_bytes.size - lead) // word_bytes * word_bytes
    return lead, d_bytes[lead : lead + whole].view(WORD_DTYPES[word_bytes])


def flip_steps(kernel, src, dst, height, word_bytes, group, per_thread, block) -> tuple:
    """The launches of a flip kernel over `height` rows of the 1-D byte arrays src and dst.

    A thread moves per_thread groups of `group` bytes. Grid x: bands of rows; grid y: runs of
    groups along a row, at most 65535 per launch. A row that needs fewer threads than `block`
    has along a row shares the block with the next rows.
    """
    src_lead, src_words = aligned_words(src, word_bytes)
    dst_lead, dst_words = aligned_words(dst, word_bytes)
    row_bytes = src.size // height
    groups = max(1, row_bytes // group)  # a row's groups at most (one thread for a short edge)
    along, rows = block if len(block) == 2 else (block[0], 1)
    warps = launch.blocks_for(launch.blocks_for(groups, per_thread), WARP_SIZE)
    threads = min(along, WARP_SIZE * warps)  # whole warps, no more than the row needs
    rows = min(height, max(rows, along * rows // threads))  # the block's threads, if it can
    runs = launch.blocks_for(groups, threads * per_thread)
    args = (src, dst, src_words, dst_words, src_lead, dst_lead, height, row_bytes)
    return tuple(
        launch.Step(
            kernel,
            (launch.blocks_for(height, rows), min(launch.MAX_GRID_YZ, runs - run)),
            (threads, rows),
            (*args, run),
        )
        for run in range(0, runs, launch.MAX_GRID_YZ)
    )


@launch.op
def flip_horizontal_fast(image, *, out=None):
    """Mirror left-right on 8-byte words of gray pixels (4-byte for RGB), several per thread."""
    return flip_words.prepare(image, horizontal=True, out=out)


@launch.op
def flip_vertical_fast(image, *, out=None):
    """Mirror top-bottom moving rows in 8-byte words, several per thread."""
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
    # the best word size differs by direction and channels: read the table per image and direction;
    # both word sizes the lesson compares, one word per thread (no words in flight) up to twice
    # the chosen, in the chosen block (its neighbours are not searched)
    "space": {
        "image": ["gray", "rgb"],
        "direction": ["vertical", "horizontal"],
        "word_bytes": list(WORD_BYTES),
        "per_thread": [1, 2, 4],
        "block": [FLIP_BLOCK],
    },
    "chosen": {
        "word_bytes": {
            "vertical": VERTICAL_WORD_BYTES,
            "horizontal gray": HORIZONTAL_WORD_BYTES[1],
            "horizontal rgb": HORIZONTAL_WORD_BYTES[3],
        },
        "per_thread": {"vertical": FLIP_PER_THREAD[False], "horizontal": FLIP_PER_THREAD[True]},
        "block": FLIP_BLOCK,
    },
    "case": tuning_case,
}


def _flip_signature(word_bytes: int) -> str:
    words = f"{WORD_DTYPES[word_bytes].__name__}[::1]"
    return f"void(uint8[::1], uint8[::1], {words}, {words}, int64, int64, int64, int64, int64)"


SHORT_SIGNATURE = "void(uint8[::1], uint8[::1], uint64[::1], int64, int64, int64)"

# every flip instance flip_words takes, at the tuned words per thread
SIGNATURES = {
    negative_words: ["void(uint32[::1], uint32[::1], uint8[::1], uint8[::1])"],
    flip_vertical_words: [_flip_signature(BYTES_PER_WORD)],  # as written: the module's constants
    flip_horizontal_words: [_flip_signature(BYTES_PER_WORD)],
    **{
        flip_kernel(horizontal, channels, b, FLIP_PER_THREAD[horizontal], bits): [
            _flip_signature(b)
        ]
        for horizontal, every_channels in ((False, (1,)), (True, (1, 3)))
        for channels in every_channels
        for b in WORD_BYTES
        for bits in INDEX_TYPES
    },
    flip_short_rows: [SHORT_SIGNATURE],  # as written: vertical, 32-bit indices
    **{
        short_rows_kernel(horizontal, channels, bits, SHORT_PER_THREAD): [SHORT_SIGNATURE]
        for horizontal, every_channels in ((False, (1,)), (True, (1, 3)))
        for channels in every_channels
        for bits in INDEX_TYPES
    },
}

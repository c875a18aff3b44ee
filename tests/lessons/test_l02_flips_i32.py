"""Lesson 02's flips with 32- and 64-bit index arithmetic, at every words-per-thread candidate.

The general kernels (`fast.flip_kernel`) and `flip_short_rows` index in uint32 below
INDEX_32_BYTES and in int64 above; gpgpu_tools.narrow_flips times 2, 4 and 8 words per thread of
the first and 1, 2 and 4 of the second. Each instance is checked here against NumPy on random
bytes (never zeros): gray and RGB, 1 x N, N x 1, 2 x N, N x 3, primes, odd widths, at views
that start on odd bytes, with a guard after the output that must stay untouched. The 64-bit
instances run on a fake threshold (INDEX_32_BYTES lowered to a few bytes). The simulator runs
one Python thread per CUDA thread: the images stay tiny.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from flip_images import FILL, kernel_names, placed, random_image

from gpgpu_lessons import launch, runtime
from gpgpu_lessons.l02_shared_memory import fast, whole_rows

SHAPES = [(1, 37), (37, 1), (2, 29), (23, 3), (7, 13), (3, 41), (11, 17, 3), (1, 19, 3), (13, 2, 3)]
OFFSETS = [(0, 0), (3, 5), (1, 8)]  # bytes into their allocations: source, output
FEW_SHAPES = [(37, 1), (23, 3), (11, 17, 3)]  # where the candidates the wrappers do not take run


def with_per_thread(chosen: int, candidates) -> list:
    """(shape, per_thread): every shape at the wrappers' choice, FEW_SHAPES at the others."""
    others = [p for p in candidates if p != chosen]
    return [(s, chosen) for s in SHAPES] + [(s, p) for p in others for s in FEW_SHAPES]


def three_d(shape) -> tuple[int, int, int]:
    """(height, width, channels) of a gray or RGB shape."""
    return (*shape[:2], shape[2] if len(shape) == 3 else 1)


def flipped(prepare, shape, horizontal, offsets, seed=0) -> set[str]:
    """Run prepare(d_src, d_out) on a random image; check it against NumPy; its kernels' names."""
    a = random_image(shape, seed=seed)
    expected = np.flip(a, axis=1 if horizontal else 0)
    _, d_src = placed(a, offsets[0])
    allocation, d_out = placed((expected.astype(np.int16) + 1).astype(np.uint8), offsets[1])
    prepared = prepare(d_src, d_out)
    prepared()
    np.testing.assert_array_equal(d_out.copy_to_host(), expected, err_msg=f"{shape} {offsets}")
    around = np.delete(allocation.copy_to_host(), range(offsets[1], offsets[1] + a.size))
    assert (around == FILL).all(), "a byte outside the output changed"
    np.testing.assert_array_equal(d_src.copy_to_host(), a)
    return kernel_names(prepared)


@pytest.fixture(params=[32, 64], ids=["i32", "i64"])
def index_bits(request, monkeypatch):
    """32: the real threshold; 64: a threshold of 4 bytes, so every image takes int64."""
    if request.param == 64:
        monkeypatch.setattr(fast, "INDEX_32_BYTES", 4)
    return request.param


# ---- the general kernels ---------------------------------------------------------------------


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize(  # x2: the vertical flip's, x4 the horizontal's; x1, x8: narrow_flips'
    "shape, per_thread", with_per_thread(fast.FLIP_PER_THREAD[False], [1, 2, 4, 8]), ids=str
)
def test_general_kernels_match_numpy(shape, horizontal, per_thread, index_bits):
    for seed, offsets in enumerate(OFFSETS):
        names = flipped(
            lambda d_src, d_out: fast.flip_words.prepare(
                d_src, horizontal=horizontal, out=d_out, per_thread=per_thread, block=(8, 2)
            ),
            shape,
            horizontal,
            offsets,
            seed,
        )
        assert names and all(name.endswith(f"_x{per_thread}_i{index_bits}") for name in names)
        assert all("_words_" in name for name in names)


@pytest.mark.parametrize("word_bytes", fast.WORD_BYTES)
@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
def test_both_word_sizes_and_tuned_blocks(word_bytes, horizontal, index_bits):
    """The tuned block (wider than these rows: rows share it) at each word size."""
    for shape in [(5, 67), (3, 23, 3), (13, 4)]:  # (13, 4): 4 rows a block, the last one short
        names = flipped(
            lambda d_src, d_out: fast.flip_words.prepare(
                d_src, horizontal=horizontal, out=d_out, word_bytes=word_bytes, per_thread=4
            ),
            shape,
            horizontal,
            (7, 2),
        )
        assert all(f"_{word_bytes}B_x4_i{index_bits}" in name for name in names)


def test_runs_beyond_the_grid_limit_with_32_bit_indices(monkeypatch):
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)  # several launches along a row
    for shape, horizontal in [((2, 301), False), ((1, 203, 3), True), ((3, 97), True)]:
        names = flipped(
            lambda d_src, d_out, h=horizontal: fast.flip_words.prepare(
                d_src, horizontal=h, out=d_out, word_bytes=4, per_thread=2, block=(8, 1)
            ),
            shape,
            horizontal,
            (5, 3),
        )
        assert all(name.endswith("_x2_i32") for name in names)


# ---- flip_short_rows ---------------------------------------------------------------------------


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize(
    "shape, per_thread", with_per_thread(fast.SHORT_PER_THREAD, [1, 2, 4]), ids=str
)
def test_short_rows_match_numpy(shape, horizontal, per_thread, index_bits):
    for seed, offsets in enumerate(OFFSETS):
        names = flipped(
            lambda d_src, d_out: launch.Launch(
                fast.short_rows_steps(
                    d_src.reshape(three_d(shape)),
                    d_out.reshape(three_d(shape)),
                    horizontal,
                    per_thread,
                ),
                d_out,
            ),
            shape,
            horizontal,
            offsets,
            seed,
        )
        assert len(names) == 1
        assert names.pop().endswith(f"_8B_x{per_thread}_i{index_bits}")


# ---- what the wrappers launch ------------------------------------------------------------------


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
def test_the_wrappers_take_the_index_width_of_the_image_size(monkeypatch, horizontal, index_bits):
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", 60)  # (23, 3) takes the short rows, (7, 5) not
    for shape, short in [((23, 3), True), ((7, 5), False), ((37, 1), False), ((3, 3, 3), False)]:
        names = flipped(
            lambda d_src, d_out: fast.flip_words.prepare(d_src, horizontal=horizontal, out=d_out),
            shape,
            horizontal,
            (1, 6),
        )
        kernel_horizontal = horizontal != (shape[1] == 1)  # N x 1: the other flip of one row
        per_thread = fast.SHORT_PER_THREAD if short else fast.FLIP_PER_THREAD[kernel_horizontal]
        assert all(name.endswith(f"_x{per_thread}_i{index_bits}") for name in names), names
        assert all(name.startswith("flip_short_rows") == short for name in names), names


def test_the_threshold_is_the_image_size():
    assert fast.index_bits(fast.INDEX_32_BYTES - 1) == 32
    assert fast.index_bits(fast.INDEX_32_BYTES) == 64
    assert fast.INDEX_32_BYTES <= 2**31  # every byte index fits uint32, with room to spare


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize("shape", [(23, 3), (7, 13), (37, 1), (3, 9, 3), (5, 2, 3)], ids=str)
def test_every_kernel_the_wrappers_launch_is_registered(monkeypatch, shape, horizontal):
    """tests/tools/test_ptx.py compiles what SIGNATURES lists: both widths, both paths."""
    registered = {**fast.SIGNATURES, **whole_rows.SIGNATURES}
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", 40)  # some of these shapes take the short rows
    image = random_image(shape)
    for limit in (fast.INDEX_32_BYTES, 4):
        monkeypatch.setattr(fast, "INDEX_32_BYTES", limit)
        prepared = fast.flip_words.prepare(image, horizontal=horizontal)
        assert all(step.kernel in registered for step in prepared.steps), kernel_names(prepared)


def test_every_registered_flip_has_its_own_name():
    names = [kernel.py_func.__name__ for kernel in fast.SIGNATURES]
    assert len(names) == len(set(names))
    for bits in fast.INDEX_TYPES:
        assert f"flip_vertical_words_8B_x{fast.FLIP_PER_THREAD[False]}_i{bits}" in names
        assert f"flip_horizontal_words_rgb_8B_x{fast.FLIP_PER_THREAD[True]}_i{bits}" in names


# ---- the PTX: no wraparound, no float, with 32-bit indices -------------------------------------

PTX_FACTS = textwrap.dedent(
    """
    import json
    from numba import cuda
    from gpgpu_tools.cuda_c.index_ptx import facts
    from gpgpu_lessons.l02_shared_memory import fast
    out = {}
    for kernel, signatures in fast.SIGNATURES.items():
        name = kernel.py_func.__name__
        if name.endswith("_i32"):
            ptx = cuda.compile_ptx(kernel.py_func, signatures[0], cc=(9, 0))[0]
            out[name] = {"wraparounds": facts(ptx)["wraparounds"], "f64": ptx.count(".f64")}
    print(json.dumps(out))
    """
)


@pytest.mark.ptx
def test_32_bit_instances_have_no_wraparound_and_no_float():
    """Numba's uint32 + uint32 is uint64, and uint64 + int64 is float64: a cast forgotten shows."""
    from gpgpu_tools import ptx

    if (why := ptx.missing_compiler()) is not None:
        pytest.skip(why)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update({runtime.COMPILE_ONLY_VARIABLE: "1", "GPGPU_LESSONS_QUIET": "1"})
    done = subprocess.run(
        [sys.executable, "-c", PTX_FACTS], capture_output=True, text=True, env=env, check=True
    )
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(facts) == 9  # vertical, gray and RGB horizontal, 4- and 8-byte words; short rows x3
    assert all(fact == {"wraparounds": 0, "f64": 0} for fact in facts.values()), facts

"""Lesson 02's fast flips on every shape: words in the bulk, a few bytes at each row's edge.

Hypothesis draws small gray and RGB images (sides 1 to 70: 1 x N, N x 1, primes, rows of no
whole word), both flips, every word size, small launches (several runs per row, several rows
per block, blocks narrower than a row's edge) and images that start 0 to 15 bytes into their
allocation, with outputs that do too: the result must equal np.flip, and no byte around the
output may change. The simulator runs one Python thread per CUDA thread, so images stay tiny.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from flip_images import FILL, kernel_names, placed
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpgpu_lessons import launch
from gpgpu_lessons.l02_shared_memory import fast, whole_rows

BUDGET = 300  # bytes per drawn image at most: the simulator is slow
MANY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Case:
    """One flip: the image, where it and its output start, and the launch's options."""

    shape: tuple[int, ...]
    horizontal: bool
    src_offset: int = 0
    dst_offset: int = 0
    word_bytes: int | None = None
    per_thread: int | None = None
    block: tuple[int, int] | None = None


@st.composite
def cases(draw):
    """A small gray or RGB image, one flip and its options, at any offsets."""
    channels = draw(st.sampled_from([1, 3]))
    long = draw(st.integers(1, 70))
    short = draw(st.integers(1, max(1, BUDGET // (long * channels))))
    height, width = (long, short) if draw(st.booleans()) else (short, long)
    horizontal = draw(st.booleans())
    return Case(
        (height, width) + ((3,) if channels == 3 else ()),
        horizontal,
        draw(st.integers(0, 15)),
        draw(st.integers(0, 15)),
        draw(st.sampled_from(fast.WORD_BYTES)),
        draw(st.integers(1, 3)),
        (draw(st.sampled_from([1, 2, 3, 8, 32])), draw(st.integers(1, 3))),
    )


def check(case: Case, seed: int = 0) -> launch.Launch:
    """Run the flip of a random image as `case` says; compare with NumPy and the guard bytes."""
    a = np.random.default_rng(seed).integers(0, 256, size=case.shape, dtype=np.uint8)
    expected = np.flip(a, axis=1 if case.horizontal else 0)
    _, d_src = placed(a, case.src_offset)
    allocation, d_out = placed((expected.astype(np.int16) + 1).astype(np.uint8), case.dst_offset)
    prepared = fast.flip_words.prepare(
        d_src,
        horizontal=case.horizontal,
        out=d_out,
        word_bytes=case.word_bytes,
        per_thread=case.per_thread,
        block=case.block,
    )
    prepared()
    np.testing.assert_array_equal(d_out.copy_to_host(), expected, err_msg=str(case))
    around = np.delete(allocation.copy_to_host(), range(case.dst_offset, case.dst_offset + a.size))
    assert (around == FILL).all(), f"{case}: a byte outside the output changed"
    np.testing.assert_array_equal(d_src.copy_to_host(), a)
    return prepared


# ---- against NumPy -----------------------------------------------------------------------------


@MANY
@given(case=cases())
@example(Case((1, 1), True, 3, 5, 8, 1, (1, 1))).via("one pixel")
@example(Case((1, 70, 3), True, 1, 2, 8, 2, (2, 1))).via("an RGB row: head, groups, tail")
@example(Case((70, 1, 3), False, 7, 0, 8, 1, (3, 2))).via("N x 1: mirrored as one row")
@example(Case((61, 4), False, 15, 9, 8, 3, (1, 3))).via("rows shorter than a word")
def test_any_flip_of_any_small_image(case):
    check(case)


EDGE_ONLY = [  # no whole word or group in a row: only edge bytes
    (1, 1),
    (1, 7),
    (2, 5),
    (4, 3),
    (3, 2, 3),
    (2, 7, 3),
    (5, 1, 3),
]


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize("shape", EDGE_ONLY, ids=str)
def test_edge_only_images_with_the_tuned_launch(shape, horizontal):
    check(Case(shape, horizontal, src_offset=3, dst_offset=1))


@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
@pytest.mark.parametrize("shape", [(9, 37), (5, 11, 3), (1, 131), (131, 1), (40, 1, 3)], ids=str)
@pytest.mark.parametrize("offsets", [(0, 0), (5, 11)], ids=["aligned", "misaligned"])
def test_the_fast_wrappers_flip_bulk_and_edge(shape, horizontal, offsets):
    wrapper = fast.flip_horizontal_fast if horizontal else fast.flip_vertical_fast
    a = np.random.default_rng(1).integers(0, 256, size=shape, dtype=np.uint8)
    _, d_src = placed(a, offsets[0])
    _, d_out = placed(np.zeros_like(a), offsets[1])
    assert wrapper(d_src, out=d_out) is d_out
    np.testing.assert_array_equal(d_out.copy_to_host(), np.flip(a, axis=1 if horizontal else 0))


# ---- words on every shape, never the one-pixel kernel -----------------------------------------


@pytest.mark.parametrize(
    "shape", [(7, 13), (16, 33), (3, 11, 3), (1, 250), (250, 1), (1, 50, 3), (50, 1, 3)], ids=str
)
@pytest.mark.parametrize("horizontal", [False, True], ids=["vertical", "horizontal"])
def test_every_shape_moves_words(shape, horizontal):
    prepared = check(Case(shape, horizontal, src_offset=1, dst_offset=2))
    kind = "horizontal" if horizontal else "vertical"
    if shape[1] == 1:  # one pixel per row: the other flip of one row holding every pixel
        kind = "vertical" if horizontal else "horizontal"
        assert all(step.args[6] == 1 for step in prepared.steps)  # height: one row
    assert all(name.startswith(f"flip_{kind}_words_") for name in kernel_names(prepared))


def test_a_one_pixel_wide_image_is_flipped_as_one_row_with_the_word_size_asked_for():
    shape = (40, 1)
    mirrored = check(Case(shape, horizontal=False, word_bytes=4))
    per = fast.FLIP_PER_THREAD
    assert kernel_names(mirrored) == {f"flip_horizontal_words_gray_4B_x{per[True]}_i32"}
    copied = check(Case(shape, horizontal=True, word_bytes=8))
    assert kernel_names(copied) == {f"flip_vertical_words_8B_x{per[False]}_i32"}
    for horizontal in (False, True):
        with pytest.raises(ValueError, match="word_bytes must be 4 or 8 for a"):
            fast.flip_words(np.ones(shape, dtype=np.uint8), horizontal=horizontal, word_bytes=16)


def test_runs_beyond_the_grid_limit_on_rows_of_no_whole_word(monkeypatch):
    # more than 65535 runs of groups in a row: launches of 2 runs here; the edge in the first
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)
    for shape, horizontal in [((2, 301), False), ((1, 203, 3), True), ((3, 97), True)]:
        prepared = check(Case(shape, horizontal, 5, 3, 4, 1, (8, 1)))
        assert len(prepared.steps) > 1
        assert [step.args[-1] for step in prepared.steps] == list(
            range(0, 2 * len(prepared.steps), 2)
        )


@pytest.mark.parametrize(
    "shape, vertical_word, horizontal_kind",
    [((6, 32), 16, "gray_8B"), ((5, 8), 8, "gray_8B"), ((4, 8, 3), 8, "rgb_4B"), ((3, 4), 4, None)],
)
def test_rows_of_whole_aligned_words_take_the_bulk_path(shape, vertical_word, horizontal_kind):
    """No shifts, no edges: whole_rows, with the widest word the rows allow."""
    image = np.random.default_rng(sum(shape)).integers(0, 256, size=shape, dtype=np.uint8)
    per = whole_rows.FLIP_PER_THREAD
    vertical = fast.flip_words.prepare(image, horizontal=False)
    assert kernel_names(vertical) == {f"flip_vertical_whole_rows_{vertical_word}B_x{per}"}
    horizontal = fast.flip_words.prepare(image, horizontal=True)
    if horizontal_kind:  # gray rows of whole 8-pixel groups, RGB rows of whole 4-pixel groups
        assert kernel_names(horizontal) == {f"flip_horizontal_whole_rows_{horizontal_kind}_x{per}"}
    for prepared, axis in ((vertical, 0), (horizontal, 1)):
        np.testing.assert_array_equal(prepared.result(), np.flip(image, axis))

"""Hidden cases of lesson 03: 1 x N and N x 1 matrices, tiles cut on any side, sizes off by one."""

from gpgpu_lessons.exercises.lesson03 import (
    _matmul_case,
    _pairs_case,
    _rotate_case,
    _sums_case,
    _transpose_case,
)

MATRICES = ((1, 1), (33, 1), (1, 33), (31, 33), (32, 32), (65, 2))


def _transpose(rng, gpu):
    """One element, N x 1 and 1 x N, 31 x 33, a full tile, three tiles of two columns."""
    return [_transpose_case(rng, h, w) for h, w in MATRICES]


def _pairs(rng, gpu):
    """Two points, blocks of 63 and 64 points, a last block of one."""
    return [_pairs_case(rng, n) for n in (2, 63, 64, 65, 127, 129)]


def _sums(rng, gpu):
    """Two elements, n one off a multiple of 64."""
    return [_sums_case(rng, n) for n in (2, 63, 64, 65, 129)]


def _rotate(rng, gpu):
    """One element, N x 1 and 1 x N, 31 x 33, a full tile, three tiles of two rows."""
    return [_rotate_case(rng, w, h) for h, w in MATRICES]


def _matmul(rng, gpu):
    """k of 1 and 8, shapes of one row or column, no multiple of 8, and multiples of 8."""
    shapes = ((1, 1, 1), (1, 8, 1), (9, 1, 9), (8, 16, 8), (7, 9, 15), (3, 17, 2))
    return [_matmul_case(rng, m, k, n) for m, k, n in shapes]


HIDDEN = {
    "03.1": _transpose,
    "03.2": _pairs,
    "03.3": _sums,
    "03.4": _rotate,
    "03.5": _matmul,
}

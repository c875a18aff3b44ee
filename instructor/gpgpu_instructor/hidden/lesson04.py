"""Hidden cases of lesson 04: sizes one off the block, rows of 1 to 3 pixels, every table entry."""

import numpy as np

from gpgpu_lessons.exercises.lesson04 import (
    GAMMA,
    _blur_case,
    _colour_case,
    _gamma_case,
    _poly_case,
    _sharpen_case,
)


def _poly(rng, gpu):
    """Two elements, n one off a multiple of 128, a prime."""
    return [_poly_case(rng, n) for n in (2, 127, 128, 129, 257)]


def _blur_rows(rng, gpu):
    """Rows of 1, 2 and 3 pixels (both ends clamped at once), N x 1, blocks of 32 x 4 cut."""
    images = ((1, 1), (1, 2), (1, 3), (1, 33), (5, 1), (4, 32), (5, 31))
    return [_blur_case(rng, h, w) for h, w in images]


def _colour(rng, gpu):
    """h * w of 1, 127, 128 and 129 pixels: one pixel, N x 1, 1 x N."""
    return [_colour_case(rng, h, w) for h, w in ((1, 1), (127, 1), (1, 129), (8, 16), (3, 43))]


def _gamma(rng, gpu):
    """n one off a multiple of 128, and every pixel value 0 ... 255, in a random order."""
    cases = [_gamma_case(rng, n) for n in (2, 127, 129, 256, 257)]
    for case in cases[-2:]:
        pixels = case.args["pixels"]
        pixels[:256] = rng.permutation(256).astype(np.uint8)
        case.expected["out"] = GAMMA[pixels]
    return cases


def _sharpen(rng, gpu):
    """One pixel, two, N x 1 and 1 x N, a full tile, tiles cut on one or two sides."""
    images = ((1, 1), (2, 1), (9, 1), (1, 9), (8, 8), (7, 9), (17, 15))
    return [_sharpen_case(rng, h, w) for h, w in images]


HIDDEN = {
    "04.1": _poly,
    "04.2": _blur_rows,
    "04.3": _colour,
    "04.4": _gamma,
    "04.5": _sharpen,
}

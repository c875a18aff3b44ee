"""Hidden cases of lesson 02: sizes one off the block of 64, 1 x N and N x 1 images, full tiles."""

from gpgpu_lessons.exercises.lesson02 import (
    _block_reverse_case,
    _blur_case,
    _mosaic_case,
    _scan_case,
    _smooth_case,
)

SIZES = (2, 63, 64, 65, 127, 129)
IMAGES = ((1, 1), (9, 1), (1, 9), (8, 8), (7, 9), (17, 15))


def _block_reverse(rng, gpu):
    """Segments of 2, 63 and 64 elements; a last segment of one element."""
    return [_block_reverse_case(rng, n) for n in SIZES]


def _smooth(rng, gpu):
    """Two and three elements (both halos clamped), n one off a multiple of 64."""
    return [_smooth_case(rng, n) for n in (2, 3, 63, 64, 65, 129)]


def _mosaic(rng, gpu):
    """One pixel, N x 1 and 1 x N, a full tile, tiles cut on one or two sides."""
    return [_mosaic_case(rng, h, w) for h, w in IMAGES]


def _blur(rng, gpu):
    """One pixel, two, N x 1 and 1 x N, a full tile, tiles cut on one or two sides."""
    return [_blur_case(rng, h, w) for h, w in ((2, 1), *IMAGES)]


def _scan(rng, gpu):
    """Two elements, n one off a multiple of 64 (a last segment of one)."""
    return [_scan_case(rng, n) for n in (2, 63, 64, 65, 129)]


HIDDEN = {
    "02.1": _block_reverse,
    "02.2": _smooth,
    "02.3": _mosaic,
    "02.4": _blur,
    "02.5": _scan,
}

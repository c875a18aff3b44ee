"""Hidden cases of lesson 01: sizes one off the block of 128, and 1 x N and N x 1 images."""

from gpgpu_lessons.exercises.lesson01 import (
    _difference_case,
    _invert_case,
    _partials_case,
    _reverse_case,
    _split_case,
)


def _reverse(rng, gpu):
    """Two elements, n one off a multiple of 128, a prime."""
    return [_reverse_case(rng, n) for n in (2, 127, 128, 129, 257)]


def _difference(rng, gpu):
    """Outputs (n - 1) of two, one off a multiple of 128, a prime."""
    return [_difference_case(rng, n) for n in (3, 128, 129, 130, 258)]


def _partials(rng, gpu):
    """The statement's 4 x 32 threads on n of one, one off the 128 threads, primes."""
    return [_partials_case(rng, n) for n in (1, 31, 127, 128, 129, 131, 257)]


def _invert(rng, gpu):
    """One pixel, N x 1 and 1 x N images of 126 to 129 bytes, with bytes 0 and 255."""
    cases = [_invert_case(rng, h, w) for h, w in ((1, 1), (43, 1), (1, 42), (1, 43), (2, 21))]
    for case in cases:  # the darkest and the brightest bytes, in every channel
        image = case.args["image"]
        image.flat[::5] = 0
        image.flat[1::5] = 255
        case.expected["out"] = 255 - image
    return cases


def _split(rng, gpu):
    """3n threads (blocks of 128): 6, 126, 129, 255 and 258."""
    return [_split_case(rng, n) for n in (2, 42, 43, 85, 86)]


HIDDEN = {
    "01.1": _reverse,
    "01.2": _difference,
    "01.3": _partials,
    "01.4": _invert,
    "01.5": _split,
}

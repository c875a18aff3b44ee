"""Hidden cases of lesson 05: values at and next to the thresholds, data edges, other grids."""

import numpy as np

from gpgpu_lessons.exercises import data
from gpgpu_lessons.exercises.lesson05 import (
    BRIGHT,
    KEEP,
    THRESHOLD,
    _bright_case_of,
    _compact_case,
    _compact_case_of,
    _count_case,
    _count_case_of,
    _dot_case,
    _histogram_case,
    _warp_sums_case,
)

LOW, HIGH = 0.5, 1.5  # the range of data.floats, the values of 05.1 and 05.6
WIDTH = 1e-3  # the bands: within 1e-3 of a threshold, or of an edge of the range


def _other_threshold(rng):
    """A threshold inside the data's range, other than the statement's (a float32)."""
    return np.float32(rng.uniform(LOW + 0.1, HIGH - 0.1))


def _threshold_cases(rng, threshold, make):
    """One element right above or below the threshold, its band, the edges, another threshold."""
    below, above = data.next_to(threshold)
    edges = data.edges(rng, 65, LOW, HIGH, WIDTH)
    other = _other_threshold(rng)
    mixed = rng.permutation(np.concatenate([data.near(rng, 64, other), data.floats(rng, 65)]))
    return [
        make(np.array([above]), threshold, "n = 1, x[0] right above the threshold"),
        make(np.array([below]), threshold, "n = 1, x[0] right below the threshold"),
        make(data.near(rng, 63, threshold), threshold, "n = 63, within 1e-3 of the threshold"),
        make(edges, threshold, f"n = 65, within 1e-3 of {LOW} or {HIGH}"),
        make(mixed, other, f"n = 129, threshold {other:.7g}, half within 1e-3 of it"),
    ]


def _count(rng, gpu):
    """05.1: the threshold's band and neighbours, the data's edges, another threshold, primes."""
    cases = _threshold_cases(rng, THRESHOLD, _count_case_of)
    return cases + [_count_case(rng, n) for n in (127, 131)]


def _warp_sums(rng, gpu):
    """05.2: one element, n one off a warp and off a block of 64."""
    return [_warp_sums_case(rng, n) for n in (1, 31, 32, 33, 63, 64, 65, 129)]


def _bright(rng, gpu):
    """05.3: pixels next to the threshold, 0 and 255, thresholds 0 and 254."""

    def pixels(*values):
        return np.array(values, np.uint8)

    edges = rng.permutation(np.resize(pixels(0, 1, 254, 255, 199, 200, 201), 65))
    return [
        _bright_case_of(pixels(201), BRIGHT, "n = 1, pixels[0] right above the threshold"),
        _bright_case_of(pixels(199), BRIGHT, "n = 1, pixels[0] right below the threshold"),
        _bright_case_of(data.near(rng, 63, BRIGHT, dtype=np.uint8), BRIGHT, "n = 63, 199 to 201"),
        _bright_case_of(edges, BRIGHT, "n = 65, pixels 0, 1, 254, 255 and 199 to 201"),
        _bright_case_of(data.near(rng, 129, 254, dtype=np.uint8), 254, "n = 129, threshold 254"),
        _bright_case_of(data.near(rng, 97, 0, dtype=np.uint8), 0, "n = 97, threshold 0"),
        _bright_case_of(data.pixels(rng, 131), BRIGHT, "n = 131, random pixels"),
    ]


def _histogram(rng, gpu):
    """05.4: 1, 3 and 5 blocks (a grid-stride loop), n one off the grid, every value 0 ... 255."""
    launches = ((1, 1), (127, 3), (128, 2), (129, 1), (256, 5), (257, 2))
    cases = [_histogram_case(rng, n, grid) for n, grid in launches]
    for case in cases[-2:]:  # every value, so every bin's edges
        values = case.args["values"]
        values[:256] = rng.permutation(256).astype(np.uint8)
        case.expected["bins"] = np.bincount(values >> 4, minlength=16).astype(np.int32)
    return cases


def _dot(rng, gpu):
    """05.5: 1, 3 and 5 blocks (a grid-stride loop), n of one and one off the grid's threads."""
    launches = ((1, 1), (63, 1), (65, 1), (127, 2), (129, 2), (191, 3), (257, 5))
    return [_dot_case(rng, n, grid) for n, grid in launches]


def _compact(rng, gpu):
    """05.6: the threshold's band and neighbours, the data's edges, another threshold, primes."""
    cases = _threshold_cases(rng, KEEP, _compact_case_of)
    return cases + [_compact_case(rng, n) for n in (127, 131)]


HIDDEN = {
    "05.1": _count,
    "05.2": _warp_sums,
    "05.3": _bright,
    "05.4": _histogram,
    "05.5": _dot,
    "05.6": _compact,
}

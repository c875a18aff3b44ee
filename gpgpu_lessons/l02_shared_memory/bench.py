"""What `python -m gpgpu_tools.bench` times of this lesson: the fast negative and flips.

`BENCH` declares the lesson's bench families; the bench finds them here (the keys:
tools/gpgpu_tools/bench/families.py).
"""

import numpy as np

from . import fast


def negative(inputs, where):
    """The negative's reference at the output's indices `where`."""
    (a,) = inputs
    return 255 - a[where]


def flipped_horizontally(inputs, where):
    """The horizontal flip's reference at the output's indices `where` (rows, columns)."""
    (a,) = inputs
    y, x = where
    return a[y, a.shape[1] - 1 - x]


def flipped_vertically(inputs, where):
    """The vertical flip's reference at the output's indices `where` (rows, columns)."""
    (a,) = inputs
    y, x = where
    return a[a.shape[0] - 1 - y, x]


BENCH = (
    {
        "family": "negative",
        "order": 2,
        "description": "uint8 images, gray and RGB, lesson 02",
        "dtype": np.uint8,
        "sweep": "images",
        "kernels": (
            {
                "name": "negative",
                "wrapper": fast.negative_fast,
                "expected": negative,
                "cupy_name": "255 - a",
                "cupy": lambda cp, a: lambda: 255 - a,
            },
        ),
        "of_copy": 0.85,
    },
    {
        "family": "flips",
        "order": 3,
        "description": "uint8 images, gray and RGB, lesson 02",
        "dtype": np.uint8,
        "sweep": "images",
        "kernels": (
            {
                "name": "flip horizontal",
                "wrapper": fast.flip_horizontal_fast,
                "expected": flipped_horizontally,
                "cupy_name": "cupy.flip(a, 1).copy()",
                "cupy": lambda cp, a: lambda: cp.flip(a, 1).copy(),  # a copy, never a view
            },
            {
                "name": "flip vertical",
                "wrapper": fast.flip_vertical_fast,
                "expected": flipped_vertically,
                "cupy_name": "cupy.flip(a, 0).copy()",
                "cupy": lambda cp, a: lambda: cp.flip(a, 0).copy(),
            },
        ),
        "of_copy": 0.85,
    },
)

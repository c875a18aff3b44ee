"""What `python -m gpgpu_tools.bench` times of this lesson: the fast transpose beside CuPy's.

`BENCH` declares the lesson's bench family; the bench finds it here (the keys:
tools/gpgpu_tools/bench/families.py).
"""

import numpy as np

from . import fast


def transposed(inputs, where):
    """The transpose's reference at the output's indices `where`: a[x, y] at (y, x)."""
    (a,) = inputs
    y, x = where
    return a[x, y]


BENCH = (
    {
        "family": "transpose",
        "order": 1,
        "description": "float32 matrices, lesson 03",
        "dtype": np.float32,
        "sweep": "matrices",
        "kernels": (
            {
                "name": "transpose",
                "wrapper": fast.transpose,
                "expected": transposed,
                "cupy_name": "a.T.copy() (CuPy)",
                "cupy": lambda cp, a: lambda: a.T.copy(),  # a copy even where a.T is contiguous
            },
        ),
        "transposed": True,
        "of_copy": 0.85,
        "of_cupy": 3.0,
    },
)

"""What `python -m gpgpu_tools.bench` times of this lesson: the fast copy and dot.

`BENCH` declares the lesson's bench families; the bench finds them here (the keys:
tools/gpgpu_tools/bench/families.py).
"""

import numpy as np

from . import fast


def copied(inputs, where):
    """The copy's reference at the output's indices `where`."""
    return inputs[0][where]


BENCH = (
    {
        "family": "copy",
        "order": 4,
        "description": "float32 vectors of any length, lesson 01",
        "dtype": np.float32,
        "sweep": "vectors",
        "kernels": (
            {
                "name": "copy",
                "wrapper": fast.copy,
                "expected": copied,
                "cupy_name": "cupy.copy(a)",
                "cupy": lambda cp, a: lambda: cp.copy(a),
            },
        ),
        "of_copy": 0.95,
    },
    {
        "family": "dot",
        "order": 7,
        "description": "pairs of float32 vectors, lesson 01",
        "dtype": np.float32,
        "sweep": "sums",
        "kernels": (
            {
                "name": "dot",
                "wrapper": fast.dot,
                "cupy_name": "cupy.dot(x, y)",
                "cupy": lambda cp, x, y: lambda: cp.dot(x, y),
            },
        ),
        "inputs": 2,
        "reduction": True,
        "of_cupy": 0.95,
        "cupy_from": 2**25,
    },
)

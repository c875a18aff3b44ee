"""What `python -m gpgpu_tools.bench` times of this lesson: the fast sum beside cupy.sum.

`BENCH` declares the lesson's bench family; the bench finds it here (the keys:
tools/gpgpu_tools/bench/families.py).
"""

import numpy as np

from . import fast

BENCH = (
    {
        "family": "sum",
        "order": 6,
        "description": "float32 vectors, lesson 05",
        "dtype": np.float32,
        "sweep": "sums",
        "kernels": (
            {
                "name": "sum",
                "wrapper": fast.sum_grid_stride,
                "cupy_name": "cupy.sum(a)",
                "cupy": lambda cp, a: lambda: cp.sum(a),
            },
        ),
        "reduction": True,
        "of_cupy": 0.95,
        "cupy_from": 2**25,
    },
)

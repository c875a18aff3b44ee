"""What `python -m gpgpu_tools.bench` times of lesson {{N}}: its fast kernels beside CuPy's.

`BENCH` declares the lesson's bench families; the bench finds them here, nothing else needs an
edit (the keys: tools/gpgpu_tools/bench/families.py). Until the lesson has a fast.py, its family
times the textbook wrapper: point "wrapper" at the fast one once it exists, or empty BENCH.
"""

import numpy as np

from . import textbook


def scaled(inputs, where):
    """scale's reference at the output's indices `where`."""
    return textbook.FACTOR * inputs[0][where]


BENCH = (
    {
        "family": "{{NAME}}",
        "description": "float32 vectors, lesson {{N}}",
        "dtype": np.float32,
        "sweep": "vectors",
        "kernels": (
            {
                "name": "scale",
                "wrapper": textbook.scale,
                "expected": scaled,
                "cupy_name": "FACTOR * a",
                "cupy": lambda cp, a: lambda: textbook.FACTOR * a,
            },
        ),
    },
)

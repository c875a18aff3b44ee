"""The CUDA C yardstick: the lessons' textbook algorithms in C, timed beside Numba's kernels."""

from gpgpu_lessons import runtime  # noqa: F401  (first: it chooses the GPU or the simulator)

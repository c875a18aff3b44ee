"""Lesson 00, timing GPU code (notebooks/00_timing_gpu_code.ipynb).

- `textbook`: kernels whose cost we control (an empty kernel, a chain of multiply-adds, a copy
  once or many times per launch, seed 004's dot product) and their wrappers;
- `figures`: the host/GPU timeline of a launch, with and without a synchronize.
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (`BENCH`: its wrappers,
  NumPy references, CuPy's equivalent calls).
"""

"""Lesson 01, memory coalescing (notebooks/01_coalescing.ipynb).

- `textbook`: the copies a warp's addresses make cheap or costly (one element per thread, a
  stride between neighbouring threads, a misaligned start) and seed 004's dot products
  (1 thread, 32, many blocks, each thread its own chunk), with their wrappers;
- `fast`: reaching the ceiling: wide elements, several loads in flight, the grid, and the
  dot product with a block tree and one atomic per block; `TUNING` (the copy's and the dot's)
  for the tuning tool;
- `tracing`: the lesson's own launches traced on small arrays (sectors per warp request),
  `launches()` all of them under the labels the slides give them, traced once per process;
- `figures`: which 32-byte sectors one warp's load touches, and the traced counts beside the
  GPU's bandwidths, for the launches the slides name (traced by `tracing`).
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (`BENCH`: its wrappers,
  NumPy references, CuPy's equivalent calls).
"""

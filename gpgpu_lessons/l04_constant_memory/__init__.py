"""Lesson 04, constant memory (notebooks/04_constant_memory.ipynb): seed 002's spatial filters.

- `filters`: the named filters (LAPLACIAN, BOX_BLUR, GAUSSIAN_5) and the lookup table
  (TONE_CURVE) that kernels compile in;
- `textbook`: the kernels the slides show: one pixel per thread with the filter in global,
  constant or frozen (compile-time) memory, the tiled filter with a halo in shared memory, and
  a lookup table in global vs constant memory (the counter-example);
- `fast`: the tiled filter tuned to the copy ceiling (reaching the ceiling), for any filter;
- `reference`: the NumPy filter every kernel is checked against;
- `checks`: the input checks and the banded launch that both kernel modules share;
- `ptx`: where a compiled kernel keeps its filter (a one-line summary of its PTX);
- `tracing`: the lesson's launches traced on small images (gpgpu_lessons.trace_kernel): one
  constant address per filter-tap request (a broadcast), many per lookup-table request;
- `figures`: the lesson's pictures, traced warp reads beside the GPU's times among them;
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (`BENCH`: its wrappers,
  NumPy references, CuPy's equivalent calls).
"""

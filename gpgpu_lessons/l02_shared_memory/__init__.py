"""Lesson 02, shared memory (notebooks/02_shared_memory.ipynb): seed 002's image kernels.

- `textbook`: the kernels the slides show: negative and flips with one pixel per thread, and the
  mosaic in four steps (one thread per tile; the tile in shared memory with one thread averaging;
  the same without its barriers, a data race; all threads summing in a shared-memory tree);
- `fast`: the negative and flips that reach the copy ceiling (wide words, several per thread);
- `reference`: the NumPy versions every kernel is checked against (the notebook also times them
  on the CPU for seed 002's table);
- `checks`: the input checks both share (uint8 gray or RGB images, out=, mosaic sizes);
- `tracing`: what the kernel tracer says about the mosaics (work per tile beside the GPU times,
  who touches which shared array between which barriers);
- `figures`: the lesson's pictures (the memory hierarchy, a mosaic's tiles, barrier intervals
  and the races the tracer finds).
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (`BENCH`: its wrappers,
  NumPy references, CuPy's equivalent calls).
"""

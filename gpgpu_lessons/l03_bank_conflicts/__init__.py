"""Lesson 03, bank conflicts: the matrix transpose from naive to tiled and padded (seeds 000, 003).

- `textbook`: the kernels of the story (copy, naive, tiled, padded; seed 000's 16 x 16 ones);
- `fast`: the transpose at the copy ceiling (wide accesses, block order) and `transpose()`;
- `applications`: why transposes matter (separable filter, 2-D FFT);
- `banks`: wavefronts, sectors and the bank of each lane, traced from the kernels themselves
  (the kernel tracer, `gpgpu_lessons.trace`); `figures`: the lesson's pictures;
- `profiling`: Nsight Compute's counters (`python -m` it on a GPU) beside the tracer's.
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (`BENCH`: its wrappers,
  NumPy references, CuPy's equivalent calls).
"""

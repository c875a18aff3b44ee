"""Lesson 03, bank conflicts: the matrix transpose from naive to tiled and padded (seeds 000, 003).

- `textbook`: the kernels of the story (copy, naive, tiled, padded; seed 000's 16 x 16 ones);
- `fast`: the transpose at the copy ceiling (wide accesses, block order) and `transpose()`;
- `applications`: why transposes matter (separable filter, 2-D FFT);
- `banks`: which bank each lane hits (the hand-made model); `figures`: its pictures;
- `profiling`: Nsight Compute's counters beside the model (`python -m` it on a GPU).
"""

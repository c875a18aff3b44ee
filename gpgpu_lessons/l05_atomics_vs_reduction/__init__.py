"""Lesson 05, atomics versus reduction (notebooks/05_atomics_vs_reduction.ipynb).

- `textbook`: the parallel-sum ladder (Harris, "Optimizing Parallel Reduction in CUDA"), one
  kernel per rung, and `parallel_sum`, which runs any rung;
- `sine_sum`: seed 001's task (every element of a W x H array is a sum of n sine waves), the
  seed's four programs and our simpler variants, the float64 reference and its tolerance,
  and the seed's own timings;
- `histogram`: what atomics cost (contention on few addresses) and a 256-bin histogram with
  global, block-private shared and warp-aggregated atomics, on three kinds of image;
- `tracing`: the kernel tracer on the lesson's own kernels (atomic contention, shared requests,
  bank conflicts), the counts its tables put beside the GPU's times;
- `fast`: reaching the ceiling: the tuned grid-stride sum (16-byte loads, last-block hand-over)
  and the reduced-argument and recurrence sine sums, with `TUNING`;
- `figures` and `tables`: the tree drawings; the tracer's counts beside the GPU's times.
- `bench`: what `python -m gpgpu_tools.bench` times of the lesson (`BENCH`: its wrappers,
  NumPy references, CuPy's equivalent calls).
"""

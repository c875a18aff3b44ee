"""Maintainer tools of gpgpu-lessons; nothing in the student package imports them.

- `bench`: every fast kernel family over awkward shapes, against the device copy and CuPy
- `slides`: reveal.js decks and PDF handouts built offline from the notebooks
- `gpurun`: carry wheels to a GPU machine without network, run everything there, unpack
- `ptx`: every registered kernel compiled to PTX for the GPUs students have, without a GPU
- `tune`: re-time a fast kernel's tuning space on a GPU and record the table
- `canary`: the newest numpy, numba and numba-cuda in a throwaway environment
- `trace_verify` / `trace_cases`: the tracer against Nsight Compute and compute-sanitizer
"""

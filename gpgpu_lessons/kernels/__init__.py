"""One module per lesson topic: the @cuda.jit kernels first, then their host-side wrappers."""

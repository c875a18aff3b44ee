"""Clear a device array of any shape on the device (outputs that kernels add into)."""

from numba import cuda

from .. import launch

BLOCK = 256


@cuda.jit
def zero_fill(flat):
    """flat[i] = 0 for every i: a 1-D view of the array to clear."""
    i = cuda.grid(1)
    if i < flat.size:
        flat[i] = 0


def zero_step(a) -> launch.Step:
    """The launch step that clears device array `a` (C-contiguous, any shape)."""
    flat = a.reshape(a.size)
    return launch.Step(zero_fill, launch.grid_1d(a.size, BLOCK), BLOCK, (flat,))


def zeros(shape, dtype):
    """A new device array of zeros, cleared on the device (no host-to-device copy)."""
    a = cuda.device_array(shape, dtype=dtype)
    if a.size:
        zero_step(a).run()
    return a


# The dtypes lessons clear: float sums, uint32 counters and tickets, int32 counts.
SIGNATURES = {
    zero_fill: [f"void({dtype}[::1])" for dtype in ("float32", "float64", "int32", "uint32")]
}

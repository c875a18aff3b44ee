"""Small kernels with known PTX, registered like a lesson's: the compile loop's own test."""

import numpy as np
from numba import cuda, float32

from gpgpu_lessons.device import vector

TILE = 32
PADDED = TILE + 1
TABLE = np.linspace(0, 1, 256, dtype=np.float32)
WEIGHTS = (0.25, 0.5, 0.25)
HELD = 4


@cuda.jit
def copy_vector4(a, out):
    """out = a, four float32 per thread as one 16-byte load and one 16-byte store."""
    i = cuda.grid(1) * 4
    if i + 3 < a.size:
        vector.store_vector(out, i, vector.load_vector(a, i, 4))


@cuda.jit
def transpose_padded(a, out):
    """out = a.T through a shared tile padded by one column."""
    tile = cuda.shared.array((TILE, PADDED), float32)
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    if y < a.shape[0] and x < a.shape[1]:
        out[x, y] = tile[cuda.threadIdx.y, cuda.threadIdx.x]


@cuda.jit
def lookup(image, out):
    """out = TABLE[image]: the table in constant memory."""
    table = cuda.const.array_like(TABLE)
    i = cuda.grid(1)
    if i < image.size:
        out[i] = table[image[i]]


@cuda.jit
def blur3(a, out):
    """A 3-tap filter whose weights are module constants: folded into the instructions."""
    i = cuda.grid(1)
    if 0 < i < a.size - 1:
        out[i] = WEIGHTS[0] * a[i - 1] + WEIGHTS[1] * a[i] + WEIGHTS[2] * a[i + 1]


@cuda.jit
def reverse_held(a, out):
    """Each thread reverses HELD values held in a local array of constant indices: registers."""
    held = cuda.local.array(HELD, float32)
    i = cuda.grid(1) * HELD
    if i + HELD <= a.size:
        for k in range(HELD):
            held[k] = a[i + k]
        for k in range(HELD):
            out[i + k] = held[HELD - 1 - k]


@cuda.jit
def pick_held(a, index, out):
    """A local array indexed by a value known only at run time: it lives in local memory."""
    held = cuda.local.array(HELD, float32)
    i = cuda.grid(1)
    if i < out.size:
        for k in range(HELD):
            held[k] = a[(i + k) % a.size]
        out[i] = held[index[i] % HELD]


@cuda.jit(device=True)
def square(x):
    """x * x (a device function: it needs no registry entry)."""
    return x * x


@cuda.jit
def squares(a, out):
    """out = a * a through a device function."""
    i = cuda.grid(1)
    if i < a.size:
        out[i] = square(a[i])


def make_scale(factor):
    """A kernel out = factor * a, named for its factor (factories name every instance)."""

    def scale(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = factor * a[i]

    scale.__name__ = scale.__qualname__ = f"scale_by_{factor}"
    return cuda.jit(scale)


scale_by_2 = make_scale(2)
SCALES = [make_scale(3)]  # instances not bound to a module name are registered too

F32 = "void(float32[::1], float32[::1])"
SIGNATURES = {
    copy_vector4: [F32],
    transpose_padded: ["void(float32[:, ::1], float32[:, ::1])"],
    lookup: ["void(uint8[::1], float32[::1])"],
    blur3: [F32, "void(float64[::1], float64[::1])"],
    reverse_held: [F32],
    pick_held: ["void(float32[::1], int64[::1], float32[::1])"],
    squares: [F32, "void(int32[::1], int32[::1])"],
    scale_by_2: [F32],
    SCALES[0]: [F32],
}

"""Reference solutions of lesson 01's exercises (coalescing)."""

from numba import cuda


@cuda.jit
def reverse(src, dst):
    """dst[i] = src[n - 1 - i], one element per thread."""
    i = cuda.grid(1)
    n = src.size
    if i < n:
        dst[i] = src[n - 1 - i]


@cuda.jit
def difference(a, out):
    """out[i] = a[i + 1] - a[i]."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i + 1] - a[i]


@cuda.jit
def partial_sums(x, partials):
    """partials[t] = x[t] + x[t + threads] + ...: neighbouring lanes read neighbouring elements."""
    t = cuda.grid(1)
    threads = cuda.gridsize(1)
    acc = 0.0
    for j in range(t, x.size, threads):
        acc += x[j]
    partials[t] = acc


@cuda.jit
def invert_rgb(image, out):
    """out = 255 - image for an (h, w, 3) uint8 image, one thread per byte."""
    i = cuda.grid(1)
    if i < image.size:
        p, c = i // 3, i % 3
        y, x = p // image.shape[1], p % image.shape[1]
        out[y, x, c] = 255 - image[y, x, c]


@cuda.jit
def split_xyz(points, xs, ys, zs):
    """xs, ys, zs = the columns of an (n, 3) array, one thread per float."""
    i = cuda.grid(1)
    if i < points.size:
        p, c = i // 3, i % 3
        value = points[p, c]
        if c == 0:
            xs[p] = value
        elif c == 1:
            ys[p] = value
        else:
            zs[p] = value


REFERENCES = {
    "01.1": reverse,
    "01.2": difference,
    "01.3": partial_sums,
    "01.4": invert_rgb,
    "01.5": split_xyz,
}

SIGNATURES = {
    reverse: ["void(float32[::1], float32[::1])"],
    difference: ["void(float32[::1], float32[::1])"],
    partial_sums: ["void(float32[::1], float32[::1])"],
    invert_rgb: ["void(uint8[:, :, ::1], uint8[:, :, ::1])"],
    split_xyz: ["void(float32[:, ::1], float32[::1], float32[::1], float32[::1])"],
}

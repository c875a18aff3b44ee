"""Reference solutions of lesson 04's exercises (constant memory)."""

import numpy as np
from numba import cuda, float32

COEFFS = np.array([0.5, -1.25, 0.75, 2.0, -0.5, 0.125, 0.0625], np.float32)
TAPS = np.array([1, 4, 6, 4, 1], np.float32) / 16
YCC = np.array(
    [[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]], np.float32
)
OFFSET = np.array([0.0, 0.5, 0.5], np.float32)
SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
TILE = 8
HALO = TILE + 2


@cuda.jit
def poly(x, out):
    """out = the polynomial with coefficients COEFFS at x, by Horner's rule."""
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i < out.size:
        v = x[i]
        acc = c[6]
        for k in range(5, -1, -1):
            acc = acc * v + c[k]
        out[i] = acc


@cuda.jit
def blur_rows(image, taps, out):
    """Horizontal 5-tap blur with clamped borders, the taps in constant memory."""
    c = cuda.const.array_like(TAPS)
    x, y = cuda.grid(2)
    h, w = image.shape
    if y < h and x < w:
        acc = float32(0)
        for d in range(5):
            acc += c[d] * image[y, min(max(x + d - 2, 0), w - 1)]
        out[y, x] = acc


@cuda.jit
def to_ycbcr(image, out):
    """out[y, x] = YCC @ image[y, x] + OFFSET, one thread per pixel."""
    m = cuda.const.array_like(YCC)
    o = cuda.const.array_like(OFFSET)
    p = cuda.grid(1)
    w = image.shape[1]
    if p < image.shape[0] * w:
        y, x = p // w, p % w
        r, g, b = image[y, x, 0], image[y, x, 1], image[y, x, 2]
        for k in range(3):
            out[y, x, k] = o[k] + m[k, 0] * r + m[k, 1] * g + m[k, 2] * b


@cuda.jit
def gamma(pixels, lut, out):
    """out[i] = lut[pixels[i]], the table read from global memory (cached, no serialisation)."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = lut[pixels[i]]


@cuda.jit
def sharpen(image, out):
    """3 x 3 filter: weights in constant memory, the image through a shared tile."""
    tile = cuda.shared.array((HALO, HALO), float32)
    weights = cuda.const.array_like(SHARPEN)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x0, y0 = cuda.blockIdx.x * TILE - 1, cuda.blockIdx.y * TILE - 1
    h, w = image.shape
    k = ty * TILE + tx
    while k < HALO * HALO:
        r, c = k // HALO, k % HALO
        tile[r, c] = image[min(max(y0 + r, 0), h - 1), min(max(x0 + c, 0), w - 1)]
        k += TILE * TILE
    cuda.syncthreads()
    y, x = y0 + 1 + ty, x0 + 1 + tx
    if y < h and x < w:
        acc = float32(0)
        for dy in range(3):
            for dx in range(3):
                acc += weights[dy, dx] * tile[ty + dy, tx + dx]
        out[y, x] = acc


REFERENCES = {"04.1": poly, "04.2": blur_rows, "04.3": to_ycbcr, "04.4": gamma, "04.5": sharpen}
SHOWN_WITH = {
    "04.1": ["COEFFS = np.array([0.5, -1.25, 0.75, 2.0, -0.5, 0.125, 0.0625], np.float32)"],
    "04.2": ["TAPS = np.array([1, 4, 6, 4, 1], np.float32) / 16"],
    "04.3": [
        "YCC = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5],\n"
        "                [0.5, -0.418688, -0.081312]], np.float32)\n"
        "OFFSET = np.array([0.0, 0.5, 0.5], np.float32)"
    ],
    "04.5": [
        "SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)\n"
        "TILE = 8\nHALO = TILE + 2"
    ],
}

SIGNATURES = {
    poly: ["void(float32[::1], float32[::1])"],
    blur_rows: ["void(float32[:, ::1], float32[::1], float32[:, ::1])"],
    to_ycbcr: ["void(float32[:, :, ::1], float32[:, :, ::1])"],
    gamma: ["void(uint8[::1], uint8[::1], uint8[::1])"],
    sharpen: ["void(float32[:, ::1], float32[:, ::1])"],
}

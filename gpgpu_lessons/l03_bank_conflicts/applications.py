"""Why transposes matter: seed 000's separable filter and seed 003's 2-D FFT, both by transposes.

Work along rows (coalesced), transpose, work along rows again, transpose back: the transposes
are `fast.transpose`, so they cost about as much as a copy.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32

from .. import launch
from .fast import transpose

BINOMIAL_5 = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16
FILTER_BLOCK = (32, 8)  # a warp reads 32 neighbours of a row


@cuda.jit
def filter_rows(a, taps, out):
    """Filter every row with a short 1-D kernel (edges clamped): each warp reads along a row."""
    x, y = cuda.grid(2)
    h, w = a.shape
    if y < h and x < w:
        r = len(taps) // 2
        acc = float32(0)
        for k in range(len(taps)):
            acc += taps[k] * a[y, min(max(x + k - r, 0), w - 1)]
        out[y, x] = acc


@launch.op
def rows_filter(a, taps=BINOMIAL_5, *, out=None):
    """Filter every row of a float32 2-D array with `taps` (odd length, edges clamped)."""
    d_a, to_host = launch.device_input(a, name="a", dtypes=np.float32, ndim=2)
    taps = np.asarray(taps, dtype=np.float32)
    if taps.ndim != 1 or len(taps) % 2 == 0:
        raise ValueError(f"taps must be a 1-D array of odd length, got shape {taps.shape}")
    o = launch.device_output(out, d_a.shape, np.float32, inputs=(d_a,))
    d_taps = cuda.to_device(taps)
    bands = launch.row_bands(d_a.shape, FILTER_BLOCK)  # N x 1: at most 65535 blocks along y
    if len(bands) == 1:
        return launch.single(
            filter_rows, bands[0][2], FILTER_BLOCK, d_a, d_taps, o.device, out=o, to_host=to_host
        )
    steps = tuple(
        launch.Step(filter_rows, grid, FILTER_BLOCK, (d_a[first:end], d_taps, o.device[first:end]))
        for first, end, grid in bands
    )
    return launch.Launch(steps, out=o.device, to_host=to_host, host_out=o.host, out_given=o.given)


def separable_blur(a, taps=BINOMIAL_5):
    """Seed 000's separable 2-D filter: filter rows, transpose, filter rows, transpose back."""
    return transpose(rows_filter(transpose(rows_filter(a, taps)), taps))


def fft2_by_transposes(a, xp=np):
    """Seed 003's 2-D FFT: FFT every row, transpose, FFT every row, transpose back (complex64).

    The row FFTs come from `xp` (NumPy on the host, or CuPy on the GPU); the transposes are
    ours (fast.transpose), each complex64 value moved as one 8-byte word.
    """
    if a is None or np.ndim(a) != 2 or 0 in np.shape(a):
        got = "None" if a is None else f"shape {np.shape(a)}"
        raise ValueError(
            f"a must be a non-empty 2-D array (rows x columns), got {got}: for a 1-D signal "
            "use xp.fft.fft, or make it one row with a[None, :]"
        )
    rows = xp.fft.fft(xp.asarray(a, dtype=xp.complex64), axis=1).astype(xp.complex64)
    rows = xp.fft.fft(xp.asarray(transpose(rows)), axis=1).astype(xp.complex64)
    return xp.asarray(transpose(rows))


SIGNATURES = {filter_rows: ["void(float32[:, ::1], float32[::1], float32[:, ::1])"]}

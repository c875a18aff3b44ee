"""The bench's data: random arrays made on the device, poisoned outputs, and where to check them.

Inputs are hashes of each element's index (random-looking, never all zeros), written by a
grid-stride kernel at memory speed: a 4 GiB array costs milliseconds, not the seconds NumPy's
generator and a host-to-device copy would take. Outputs are filled with other random bytes
before the checked run, so an element a kernel forgets to write is caught.

Large outputs are checked at `positions`: every element of the first and last EDGE rows and
columns that a grid of sampled rows and columns crosses (where the last partial tile, row or
vector lies), plus SPREAD random elements; small outputs (at most FULL elements) everywhere.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32, uint8, uint64

from gpgpu_lessons import hardware, launch, runtime

BLOCK = 256  # threads per block of the fill kernels on a GPU
FULL = 2**20  # outputs up to this many elements are checked everywhere
EDGE = 256  # rows and columns checked at each end: several tiles of any fast kernel
GRID = 256  # sampled rows and columns crossing the edges
SPREAD = 2**20  # random elements checked besides
POISON_SEED = 0xBAD

# lowbias32 (Chris Wellons' integer hash) on uint64 values below 2**32: no product overflows
LOW32 = np.uint64(0xFFFFFFFF)
GOLDEN = np.uint64(0x9E3779B9)
MIX_1 = np.uint64(0x7FEB352D)
MIX_2 = np.uint64(0x846CA68B)
SHIFT_8, SHIFT_15, SHIFT_16, SHIFT_32 = (np.uint64(s) for s in (8, 15, 16, 32))
BYTE = np.uint64(0xFF)
UNIT = np.float32(2.0**-24)  # 24 random bits -> a float32 in [0, 1)


@cuda.jit(device=True, inline="always")
def hash_index(i, seed):
    """32 random-looking bits from an element index and a seed (below 2**32)."""
    j = uint64(i)
    x = ((j & LOW32) * GOLDEN + (j >> SHIFT_32) + seed) & LOW32
    x ^= x >> SHIFT_16
    x = (x * MIX_1) & LOW32
    x ^= x >> SHIFT_15
    x = (x * MIX_2) & LOW32
    return x ^ (x >> SHIFT_16)


@cuda.jit
def random_bytes(out, seed):
    """out[i] = the low byte of hash_index(i, seed), for every i of a 1-D uint8 array."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = uint8(hash_index(i, seed) & BYTE)


@cuda.jit
def random_floats(out, seed):
    """out[i] = a float32 in [0, 1) from 24 bits of hash_index(i, seed), for a 1-D array."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = float32(hash_index(i, seed) >> SHIFT_8) * UNIT


def _fill(kernel, flat, seed: int) -> None:
    """Run a grid-stride fill kernel over a 1-D device array (one warp in the simulator)."""
    if runtime.is_simulator():
        blocks, threads = 1, 32
    else:
        blocks = hardware.filled_grid(flat.size, BLOCK, waves=4)
        threads = BLOCK
    launch.Step(kernel, blocks, threads, (flat, np.uint64(seed % 2**32))).run()


def random_array(shape, dtype, seed: int):
    """A new device array of random uint8 values or float32 values in [0, 1)."""
    dtype = np.dtype(dtype)
    if dtype not in (np.uint8, np.float32):
        raise ValueError(f"the bench makes uint8 or float32 inputs, not {dtype}")
    a = cuda.device_array(shape, dtype=dtype)
    _fill(random_bytes if dtype == np.uint8 else random_floats, a.reshape(a.size), seed)
    return a


def poison(a) -> None:
    """Overwrite every byte of a device array with random bytes (before a checked run)."""
    _fill(random_bytes, a.reshape(a.size).view(np.uint8), POISON_SEED)


def _axis(n: int, rng: np.random.Generator) -> np.ndarray:
    """The first and last EDGE indices of an axis of n, and GRID random ones, sorted, unique."""
    ends = np.r_[0 : min(EDGE, n), max(0, n - EDGE) : n]
    return np.unique(np.r_[ends, rng.integers(0, n, GRID)])


def positions(shape, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Indices (one array per axis of `shape`, at most 2 axes) of the elements to check."""
    shape = tuple(int(s) for s in shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"positions are drawn over 1 or 2 axes, got shape {shape}")
    if int(np.prod(shape)) <= FULL:
        return tuple(axis.reshape(-1) for axis in np.indices(shape))
    rng = np.random.default_rng(seed)
    crossing = np.meshgrid(*(_axis(n, rng) for n in shape), indexing="ij")
    where = [
        np.r_[grid.reshape(-1), rng.integers(0, n, SPREAD)] for grid, n in zip(crossing, shape)
    ]
    order = np.argsort(np.ravel_multi_index(where, shape), kind="stable")  # memory order:
    return tuple(axis[order] for axis in where)  # the references read the inputs in streams


def described(checked: int, total: int) -> str:
    """'all 1,234 elements' or 'a sample of 1,234 of 5,678 elements'."""
    if checked >= total:
        return f"all {total:,} element{'s' if total > 1 else ''}"
    return f"a sample of {checked:,} of {total:,} elements"


SIGNATURES = {
    random_bytes: ["void(uint8[::1], uint64)"],
    random_floats: ["void(float32[::1], uint64)"],
}

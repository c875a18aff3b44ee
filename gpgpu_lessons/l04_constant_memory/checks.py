"""Input checks the lesson-04 wrappers share, and the launch of a filter in bands of rows."""

from __future__ import annotations

import numpy as np

from .. import launch

IMAGE_DTYPES = (np.float32, np.uint8)  # float32 in the kernels: both convert exactly
IMAGE_TYPES = ("float32[:, ::1]", "uint8[:, ::1]")  # the same, in the kernels' signatures
CONSTANT_MEMORY_BYTES = 64 * 1024  # the __constant__ space a kernel can use


def weights(weights, *, constant: bool = False) -> np.ndarray:
    """A 2-D filter with odd sides as contiguous float32 (at most 64 KiB for constant memory)."""
    if not isinstance(weights, np.ndarray):
        raise TypeError(
            f"weights must be a NumPy array, got {type(weights).__name__}; convert "
            "it first: weights = np.asarray(weights, dtype=np.float32)"
        )
    if weights.dtype not in (np.float32, np.float64):
        raise TypeError(
            f"weights has dtype {weights.dtype}, but a filter must be float32 (or "
            "float64, converted); convert it first: weights.astype(np.float32)"
        )
    if weights.ndim != 2 or weights.size == 0:
        raise ValueError(f"weights must be a non-empty 2-D filter, got shape {weights.shape}")
    if any(side % 2 == 0 for side in weights.shape):
        raise ValueError(
            f"filter sides must be odd (a centre pixel), got shape {weights.shape}; "
            "pad an even filter with a row/column of zeros"
        )
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    if constant and weights.nbytes > CONSTANT_MEMORY_BYTES:
        raise ValueError(
            f"a {weights.shape[0]}x{weights.shape[1]} float32 filter takes "
            f"{weights.nbytes} bytes, more than the {CONSTANT_MEMORY_BYTES} bytes "
            "(64 KiB) of constant memory: use memory='global'"
        )
    return weights


def table(table) -> np.ndarray:
    """A lookup table: a float32 NumPy array of 256 entries, one per uint8 value."""
    if not isinstance(table, np.ndarray):
        raise TypeError(
            f"table must be a NumPy array, got {type(table).__name__}; convert it "
            "first: table = np.asarray(table, dtype=np.float32)"
        )
    if table.dtype != np.float32 or table.shape != (256,):
        raise ValueError(
            "table must be a float32 array of 256 entries (one per uint8 value), got "
            f"{table.dtype} {table.shape}"
        )
    return np.ascontiguousarray(table)


def memory(memory: str, allowed: tuple[str, ...]) -> str:
    """Where the kernel reads the filter or table from: one of `allowed`."""
    if memory not in allowed:
        raise ValueError(f"memory must be one of {allowed}, got {memory!r}")
    return memory


def block_2d(block) -> tuple[int, int]:
    """An (x, y) block shape: an int n means (n, 1)."""
    dims = launch.block_shape(block)
    if len(dims) == 3:
        raise ValueError(
            f"block must be an int or an (x, y) pair for these 2-D kernels, got {block!r}"
        )
    return dims if len(dims) == 2 else (dims[0], 1)


def image_and_output(image, out, *, dtypes=IMAGE_DTYPES):
    """(device image, came from the host, Output): a 2-D image and a float32 out of its shape.

    An `out` sharing memory with the image is refused: the filter kernels read neighbours
    that other threads would already have overwritten.
    """
    d_image, to_host = launch.device_input(image, name="image", dtypes=dtypes, ndim=2)
    output = launch.device_output(out, d_image.shape, np.float32, inputs=(d_image,))
    return d_image, to_host, output


def banded(
    kernel,
    shape,
    per_block,
    block,
    args,
    output: launch.Output,
    to_host: bool,
    *,
    first_in_blocks: bool = False,
) -> launch.Launch:
    """kernel(*args, first) over a (rows, columns) shape, in bands of rows that fit CUDA's grid.

    One launch unless the grid would pass 65535 blocks along y (an N x 1 image, say); then
    one launch per band, each told its first row (or row of blocks, if first_in_blocks): the
    kernel reads the whole image, as its filter window crosses the bands.
    """
    unit = per_block[1] if first_in_blocks else 1
    steps = tuple(
        launch.Step(kernel, grid, block, (*args, first // unit))
        for first, _, grid in launch.row_bands(shape, per_block)
    )
    return launch.Launch(steps, output.device, to_host, output.host, False, output.given)

"""Lesson 02's input checks: uint8 images (gray or RGB), their outputs, and mosaic tile sizes.

Kernels see every image as (height, width, channels): a gray image gets a channel axis of 1.
"""

from __future__ import annotations

import math

import numpy as np

from .. import launch, runtime
from ..hardware import MAX_THREADS_PER_BLOCK

CHANNELS = 3  # an RGB pixel; a gray image is seen as (height, width, 1)
MAX_TILE = math.isqrt(MAX_THREADS_PER_BLOCK)  # a tile is one block of a thread per pixel: 32


def image_input(image, name: str = "image"):
    """Check an image; return (device array as (height, width, channels), came_from_host, shape)."""
    d_image, to_host = launch.device_input(image, name=name, dtypes=np.uint8)
    shape = tuple(d_image.shape)
    if not (len(shape) == 2 or (len(shape) == 3 and shape[2] == CHANNELS)):
        raise ValueError(
            f"{name} must be (height, width) grayscale or (height, width, 3) RGB, got shape {shape}"
        )
    channels = 1 if len(shape) == 2 else CHANNELS
    return d_image.reshape(shape[0], shape[1], channels), to_host, shape


def address(d_array) -> int:
    """The device address of a device array's first byte (in the simulator: of its host array)."""
    if runtime.is_simulator():
        return d_array._ary.ctypes.data  # the simulator's device arrays wrap NumPy arrays
    return d_array.__cuda_array_interface__["data"][0]


def image_output(out, d_image, shape, *, works_in_place: bool = False):
    """Check out= for an image of `shape`; return (launch.Output, its (h, w, channels) view).

    `works_in_place`: the kernel is correct when out IS the image (the same device memory);
    an out= that overlaps the image any other way is always refused.
    """
    same = (
        works_in_place
        and out is not None
        and launch.is_device_array(out)
        and address(out) == address(d_image)
    )
    output = launch.device_output(out, shape, np.uint8, inputs=(d_image,), in_place=same)
    channels = 1 if len(shape) == 2 else CHANNELS
    return output, output.device.reshape(shape[0], shape[1], channels)


def mosaic_size(size) -> int:
    """Check a mosaic tile size: 1 to 32 (one block of size x size threads per tile)."""
    size = launch.positive_int(size, "mosaic size")
    if size > MAX_TILE:
        raise ValueError(
            f"mosaic size {size} needs a block of {size} x {size} = {size * size} "
            f"threads, more than the 1024 CUDA allows: use at most {MAX_TILE}"
        )
    return size

"""What lesson 02's flip tests share: random images, device views placed at any byte with a
guard after them, and the names of the kernels a prepared flip launches."""

import numpy as np
from numba import cuda

GUARD = 16  # bytes after an image in its allocation, which a flip must leave alone
FILL = 0x5A  # the guard bytes' value


def random_image(shape, seed=0):
    """Random bytes from 1 to 255: a byte left at 0 cannot pass for a flipped one."""
    return np.random.default_rng(seed).integers(1, 256, size=shape, dtype=np.uint8)


def placed(a, offset: int):
    """(allocation, view): a on the device, `offset` bytes in, GUARD bytes of FILL after it."""
    allocation = cuda.to_device(np.full(offset + a.size + GUARD, FILL, dtype=np.uint8))
    view = allocation[offset : offset + a.size]
    view.copy_to_device(a.reshape(-1))
    return allocation, view.reshape(a.shape)


def kernel_names(prepared) -> set[str]:
    """The Python names of the kernels a prepared launch runs."""
    return {step.kernel.py_func.__name__ for step in prepared.steps}

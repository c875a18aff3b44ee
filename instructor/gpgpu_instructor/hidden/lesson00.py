"""Hidden cases of lesson 00: sizes one off the block, and the grid-stride loop on other grids."""

from gpgpu_lessons.exercises.lesson00 import _grid_stride_case, _saxpy_case


def _saxpy(rng, gpu):
    """Blocks of 128 covering n: two elements, n one off a multiple of 128, a prime."""
    return [_saxpy_case(rng, n) for n in (2, 127, 128, 129, 257)]


def _grid_stride(rng, gpu):
    """A grid of any size: one thread, one block, n one off the grid's threads, more threads."""
    launches = [(7, 1, 1), (100, 1, 32), (191, 3, 64), (192, 3, 64), (193, 3, 64), (37, 5, 96)]
    return [_grid_stride_case(rng, n, grid, block) for n, grid, block in launches]


HIDDEN = {"00.1": _saxpy, "00.5": _grid_stride}

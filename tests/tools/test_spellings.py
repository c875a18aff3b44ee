"""The yardstick's other spellings of lesson 03's padded transpose transpose every shape."""

from __future__ import annotations

import numpy as np
import pytest
from gpgpu_tools.cuda_c import spellings
from numba import cuda

from gpgpu_lessons import launch


@pytest.mark.parametrize("name", list(spellings.SPELLINGS))
@pytest.mark.parametrize("shape", [(37, 45), (32, 64), (1, 33), (33, 1)])
def test_a_spelling_transposes_edge_and_full_tiles(name, shape, rng):
    a = rng.random(shape, dtype=np.float32)
    d_out = cuda.to_device(np.full(shape[::-1], np.nan, np.float32))
    grid = launch.grid_2d(shape, (spellings.TILE, spellings.TILE))
    spellings.SPELLINGS[name][grid, (spellings.TILE, spellings.ROWS)](cuda.to_device(a), d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), a.T)

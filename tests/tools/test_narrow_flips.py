"""gpgpu_tools.narrow_flips in the simulator: tiny shapes, each flip checked against NumPy.

The kernels themselves are checked on many more shapes in tests/lessons/test_l02_flips_i32.py;
here the tool runs on three of its TINY_SHAPES (an N x 1 image, a gray and an RGB one), each
through every path and candidate, and times with one sample."""

import json

import numpy as np
from gpgpu_tools import narrow_flips
from gpgpu_tools.bench.data import random_array

from gpgpu_lessons.l02_shared_memory import fast

THREE_SHAPES = [(33, 1), (9, 40), (5, 7, 3)]  # one pixel wide, gray, RGB


def test_the_tiny_shapes_are_checked_on_every_path(tmp_path, monkeypatch):
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", fast.SHORT_MIN_BYTES)  # main lowers it to 0
    assert set(THREE_SHAPES) <= set(narrow_flips.TINY_SHAPES)
    monkeypatch.setattr(narrow_flips, "TINY_SHAPES", THREE_SHAPES)
    assert narrow_flips.main(["--json", str(tmp_path / "flips.json")]) == 0
    rows = json.loads((tmp_path / "flips.json").read_text())["rows"]
    assert len(rows) == 2 * len(narrow_flips.TINY_SHAPES)
    for row in rows:
        assert "ms" not in row  # the simulator checks, it does not time
        for per_thread in narrow_flips.SHORT_PER_THREAD:
            short = row["others"][f"short rows x{per_thread}"]["kernel"]
            assert short.startswith("flip_short_rows_") and f"_x{per_thread}_" in short
        one_pixel_wide = row["shape"][1] == 1
        assert row["kernel"].startswith("flip_short_rows_") != one_pixel_wide


def test_a_timed_row_has_every_ratio(monkeypatch):
    """The GPU's branch, run in the simulator on a tiny image (host times: shapes only)."""
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", 0)
    monkeypatch.setattr(narrow_flips, "REPEAT", 1)  # the row's fields, not its times
    d_image = random_array((9, 5, 3), np.uint8, seed=1)
    d_out = random_array((9, 5, 3), np.uint8, seed=2)
    row = narrow_flips.measure((9, 5, 3), True, 1.0, d_image, d_out, d_image.copy_to_host())
    assert row["of_copy"] > 0 and row["gbs"] > 0
    assert set(row["others"]) == {"general"} | {
        f"short rows x{p}" for p in narrow_flips.SHORT_PER_THREAD
    }
    assert all(other["of_copy"] > 0 for other in row["others"].values())
    wrapper_kernel = f"flip_short_rows_horizontal_rgb_8B_x{fast.SHORT_PER_THREAD}_i32"
    assert f"x copy  {wrapper_kernel}" in narrow_flips.line(row)

"""gpgpu_tools.narrow_flips in the simulator: tiny shapes, each flip checked against NumPy."""

import json

from gpgpu_tools import narrow_flips

from gpgpu_lessons.l02_shared_memory import fast


def test_the_tiny_shapes_are_checked_on_every_path(tmp_path, monkeypatch):
    monkeypatch.setattr(fast, "SHORT_MIN_BYTES", fast.SHORT_MIN_BYTES)  # main lowers it to 0
    assert narrow_flips.main(["--json", str(tmp_path / "flips.json")]) == 0
    rows = json.loads((tmp_path / "flips.json").read_text())["rows"]
    assert len(rows) == 2 * len(narrow_flips.TINY_SHAPES)
    for row in rows:
        assert "ms" not in row  # the simulator checks, it does not time
        assert row["others"]["short rows"]["kernel"].startswith("flip_short_rows_")
        one_pixel_wide = row["shape"][1] == 1
        assert row["kernel"].startswith("flip_short_rows_") != one_pixel_wide

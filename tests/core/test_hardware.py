"""The hardware's numbers, the fill-the-GPU grid, and the optional CuPy import."""

import pytest

from gpgpu_lessons import hardware, optional, runtime


def test_the_numbers_agree_with_each_other():
    assert hardware.FULL_MASK == 2**hardware.WARP_SIZE - 1
    assert hardware.WAVEFRONT_BYTES == hardware.BANKS * hardware.BANK_BYTES == 128
    assert hardware.LINE_BYTES == 4 * hardware.SECTOR_BYTES


def test_filled_grid_never_passes_what_n_needs(monkeypatch):
    monkeypatch.setattr(runtime, "is_simulator", lambda: False)
    monkeypatch.setattr(hardware, "resident_blocks", lambda block, per_sm=None: 10 * (per_sm or 8))
    assert hardware.filled_grid(1_000_000, 256) == 80  # one wave: 10 SMs x 8 blocks
    assert hardware.filled_grid(1_000_000, 256, waves=3, per_sm=2) == 60
    assert hardware.filled_grid(1000, 256) == 4  # what 1000 items need
    assert hardware.filled_grid(0, 256) == 1


@pytest.mark.skipif(not runtime.is_simulator(), reason="the simulator runs one block")
def test_filled_grid_is_one_block_in_the_simulator():
    assert hardware.filled_grid(10**9, 128, waves=4) == 1


def test_optional_cupy_says_why_it_is_missing():
    module, why = optional.cupy()
    assert (module is None) == bool(why)
    if runtime.is_simulator():
        assert module is None and "simulator" in why

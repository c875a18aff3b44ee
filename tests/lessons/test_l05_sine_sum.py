"""Seed 001's sums of sine waves: every variant against the float64 reference, on odd shapes."""

import numpy as np
import pytest
from numba import cuda

from gpgpu_lessons.l05_atomics_vs_reduction import fast, sine_sum

SMALL = dict(block=16, host_loop_blocks=4)  # small blocks: one simulator thread per thread
SHAPES = [(40, 7, 3), (1, 1, 1), (17, 1, 11)]  # (n, width, height): interleaved in one process


def on_device(waves):
    return [cuda.to_device(v) for v in waves]


def check(got, waves, width, height):
    expected, atol = sine_sum.reference(*waves, width=width, height=height)
    np.testing.assert_allclose(got, expected, rtol=0, atol=atol)


@pytest.mark.parametrize("variant", sine_sum.VARIANTS)
def test_textbook_variants_match_float64(variant):
    for n, width, height in SHAPES:
        waves = sine_sum.waves(n, seed=n)
        out = cuda.to_device(np.full((height, width), np.nan, dtype=np.float32))
        assert (
            sine_sum.sine_sum(
                *on_device(waves), variant=variant, width=width, height=height, out=out, **SMALL
            )
            is out
        )
        check(out.copy_to_host(), waves, width, height)


@pytest.mark.parametrize("variant", fast.VARIANTS)
def test_fast_variants_match_float64(variant):
    """300 columns too: not a multiple of the outputs per thread."""
    for n, width, height in SHAPES + [(3, 300, 1)]:
        waves = sine_sum.waves(n, seed=n)
        got = fast.sine_sum(*waves, variant=variant, width=width, height=height)
        check(got, waves, width, height)


@pytest.mark.parametrize("block, outputs, waves_per_step", [(32, 8, 2), (16, 3, 4), (64, 1, 1)])
def test_recurrence_configurations(block, outputs, waves_per_step):
    """Columns not a multiple of the outputs per thread, n not a multiple of the waves per step."""
    assert (outputs, waves_per_step) in fast.OTHER_RECURRENCES
    for n, width, height in [(5, 37, 3), (4, 2, 5)]:
        waves = sine_sum.waves(n, seed=n)
        got = fast.recurrence(
            *on_device(waves),
            width=width,
            height=height,
            block=block,
            outputs=outputs,
            waves=waves_per_step,
        )
        check(got.copy_to_host(), waves, width, height)


def test_seed_variants_add_into_a_cleared_output():
    """2-1 and 3 add into out: a poisoned NumPy out= is cleared first, twice in a row."""
    waves = sine_sum.waves(40, seed=40)
    out = np.full((3, 7), 1e6, dtype=np.float32)
    for variant in ("2-1 atomics", "3 host loop"):
        got = sine_sum.sine_sum(*waves, variant=variant, width=7, height=3, out=out, **SMALL)
        assert got is out
        check(out, waves, 7, 3)


def test_reference_rows_pick_rows():
    waves = sine_sum.waves(3)
    full, atol = sine_sum.reference(*waves, width=6, height=4)
    picked, picked_atol = sine_sum.reference(*waves, width=6, height=4, rows=[3, 1])
    np.testing.assert_array_equal(picked, full[[3, 1]])
    assert picked_atol == atol > 0


def test_waves_are_the_seeds_uniform_draws():
    mag, freq, phi = sine_sum.waves(4)
    assert all(v.dtype == np.float32 and v.shape == (4,) for v in (mag, freq, phi))
    assert np.all((mag >= 0) & (mag < 1)) and len({mag[0], freq[0], phi[0]}) == 3


@pytest.mark.parametrize("wrapper", [sine_sum.sine_sum, fast.sine_sum, fast.recurrence])
def test_bad_input_is_named(wrapper):
    mag, freq, phi = sine_sum.waves(3)
    with pytest.raises(ValueError, match="same length"):
        wrapper(mag, freq[:2], phi, width=2, height=2)
    with pytest.raises(TypeError, match="mag has dtype float64"):
        wrapper(mag.astype(np.float64), freq, phi, width=2, height=2)
    with pytest.raises(ValueError, match="phi must be 1-D"):
        wrapper(mag, freq, phi.reshape(3, 1), width=2, height=2)
    with pytest.raises(ValueError, match="width must be an integer >= 1"):
        wrapper(mag, freq, phi, width=0, height=2)
    with pytest.raises(ValueError, match=r"must have shape \(2, 2\)"):
        wrapper(mag, freq, phi, width=2, height=2, out=cuda.device_array((2, 3), dtype=np.float32))


def test_bad_options_are_named():
    waves = sine_sum.waves(3)
    with pytest.raises(ValueError, match="unknown variant"):
        sine_sum.sine_sum(*waves, variant="5 magic", width=2, height=2)
    with pytest.raises(ValueError, match="unknown variant"):
        fast.sine_sum(*waves, variant="1 brute force", width=2, height=2)
    with pytest.raises(ValueError, match="power of two"):
        sine_sum.sine_sum(*waves, width=2, height=2, block=48)
    with pytest.raises(ValueError, match="at most 1024"):
        sine_sum.sine_sum(*waves, width=2, height=2, block=2048)
    with pytest.raises(ValueError, match="outputs"):
        fast.recurrence(*waves, width=2, height=2, outputs=0)
    with pytest.raises(ValueError, match="integer >= 1"):
        sine_sum.waves(0)

"""Lesson 04: every filter kernel and the lookup tables against NumPy, borders included, plus the
tall images of issue 13 (its other regressions: tests/core/test_wrapper_contract.py), the
tracer's counts of the lesson's launches (broadcast vs serialised) and its figures."""

import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from gpgpu_lessons import images, launch, plotting, results, runtime
from gpgpu_lessons.l04_constant_memory import (
    checks,
    fast,
    figures,
    filters,
    ptx,
    reference,
    textbook,
    tracing,
)
from gpgpu_lessons.l04_constant_memory.fast import Tile
from gpgpu_lessons.timing import EVENTS, SIMULATED, Timing

# A small tile (16 threads, 8 x 16 outputs per block) gives the simulator few threads and the
# tests many blocks: border blocks (clamped) and interior ones (the fast path) on small images.
SMALL_TILE = Tile(threads_x=8, threads_y=2, rows=4, cols=2)
SHAPES = {"one row": (1, 37), "one column": (37, 1), "rectangular": (13, 35), "primes": (7, 11)}


def random_filter(rng, ky, kx):
    return rng.standard_normal((ky, kx)).astype(np.float32)


def poisoned_run(wrapper, image, *args, **kwargs):
    """Run a wrapper on device arrays into an output of NaN (a pixel never written shows)."""
    out = cuda.to_device(np.full(image.shape, np.nan, dtype=np.float32))
    assert wrapper(cuda.to_device(image), *args, out=out, **kwargs) is out
    return out.copy_to_host()


def assert_filtered(got, image, weights):
    assert not np.isnan(got).any(), "some output pixels were never written"
    np.testing.assert_allclose(
        got, reference.reference(image, weights), rtol=0, atol=reference.tolerance(image, weights)
    )


def image_of(rng, shape, dtype=np.float32):
    if dtype == np.uint8:
        return rng.integers(1, 256, size=shape, dtype=np.uint8)
    return rng.random(shape, dtype=np.float32) + 0.5


# ---- textbook kernels ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize(
    "memory, name",
    [
        ("global", None),
        ("constant", "LAPLACIAN"),
        ("constant", "BOX_BLUR"),
        ("constant", "GAUSSIAN_5"),
        ("frozen", "GAUSSIAN_5"),
    ],
)
def test_textbook_filter_matches_numpy(rng, memory, name, shape):
    image = image_of(rng, shape)
    weights = random_filter(rng, 3, 5) if name is None else filters.NAMED[name]
    got = poisoned_run(textbook.filter2d, image, weights, memory=memory, block=(8, 4))
    assert_filtered(got, image, weights)


@pytest.mark.parametrize("filter_shape", [(1, 1), (3, 7), (9, 9)])  # 9x9: wider than the image
def test_textbook_global_filter_of_any_odd_shape(rng, filter_shape):
    image = image_of(rng, (6, 8))
    weights = random_filter(rng, *filter_shape)
    assert_filtered(poisoned_run(textbook.filter2d, image, weights), image, weights)


@pytest.mark.parametrize(
    "shape", [(1, 37), (37, 1), (29, 41)], ids=["one row", "one column", "blocks"]
)
def test_textbook_tiled_filter_matches_numpy(rng, shape):
    image = image_of(rng, shape)
    got = poisoned_run(textbook.filter2d_tiled, image, filters.GAUSSIAN_5)
    assert_filtered(got, image, filters.GAUSSIAN_5)


@pytest.mark.parametrize(
    "wrapper, kwargs",
    [
        (textbook.filter2d, {"memory": "global"}),
        (textbook.filter2d, {"memory": "constant"}),
        (textbook.filter2d_tiled, {}),
        (fast.filter2d, {"tile": SMALL_TILE}),
    ],
)
def test_uint8_image_gives_float32(rng, wrapper, kwargs):
    image = image_of(rng, (11, 19), np.uint8)
    got = wrapper(image, filters.GAUSSIAN_5, **kwargs)
    assert got.dtype == np.float32 and got.shape == image.shape and isinstance(got, np.ndarray)
    assert_filtered(got, image, filters.GAUSSIAN_5)


@pytest.mark.parametrize("block", [(32, 1), (8, 8), (1, 32), 16])
def test_block_shapes_of_the_homework_sweep(rng, block):
    image = image_of(rng, (19, 23))
    got = poisoned_run(textbook.filter2d, image, filters.GAUSSIAN_5, memory="constant", block=block)
    assert_filtered(got, image, filters.GAUSSIAN_5)


@pytest.mark.parametrize("memory", ["global", "constant"])
@pytest.mark.parametrize("shape", [(21, 45), (1, 33), (33, 1)])
def test_lookup_table(rng, memory, shape):
    image = rng.integers(0, 256, size=shape, dtype=np.uint8)
    table = filters.TONE_CURVE if memory == "constant" else rng.random(256, dtype=np.float32) + 1
    out = cuda.to_device(np.full(shape, np.nan, dtype=np.float32))
    textbook.lookup(cuda.to_device(image), table, memory=memory, out=out)
    np.testing.assert_array_equal(out.copy_to_host(), table[image])


# ---- fast kernels ----------------------------------------------------------------------------


@pytest.mark.parametrize("memory", fast.MEMORIES)
@pytest.mark.parametrize("shape", [*SHAPES.values(), (29, 41)], ids=[*SHAPES.keys(), "blocks"])
def test_fast_filter_matches_numpy(rng, memory, shape):
    image = image_of(rng, shape)
    weights = random_filter(rng, 5, 3)
    assert_filtered(
        poisoned_run(fast.filter2d, image, weights, memory=memory, tile=SMALL_TILE), image, weights
    )


@pytest.mark.parametrize("memory", fast.MEMORIES)
def test_fast_filter_with_the_tuned_tile(rng, memory):
    """The notebook's kernel (TILE, GAUSSIAN_5): one block of 128 threads, 32 outputs each."""
    image = image_of(rng, (9, 40))
    got = poisoned_run(fast.filter2d, image, filters.GAUSSIAN_5, memory=memory)
    assert_filtered(got, image, filters.GAUSSIAN_5)


@settings(max_examples=5, deadline=None)
@given(
    h=st.integers(1, 24),
    w=st.integers(1, 24),
    ry=st.integers(0, 3),
    rx=st.integers(0, 3),
    tile=st.builds(
        Tile,
        st.sampled_from([1, 4, 8]),
        st.integers(1, 3),
        st.integers(1, 5),
        st.integers(1, 2),
        st.booleans(),
    ),
    seed=st.integers(0, 2**16),
)
def test_fast_filter_any_odd_filter_any_shape_any_tile(h, w, ry, rx, tile, seed):
    rng = np.random.default_rng(seed)
    image = rng.random((h, w), dtype=np.float32)
    weights = random_filter(rng, 2 * ry + 1, 2 * rx + 1)
    assert_filtered(poisoned_run(fast.filter2d, image, weights, tile=tile), image, weights)


def test_the_module_constants_are_those_of_the_tuned_tile_and_filter():
    expected = fast.constants(fast.TILE, fast.WEIGHTS.shape)
    assert {name: getattr(fast, name) for name in expected} == expected
    assert fast.tiled_kernel(filters.GAUSSIAN_5) is fast.filter_tiled
    assert textbook.HALO_TILE == textbook.TILE + 2 * textbook.RADIUS
    assert filters.GAUSSIAN_5.shape == (2 * textbook.RADIUS + 1,) * 2


def test_every_fast_instance_has_its_own_name_and_is_compiled_once(rng):
    weights = random_filter(rng, 3, 3)
    constant = fast.tiled_kernel(weights, tile=SMALL_TILE)
    assert fast.tiled_kernel(weights.copy(), tile=SMALL_TILE) is constant
    assert fast.tiled_kernel(weights.astype(np.float64), tile=SMALL_TILE) is constant
    others = [
        fast.tiled_kernel(weights + 1, tile=SMALL_TILE),
        fast.tiled_kernel(weights, memory="global", tile=SMALL_TILE),
        fast.tiled_kernel(weights, tile=SMALL_TILE._replace(fast_interior=False)),
        fast.tiled_kernel(weights, tile=SMALL_TILE._replace(rows=3)),
    ]
    names = [(getattr(k, "py_func", None) or k.fn).__name__ for k in [constant, *others]]
    assert len(set(names)) == len(names), names
    assert names[0].startswith("filter_tiled_constant_3x3_8x2_r4c2_")
    assert fast.tiled_kernel(weights + 1, memory="global", tile=SMALL_TILE) is others[1]


def test_editing_the_host_filter_after_compiling_gives_a_new_kernel(rng):
    image = image_of(rng, (9, 11))
    weights = random_filter(rng, 3, 3)
    fast.filter2d(image, weights, tile=SMALL_TILE)
    weights[1, 1] += 10  # the compiled kernel holds a copy of the old bytes
    assert_filtered(fast.filter2d(image, weights, tile=SMALL_TILE), image, weights)


def test_tuning_space_holds_the_chosen_tile_and_builds_launches():
    space, chosen = fast.TUNING["space"], fast.TUNING["chosen"]
    assert all(chosen[name] in values for name, values in space.items())
    assert fast.Tile(32, **chosen) == fast.TILE
    prepared, nbytes = fast.TUNING["case"](**chosen)  # the preset image and an odd-sided one
    side = fast.runtime.PRESETS["image_side"]
    assert isinstance(prepared, launch.Launch) and nbytes == 2 * 4 * (side**2 + side**2 - 1)
    with pytest.raises(ValueError, match="48 KiB"):  # the tuning tool skips what a kernel refuses
        fast.TUNING["case"](threads_y=8, rows=32, cols=4)


# ---- issue 13's regressions ------------------------------------------------------------------

WRAPPERS = {
    "textbook global": (textbook.filter2d, {"memory": "global", "block": (8, 8)}),
    "textbook constant": (textbook.filter2d, {"memory": "constant", "block": (8, 8)}),
    "textbook tiled": (textbook.filter2d_tiled, {}),
    "fast": (fast.filter2d, {"tile": SMALL_TILE}),
}


@pytest.mark.parametrize("name", WRAPPERS)
def test_tall_and_wide_images_run_in_bands_that_fit_the_grid(rng, monkeypatch, name):
    """On a GPU an N x 1 image needs more than 65535 blocks along y: the wrappers launch bands.

    The fast wrapper filters N x 1 as 1 x N (one launch); its tall tiles still run in bands
    (2 to 4 columns: filter_narrow, 5 to 80 filter_band, unless a tall tile spans the image
    exactly, as 8 columns: one launch along x)."""
    wrapper, kwargs = WRAPPERS[name]
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)
    for shape in ((41, 1), (1, 41), (41, 8)):  # 2 or 3 bands, the last one short
        image = image_of(rng, shape)
        prepared = wrapper.prepare(image, filters.GAUSSIAN_5, **kwargs)
        assert all(step.grid[1] <= 2 for step in prepared.steps)
        one_launch = shape[0] == 1 or (name == "fast" and shape[1] == 1)
        assert len(prepared.steps) > 1 or one_launch
        assert_filtered(
            poisoned_run(wrapper, image, filters.GAUSSIAN_5, **kwargs), image, filters.GAUSSIAN_5
        )


def test_tall_lookup_runs_in_bands(rng, monkeypatch):
    monkeypatch.setattr(launch, "MAX_GRID_YZ", 2)
    image = rng.integers(0, 256, size=(70, 1), dtype=np.uint8)
    assert len(textbook.lookup.prepare(image, filters.TONE_CURVE, block=(1, 8)).steps) == 5
    np.testing.assert_array_equal(
        textbook.lookup(image, filters.TONE_CURVE, memory="constant", block=(1, 8)),
        filters.TONE_CURVE[image],
    )


TALL = 2**21 + 3  # rows: more than 65535 blocks along y for every wrapper's launch


@pytest.mark.skipif(runtime.is_simulator(), reason="millions of threads: a GPU's job")
@pytest.mark.parametrize(
    "wrapper, kwargs",
    [
        (textbook.filter2d, {"memory": "global"}),
        (textbook.filter2d, {"memory": "constant"}),
        (textbook.filter2d_tiled, {}),
        (fast.filter2d, {}),
    ],
)
def test_gpu_filters_tall_and_wide_images(rng, wrapper, kwargs):
    for shape in ((TALL, 1), (1, TALL)):
        image = image_of(rng, shape)
        assert_filtered(wrapper(image, filters.GAUSSIAN_5, **kwargs), image, filters.GAUSSIAN_5)


@pytest.mark.skipif(runtime.is_simulator(), reason="millions of threads: a GPU's job")
def test_gpu_looks_up_tall_and_wide_images(rng):
    for shape in ((TALL, 1), (1, TALL)):
        image = rng.integers(0, 256, size=shape, dtype=np.uint8)
        for memory in ("global", "constant"):
            got = textbook.lookup(image, filters.TONE_CURVE, memory=memory)
            np.testing.assert_array_equal(got, filters.TONE_CURVE[image])


# ---- bad input gets a clear error ------------------------------------------------------------

GOOD = np.ones((8, 8), np.float32)
THREE = np.ones((3, 3), np.float32)


@pytest.mark.parametrize(
    "image, weights, kwargs, error, message",
    [
        (GOOD, [[1.0]], {}, TypeError, r"np\.asarray\(weights, dtype=np\.float32\)"),
        (GOOD, np.ones((4, 4), np.float32), {}, ValueError, "sides must be odd"),
        (GOOD, np.ones((3, 2), np.float32), {}, ValueError, "sides must be odd"),
        (GOOD, np.ones((3, 3), np.int32), {}, TypeError, "dtype int32"),
        (GOOD, np.ones(3, np.float32), {}, ValueError, "2-D filter"),
        (np.ones((8, 8), np.float64), THREE, {}, TypeError, "dtype float64"),
        (np.ones((8, 8), np.int16), THREE, {}, TypeError, "dtype int16"),
        (np.ones(8, np.float32), THREE, {}, ValueError, "must be 2-D"),
        (np.ones((2, 8, 8), np.float32), THREE, {}, ValueError, "must be 2-D"),
        (np.ones((8, 8), np.float32)[:, ::2], THREE, {}, ValueError, "C-contiguous"),
        (np.ones((0, 8), np.float32), THREE, {}, ValueError, "empty"),
        (GOOD, THREE, {"memory": "texture"}, ValueError, "memory must be one of"),
        (GOOD, THREE, {"block": (64, 32)}, ValueError, "at most 1024"),
        (GOOD, THREE, {"block": (8, 8, 2)}, ValueError, r"\(x, y\) pair"),
        (GOOD, THREE, {"block": 0}, ValueError, "integer >= 1"),
        (
            GOOD,
            THREE,
            {"memory": "constant"},
            ValueError,
            "only for LAPLACIAN or BOX_BLUR or GAUSSIAN",
        ),
        (GOOD, THREE, {"memory": "frozen"}, ValueError, r"fast\.filter2d\(image, weights\)"),
        (GOOD, np.ones((129, 129), np.float32), {"memory": "constant"}, ValueError, "64 KiB"),
    ],
)
def test_bad_textbook_filter_input_is_named(image, weights, kwargs, error, message):
    with pytest.raises(error, match=message):
        textbook.filter2d(image, weights, **kwargs)


def test_the_textbook_tiled_kernel_refuses_other_filters():
    with pytest.raises(ValueError, match=r"GAUSSIAN_5 compiled in.*fast\.filter2d"):
        textbook.filter2d_tiled(GOOD, filters.LAPLACIAN)


@pytest.mark.parametrize(
    "weights, kwargs, error, message",
    [
        ([[1.0]], {}, TypeError, r"np\.asarray\(weights"),
        (THREE, {"memory": "frozen"}, ValueError, "memory must be one of"),
        (np.ones((129, 129), np.float32), {}, ValueError, "64 KiB"),
        (np.ones((81, 81), np.float32), {"memory": "global"}, ValueError, "48 KiB"),
        (THREE, {"tile": (32, 4, 8, 4)}, TypeError, r"fast\.Tile"),
        (THREE, {"tile": Tile(32, 8, 0)}, ValueError, "tile.rows must be an integer >= 1"),
        (THREE, {"tile": Tile(64, 32)}, ValueError, "at most 1024"),
    ],
)
def test_bad_fast_filter_input_is_named(weights, kwargs, error, message):
    with pytest.raises(error, match=message):
        fast.filter2d(GOOD, weights, **kwargs)


def test_largest_constant_filter_is_accepted():
    weights = np.ones((127, 127), np.float32)  # 64,516 bytes: fits in 64 KiB
    assert checks.weights(weights, constant=True).nbytes == 127 * 127 * 4


@pytest.mark.parametrize(
    "image, table, kwargs, error, message",
    [
        (np.ones((4, 4), np.uint8), np.ones(255, np.float32), {}, ValueError, "256 entries"),
        (np.ones((4, 4), np.uint8), np.ones(256, np.float64), {}, ValueError, "float32"),
        (np.ones((4, 4), np.uint8), list(range(256)), {}, TypeError, r"np\.asarray\(table"),
        (np.ones((4, 4), np.float32), np.ones(256, np.float32), {}, TypeError, "dtype float32"),
        (
            np.ones((4, 4), np.uint8),
            np.ones(256, np.float32),
            {"memory": "frozen"},
            ValueError,
            "memory must be one of",
        ),
        (
            np.ones((4, 4), np.uint8),
            np.ones(256, np.float32),
            {"memory": "constant"},
            ValueError,
            "only for TONE_CURVE",
        ),
    ],
)
def test_bad_lookup_input_is_named(image, table, kwargs, error, message):
    with pytest.raises(error, match=message):
        textbook.lookup(image, table, **kwargs)


# ---- filters, reference, PTX -----------------------------------------------------------------


def test_named_filters_are_read_only_float32():
    assert filters.LAPLACIAN.sum() == 0 and filters.LAPLACIAN[1, 1] == -4
    np.testing.assert_allclose(filters.BOX_BLUR.sum(), 1, rtol=1e-6)
    g = filters.GAUSSIAN_5
    assert g.shape == (5, 5) and g.dtype == np.float32 and g[2, 2] == g.max()
    np.testing.assert_allclose(g.sum(), 1, rtol=1e-6)
    np.testing.assert_allclose(g, g.T)
    assert filters.TONE_CURVE.shape == (256,) and filters.TONE_CURVE.dtype == np.float32
    for named in (*filters.NAMED.values(), filters.TONE_CURVE):
        with pytest.raises(ValueError, match="read-only"):
            named[0] = 1
    with pytest.raises(ValueError, match="odd integer size"):
        filters.gaussian(4)


def test_reference_is_clamp_to_edge():
    image = np.arange(12, dtype=np.float32).reshape(3, 4)
    shift_right = np.zeros((1, 3), dtype=np.float32)
    shift_right[0, 0] = 1  # out[y, x] = image[y, clamp(x - 1)]
    np.testing.assert_array_equal(reference.reference(image, shift_right)[:, 0], image[:, 0])
    np.testing.assert_array_equal(reference.reference(image, shift_right)[:, 1:], image[:, :-1])


def _is_kernel(value) -> bool:
    """A @cuda.jit kernel (not a device function), on a GPU or in the simulator."""
    if type(value).__name__ == "FakeCUDAKernel":
        return not value._device
    return type(value).__name__ == "CUDADispatcher" and not value.targetoptions.get("device")


@pytest.mark.parametrize("module", [textbook, fast])
def test_every_kernel_is_registered_with_its_signatures(module):
    kernels = [value for value in vars(module).values() if _is_kernel(value)]
    assert kernels and all(kernel in module.SIGNATURES for kernel in kernels)
    for signatures in module.SIGNATURES.values():
        assert len(signatures) >= 1 and all(s.startswith("void(") for s in signatures)


def test_ptx_summary_counts_const_arrays_loads_and_immediates():
    text = "\n".join(
        [
            ".const .align 4 .b8 _cudapy_cmem[1024] = {0, 0, 128, 63};",
            "\tld.const.f32 \t%f1, [%rd25];",
            "\tld.global.u8 \t%r7, [%rd22];",
            "\tfma.rn.f32 \t%f3, %f2, 0f3F800000, %f1;",  # an immediate weight
            "\tfma.rn.f32 \t%f4, %f2, %f3, 0f00000000;",  # an immediate addend only: not counted
        ]
    )
    assert ptx.ptx_summary(text) == (
        "1 .const array(s) _cudapy_cmem[1024]; 1 ld.const, 1 ld.global, 1 fma with an immediate"
    )
    assert ptx.ptx_summary({"sig a": text, "sig b": ""}) == ptx.ptx_summary(text)
    assert ptx.ptx_summary("").startswith("0 .const array(s);")


@pytest.mark.skipif(
    not runtime.is_simulator(), reason="a GPU has PTX: this is the simulator's case"
)
def test_the_simulator_has_no_ptx(capsys):
    signature = textbook.SIGNATURES[textbook.filter_global][0]
    assert ptx.kernel_ptx(textbook.filter_global, signature) is None
    ptx.show([textbook.filter_global], in_simulator="a GPU run shows it")
    assert capsys.readouterr().out == "simulator: no PTX here; a GPU run shows it\n"


def test_ptx_compiles_each_kernel_for_the_signature_the_lesson_gives():
    assert ptx.signature(textbook.lookup_global) == textbook.SIGNATURES[textbook.lookup_global][0]
    kernel = fast.tiled_kernel(filters.LAPLACIAN)
    assert ptx.signature(kernel) == fast.SIGNATURES[kernel][0]
    with pytest.raises(ValueError, match="not one of lesson 04's compiled kernels"):
        ptx.signature(fast.tiled_kernel(filters.gaussian(3, 2.0)))


def test_ptx_shows_a_prepared_launch_as_the_kernel_it_runs():
    image = tracing.random_image((64, 256))  # TILE's outputs: 2 x 2 blocks
    prepared = fast.filter2d.prepare(image, filters.GAUSSIAN_5, memory="global")
    assert ptx.launched(prepared) is fast.tiled_kernel(filters.GAUSSIAN_5, memory="global")
    tall = textbook.filter2d.prepare(np.ones((2**20, 1), np.float32), filters.LAPLACIAN)
    assert len(tall.steps) > 1 and ptx.launched(tall) is textbook.filter_global  # bands: one
    assert ptx.launched(textbook.lookup_global) is textbook.lookup_global
    two = launch.Launch(
        tuple(launch.Step(k, 1, 1, ()) for k in (fast.filter_tiled, textbook.filter_global))
    )
    with pytest.raises(ValueError, match="runs 2 kernels"):
        ptx.launched(two)


PTX_SCRIPT = textwrap.dedent("""
    import types
    import numba.cuda.dispatcher as dispatcher
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
    from gpgpu_lessons.l04_constant_memory import fast, filters, ptx, textbook
    small = fast.Tile(8, 2, 4, 2)
    kernels = [textbook.gaussian5_constant, textbook.tone_curve_constant,
               fast.tiled_kernel(filters.GAUSSIAN_5, tile=small),
               fast.tiled_kernel(filters.GAUSSIAN_5, memory="global", tile=small)]
    signatures = [textbook.SIGNATURES[kernels[0]][0], textbook.SIGNATURES[kernels[1]][0]]
    signatures += 2 * [fast.SIGNATURES[fast.filter_tiled][0]]
    for kernel, signature in zip(kernels, signatures):
        text = ptx.kernel_ptx(kernel, signature, cc=(9, 0))
        entry = [line for line in text.splitlines() if ".entry" in line][0]
        print(ptx.ptx_summary(text), "|", entry)
    ptx.show({"lookup": textbook.tone_curve_constant}, in_simulator="not printed", cc=(9, 0))
""")


def test_ptx_shows_where_each_kernel_keeps_its_filter(cuda_compiler):
    """Compile-only (no GPU): constant kernels keep a .const array or fold the taps into fmas."""
    env = {**os.environ, "GPGPU_LESSONS_COMPILE_ONLY": "1", "GPGPU_LESSONS_QUIET": "1"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run(
        [sys.executable, "-c", PTX_SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    gaussian, tone, tiled, tiled_global, shown = done.stdout.splitlines()
    assert shown == "lookup: " + tone.split(" |")[0]
    assert gaussian.startswith("1 .const array(s) _cudapy_cmem[100];")
    assert " 0 ld.const" not in gaussian  # the 5x5 loop reads constant memory
    assert tone.startswith("1 .const array(s) _cudapy_cmem[1024]; 1 ld.const")
    assert tiled.startswith("0 .const array(s); 0 ld.const")  # the taps are immediates
    assert " 0 fma with an immediate" not in tiled
    assert " 0 fma with an immediate" in tiled_global
    assert "filter_tiled_constant_5x5_8x2_r4c2_" in tiled
    assert "filter_tiled_global_5x5_8x2_r4c2" in tiled_global


# ---- the lesson's launches traced: broadcast vs serialised ---------------------------------------


TRACE_FILTER_TAPS = tracing.filter_taps


@functools.cache
def taps(memory: str):
    """tracing.filter_taps(memory), traced once for every test here that reads it."""
    return TRACE_FILTER_TAPS(memory)


@pytest.fixture(scope="module")
def traced_taps():
    return taps("constant")


@pytest.mark.parametrize("memory", ["constant", "global"])
def test_reads_are_the_filter_tap_and_the_lookups_the_lesson_contrasts(memory, monkeypatch):
    small = {"noise": tracing.noise(16), "photograph": tracing.photograph_segments(16, side=256)}
    lookups = tracing.lookups
    monkeypatch.setattr(tracing, "lookups", lambda memory: lookups(memory, small))
    monkeypatch.setattr(tracing, "filter_taps", taps)
    reads = tracing.reads(memory)
    assert list(reads) == ["filter tap", "noise", "photograph"]
    assert {traced.space for traced in reads.values()} == {memory}
    assert reads["filter tap"].addresses_per_request == 1.0
    assert reads["noise"].addresses_per_request > reads["photograph"].addresses_per_request


def test_every_lane_reads_the_same_filter_tap_from_constant_memory(traced_taps):
    """gaussian5_constant on 16 x 64 pixels: 32 warps x 25 taps, each request one address."""
    assert (traced_taps.space, traced_taps.array) == ("constant", "GAUSSIAN_5")
    assert traced_taps.row.requests == 32 * 25
    assert traced_taps.addresses_per_request == 1.0
    assert traced_taps.row.verdict == "broadcast"
    assert traced_taps.entries(13) == [13] * 32  # warp 0's 14th tap, w[2, 3]
    assert traced_taps.size == 25


def test_the_global_filter_reads_one_sector_per_tap():
    traced = taps("global")
    assert (traced.space, traced.array) == ("global", "weights")
    assert traced.sectors_per_request == traced.addresses_per_request == 1.0


def test_the_tiled_filter_fetches_each_pixel_1_56_times_instead_of_25():
    fetches = tracing.image_fetches()
    assert fetches["one pixel per thread"].loads_per_output == 25.0
    assert fetches["tiled"].loads_per_output == 20 * 20 / 16**2
    assert not fetches["tiled"].trace.hazards  # the barrier is in place


def hand_worked(memory, picture):
    return tracing.lookups(memory, {"picture": picture})["picture"]


@pytest.mark.parametrize("memory", ["constant", "global"])
def test_a_lookup_reading_four_neighbouring_entries_per_warp(memory):
    """Each warp reads entries 0, 1, 2, 3 eight times: 4 addresses, 1 sector, 1 line."""
    traced = hand_worked(memory, (np.arange(2 * 64) % 4).astype(np.uint8).reshape(2, 64))
    assert traced.entries(0) == [0, 1, 2, 3] * 8
    assert traced.addresses_per_request == 4.0
    assert traced.sectors_per_request == traced.lines_per_request == 1.0
    assert traced.row.verdict.startswith("serialised" if memory == "constant" else "coalesced")


def test_a_lookup_reading_32_entries_a_sector_apart_is_32_reads_in_8_lines():
    traced = hand_worked("constant", (np.arange(2 * 64) * 8 % 256).astype(np.uint8).reshape(2, 64))
    assert traced.addresses_per_request == traced.sectors_per_request == 32.0
    assert traced.lines_per_request == 8.0  # the whole 1 KiB table
    assert traced.row.verdict == "serialised (32.0 addresses per request)"


def test_the_lookup_on_noise_is_serialised_and_on_the_photograph_less():
    pictures = {
        "noise": tracing.noise(16),
        "photograph": tracing.photograph_segments(16, side=1024),
    }
    traced = tracing.lookups("constant", pictures)
    assert traced["noise"].addresses_per_request > 25  # 32 x (1 - (255/256)^32) = 30.2 expected
    assert traced["photograph"].addresses_per_request < traced["noise"].addresses_per_request


def test_photograph_segments_are_warps_of_the_photograph():
    """Each 32-pixel half row of the traced image is one warp's pixels at a multiple of 32."""
    side = 256
    picture = images.load("astronaut", shape=(side, side)).reshape(-1, 32)
    segments = tracing.photograph_segments(8, side=side).reshape(-1, 32)
    assert segments.shape == (8, 32) and segments.dtype == np.uint8
    for segment in segments:
        assert (picture == segment).all(axis=1).any()
    np.testing.assert_array_equal(
        segments, tracing.photograph_segments(8, side=side).reshape(-1, 32)
    )


def test_trace_launch_names_what_it_cannot_find():
    prepared = textbook.filter2d.prepare(tracing.random_image((4, 32)), filters.LAPLACIAN)
    with pytest.raises(ValueError, match="loads table on 0 lines"):
        tracing.trace_load(prepared, "table")


# ---- figures -------------------------------------------------------------------------------


def gpu_timing(name, ms, clock=EVENTS):
    return Timing(name, [ms, ms, ms], bytes_moved=10**9, clock=clock)


def test_warp_reads_counts_the_reads_of_each_traced_request(traced_taps):
    fig = figures.warp_reads({"tap": (traced_taps, 13), "first tap": (traced_taps, 0)})
    assert fig.get_size_inches()[0] == plotting.WIDTH
    assert [ax.get_title(loc="left") for ax in fig.axes] == [
        "tap: 1 address: one read, broadcast",
        "first tap: 1 address: one read, broadcast",
    ]


def test_broadcast_vs_serialised_draws_the_gpu_ratio(traced_taps, monkeypatch):
    monkeypatch.setattr(
        results, "experiment", lambda key, data: results.Shown(data, "NVIDIA H200", True)
    )
    fig = figures.broadcast_vs_serialised(
        {"taps": (traced_taps, gpu_timing("g", 1.0), gpu_timing("c", 0.9))},
        title="broadcast",
        size="8192 × 8192 images",
    )
    assert fig.get_size_inches()[0] == plotting.WIDTH
    left, right = fig.axes
    assert left.get_title(loc="left") == "broadcast · 8192 × 8192 images\nNVIDIA H200"
    assert [t.get_text().strip() for t in right.texts] == ["0.90× (900 µs vs 1 ms)"]


def test_broadcast_vs_serialised_without_a_gpu_run_says_so(traced_taps, monkeypatch):
    simulated = {
        "taps": (traced_taps, gpu_timing("g", 1.0, SIMULATED), gpu_timing("c", 0.9, SIMULATED))
    }
    monkeypatch.setattr(
        results, "experiment", lambda key, data: results.Shown(data, results.SIMULATOR_LABEL, True)
    )
    fig = figures.broadcast_vs_serialised(simulated, title="t", size="s")
    assert figures.NOT_MEASURED in fig.axes[0].get_title(loc="left")

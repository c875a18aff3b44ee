"""One contract for every kernel wrapper of the lessons (every public `@launch.op` function).

Host in, host out; device in, device out; the same values either way; out= (device or NumPy)
written and returned; an out= sharing memory with an input refused, unless the kernel works in
place; a reduction gives a Python number unless out= is given; a failed call (bad input), then a
good call that is right; shapes interleaved in one process; a call repeated with the same device
arrays reuses its kept launch (`wrapper.kept`) and reads the arrays' new values.

The wrappers are found by walking the lesson packages, so a new lesson's wrappers are checked
as soon as EXAMPLES has an entry for them (`test_every_wrapper_has_an_example` fails until
then). Sizes are tiny and odd: the simulator runs one Python thread per CUDA thread.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from numba import cuda

import gpgpu_lessons
from gpgpu_lessons import launch, runtime
from gpgpu_lessons.l02_shared_memory import reference as images
from gpgpu_lessons.l03_bank_conflicts import applications
from gpgpu_lessons.l04_constant_memory import filters
from gpgpu_lessons.l04_constant_memory import reference as filtering
from gpgpu_lessons.l04_constant_memory.fast import Tile
from gpgpu_lessons.l05_atomics_vs_reduction import sine_sum

LESSON = re.compile(r"l\d\d_\w+")


def lesson_wrappers() -> dict[str, Callable]:
    """Every public `@launch.op` wrapper defined in a lesson package or in `device` (what lessons
    share), by 'package.module.name'."""
    found = {}
    for lesson in pkgutil.iter_modules(gpgpu_lessons.__path__):
        if not (lesson.ispkg and (LESSON.fullmatch(lesson.name) or lesson.name == "device")):
            continue
        package = importlib.import_module(f"gpgpu_lessons.{lesson.name}")
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if (
                    not name.startswith("_")
                    and callable(value)
                    and hasattr(value, "prepare")
                    and isinstance(getattr(value, "kept", None), launch.KeptCalls)
                    and value.__module__ == module.__name__
                ):
                    found[f"{module.__name__.removeprefix('gpgpu_lessons.')}.{name}"] = value
    return found


WRAPPERS = lesson_wrappers()


# ---- the table: one small example per wrapper --------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One call: the arrays (host; copied to the device where the test says), other arguments."""

    arrays: tuple
    args: tuple = ()
    options: dict = field(default_factory=dict)

    def call(self, wrapper, arrays=None, **more):
        return wrapper(
            *(self.arrays if arrays is None else arrays), *self.args, **self.options, **more
        )

    def on_device(self) -> list:
        return [cuda.to_device(a) for a in self.arrays]


@dataclass(frozen=True)
class Bad:
    """A bad variant of the example's first call, and the error it must raise."""

    change: Callable[[Case], Case]
    error: type
    message: str  # a regular expression the error's message must match


def options(**changed) -> Callable[[Case], Case]:
    return lambda c: dataclasses.replace(c, options={**c.options, **changed})


def argument(i: int, value) -> Callable[[Case], Case]:
    return lambda c: dataclasses.replace(c, args=c.args[:i] + (value,) + c.args[i + 1 :])


def array(i: int, change: Callable) -> Callable[[Case], Case]:
    return lambda c: dataclasses.replace(
        c, arrays=c.arrays[:i] + (change(c.arrays[i]),) + c.arrays[i + 1 :]
    )


@dataclass(frozen=True, kw_only=True)
class Example:
    """How to call a wrapper well (two calls of different shapes) and badly, and what it returns.

    `cases(rng)` gives two Cases whose array shapes do not depend on rng; `expect(*arrays, *args,
    **options)` the NumPy answer (None: values that depend on timing, checked for shape only);
    `bad` the wrapper's own bad inputs (the generic ones, `generic_bad`, are added);
    `rank_message` what a wrong number of dimensions is told (None: any rank is taken);
    `in_place`: out= may be the input itself.
    """

    cases: Callable[[np.random.Generator], tuple[Case, Case]]
    expect: Callable[..., Any]
    bad: tuple[Bad, ...] = ()
    rtol: float = 0.0
    atol: float | Callable[..., float] = 0.0
    rank_message: str | None = r"must be \d-D"
    in_place: bool = False


def floats(rng, shape, dtype=np.float32):
    return (rng.random(shape) + 0.5).astype(dtype)  # never zero


def integers(rng, shape, dtype):
    return rng.integers(1, min(np.iinfo(dtype).max, 2**31 - 1), size=shape).astype(dtype)


def pixels(rng, shape):
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def copied(a, *args, **options):
    return a.copy()


def transposed(a, *args, **options):
    return np.ascontiguousarray(a.T)


def dot(x, y, **options):
    return float(np.dot(x.astype(np.float64), y.astype(np.float64)))


def total(a, **options):
    return float(a.sum(dtype=np.float64))


def busy(x, iterations, **options):
    """The busy kernel's chain in float64 steps (Numba types 0.999 * float32 as float64)."""
    x = x.astype(np.float64)
    for _ in range(iterations):
        x = x * 0.999 + 0.001
    return x.astype(np.float32)


def partial_sums(x, y, *, blocks, block):
    """Each thread's partial sum of x*y over elements t, t + T, t + 2T, ... (T threads)."""
    threads = blocks * block
    padded = np.zeros(-(-x.size // threads) * threads)
    padded[: x.size] = x.astype(np.float64) * y
    return padded.reshape(-1, threads).sum(0)


def rows_filtered(a, taps=applications.BINOMIAL_5, **options):
    r = len(taps) // 2
    padded = np.pad(a.astype(np.float64), ((0, 0), (r, r)), mode="edge")
    return sum(t * padded[:, k : k + a.shape[1]] for k, t in enumerate(taps))


def filtered(image, weights, **options):
    return filtering.reference(image, weights)


def filter_tolerance(image, weights, **options):
    return filtering.tolerance(image, weights)


def waves_sum(mag, freq, phi, *, width, height, **options):
    return sine_sum.reference(mag, freq, phi, width=width, height=height)[0]


def waves_tolerance(mag, freq, phi, *, width, height, **options):
    return sine_sum.reference(mag, freq, phi, width=width, height=height)[1]


def bincount(pixels, **options):
    return np.bincount(pixels.ravel(), minlength=256).astype(np.uint32)


def spread(values, targets, **options):
    return np.bincount(np.arange(values.size) % targets, weights=values, minlength=targets)


def flip(image, *, horizontal, **options):
    return images.flip_horizontal(image) if horizontal else images.flip_vertical(image)


def mosaic(image, size, **options):
    return images.mosaic(image, size)


def shorter(i: int) -> Bad:
    """Input i one element shorter than the others."""
    return Bad(array(i, lambda a: a[:-1].copy()), ValueError, "same (shape|length)")


def bad_option(message, error=ValueError, **changed) -> Bad:
    return Bad(options(**changed), error, message)


def one_d(dtypes, *, n=(37, 70), per_call=({}, {}), arrays=1) -> Callable:
    """Two calls on `arrays` 1-D inputs each: n[0] elements of dtypes[0], then n[1] of dtypes[1]."""

    def cases(rng):
        return tuple(
            Case(
                tuple(
                    (floats if np.dtype(dtype).kind == "f" else integers)(rng, size, dtype)
                    for _ in range(arrays)
                ),
                **kw,
            )
            for size, dtype, kw in zip(n, dtypes, per_call)
        )

    return cases


def image_cases(first, second, *, make=pixels, args=((), ()), options=({}, {})) -> Callable:
    """Two calls on one 2-D (or RGB) array each: of shape `first`, then `second`."""

    def cases(rng):
        return tuple(
            Case((make(rng, shape),), a, o) for shape, a, o in zip((first, second), args, options)
        )

    return cases


def waves(rng, n):
    return tuple(rng.random(n, dtype=np.float32) for _ in range(3))


def wave_cases(first: dict, second: dict) -> Callable:
    """Two sine-sum calls: n waves, then the wrapper's options (width, height, ...)."""

    def cases(rng):
        return tuple(
            Case(waves(rng, kw.pop("n")), options=kw) for kw in (dict(first), dict(second))
        )

    return cases


IMAGE_RANK = r"must be \(height, width\) grayscale or \(height, width, 3\) RGB"
MOSAIC_BAD = (
    Bad(argument(0, 0), ValueError, "mosaic size must be an integer >= 1"),
    Bad(argument(0, 33), ValueError, "use at most 32"),
)
FLOAT32_ONLY = Bad(array(0, lambda a: a.astype(np.float64)), TypeError, "written for float32")
WIDE = {"block": (8, 4), "vec": 2}  # a 16 x 16 tile of 32 threads: several tiles, few threads
WIDE_BAD = (
    bad_option("vec must be 1, 2 or 4", vec=3),
    Bad(array(0, lambda a: np.ascontiguousarray(a[:, :-1])), ValueError, "multiple of 2 long"),
)
WAVES_BAD = (shorter(1), bad_option("width must be an integer >= 1", width=0))


def textbook_transpose(expect=transposed) -> Example:
    return Example(
        cases=image_cases((19, 29), (5, 37), make=floats),  # 1 block of 32 x 8, then 2
        expect=expect,
        bad=(FLOAT32_ONLY,),
    )


def seed_transpose() -> Example:
    return Example(
        cases=image_cases((13, 11), (5, 19), make=floats),  # 1 block of 16 x 16, then 2
        expect=transposed,
        bad=(FLOAT32_ONLY,),
    )


def image_op(expect, *, in_place=False, cases=None, bad=()) -> Example:
    return Example(
        cases=cases or image_cases((7, 21), (9, 21, 3)),  # gray in 1 block, then RGB in 2
        expect=expect,
        rank_message=IMAGE_RANK,
        in_place=in_place,
        bad=bad,
    )


def mosaic_op(*, in_place=True, racy=False) -> Example:
    return Example(
        # edge tiles on both sides: 3 x 2 tiles, then 4 x 3
        cases=image_cases((7, 13), (9, 11, 3), args=((5,), (3,))),
        expect=None if racy else mosaic,
        rank_message=IMAGE_RANK,
        in_place=in_place,
        bad=MOSAIC_BAD,
    )


RANDOM_3x3 = np.random.default_rng(4).standard_normal((3, 3)).astype(np.float32)
RANDOM_5x3 = np.random.default_rng(5).standard_normal((5, 3)).astype(np.float32)
RANDOM_TABLE = np.random.default_rng(6).random(256, dtype=np.float32)
EVEN_FILTER = Bad(argument(0, np.ones((2, 2), np.float32)), ValueError, "sides must be odd")

EXAMPLES: dict[str, Example] = {
    # ---- lesson 00 ----
    "l00_timing_gpu_code.textbook.launch_empty": Example(
        cases=lambda rng: (Case((), (2,), {"block": 32}), Case((), (1,), {"block": 8})),
        expect=lambda *args, **options: None,
        bad=(
            Bad(argument(0, 0), ValueError, "blocks must be an integer >= 1"),
            bad_option("at most 1024", block=2048),
        ),
    ),
    "l00_timing_gpu_code.textbook.keep_busy": Example(
        cases=one_d(
            (np.float32, np.float32),
            per_call=(
                {"args": (3,), "options": {"block": 32}},
                {"args": (2,), "options": {"block": 32}},
            ),
        ),
        expect=busy,
        rtol=1e-6,
        in_place=True,
        bad=(
            Bad(argument(0, -1), ValueError, "iterations must be an integer >= 0"),
            bad_option("at most 1024", block=2048),
        ),
    ),
    "l00_timing_gpu_code.textbook.copy_repeated": Example(
        cases=one_d(
            (np.float32, np.uint32),
            per_call=({"args": (2,), "options": {"block": 32}}, {"args": (3,)}),
        ),
        expect=copied,
        bad=(Bad(argument(0, 0), ValueError, "passes must be an integer >= 1"),),
    ),
    "l00_timing_gpu_code.textbook.dot": Example(
        cases=one_d((np.float32, np.float64), arrays=2, per_call=({"options": {"block": 32}},) * 2),
        expect=dot,
        rtol=1e-5,
        bad=(shorter(1),),
    ),
    # ---- lesson 01 ----
    "l01_coalescing.fast.copy": Example(
        cases=one_d(
            (np.float32, np.float64),
            n=(37, 131),
            per_call=(
                {"options": {"block": 32}},  # 9 wide elements in 1 block, then 1 at the edge
                {"options": {"block": 32}},  # 65 in 3 blocks, then 1
            ),
        ),
        expect=copied,
        bad=(
            bad_option("element_bytes must be one of", element_bytes=3),
            bad_option("variant must be one of", variant="fastest"),
        ),
    ),
    "l01_coalescing.fast.dot": Example(
        cases=one_d((np.float32, np.float64), n=(37, 53), arrays=2),
        expect=dot,
        rtol=1e-5,
        bad=(shorter(1),),
    ),
    "device.copy.copy": Example(
        cases=one_d(
            (np.float32, np.int32),
            per_call=({"options": {"block": 32}}, {"options": {"block": 16}}),
        ),
        expect=copied,
        bad=(bad_option("at most 1024", block=2048),),
    ),
    "l01_coalescing.textbook.copy_with_stride": Example(
        cases=one_d(
            (np.float32, np.uint32),
            per_call=(
                {"args": (3,), "options": {"block": 32}},
                {"args": (5,), "options": {"block": 16}},
            ),
        ),
        expect=copied,
        bad=(
            Bad(argument(0, 0), ValueError, "stride must be an integer >= 1"),
            Bad(argument(0, 70000), ValueError, "stride must be at most 65535"),
        ),
    ),
    "l01_coalescing.textbook.copy_with_offset": Example(
        cases=one_d(
            (np.float32, np.int32),
            per_call=(
                {"args": (5,), "options": {"block": 32}},
                {"args": (101,), "options": {"block": 16}},
            ),
        ),
        expect=copied,
        bad=(Bad(argument(0, -1), ValueError, "offset must be an integer >= 0"),),
    ),
    "l01_coalescing.textbook.dot_partial_sums": Example(
        cases=one_d(
            (np.float32, np.float64),
            n=(37, 53),
            arrays=2,
            per_call=(
                {"options": {"blocks": 2, "block": 16}},
                {"options": {"blocks": 3, "block": 8}},
            ),
        ),
        expect=partial_sums,
        rtol=1e-5,
        atol=1e-6,
        bad=(shorter(1), bad_option("blocks must be an integer >= 1", blocks=0)),
    ),
    # ---- lesson 02 ----
    "l02_shared_memory.textbook.negative": image_op(images.negative, in_place=True),
    "l02_shared_memory.textbook.flip_horizontal": image_op(images.flip_horizontal),
    "l02_shared_memory.textbook.flip_vertical": image_op(images.flip_vertical),
    "l02_shared_memory.fast.negative_fast": image_op(images.negative, in_place=True),
    "l02_shared_memory.fast.flip_horizontal_fast": image_op(images.flip_horizontal),
    "l02_shared_memory.fast.flip_vertical_fast": image_op(images.flip_vertical),
    "l02_shared_memory.fast.flip_words": image_op(
        flip,
        cases=image_cases(
            (7, 21), (9, 21, 3), options=({"horizontal": True}, {"horizontal": False})
        ),
        bad=(
            bad_option("word_bytes must be 4 or 8", word_bytes=2),
            bad_option("per_thread must be an integer >= 1", per_thread=0),
        ),
    ),
    "l02_shared_memory.textbook.mosaic_one_thread": mosaic_op(),
    "l02_shared_memory.textbook.mosaic_shared_one_thread": mosaic_op(),
    "l02_shared_memory.textbook.mosaic_parallel": mosaic_op(),
    # without barriers the pixels depend on the threads' timing: checked for shape only
    "l02_shared_memory.textbook.mosaic_shared_race": mosaic_op(in_place=False, racy=True),
    # ---- lesson 03 ----
    "l03_bank_conflicts.textbook.tile_copy": textbook_transpose(copied),
    "l03_bank_conflicts.textbook.naive": textbook_transpose(),
    "l03_bank_conflicts.textbook.tiled": textbook_transpose(),
    "l03_bank_conflicts.textbook.padded": textbook_transpose(),
    "l03_bank_conflicts.textbook.seed_naive": seed_transpose(),
    "l03_bank_conflicts.textbook.seed_tiled": seed_transpose(),
    "l03_bank_conflicts.textbook.seed_padded": seed_transpose(),
    "l03_bank_conflicts.applications.rows_filter": Example(
        cases=lambda rng: (
            Case((floats(rng, (7, 29)),)),
            Case((floats(rng, (5, 37)),), (np.array([0.25, 0.5, 0.25], np.float32),)),
        ),
        expect=rows_filtered,
        rtol=1e-6,
        bad=(Bad(argument(0, [1.0, 1.0]), ValueError, "odd length"),),
    ),
    "l03_bank_conflicts.fast.wide": Example(
        cases=image_cases((18, 22), (6, 34), make=floats, options=(WIDE, WIDE)),
        expect=transposed,
        bad=WIDE_BAD,
    ),
    "l03_bank_conflicts.fast.wide_copy": Example(
        cases=image_cases((18, 22), (7, 34), make=floats, options=(WIDE, WIDE)),
        expect=copied,
        bad=WIDE_BAD,
    ),
    "l03_bank_conflicts.fast.transpose": Example(
        # few rows, then few columns (the thin kernels; the lesson's tests run the others)
        cases=lambda rng: (
            Case((floats(rng, (5, 37)),)),
            Case((integers(rng, (37, 4), np.int32),)),
        ),
        expect=transposed,
    ),
    # ---- lesson 04 ----
    "l04_constant_memory.fast.filter2d": Example(
        cases=lambda rng: (
            # a small tile: each thread of the tuned one makes 32 outputs (slow in the simulator)
            Case((floats(rng, (9, 20)),), (RANDOM_3x3,), {"tile": Tile(8, 2, 4, 2)}),
            Case((pixels(rng, (13, 37)),), (RANDOM_3x3,), {"tile": Tile(8, 2, 4, 2)}),
        ),
        expect=filtered,
        atol=filter_tolerance,
        bad=(EVEN_FILTER, bad_option("memory must be one of", memory="frozen")),
    ),
    "l04_constant_memory.textbook.filter2d": Example(
        cases=lambda rng: (
            Case((floats(rng, (7, 29)),), (RANDOM_3x3,)),  # 1 block of 32 x 8, then 4 of 16 x 8
            Case((pixels(rng, (9, 20)),), (RANDOM_5x3,), {"block": (16, 8)}),
        ),
        expect=filtered,
        atol=filter_tolerance,
        bad=(EVEN_FILTER, bad_option("only for LAPLACIAN", memory="constant")),
    ),
    "l04_constant_memory.textbook.filter2d_tiled": Example(
        cases=lambda rng: (
            Case((floats(rng, (13, 15)),), (filters.GAUSSIAN_5,)),
            Case((pixels(rng, (9, 20)),), (filters.GAUSSIAN_5,)),
        ),
        expect=filtered,
        atol=filter_tolerance,
        bad=(Bad(argument(0, filters.LAPLACIAN), ValueError, "GAUSSIAN_5 compiled in"),),
    ),
    "l04_constant_memory.textbook.lookup": Example(
        cases=lambda rng: (
            Case((pixels(rng, (7, 29)),), (RANDOM_TABLE,)),
            Case((pixels(rng, (9, 20)),), (filters.TONE_CURVE,), {"block": (16, 8)}),
        ),
        expect=lambda image, table, **options: table[image],
        bad=(
            Bad(argument(0, RANDOM_TABLE[:255]), ValueError, "256 entries"),
            bad_option("only for TONE_CURVE", memory="constant"),
        ),
    ),
    # ---- lesson 05 ----
    "l05_atomics_vs_reduction.textbook.parallel_sum": Example(
        cases=one_d(
            (np.float32, np.float32),
            n=(37, 517),  # one block, then a tree of two blocks and one
            per_call=({"options": {"variant": "first add during load"}},) * 2,
        ),
        expect=total,
        rtol=1e-5,
        bad=(bad_option("unknown variant", variant="magic"),),
    ),
    "l05_atomics_vs_reduction.fast.sum_grid_stride": Example(
        cases=one_d(
            (np.float32, np.float32),
            n=(301, 517),
            per_call=({"options": {"block": 32}}, {"options": {"block": 32, "blocks": 2}}),
        ),
        expect=total,
        rtol=1e-5,
        bad=(
            bad_option("multiple of 32", block=48),
            bad_option("vector must be 1 or 4", vector=2),
        ),
    ),
    "l05_atomics_vs_reduction.histogram.atomic_spread": Example(
        cases=one_d(
            (np.float32, np.float32), n=(45, 300), per_call=({"args": (4,)}, {"args": (32,)})
        ),
        expect=spread,
        rtol=1e-5,
        bad=(
            Bad(argument(0, 3), ValueError, "power of two"),
            Bad(argument(0, 64), ValueError, "must not exceed"),
        ),
    ),
    "l05_atomics_vs_reduction.histogram.histogram": Example(
        cases=lambda rng: (
            Case((pixels(rng, (7, 29)),)),
            Case((pixels(rng, 45),), options={"variant": "global atomics"}),
        ),
        expect=bincount,
        rank_message=None,  # any shape is counted
        bad=(bad_option("unknown variant", variant="magic"),),
    ),
    "l05_atomics_vs_reduction.fast.recurrence": Example(
        cases=wave_cases(
            {"n": 5, "width": 37, "height": 3, "block": 8},  # 9 threads: 2 blocks
            {"n": 4, "width": 37, "height": 9, "block": 8},  # 27 threads: 4 blocks
        ),
        expect=waves_sum,
        atol=waves_tolerance,
        bad=(*WAVES_BAD, bad_option("outputs must be an integer >= 1", outputs=0)),
    ),
    "l05_atomics_vs_reduction.fast.sine_sum": Example(
        cases=wave_cases(
            {"n": 5, "width": 37, "height": 3},  # 9 threads: 1 block
            {"n": 4, "width": 37, "height": 50},  # 150 threads: 2 blocks
        ),
        expect=waves_sum,
        atol=waves_tolerance,
        bad=(*WAVES_BAD, bad_option("unknown variant", variant="1 brute force")),
    ),
    "l05_atomics_vs_reduction.sine_sum.sine_sum": Example(
        cases=wave_cases(
            {"n": 5, "width": 7, "height": 3},  # 21 threads: 1 block
            {"n": 4, "width": 7, "height": 40},  # 280 threads: 2 blocks
        ),
        expect=waves_sum,
        atol=waves_tolerance,
        bad=(*WAVES_BAD, bad_option("power of two", block=48)),
    ),
}


# ---- checking a call ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What a call of a case must give: the NumPy values, their tolerance, shape and dtype."""

    values: Any
    tol: dict
    shape: tuple
    dtype: np.dtype
    scalar: bool  # a reduction: a Python number unless out= is given
    timed: bool  # values that depend on the threads' timing: shape and dtype only


def answer(wrapper, example: Example, case: Case, arrays=None) -> Answer:
    arrays = case.arrays if arrays is None else arrays
    prepared = wrapper.prepare(*arrays, *case.args, **case.options)  # builds, runs nothing
    atol = example.atol
    if callable(atol):
        atol = atol(*arrays, *case.args, **case.options)
    values = None if example.expect is None else example.expect(*arrays, *case.args, **case.options)
    return Answer(
        values,
        {"rtol": example.rtol, "atol": atol},
        tuple(prepared.out.shape),
        prepared.out.dtype,
        prepared.scalar,
        example.expect is None,
    )


def poisoned(want: Answer, *, host=False):
    """An out= where every element differs from the answer, so an element never written shows."""
    if want.dtype.kind in "fc":
        values = np.full(want.shape, np.nan, dtype=want.dtype)
    elif want.timed:
        values = np.full(want.shape, np.iinfo(want.dtype).max, dtype=want.dtype)
    else:
        values = ~np.asarray(want.values).astype(want.dtype).reshape(want.shape)
    return values if host else cuda.to_device(values)


def refill(out, want: Answer):
    """Poison a device out= again, so the next call must write every element."""
    out.copy_to_device(poisoned(want, host=True))
    return out


def check(got, want: Answer, *, number: bool = False):
    """got (a device or NumPy array, or a number) is the answer."""
    if number:
        assert type(got) is float, f"a reduction returns a Python float, got {type(got).__name__}"
        np.testing.assert_allclose(got, want.values, **want.tol)
        return
    values = got.copy_to_host() if launch.is_device_array(got) else got
    assert values.shape == want.shape and values.dtype == want.dtype
    if want.timed:
        return
    if want.scalar:
        values = values[0]
    if want.tol["rtol"] or want.tol["atol"]:
        assert not np.isnan(values).any(), "some elements were never written"
        np.testing.assert_allclose(values, want.values, **want.tol)
    else:
        np.testing.assert_array_equal(values, want.values)


def same(first, second, want: Answer):
    """Two results of one call (host and device) agree with each other."""
    if want.timed:
        return
    first, second = (v.copy_to_host() if launch.is_device_array(v) else v for v in (first, second))
    np.testing.assert_allclose(first, second, **want.tol)


def sharing(a: np.ndarray, shape, dtype):
    """(a on the device, an out= of shape and dtype): two device views starting on the same byte."""
    out_bytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buffer = np.zeros(max(a.nbytes, out_bytes), np.uint8)
    buffer[: a.nbytes] = a.reshape(-1).view(np.uint8)
    d_buffer = cuda.to_device(buffer)
    d_a = d_buffer[: a.nbytes].view(a.dtype).reshape(a.shape)
    return d_a, d_buffer[:out_bytes].view(dtype).reshape(shape)


# ---- the contract ------------------------------------------------------------------------------

EMPTY_LAUNCH = "l00_timing_gpu_code.textbook.launch_empty"  # takes no array, returns None
NAMES = sorted(WRAPPERS)
TAKING_ARRAYS = [n for n in NAMES if n != EMPTY_LAUNCH]


def test_every_wrapper_has_an_example():
    missing = sorted(set(WRAPPERS) - set(EXAMPLES))
    stale = sorted(set(EXAMPLES) - set(WRAPPERS))
    assert not missing, f"these wrappers have no example in EXAMPLES: {missing}"
    assert not stale, f"EXAMPLES names wrappers that no lesson has: {stale}"
    assert len(WRAPPERS) >= 43  # the lessons' wrappers when this test was written


def example_of(name) -> Example:
    if name not in EXAMPLES:
        pytest.fail(f"{name} has no example in EXAMPLES (tests/core/test_wrapper_contract.py)")
    return EXAMPLES[name]


@pytest.mark.parametrize("name", TAKING_ARRAYS)
def test_host_in_host_out_device_in_device_out(name, rng):
    wrapper, example = WRAPPERS[name], example_of(name)
    case = example.cases(rng)[0]
    want = answer(wrapper, example, case)
    before = [a.copy() for a in case.arrays]
    on_host = case.call(wrapper)
    assert isinstance(on_host, float if want.scalar else np.ndarray)
    check(on_host, want, number=want.scalar)
    for a, b in zip(case.arrays, before):
        np.testing.assert_array_equal(a, b, err_msg="the call changed a host input")
    on_device = case.call(wrapper, case.on_device())
    if want.scalar:
        check(on_device, want, number=True)
    else:
        assert launch.is_device_array(on_device), "device in, device out"
        check(on_device, want)
    same(on_host, on_device, want)


@pytest.mark.parametrize("name", TAKING_ARRAYS)
def test_out_is_written_and_returned(name, rng):
    wrapper, example = WRAPPERS[name], example_of(name)
    case = example.cases(rng)[0]
    want = answer(wrapper, example, case)
    out = poisoned(want)
    assert case.call(wrapper, case.on_device(), out=out) is out
    check(out, want)
    host_out = poisoned(want, host=True)
    assert case.call(wrapper, out=host_out) is host_out
    check(host_out, want)


@pytest.mark.parametrize("name", TAKING_ARRAYS)
def test_an_out_sharing_memory_with_an_input(name, rng):
    """Refused (the kernel would read what other threads already wrote), unless it works in
    place; a NumPy out= may be a host input: the kernel reads a device copy."""
    wrapper, example = WRAPPERS[name], example_of(name)
    case = example.cases(rng)[0]
    want = answer(wrapper, example, case)
    if example.in_place:
        d_a = case.on_device()
        assert case.call(wrapper, d_a, out=d_a[0]) is d_a[0]
        check(d_a[0], want)
    else:
        for i, a in enumerate(case.arrays):
            d_arrays = case.on_device()
            d_arrays[i], out = sharing(a, want.shape, want.dtype)
            with pytest.raises(ValueError, match="out shares memory with an input"):
                case.call(wrapper, d_arrays, out=out)
    for i, a in enumerate(case.arrays):
        if a.shape == want.shape and a.dtype == want.dtype:
            arrays = [b.copy() for b in case.arrays]
            assert case.call(wrapper, arrays, out=arrays[i]) is arrays[i]
            check(arrays[i], want)


def generic_bad(example: Example, case: Case) -> list[Bad]:
    """Bad versions of the first array: every wrapper checks them, in the same place."""
    a = case.arrays[0]
    bad = [
        Bad(array(0, lambda a: a.tolist()), TypeError, "must be a NumPy array or a device array"),
        Bad(array(0, lambda a: a.astype(np.int8)), TypeError, "has dtype int8"),
        Bad(array(0, lambda a: a[:0]), ValueError, "is empty"),
        Bad(array(0, lambda a: a[..., ::2]), ValueError, "not C-contiguous"),
    ]
    if example.rank_message:
        other_rank = (lambda a: a.reshape(1, -1)) if a.ndim == 1 else (lambda a: a.reshape(-1))
        bad.append(Bad(array(0, other_rank), ValueError, example.rank_message))
    return bad


@pytest.mark.parametrize("name", NAMES)
def test_a_failed_call_then_a_good_one(name, rng):
    """Each bad call raises a clear error; the good calls after them are still right: the
    kept launch of the same device arrays, then a host call.

    A bad call that left a kept launch half built or pointing at its own arrays would show in
    the good call after it; one good call after all of them shows it as well (no bad call
    repairs what another broke), at a launch per wrapper instead of one per bad call."""
    wrapper, example = WRAPPERS[name], example_of(name)
    case = example.cases(rng)[0]
    if name == EMPTY_LAUNCH:
        for bad in example.bad:
            with pytest.raises(bad.error, match=bad.message):
                bad.change(case).call(wrapper)
            assert case.call(wrapper) is None
        return
    want = answer(wrapper, example, case)
    d_arrays, out = case.on_device(), poisoned(want)
    case.call(wrapper, d_arrays, out=out)
    too_big = cuda.device_array((want.shape[0] + 1, *want.shape[1:]), want.dtype)
    bad_out = Bad(options(out=too_big), ValueError, "out must have shape")
    for bad in [*generic_bad(example, case), bad_out, *example.bad]:
        with pytest.raises(bad.error, match=bad.message):
            bad.change(case).call(wrapper)
    assert case.call(wrapper, d_arrays, out=refill(out, want)) is out
    check(out, want)
    got = case.call(wrapper)
    check(got, want, number=want.scalar)


@pytest.mark.parametrize("name", TAKING_ARRAYS)
def test_interleaved_shapes(name, rng):
    """A launch built for one shape still runs its own grid after a call with another."""
    wrapper, example = WRAPPERS[name], example_of(name)
    first, second = example.cases(rng)
    want_first, want_second = (answer(wrapper, example, c) for c in (first, second))
    prepared = wrapper.prepare(*first.arrays, *first.args, **first.options)  # host arrays
    d_first, d_second = first.on_device(), second.on_device()
    out_first, out_second = poisoned(want_first), poisoned(want_second)
    first.call(wrapper, d_first, out=out_first)
    second.call(wrapper, d_second, out=out_second)
    assert first.call(wrapper, d_first, out=refill(out_first, want_first)) is out_first
    check(out_first, want_first)
    check(out_second, want_second)
    check(prepared.result(), want_first, number=want_first.scalar)


@pytest.mark.parametrize("name", NAMES)
def test_a_repeated_call_reuses_its_kept_launch(name, rng):
    """The same device arrays again: no new launch is built, and the arrays' new values are read.

    On a GPU a kept launch marshals its arguments on its second call and runs them from its
    third (launch.py): the same values again, then new ones. In the simulator nothing is
    marshalled and every later call takes the second's path: new values at once."""
    wrapper, example = WRAPPERS[name], example_of(name)
    case = example.cases(rng)[0]
    before = set(wrapper.kept.entries)
    if name == EMPTY_LAUNCH:  # no arrays: kept by its arguments, here ones no other test gives
        case = dataclasses.replace(case, args=(3,))
        assert case.call(wrapper) is None
        kept = set(wrapper.kept.entries)
        assert len(kept - before) == 1, "the call kept its checked launch"
        assert case.call(wrapper) is None and set(wrapper.kept.entries) == kept
        return
    want = answer(wrapper, example, case)
    d_arrays, out = case.on_device(), poisoned(want)
    assert case.call(wrapper, d_arrays, out=out) is out
    kept = set(wrapper.kept.entries)
    assert len(kept - before) == 1, "the call kept its checked launch"
    check(out, want)
    if runtime.MODE == runtime.GPU:
        assert case.call(wrapper, d_arrays, out=refill(out, want)) is out
        assert set(wrapper.kept.entries) == kept, "the second call built a new launch"
        check(out, want)
    new = example.cases(np.random.default_rng(7))[0].arrays  # same shapes, other values
    for d, values in zip(d_arrays, new):
        d.copy_to_device(values)
    want_new = answer(wrapper, example, case, new)
    assert case.call(wrapper, d_arrays, out=refill(out, want_new)) is out
    assert set(wrapper.kept.entries) == kept, "a later call built a new launch"
    check(out, want_new)
    if runtime.MODE == runtime.GPU:  # that call launched with the arguments marshalled once
        assert all(wrapper.kept.entries[key].runs for key in kept - before), "not marshalled"

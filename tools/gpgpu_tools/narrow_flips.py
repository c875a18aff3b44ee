"""Lesson 02's fast flips on narrow and odd images, against the same run's device copies.

`python -m gpgpu_tools.narrow_flips [--json FILE]` times flip_horizontal_fast and
flip_vertical_fast (prepared launches, back to back) on SHAPES, uint8, and beside them the
kernels the wrapper may take instead: the general kernels of `fast.flip_words` (options given)
with 32-bit indices at GENERAL_PER_THREAD words per thread and with 64-bit ones at 2 (the
kernels as they were before 32-bit indices, whose PER_THREAD was 2), and `flip_short_rows`
(whatever the row length; SHORT_PER_THREAD words per thread). Each is reported against two
device-to-device copies of the same run: cudaMemcpy of the image's own bytes (`x copy`, an odd
byte count runs slower) and `timing.copy_ceiling()`, float32 of at least 512 MiB (`x ceiling`,
the bench's yardstick). Every result is checked against NumPy on a sample of rows. One line per
shape and direction, then per path (general, short rows) each candidate's worst and mean x
ceiling over the shapes the wrapper sends down that path: they place fast.FLIP_PER_THREAD,
fast.SHORT_PER_THREAD and SHORT_ROW_BYTES.
In the simulator it flips TINY_SHAPES (the short-rows path for any size) and checks only.
A GPU run's --json file is recorded as gpgpu_lessons/recorded/narrow_flips/<gpu>.json.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from gpgpu_lessons import launch, runtime, timing
from gpgpu_lessons.l02_shared_memory import fast

from .bench.data import poison, random_array

SHAPES = [  # about 250 MB each
    (83886081, 3),
    (6291457, 40),
    (323885, 777),
    (251658241, 1),
    (1, 251658241),
    (3, 83886081),
    (40, 6291457),
    (777, 323885),
    (16385, 16383),
    (12697, 19841),
    (9159, 9161, 3),
]
TINY_SHAPES = [(41, 3), (9, 40), (5, 77), (33, 1), (1, 33), (3, 29), (7, 9), (5, 7, 3)]
SHORT_PER_THREAD = (1, 2, 4)  # words per thread of flip_short_rows timed (see fast's own)
GENERAL_PER_THREAD = (2, 4, 8)  # words per thread of the general kernels, 32-bit indices
BEFORE = (64, 2)  # index bits, words per thread: the general kernels before 32-bit indices
SAMPLE_ROWS = 64  # random rows checked besides the first and last 8
REPEAT = 5  # timed samples per kernel (each ~5 ms of back-to-back launches): ~150 s in all


def sample_rows(height: int) -> np.ndarray:
    """The rows checked: the first and last 8 and SAMPLE_ROWS random ones."""
    rng = np.random.default_rng(height)
    ends = np.r_[0 : min(8, height), max(0, height - 8) : height]
    return np.unique(np.r_[ends, rng.integers(0, height, SAMPLE_ROWS)])


def checked(image, d_out, horizontal: bool) -> None:
    """Raise unless d_out holds the host image flipped, on the rows of sample_rows."""
    height = image.shape[0]
    rows = sample_rows(height)
    out = np.stack([d_out[r : r + 1].copy_to_host()[0] for r in rows])  # rows only: fast
    expected = image[rows, ::-1] if horizontal else image[height - 1 - rows]
    if not np.array_equal(out, expected):
        raise AssertionError(f"{image.shape} {'horizontal' if horizontal else 'vertical'}: wrong")


def kernel_names(prepared) -> str:
    return ",".join(sorted({step.kernel.py_func.__name__ for step in prepared.steps}))


def general(d_image, d_out, horizontal: bool, per_thread: int, index_bits: int):
    """A Launch of the general kernels at these words per thread and index bits."""
    limit = fast.INDEX_32_BYTES
    fast.INDEX_32_BYTES = 0 if index_bits == 64 else 2**32  # what flip_words reads
    try:
        return fast.flip_words.prepare(
            d_image, horizontal=horizontal, out=d_out, per_thread=per_thread, block=fast.FLIP_BLOCK
        )
    finally:
        fast.INDEX_32_BYTES = limit


def candidates(d_image, d_out, horizontal: bool) -> dict:
    """The general kernels' candidates: {"general i<bits> x<per thread>": a Launch of them}."""
    every = [BEFORE] + [(32, per_thread) for per_thread in GENERAL_PER_THREAD]
    return {
        f"general i{bits} x{per_thread}": general(d_image, d_out, horizontal, per_thread, bits)
        for bits, per_thread in every
    }


def others(d_image, d_out, horizontal: bool) -> dict:
    """The kernels the wrapper might have taken instead: {name: a Launch of them}."""
    shape = (
        d_image.shape[0],
        d_image.shape[1],
        d_image.size // d_image.shape[0] // d_image.shape[1],
    )
    return {
        "general": fast.flip_words.prepare(  # options given: the general kernels, tuned values
            d_image,
            horizontal=horizontal,
            out=d_out,
            per_thread=fast.FLIP_PER_THREAD[horizontal != (shape[1] == 1)],  # the kernel's flip
            block=fast.FLIP_BLOCK,
        ),
        **{
            f"short rows x{per_thread}": launch.Launch(
                fast.short_rows_steps(
                    d_image.reshape(shape), d_out.reshape(shape), horizontal, per_thread
                ),
                d_out,
            )
            for per_thread in SHORT_PER_THREAD
        },
    }


def timed(launch, image, d_out, horizontal: bool, nbytes: int, copies) -> dict:
    """Run a launch on a poisoned output and check it; on a GPU time it against the copies."""
    row = {"kernel": kernel_names(launch)}
    poison(d_out)  # none of an earlier kernel's bytes left to pass the check
    if copies is None:
        launch()
    else:
        ms = timing.benchmark(launch, bytes_moved=nbytes, repeat=REPEAT).median_ms
        copy_ms, ceiling_gbs = copies
        row.update(ms=ms, gbs=timing.bandwidth_gbs(nbytes, ms), of_copy=copy_ms / ms)
        if ceiling_gbs is not None:
            row["of_ceiling"] = row["gbs"] / ceiling_gbs
    checked(image, d_out, horizontal)  # the output of its last run
    return row


def measure(
    shape,
    horizontal: bool,
    copy_ms: float | None,
    d_image,
    d_out,
    image,
    ceiling_gbs: float | None = None,
) -> dict:
    """One flip of one shape by the wrapper, checked and (on a GPU) timed; the others beside.

    copy_ms: the same bytes' device copy (None: check only); ceiling_gbs: the copy ceiling."""
    wrapper = fast.flip_horizontal_fast if horizontal else fast.flip_vertical_fast
    prepared = wrapper.prepare(d_image, out=d_out)
    nbytes = 2 * d_image.nbytes
    copies = None if copy_ms is None else (copy_ms, ceiling_gbs)
    row = {"shape": list(shape), "horizontal": horizontal}
    row.update(timed(prepared, image, d_out, horizontal, nbytes, copies))
    for key, launches in (
        ("others", others(d_image, d_out, horizontal)),
        ("candidates", candidates(d_image, d_out, horizontal)),
    ):
        row[key] = {
            name: timed(launch, image, d_out, horizontal, nbytes, copies)
            for name, launch in launches.items()
        }
    row["copy_ms"] = copy_ms
    row["ceiling_gbs"] = ceiling_gbs
    return row


def path(kernel: str) -> str:
    """The path a kernel's name says: general, short rows or whole rows."""
    if kernel.startswith("flip_short_rows"):
        return "short rows"
    return "whole rows" if "whole_rows" in kernel else "general"


def line(row: dict) -> str:
    shape = " x ".join(str(s) for s in row["shape"])
    flip = "horizontal" if row["horizontal"] else "vertical"
    if "ms" not in row:
        others = ", ".join(o["kernel"] for o in row["others"].values())
        return f"{shape:>18} {flip:>10}  checked  {row['kernel']}  (and {others})"
    ceiling = f"{row['of_ceiling']:5.2f}x ceiling " if "of_ceiling" in row else ""
    measure_key = "of_ceiling" if "of_ceiling" in row else "of_copy"
    others = ", ".join(
        f"{name} {o[measure_key]:.2f}x"
        for name, o in {**row["others"], **row.get("candidates", {})}.items()
    )
    return (
        f"{shape:>18} {flip:>10} {row['ms']:9.3f} ms {row['gbs']:7.0f} GB/s {ceiling}"
        f"{row['of_copy']:5.2f}x copy  {row['kernel']}  ({others})"
    )


def summary(rows: list[dict]) -> list[str]:
    """Per path the wrapper took: each candidate's worst and mean x ceiling on those shapes,
    best worst case first, beside the constant that picks it."""
    lines = []
    for taken, constant in (
        ("general", f"fast.FLIP_PER_THREAD = {fast.FLIP_PER_THREAD} (by horizontal)"),
        ("short rows", f"fast.SHORT_PER_THREAD = {fast.SHORT_PER_THREAD}"),
    ):
        on_path = [row for row in rows if path(row["kernel"]) == taken and "of_ceiling" in row]
        if not on_path:
            continue
        scores = {}
        for row in on_path:
            for name, other in {**row["others"], **row["candidates"]}.items():
                if path(other["kernel"]) == taken and name != "general":
                    scores.setdefault(name, []).append(other["of_ceiling"])
        lines.append(f"{taken} ({len(on_path)} shapes and directions; {constant}):")
        for name, values in sorted(scores.items(), key=lambda item: -min(item[1])):
            lines.append(
                f"  {name:>16}: worst {min(values):.2f}x, mean {np.mean(values):.2f}x ceiling"
            )
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu_tools.narrow_flips", description=__doc__)
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    simulated = runtime.is_simulator()
    if simulated:  # tiny images: take the short-rows path whatever their size
        fast.SHORT_MIN_BYTES = 0
    ceiling_gbs = None
    if not simulated:  # the bench's yardstick, once a run
        ceiling_gbs = timing.copy_ceiling().gbs
        print(f"copy ceiling (float32, {timing.ceiling_bytes() >> 20} MiB): {ceiling_gbs:.0f} GB/s")
    rows = []
    for shape in TINY_SHAPES if simulated else SHAPES:
        d_image = random_array(shape, np.uint8, seed=len(rows))
        image = d_image.copy_to_host()  # the reference, once per shape
        d_out = random_array(shape, np.uint8, seed=len(rows) + 1)  # other bytes: none left
        copy_ms = None
        if not simulated:  # the same bytes, the same run
            copy_ms = timing.benchmark(
                lambda a=d_image, o=d_out: o.copy_to_device(a),
                bytes_moved=2 * d_image.nbytes,
                repeat=REPEAT,
            ).median_ms
            print(f"{' x '.join(map(str, shape)):>18}       copy {copy_ms:9.3f} ms", flush=True)
        for horizontal in (True, False):
            rows.append(measure(shape, horizontal, copy_ms, d_image, d_out, image, ceiling_gbs))
            print(line(rows[-1]), flush=True)
        del d_image, d_out
    print("\n".join(summary(rows)))
    if args.json:
        record = {"device": runtime.device_info().name, "ceiling_gbs": ceiling_gbs, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

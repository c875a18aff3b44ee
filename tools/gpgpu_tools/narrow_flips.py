"""Lesson 02's fast flips on narrow and odd images, against the same run's device copy.

`python -m gpgpu_tools.narrow_flips [--json FILE]` times flip_horizontal_fast and
flip_vertical_fast (prepared launches, back to back) on SHAPES, uint8, beside the
device-to-device copy of the same bytes in the same run, and beside them the two kernels
that the wrapper may take instead: the general kernels of `fast.flip_words` (options given) and
`flip_short_rows` (whatever the row length; 1, 2 and 4 words per thread), to place
SHORT_ROW_BYTES and SHORT_PER_THREAD. Every result is checked
against NumPy on a sample of rows. One line per shape and direction: ms, GB/s, x copy, the
kernel the wrapper took, the others' x copy.
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

SHAPES = [
    (83886081, 3),
    (6291457, 40),
    (323885, 777),
    (251658241, 1),
    (1, 251658241),
    (16385, 16383),
    (9159, 9161, 3),
]
TINY_SHAPES = [(41, 3), (9, 40), (5, 77), (33, 1), (1, 33), (7, 9), (5, 7, 3)]
SHORT_PER_THREAD = (1, 2, 4)  # words per thread of flip_short_rows timed (see fast's own)
SAMPLE_ROWS = 64  # random rows checked besides the first and last 8


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
            per_thread=fast.FLIP_PER_THREAD,
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


def measure(shape, horizontal: bool, copy_ms: float | None, d_image, d_out, image) -> dict:
    """One flip of one shape by the wrapper, checked and (on a GPU) timed; the others beside."""
    wrapper = fast.flip_horizontal_fast if horizontal else fast.flip_vertical_fast
    prepared = wrapper.prepare(d_image, out=d_out)
    poison(d_out)
    prepared()
    checked(image, d_out, horizontal)
    row = {"shape": list(shape), "horizontal": horizontal, "kernel": kernel_names(prepared)}
    nbytes = 2 * d_image.nbytes
    if copy_ms is not None:
        ms = timing.benchmark(prepared, bytes_moved=nbytes).median_ms
        row.update(ms=ms, gbs=timing.bandwidth_gbs(nbytes, ms), of_copy=copy_ms / ms)
    row["others"] = {}
    for name, other in others(d_image, d_out, horizontal).items():
        row["others"][name] = {"kernel": kernel_names(other)}
        poison(d_out)  # none of the wrapper's bytes left to pass the check
        if copy_ms is None:
            other()
        else:
            other_ms = timing.benchmark(other, bytes_moved=nbytes).median_ms
            row["others"][name]["of_copy"] = copy_ms / other_ms
        checked(image, d_out, horizontal)  # the output of its last run
    row["copy_ms"] = copy_ms
    return row


def line(row: dict) -> str:
    shape = " x ".join(str(s) for s in row["shape"])
    flip = "horizontal" if row["horizontal"] else "vertical"
    if "ms" not in row:
        others = ", ".join(o["kernel"] for o in row["others"].values())
        return f"{shape:>18} {flip:>10}  checked  {row['kernel']}  (and {others})"
    others = ", ".join(f"{name} {o['of_copy']:.2f}x" for name, o in row["others"].items())
    return (
        f"{shape:>18} {flip:>10} {row['ms']:9.3f} ms {row['gbs']:7.0f} GB/s "
        f"{row['of_copy']:5.2f}x copy  {row['kernel']}  ({others})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu_tools.narrow_flips", description=__doc__)
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    simulated = runtime.is_simulator()
    if simulated:  # tiny images: take the short-rows path whatever their size
        fast.SHORT_MIN_BYTES = 0
    rows = []
    for shape in TINY_SHAPES if simulated else SHAPES:
        d_image = random_array(shape, np.uint8, seed=len(rows))
        image = d_image.copy_to_host()  # the reference, once per shape
        d_out = random_array(shape, np.uint8, seed=len(rows) + 1)  # other bytes: none left
        copy_ms = None
        if not simulated:  # the same bytes, the same run
            copy_ms = timing.benchmark(
                lambda a=d_image, o=d_out: o.copy_to_device(a), bytes_moved=2 * d_image.nbytes
            ).median_ms
            print(f"{' x '.join(map(str, shape)):>18}       copy {copy_ms:9.3f} ms", flush=True)
        for horizontal in (True, False):
            rows.append(measure(shape, horizontal, copy_ms, d_image, d_out, image))
            print(line(rows[-1]), flush=True)
        del d_image, d_out
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": runtime.device_info().name, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

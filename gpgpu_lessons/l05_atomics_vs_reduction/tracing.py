"""Lesson 05 through the kernel tracer: atomic contention, shared requests and bank conflicts.

`gpgpu_lessons.trace_kernel` runs a kernel on the simulator's machinery and counts what each
warp asks of memory; the counts mean the same on any machine, so they stand beside the GPU's
times. Here it traces the lesson's own kernels on small inputs (one or two blocks):

- `trace_ladder`: the first launch of every rung of the parallel sum on TRACED_SUM floats
  (`RUNG_3_ADD`: the line of rung 3 whose bank conflict the lesson pictures);
- `trace_histograms`: the four histograms on TRACED_PIXELS pixels of each image the lesson
  times (`warp_sample`: warps' worth of pixels spread over an image);
- `ladder_counts` and `contention`: the numbers `tables.beside_counts` and `tables.histograms`
  show.
"""

from __future__ import annotations

import inspect

import numpy as np

from .. import launch
from ..hardware import WARP_SIZE
from ..specialise import python_function
from ..trace import trace_kernel
from . import histogram, textbook

TRACED_SUM = 2 * textbook.BLOCK  # floats a traced rung adds: two blocks of a tree rung
TRACED_WARPS = 8  # warps of pixels a traced histogram counts: one block of 256 threads
TRACED_PIXELS = WARP_SIZE * TRACED_WARPS


def line_of(kernel, text: str) -> int:
    """The line number (in the kernel's file) of the first line of its source that holds `text`."""
    function = python_function(kernel)
    lines, first = inspect.getsourcelines(function)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise ValueError(f"{function.__name__} has no line with {text!r}")


RUNG_3_ADD = line_of(textbook.sum_interleaved_bank_conflicts, "partial[2 * s * tid] +=")
"""The line of rung 3 that adds at index 2 * s * tid: its shared loads conflict in banks."""


def rung_launch(variant: str, size: int) -> tuple:
    """(kernel, blocks) of the first launch `parallel_sum` makes on `size` floats.

    The grid-stride rung gets one block (on a GPU: as many as fill it once), so that its
    threads each add several elements, as they do on a large array.
    """
    if variant == textbook.ATOMIC_PER_ELEMENT:
        return textbook.sum_atomic_per_element, launch.grid_1d(size, textbook.BLOCK)
    if variant == textbook.GRID_STRIDE:
        return textbook.sum_grid_stride, 1
    if variant not in textbook.TREES:
        raise ValueError(f"unknown variant {variant!r}; choose one of {list(textbook.LADDER)}")
    kernel, per_block = textbook.TREES[variant]
    return kernel, launch.grid_1d(size, per_block)


def trace_ladder(a: np.ndarray, rungs=textbook.LADDER) -> dict:
    """{rung: Trace} of the first launch of each rung (all by default) on the float32 array a."""
    traces = {}
    for variant in rungs:
        kernel, blocks = rung_launch(variant, a.size)
        out = np.zeros(blocks, dtype=np.float32)
        traces[variant] = trace_kernel(kernel, blocks, textbook.BLOCK, a, out)
    return traces


def ladder_counts(trace) -> dict:
    """What one rung asks of memory: shared requests, their busy lanes and wavefronts, atomics."""
    shared = [row for row in trace.lines if row.space == "shared"]
    atomics = [row for row in trace.lines if row.op == "atomic" and row.space == "global"]
    requests = sum(row.requests for row in shared)
    atomic_requests = sum(row.requests for row in atomics)
    return {
        "shared requests": requests,
        "busy lanes per request": sum(row.lanes for row in shared) / requests if requests else 0,
        "wavefronts per request": (
            sum(row.wavefronts for row in shared) / requests if requests else 0
        ),
        "global atomic adds": sum(row.lanes for row in atomics),
        "lanes on one address": (
            sum(row.contention for row in atomics) / atomic_requests if atomic_requests else 0
        ),
    }


def warp_sample(image: np.ndarray, warps: int = TRACED_WARPS) -> np.ndarray:
    """`warps` runs of 32 neighbouring pixels (what one warp reads), spread evenly over an image."""
    runs = (
        np.ascontiguousarray(image)
        .reshape(-1)[: image.size // WARP_SIZE * WARP_SIZE]
        .reshape(-1, WARP_SIZE)
    )
    if len(runs) < warps:
        raise ValueError(f"the image has {len(runs)} runs of 32 pixels; {warps} were asked for")
    picked = np.arange(warps) * len(runs) // warps + len(runs) // (2 * warps)
    return np.ascontiguousarray(runs[picked].reshape(-1))


def trace_histograms(images: dict) -> dict:
    """{(image name, variant): Trace} of every histogram on a `warp_sample` of each uint8 image,
    one block of threads."""
    traces = {}
    for kind, image in images.items():
        pixels = warp_sample(image)
        for variant, kernel in histogram.HISTOGRAMS.items():
            bins = np.zeros(histogram.BINS, dtype=np.uint32)
            traces[kind, variant] = trace_kernel(kernel, 1, histogram.BLOCK, pixels, bins)
    return traces


def per_pixel_atomic(trace):
    """The row of trace.lines of the atomic in the pixel loop (on the shared bins if any)."""
    atomics = {row.space: row for row in trace.lines if row.op == "atomic"}
    return atomics.get("shared", atomics.get("global"))


def contention(trace) -> float:
    """Lanes of a warp on one address, per request of the per-pixel atomic (1: no queue)."""
    return per_pixel_atomic(trace).per_request("contention")

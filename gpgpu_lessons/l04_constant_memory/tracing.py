"""Lesson 04's own launches traced on small images: what constant memory does with a warp's reads.

`gpgpu_lessons.trace_kernel` runs a launch, exactly as the lesson's wrappers build it, on the
simulator's machinery and counts, per source line, the distinct constant-memory addresses of each
warp request: one is a broadcast, n are n reads one after another. The counts depend on the
kernel and the data, not on the machine: the same in the simulator and on a GPU, they explain
the times the GPU measures.

The lookup tables are traced on the data the GPU timed: noise, and 32-pixel row segments of the
photograph at the GPU run's size (PHOTO_SIDE), so that a traced warp reads what a timed warp read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import images, launch
from ..hardware import LINE_BYTES, SECTOR_BYTES
from ..hardware import WARP_SIZE as WARP
from ..trace import Trace, trace_launch
from . import textbook
from .filters import GAUSSIAN_5, TONE_CURVE

FILTER_SHAPE = (16, 64)  # the traced filter's image: 2 x 2 blocks of 32 x 8 threads
WARPS = 128  # warps of a traced lookup: 128 row segments of 32 pixels (a 64 x 64 image)
PHOTO_SIDE = 8192  # the photograph as the GPU run timed it (neighbours alike at this scale)


@dataclass(frozen=True)
class Traced:
    """One traced launch and the source line of the table or filter read the lesson is about."""

    trace: Trace
    line: int
    space: str  # "constant" or "global"
    array: str  # the name the kernel gives that array

    @property
    def row(self):
        """The trace's row (a `trace.Line`) of that read."""
        return self.trace.line(self.line, space=self.space, op="load")

    def _requests(self) -> list[np.ndarray]:
        """Access rows of `array` in each warp request of the line, in trace order."""
        trace, acc, req = self.trace, self.trace.accesses, self.trace.requests
        at_line = [site.line == self.line and site.file == trace.file for site in trace.sites]
        views = [view.name == self.array for view in trace.views]
        found = []
        for i in np.flatnonzero(np.array(at_line, dtype=bool)[req.site]):
            rows = req.rows[req.first[i] : req.first[i + 1]]
            rows = rows[np.array(views, dtype=bool)[acc.view[rows]]]
            if len(rows):
                found.append(rows)
        return found

    def _per_request(self, unit: int) -> float:
        """Distinct `unit`-byte pieces of the array per warp request, averaged over the requests."""
        address = self.trace.accesses.address
        return float(np.mean([len(set((address[r] // unit).tolist())) for r in self._requests()]))

    @property
    def addresses_per_request(self) -> float:
        """Distinct addresses of the array per warp request: 1 is a broadcast."""
        return self._per_request(1)

    @property
    def sectors_per_request(self) -> float:
        """Distinct 32-byte sectors of the array per warp request."""
        return self._per_request(SECTOR_BYTES)

    @property
    def lines_per_request(self) -> float:
        """Distinct 128-byte cache lines of the array per warp request."""
        return self._per_request(LINE_BYTES)

    @property
    def loads_per_output(self) -> float:
        """Loads of the array at the line per element the launch stores to global memory."""
        stores = sum(r.lanes for r in self.trace.lines if r.space == "global" and r.op == "store")
        return sum(len(rows) for rows in self._requests()) / stores

    def entries(self, request: int = 0) -> list[int]:
        """The element each lane of one warp request reads (flat index), lane 0 first."""
        acc, views = self.trace.accesses, self.trace.views
        rows = sorted(self._requests()[request], key=lambda r: acc.thread[r])
        view = views[acc.view[rows[0]]]
        strides = np.array(view.strides) // view.dtype.itemsize
        return [int(np.dot([i for i in acc.index[r] if i >= 0], strides)) for r in rows]

    @property
    def size(self) -> int:
        """Elements of the array (25 taps, 256 table entries)."""
        view = next(v for v in self.trace.views if v.name == self.array)
        return int(np.prod(view.shape))


def trace_load(prepared: launch.Launch, *names: str, blocks=None) -> Traced:
    """Trace a one-kernel launch and find the one line that loads an array called one of `names`.

    An argument is called by its parameter name ("table"), a module array compiled into constant
    memory by its global name ("TONE_CURVE").
    """
    if len(prepared.steps) != 1:
        raise ValueError(f"trace_load traces one kernel; this launch has {len(prepared.steps)}")
    trace = trace_launch(prepared, blocks=blocks)
    found = {
        (row.line, row.space, name)
        for row in trace.lines
        for name in row.arrays
        if name in names and row.op == "load"
    }
    if len(found) != 1:
        wanted = " or ".join(names)
        raise ValueError(f"{trace.kernel} loads {wanted} on {len(found)} lines, not one")
    ((line, space, name),) = found
    return Traced(trace, line, space, name)


def random_image(shape=FILTER_SHAPE, seed: int = 3) -> np.ndarray:
    """A float32 image of values in [0.5, 1.5) (never zero), as the GPU run filters."""
    return np.random.default_rng(seed).random(shape, dtype=np.float32) + 0.5


def filter_taps(memory: str = "constant") -> Traced:
    """The one-pixel-per-thread 5x5 Gaussian, traced at its filter read (every lane: one tap)."""
    prepared = textbook.filter2d.prepare(random_image(), GAUSSIAN_5, memory=memory)
    return trace_load(prepared, "weights", "GAUSSIAN_5")


def image_fetches(image_shape=(32, 32)) -> dict[str, Traced]:
    """The 5x5 Gaussian one pixel per thread and tiled, traced at their image loads."""
    image = random_image(image_shape)
    launches = {
        "one pixel per thread": textbook.filter2d.prepare(image, GAUSSIAN_5, memory="constant"),
        "tiled": textbook.filter2d_tiled.prepare(image, GAUSSIAN_5),
    }
    return {name: trace_load(prepared, "image") for name, prepared in launches.items()}


def noise(warps: int = WARPS, seed: int = 8) -> np.ndarray:
    """Uniform random uint8 pixels, (warps // 2) x 64: a warp's 32 pixels, nearly all different."""
    return np.random.default_rng(seed).integers(0, 256, size=(warps // 2, 2 * WARP), dtype=np.uint8)


@functools.cache
def _photograph(side: int) -> np.ndarray:
    """The photograph at side x side (read-only: the segments below are copies)."""
    picture = images.load("astronaut", shape=(side, side))
    picture.setflags(write=False)
    return picture


def photograph_segments(warps: int = WARPS, *, side: int = PHOTO_SIDE, seed: int = 0) -> np.ndarray:
    """`warps` 32-pixel row segments of the photograph at side x side, as (warps // 2) x 64 uint8.

    Each segment starts at a multiple of 32, where a warp of the timed launch starts, so a traced
    warp reads exactly the 32 pixels a warp of the GPU run read.
    """
    picture = _photograph(side)
    segments = picture[:, : side - side % WARP].reshape(-1, WARP)
    chosen = np.random.default_rng(seed).choice(len(segments), warps, replace=False)
    return np.ascontiguousarray(segments[np.sort(chosen)].reshape(warps // 2, 2 * WARP))


def lookups(memory: str = "constant", pictures: dict | None = None) -> dict[str, Traced]:
    """The lookup table[pixel] traced at its table read: {"noise": ..., "photograph": ...}."""
    pictures = pictures or {"noise": noise(), "photograph": photograph_segments()}
    return {
        name: trace_load(
            textbook.lookup.prepare(picture, TONE_CURVE, memory=memory), "table", "TONE_CURVE"
        )
        for name, picture in pictures.items()
    }


def reads(memory: str = "constant") -> dict[str, Traced]:
    """The reads the lesson contrasts, filter or table in `memory` ("constant" or "global"):
    {"filter tap": filter_taps(memory), "noise": ..., "photograph": ...} (lookups(memory))."""
    return {"filter tap": filter_taps(memory), **lookups(memory)}

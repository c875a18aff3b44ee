"""Lesson 01's own launches traced on small arrays: the 32-byte sectors each warp request moves.

`gpgpu_lessons.trace_kernel` runs a launch, exactly as the lesson's wrappers build it, on the
simulator's machinery and counts per source line the warp requests and the sectors they touch.
The counts depend on the index formulas, not on the machine: they are the same in the
simulator and on a GPU, and they explain the bandwidths the GPU measures.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .. import launch
from ..trace import Trace, trace_launch
from . import fast, textbook

ELEMENTS = 4096  # float32 elements of a traced copy: a warp at stride 32 stays in bounds
BLOCKS = 1  # blocks traced per launch: the pattern repeats in every block
SEED_ELEMENTS = 2**15  # the seed's dots: 4096 threads, 8 elements each (lanes a sector apart)
SEED_GRID = (128, 32)  # the seed's 128 groups x 32 threads
BEST_ELEMENTS = 2**12  # the best dot runs one block in the simulator: keep its loop short
BEST_DOT = "best: fast.dot"  # the label the lesson's figures give fast.dot


@dataclass(frozen=True)
class Traced:
    """One traced launch and the source line of its global load."""

    trace: Trace
    line: int

    @property
    def load(self):
        """The trace's row (a `trace.Line`) of that load."""
        return self.trace.line(self.line, space="global", op="load")

    @property
    def sectors_per_request(self) -> float:
        return self.load.per_request("sectors")

    @property
    def ideal_sectors(self) -> float:
        return self.load.per_request("ideal_sectors")

    @property
    def requests_per_kib(self) -> float:
        """Warp requests of the load line per KiB it reads (fewer: fewer instructions)."""
        rows = self.trace.request(self.line, space="global", op="load")
        loaded = self.load.lanes * int(self.trace.accesses.size[rows[0]])
        return self.load.requests * 1024 / loaded

    def lane_bytes(self, warp: int = 0) -> list[tuple[int, int]]:
        """(first byte from the array's start, bytes) that each lane of one warp request loads."""
        acc, views = self.trace.accesses, self.trace.views
        rows = self.trace.request(self.line, space="global", op="load", warp=warp)
        found = []
        for r in sorted(rows, key=lambda r: acc.thread[r]):
            view = views[int(acc.view[r])]
            while view.parent is not None:  # a wide access of an array: its start is the array's
                view = views[view.parent]
            found.append((int(acc.address[r]) - view.base, int(acc.size[r])))
        return found


def trace_load(prepared: launch.Launch, *, step: int = 0, blocks: int = BLOCKS) -> Traced:
    """Trace one kernel of a prepared launch (`blocks` of its blocks) at its global load line."""
    trace = trace_launch(prepared, step=step, blocks=blocks)
    loads = [row.line for row in trace.lines if row.space == "global" and row.op == "load"]
    if len(loads) != 1:
        raise ValueError(f"{trace.kernel} loads global memory on {len(loads)} lines, not one")
    return Traced(trace, loads[0])


def random_floats(n: int, seed: int = 0) -> np.ndarray:
    """n random float32 (never zero): inputs of the traced launches."""
    return np.random.default_rng(seed).random(n, dtype=np.float32) + 1


def copies(strides=(1, 2, 32), offsets=(1,), *, n: int = ELEMENTS) -> dict[str, Traced]:
    """The textbook copies, traced: {"stride s": ..., "offset o": ...}."""
    a = random_floats(n)
    found = {f"stride {s}": trace_load(textbook.copy_with_stride.prepare(a, s)) for s in strides}
    for o in offsets:
        found[f"offset {o}"] = trace_load(textbook.copy_with_offset.prepare(a, o))
    return found


def wide_copies(widths=tuple(fast.WIDE), *, n: int = ELEMENTS) -> dict[str, Traced]:
    """fast.copy with one wide element per thread, traced: {"w-byte elements": ...}."""
    a = random_floats(n)
    return {f"{w}-byte elements": trace_load(fast.copy.prepare(a, element_bytes=w)) for w in widths}


def seed_dots(*, n: int = SEED_ELEMENTS) -> dict[str, Traced]:
    """Seed 004's two many-block dot products (128 x 32 threads), traced: one block each."""
    x, y = random_floats(n, 1), random_floats(n, 2)
    blocks, block = SEED_GRID
    return {
        f"many blocks, {name}": trace_load(
            textbook.dot_partial_sums.prepare(x, y, blocks=blocks, block=block, chunked=chunked),
            blocks=1,
        )
        for name, chunked in (("coalesced", False), ("chunked", True))
    }


def best_dot(*, n: int = BEST_ELEMENTS) -> Traced:
    """fast.dot's block-tree kernel, traced (one block)."""
    return trace_load(fast.dot.prepare(random_floats(n, 1), random_floats(n, 2)), blocks=1)


@functools.cache
def launches() -> MappingProxyType[str, Traced]:
    """Every launch the lesson's figures trace, keyed by the label the slides give it.

    The copies ("stride 1", "stride 2", "stride 32", "offset 1"), fast.copy's wide elements
    ("4-byte elements", ...), seed 004's many-block dots ("many blocks, coalesced" and
    "... chunked") and BEST_DOT. Traced once per process (read-only: the figures share it).
    """
    return MappingProxyType({**copies(), **wide_copies(), **seed_dots(), BEST_DOT: best_dot()})


def traced(labels) -> dict[str, Traced]:
    """{label: Traced} of the launches the slides call `labels` (see `launches`)."""
    found = launches()
    unknown = [label for label in labels if label not in found]
    if unknown:
        raise ValueError(f"no traced launch is called {unknown}; the lesson traces {list(found)}")
    return {label: found[label] for label in labels}

"""Which shared-memory bank each lane of lesson 03's transposes hits, traced from the kernels.

The bank rule (32 banks of 4 bytes; lanes that want different words of one bank take turns, one
wavefront each) lives in the kernel tracer, `gpgpu_lessons.trace.model`. This module runs the
launches the lesson's wrappers build through `trace_kernel`, on a small matrix of whole tiles,
and hands the lesson what it shows: wavefronts and sectors per warp request of each kernel (the
numbers Nsight Compute measures, see `profiling`), the lanes of one tile-column read and the bank
of every slot of the tile (`figures`), and SEED_003, the kernel of seed 003's worked 4 x 4 example
(the notebook traces it).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import launch
from ..specialise import specialise
from ..trace import Trace, trace_kernel
from ..trace.model import bank_of
from . import fast, textbook

SIDE = 64  # traced matrices are SIDE x SIDE: whole tiles for the 16-, 32- and 64-wide tiles
# The lesson's launches, named as textbook.VARIANTS and fast.VARIANTS time them -> (wrapper, dtype)
KERNELS = {
    "copy 32x8": (textbook.tile_copy, np.float32),
    "naive 32x8": (textbook.naive, np.float32),
    "tiled 32x8": (textbook.tiled, np.float32),
    "padded 32x8": (textbook.padded, np.float32),
    "naive 16x16 (seed)": (textbook.seed_naive, np.float32),
    "tiled 16x16 (seed)": (textbook.seed_tiled, np.float32),
    "padded 16x16 (seed)": (textbook.seed_padded, np.float32),
    f"wide {fast.WIDE_NAME}": (fast.wide, np.float32),
    "fast.transpose, float64 (32 x 33 tile)": (fast.transpose, np.float64),
}
# (space, op) of a traced line -> what Nsight Compute calls the same count per warp request
RATIOS = {
    ("shared", "load"): "shared ld wavefronts / instr",
    ("shared", "store"): "shared st wavefronts / instr",
    ("global", "load"): "global ld sectors / request",
    ("global", "store"): "global st sectors / request",
}

# Seed 003's worked example: the padded transpose on 4 x 4 tiles of an 8 x 8 matrix (4 x 5 slots)
SEED_003 = specialise(textbook.transpose_padded, "transpose_padded_4x4", TILE=4, ROWS=4, PADDED=5)


def launch_step(wrapper, shape=(SIDE, SIDE), dtype=np.float32) -> launch.Step:
    """The one kernel launch `wrapper` builds for a random matrix of `shape` and `dtype`."""
    a = np.random.default_rng(3).random(shape).astype(dtype)
    steps = wrapper.prepare(a).steps
    if len(steps) != 1:
        raise ValueError(f"{wrapper.__name__} launches {len(steps)} kernels on {shape}; trace one")
    return steps[0]


def trace(name: str, *, blocks=(0,)) -> Trace:
    """Trace the lesson's launch `name` (a key of KERNELS) on SIDE x SIDE: its first block only."""
    if name not in KERNELS:
        raise KeyError(f"{name!r} is not one of the lesson's launches: {sorted(KERNELS)}")
    return _trace(name, tuple(blocks))


@functools.lru_cache(maxsize=len(KERNELS))
def _trace(name: str, blocks: tuple) -> Trace:
    """The same launch traces the same everywhere: trace it once per process."""
    wrapper, dtype = KERNELS[name]
    step = launch_step(wrapper, (SIDE, SIDE), dtype)
    return trace_kernel(step.kernel, step.grid, step.block, *step.args, blocks=list(blocks))


def per_request(traced: Trace) -> dict[str, tuple[float, float]]:
    """{ncu's name (RATIOS): (count per warp request, ideal)}, over the lines of each kind."""
    found = {}
    for (space, op), name in RATIOS.items():
        rows = [r for r in traced.lines if (r.space, r.op) == (space, op)]
        requests = sum(r.requests for r in rows)
        if requests:
            unit = "wavefronts" if space == "shared" else "sectors"
            cost = sum(getattr(r, unit) for r in rows)
            ideal = sum(getattr(r, f"ideal_{unit}") for r in rows)
            found[name] = (cost / requests, ideal / requests)
    return found


def costliest(traced: Trace) -> tuple[str, float, float]:
    """(what, count per request, ideal) of the kernel's line furthest from its ideal."""
    counts = per_request(traced)
    name = max(counts, key=lambda n: (counts[n][0] / counts[n][1], n.startswith("shared")))
    return (name, *counts[name])


def shared_line(traced: Trace, op: str = "load"):
    """The row of traced.lines for the kernel's shared-memory `op` ("load" or "store")."""
    rows = [r for r in traced.lines if r.space == "shared" and r.op == op]
    if len(rows) != 1:
        raise ValueError(f"{traced.kernel} has {len(rows)} shared-memory {op} lines, expected 1")
    return rows[0]


def ways(traced: Trace, op: str = "load") -> float:
    """n of the n-way conflict of the shared `op`: wavefronts per request over the ideal."""
    row = shared_line(traced, op)
    return row.wavefronts / row.ideal_wavefronts


def tile_view(traced: Trace):
    """The shared tile as the tracer saw it (shape, dtype, simulated base address)."""
    tiles = [v for v in traced.views if v.space == "shared" and v.parent is None]
    if not tiles:
        raise ValueError(f"{traced.kernel} has no shared array")
    return tiles[0]


def slot(index: tuple, shape: tuple) -> int:
    """Position of tile[index] in a tile of `shape` stored row by row (r * width + c)."""
    return int(np.ravel_multi_index(index, shape))


def column_read(traced: Trace, op: str = "load", warp: int = 0) -> list[tuple]:
    """(lane, tile index, slot, bank) of each lane of warp `warp`'s first shared `op` request."""
    row, tile = shared_line(traced, op), tile_view(traced)
    return [
        (lane, index, slot(index, tile.shape), bank)
        for lane, _, index, _, _, bank in traced.lanes(row.line, space="shared", op=op, warp=warp)
    ]


def slot_banks(traced: Trace) -> np.ndarray:
    """The bank of every slot of the traced kernel's shared tile, in the tile's shape."""
    tile = tile_view(traced)
    slots = np.arange(int(np.prod(tile.shape))).reshape(tile.shape)
    return np.vectorize(lambda s: bank_of(tile.base + int(s) * tile.size))(slots)


SIGNATURES = {SEED_003: ["void(float32[:, ::1], float32[:, ::1])"]}

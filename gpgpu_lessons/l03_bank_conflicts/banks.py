"""Which shared-memory bank each lane of a warp hits, for the transposes of lesson 03.

Shared memory is 32 banks of 4 bytes: byte address b lives in bank (b // 4) % 32. A warp's
request is served in *wavefronts*: lanes touching different 4-byte words of the same bank
must take turns (an n-way conflict costs n wavefronts); lanes reading the same word share it.
Elements of 8 bytes are served half a warp at a time (16 lanes x 8 bytes = 128 bytes), so a
conflict-free 8-byte request takes 2 wavefronts.

Global memory moves 32-byte sectors: a warp's request costs as many sectors as distinct
32-byte pieces its lanes touch (4 for 32 neighbouring floats, 32 for a column of floats).

``requests`` lists the shared and global requests of one block of a transpose kernel, with the
indices the kernels use (a thread (tx, ty) moves tile rows ty, ty + ROWS, ...; a shared tile of
TILE x (TILE + pad) elements is stored row by row: ``tile_slot``); ``predict`` turns them into
the numbers Nsight Compute measures (``profiling``). The kernel tracer of issue 16 will measure
the same from the kernels themselves; this hand-made model is what it replaces.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from . import fast
from .textbook import ROWS, TILE

BANKS = 32
BANK_BYTES = 4
WARP = 32
SECTOR_BYTES = 32
REQUEST_BYTES = BANKS * BANK_BYTES  # one wavefront serves at most 128 bytes


def bank_of(byte_address: int, banks: int = BANKS) -> int:
    """The bank that holds this byte of shared memory."""
    return (byte_address // BANK_BYTES) % banks


def wavefronts(byte_addresses, size: int = 4, banks: int = BANKS) -> int:
    """Wavefronts a request of `size`-byte lanes needs (n-way conflicts summed over phases)."""
    lanes_per_phase = max(1, banks * BANK_BYTES // size)
    total = 0
    for start in range(0, len(byte_addresses), lanes_per_phase):
        words = defaultdict(set)  # bank -> distinct 4-byte words wanted from it
        for address in byte_addresses[start : start + lanes_per_phase]:
            for word in range(address // BANK_BYTES, (address + size - 1) // BANK_BYTES + 1):
                words[word % banks].add(word)
        total += max(len(w) for w in words.values())
    return total


def ideal_wavefronts(lanes: int, size: int = 4, banks: int = BANKS) -> int:
    """Wavefronts the same request needs without conflicts: its bytes / 128."""
    return max(1, math.ceil(lanes * size / (banks * BANK_BYTES)))


def sectors(byte_addresses, size: int = 4) -> int:
    """Distinct 32-byte sectors a global-memory request touches."""
    step = min(size, SECTOR_BYTES)
    return len({b // SECTOR_BYTES for a in byte_addresses for b in range(a, a + size, step)})


def tile_slot(row: int, col: int, width: int) -> int:
    """Position of element (row, col) in a shared tile of `width` columns, stored row by row."""
    return row * width + col


def warp_lanes(threads: tuple[int, int], warp: int = 0) -> list[tuple[int, int]]:
    """(threadIdx.x, threadIdx.y) of the lanes of one warp: x varies fastest."""
    bx, by = threads
    first = warp * WARP
    return [(t % bx, t // bx) for t in range(first, min(first + WARP, bx * by))]


@dataclass(frozen=True)
class Variant:
    """One transpose kernel and its launch shape, as the textbook and fast modules run it."""

    kind: str  # "copy", "naive", "shared" (pad 0 = tiled, pad 1 = padded) or "wide"
    tile: int = TILE
    rows: int = ROWS
    pad: int = 0
    vec: int = 1  # "wide": neighbouring elements each thread moves per global access

    @property
    def threads(self) -> tuple[int, int]:
        return (self.tile // self.vec, self.rows)

    @property
    def label(self) -> str:
        tx, ty = self.threads
        name = {"copy": "copy", "naive": "naive", "wide": "wide"}.get(
            self.kind, "padded" if self.pad else "tiled"
        )
        return f"{name} {tx}x{ty}" + (f" ({self.tile}x{self.tile} tile)" if self.tile != tx else "")


WIDE = Variant("wide", fast.TILE, fast.ROWS, fast.PAD, fast.VEC)


@dataclass(frozen=True)
class Request:
    """One warp-wide memory instruction: where each lane goes."""

    space: str  # "shared" or "global"
    op: str  # "ld" or "st"
    elements: tuple  # element index of each lane (shared: tile slot; global: row-major index)
    size: int  # bytes per lane

    @property
    def addresses(self) -> list[int]:
        return [e * self.size for e in self.elements]

    @property
    def cost(self) -> int:
        """Wavefronts (shared) or sectors (global) this request needs."""
        if self.space == "shared":
            return wavefronts(self.addresses, self.size)
        return sectors(self.addresses, self.size)

    @property
    def ideal(self) -> int:
        if self.space == "shared":
            return ideal_wavefronts(len(self.elements), self.size)
        return math.ceil(len(self.elements) * self.size / SECTOR_BYTES)


def requests(
    variant: Variant,
    shape: tuple[int, int],
    itemsize: int = 4,
    block: tuple[int, int] | None = None,
) -> list[Request]:
    """Every warp instruction that touches memory in one block (default: mid-grid)."""
    h, w = shape
    tile, width = variant.tile, variant.tile + variant.pad
    bx, by = block if block is not None else (w // tile // 2, h // tile // 2)
    x0, y0 = bx * tile, by * tile
    warps = math.ceil(variant.threads[0] * variant.threads[1] / WARP)
    found = []
    for phase in ("read", "write"):
        for warp in range(warps):
            lanes = warp_lanes(variant.threads, warp)
            for j in range(0, tile, variant.rows):
                # tile row ty + j, as in the kernels' loops over j
                rows = [(tx, ty + j) for tx, ty in lanes]
                found += _warp_requests(variant, phase, rows, x0, y0, h, w, width, itemsize)
    return found


def _warp_requests(variant, phase, lanes, x0, y0, h, w, width, itemsize):
    """The requests of one warp in one loop iteration; lanes outside the matrix stay idle."""
    kind, v = variant.kind, variant.vec

    def shared(op, slots):
        return Request("shared", op, tuple(slots), itemsize)

    def global_(op, elements, size=itemsize):
        return Request("global", op, tuple(elements), size)

    if kind == "wide":  # global elements count runs of v neighbours: the input seen as (h, w / v)
        if phase == "read":
            live = [(tx, j) for tx, j in lanes if x0 + v * tx < w and y0 + j < h]
            runs = (((y0 + j) * w + x0 + v * tx) // v for tx, j in live)
            return [
                global_("ld", runs, v * itemsize),
                *(
                    shared("st", (tile_slot(j, v * tx + i, width) for tx, j in live))
                    for i in range(v)
                ),
            ]
        live = [(tx, j) for tx, j in lanes if y0 + v * tx < h and x0 + j < w]
        runs = (((x0 + j) * h + y0 + v * tx) // v for tx, j in live)
        return [
            *(shared("ld", (tile_slot(v * tx + i, j, width) for tx, j in live)) for i in range(v)),
            global_("st", runs, v * itemsize),
        ]
    if phase == "read":
        live = [(tx, j) for tx, j in lanes if x0 + tx < w and y0 + j < h]
        load = global_("ld", ((y0 + j) * w + x0 + tx for tx, j in live))
        if kind == "copy":
            return [load, global_("st", load.elements)]
        if kind == "naive":
            return [load, global_("st", ((x0 + tx) * h + y0 + j for tx, j in live))]
        return [load, shared("st", (tile_slot(j, tx, width) for tx, j in live))]
    if kind in ("copy", "naive"):
        return []
    live = [(tx, j) for tx, j in lanes if y0 + tx < h and x0 + j < w]
    return [
        shared("ld", (tile_slot(tx, j, width) for tx, j in live)),
        global_("st", ((x0 + j) * h + y0 + tx for tx, j in live)),
    ]


def column_read(
    tile: int = TILE, pad: int = 0, itemsize: int = 4, rows: int | None = None
) -> Request:
    """The first shared-memory read of a tile column by warp 0 of the shared-tile transpose."""
    variant = Variant("shared", tile, rows or tile, pad)
    shape = (2 * tile, 2 * tile)
    return next(
        r
        for r in requests(variant, shape, itemsize, block=(0, 0))
        if r.space == "shared" and r.op == "ld"
    )


def conflict_ways(request: Request) -> float:
    """n of the n-way conflict: wavefronts needed / wavefronts a conflict-free request needs."""
    return request.cost / request.ideal


def predict(variant: Variant, shape: tuple[int, int], itemsize: int = 4) -> dict:
    """Per-request costs and whole-kernel counts the kernel should show in Nsight Compute.

    Per-request ratios come from one block in the middle of the grid; whole-kernel counts
    multiply by the number of blocks, exact when the sides are multiples of the tile.
    """
    h, w = shape
    blocks = math.ceil(h / variant.tile) * math.ceil(w / variant.tile)
    found = requests(variant, shape, itemsize)
    out = {}
    for space, op, unit in (
        ("shared", "ld", "wavefronts"),
        ("shared", "st", "wavefronts"),
        ("global", "ld", "sectors"),
        ("global", "st", "sectors"),
    ):
        mine = [r for r in found if r.space == space and r.op == op and r.elements]
        count = len(mine)
        cost = sum(r.cost for r in mine)
        out[f"{space}_{op}_requests"] = count * blocks
        out[f"{space}_{op}_{unit}"] = cost * blocks
        out[f"{space}_{op}_{unit}_per_request"] = cost / count if count else 0.0
        if space == "shared":
            out[f"{space}_{op}_bank_conflicts"] = (cost - sum(r.ideal for r in mine)) * blocks
    return out


def lane_table(
    tile: int = TILE, pad: int = 0, itemsize: int = 4, rows: int | None = None, lanes: int = 8
) -> list[tuple[int, int, int]]:
    """(lane, slot, bank) for the first lanes of a column read: the numbers behind the picture."""
    request = column_read(tile, pad, itemsize, rows)
    return [
        (lane, slot, bank_of(slot * itemsize)) for lane, slot in enumerate(request.elements[:lanes])
    ]

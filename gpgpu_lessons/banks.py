"""Which shared-memory bank each lane of a warp hits, computed from the transpose kernels' own formulas.

Shared memory is 32 banks of 4 bytes: byte address b lives in bank (b // 4) % 32. A warp's
request is served in *wavefronts*: lanes touching different 4-byte words of the same bank
must take turns (an n-way conflict costs n wavefronts); lanes reading the same word share it.
Elements of 8 bytes are served half a warp at a time (16 lanes x 8 bytes = 128 bytes), so a
conflict-free 8-byte request takes 2 wavefronts.

Global memory moves 32-byte sectors: a warp's request costs as many sectors as distinct
32-byte pieces its lanes touch (4 for 32 neighbouring floats, 32 for a column of floats).

``requests`` lists the shared and global requests of one block of a transpose kernel, with
the addresses computed by the kernels' own slot formula (``transpose.tile_slot``); ``predict``
turns them into the numbers Nsight Compute measures (gpgpu_lessons.profiling).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from .kernels.transpose import ROWS, TILE, WIDE_ROWS, WIDE_TILE, WIDE_VEC, tile_slot

BANKS = 32
BANK_BYTES = 4
WARP = 32
SECTOR_BYTES = 32
REQUEST_BYTES = BANKS * BANK_BYTES  # one wavefront serves at most 128 bytes


def bank_of(byte_address: int, banks: int = BANKS) -> int:
    """The bank that holds this byte of shared memory."""
    return (byte_address // BANK_BYTES) % banks


def wavefronts(byte_addresses, size: int = 4, banks: int = BANKS) -> int:
    """Wavefronts a shared-memory request of `size`-byte lanes needs (the n of an n-way conflict, summed over phases)."""
    lanes_per_phase = max(1, banks * BANK_BYTES // size)
    total = 0
    for start in range(0, len(byte_addresses), lanes_per_phase):
        words = defaultdict(set)  # bank -> distinct 4-byte words wanted from it
        for address in byte_addresses[start:start + lanes_per_phase]:
            for word in range(address // BANK_BYTES, (address + size - 1) // BANK_BYTES + 1):
                words[word % banks].add(word)
        total += max(len(w) for w in words.values())
    return total


def ideal_wavefronts(lanes: int, size: int = 4, banks: int = BANKS) -> int:
    """Wavefronts the same request needs without conflicts: its bytes / 128."""
    return max(1, math.ceil(lanes * size / (banks * BANK_BYTES)))


def sectors(byte_addresses, size: int = 4) -> int:
    """Distinct 32-byte sectors a global-memory request touches."""
    return len({b // SECTOR_BYTES for a in byte_addresses for b in range(a, a + size, min(size, SECTOR_BYTES))})


def warp_lanes(threads: tuple[int, int], warp: int = 0) -> list[tuple[int, int]]:
    """(threadIdx.x, threadIdx.y) of the lanes of one warp: x varies fastest."""
    bx, by = threads
    first = warp * WARP
    return [(t % bx, t // bx) for t in range(first, min(first + WARP, bx * by))]


@dataclass(frozen=True)
class Variant:
    """One transpose kernel and its launch shape, as gpgpu_lessons.kernels.transpose runs it."""

    kind: str          # "copy", "naive", "shared" (pad 0 = tiled, pad 1 = padded) or "wide"
    tile: int = TILE
    rows: int = ROWS
    pad: int = 0
    vec: int = 1       # "wide": neighbouring elements each thread moves per global access

    @property
    def threads(self) -> tuple[int, int]:
        return (self.tile // self.vec, self.rows)

    @property
    def label(self) -> str:
        tx, ty = self.threads
        name = {"copy": "copy", "naive": "naive", "wide": "wide"}.get(self.kind, "padded" if self.pad else "tiled")
        return f"{name} {tx}x{ty}" + (f" ({self.tile}x{self.tile} tile)" if self.tile != tx else "")


WIDE = Variant("wide", WIDE_TILE, WIDE_ROWS, 1, WIDE_VEC)


@dataclass(frozen=True)
class Request:
    """One warp-wide memory instruction: where each lane goes."""

    space: str         # "shared" or "global"
    op: str            # "ld" or "st"
    elements: tuple    # element index of each lane (shared: tile slot; global: row-major index)
    size: int          # bytes per lane

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


def requests(variant: Variant, shape: tuple[int, int], itemsize: int = 4, block: tuple[int, int] | None = None):
    """Every warp instruction of one block (default: one in the middle of the grid) that touches memory."""
    h, w = shape
    tile, width = variant.tile, variant.tile + variant.pad
    bx, by = block if block is not None else (w // tile // 2, h // tile // 2)
    x0, y0 = bx * tile, by * tile
    warps = math.ceil(variant.threads[0] * variant.threads[1] / WARP)
    found = []
    for phase in ("read", "write"):
        for warp in range(warps):
            lanes = warp_lanes(variant.threads, warp)
            for k in range(tile // variant.rows):
                # tile row j = threadIdx.y + k * rows, as in the kernels' loops over k
                found += _warp_requests(variant, phase, [(tx, ty + k * variant.rows) for tx, ty in lanes],
                                        x0, y0, h, w, width, itemsize)
    return found


def _warp_requests(variant, phase, lanes, x0, y0, h, w, width, itemsize):
    """The requests of one warp in one loop iteration; lanes outside the matrix stay idle."""
    kind = variant.kind
    if kind == "wide":
        v = variant.vec   # global elements count runs of v neighbours: the input seen as (h, w / v)
        if phase == "read":
            live = [(tx, j) for tx, j in lanes if x0 + v * tx < w and y0 + j < h]
            return [Request("global", "ld", tuple(((y0 + j) * w + x0 + v * tx) // v for tx, j in live), v * itemsize),
                    *(Request("shared", "st", tuple(tile_slot(j, v * tx + i, width) for tx, j in live), itemsize)
                      for i in range(v))]
        live = [(tx, j) for tx, j in lanes if y0 + v * tx < h and x0 + j < w]
        return [*(Request("shared", "ld", tuple(tile_slot(v * tx + i, j, width) for tx, j in live), itemsize)
                  for i in range(v)),
                Request("global", "st", tuple(((x0 + j) * h + y0 + v * tx) // v for tx, j in live), v * itemsize)]
    if phase == "read":
        live = [(tx, j) for tx, j in lanes if x0 + tx < w and y0 + j < h]
        load = Request("global", "ld", tuple((y0 + j) * w + x0 + tx for tx, j in live), itemsize)
        if kind == "copy":
            return [load, Request("global", "st", load.elements, itemsize)]
        if kind == "naive":
            return [load, Request("global", "st", tuple((x0 + tx) * h + y0 + j for tx, j in live), itemsize)]
        return [load, Request("shared", "st", tuple(tile_slot(j, tx, width) for tx, j in live), itemsize)]
    if kind in ("copy", "naive"):
        return []
    live = [(tx, j) for tx, j in lanes if y0 + tx < h and x0 + j < w]
    return [Request("shared", "ld", tuple(tile_slot(tx, j, width) for tx, j in live), itemsize),
            Request("global", "st", tuple((x0 + j) * h + y0 + tx for tx, j in live), itemsize)]


def column_read(tile: int = TILE, pad: int = 0, itemsize: int = 4, rows: int | None = None) -> Request:
    """The first shared-memory read of a tile column by warp 0 of the shared-tile transpose."""
    variant = Variant("shared", tile, rows or tile, pad)
    shape = (2 * tile, 2 * tile)
    return next(r for r in requests(variant, shape, itemsize, block=(0, 0)) if r.space == "shared" and r.op == "ld")


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
    for space, op, unit in (("shared", "ld", "wavefronts"), ("shared", "st", "wavefronts"),
                            ("global", "ld", "sectors"), ("global", "st", "sectors")):
        mine = [r for r in found if r.space == space and r.op == op and r.elements]
        count = len(mine)
        cost = sum(r.cost for r in mine)
        out[f"{space}_{op}_requests"] = count * blocks
        out[f"{space}_{op}_{unit}"] = cost * blocks
        out[f"{space}_{op}_{unit}_per_request"] = cost / count if count else 0.0
        if space == "shared":
            out[f"{space}_{op}_bank_conflicts"] = (cost - sum(r.ideal for r in mine)) * blocks
    return out


# ---- pictures ------------------------------------------------------------------------------

def draw_tile(ax, tile: int = TILE, pad: int = 0, itemsize: int = 4, rows: int | None = None, shown: int = 32):
    """Colour each slot of a shared tile by its bank; outline the column warp 0 reads at once."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    width = tile + pad
    request = column_read(tile, pad, itemsize, rows)
    n_rows = min(tile, shown)
    banks = [[bank_of(tile_slot(r, c, width) * itemsize) for c in range(width)] for r in range(n_rows)]
    ax.imshow(banks, cmap=plt.get_cmap("hsv", BANKS), vmin=-0.5, vmax=BANKS - 0.5, aspect="equal")
    for slot in request.elements:
        r, c = divmod(slot, width)
        if r < n_rows:
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5))
    if pad:
        ax.axvline(tile - 0.5, color="white", linewidth=2)
    ways = conflict_ways(request)
    ax.set_title(f"{tile} x ({tile} + {pad}) tile of {itemsize}-byte elements\n"
                 f"column read: {request.cost} wavefront(s), {ways:g}-way", fontsize=9)
    ax.set_xlabel("tile column (the padding column right of the white line)" if pad else "tile column")
    ax.set_ylabel("tile row")


def picture(tile: int = TILE, pads=(0, 1), itemsize: int = 4, rows: int | None = None):
    """Side-by-side tiles coloured by bank, with and without padding (one panel per pad)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(pads), figsize=(4.4 * len(pads), 4.4), layout="constrained", squeeze=False)
    for ax, pad in zip(axes[0], pads):
        draw_tile(ax, tile, pad, itemsize, rows)
    fig.suptitle("colour = bank (32 banks of 4 bytes); black boxes = the slots one warp reads together",
                 fontsize=10)
    plt.close(fig)
    return fig


def lane_table(tile: int = TILE, pad: int = 0, itemsize: int = 4, rows: int | None = None, lanes: int = 8):
    """Rows (lane, tile slot, bank) for the first lanes of a column read: the numbers behind the picture."""
    request = column_read(tile, pad, itemsize, rows)
    return [(lane, slot, bank_of(slot * itemsize)) for lane, slot in enumerate(request.elements[:lanes])]


def block_order_picture(tiles: int = 8, groups=(1, 4), first: int = 16):
    """Which tiles the first blocks read (top) and write (bottom), for each block order (transpose.tile_of_block)."""
    import matplotlib.pyplot as plt
    import numpy as np

    from .kernels.transpose import tile_of_block

    fig, axes = plt.subplots(2, len(groups), figsize=(2.9 * len(groups), 5.4), layout="constrained",
                             squeeze=False)
    for col, group in enumerate(groups):
        order = np.full((2, tiles, tiles), np.nan)
        for block in range(first):
            r, c = tile_of_block(block, tiles, tiles, group)
            order[0, r, c], order[1, c, r] = block, block    # the output tile is the transposed one
        for row, side in enumerate(("input tiles read", "output tiles written")):
            ax = axes[row][col]
            ax.imshow(order[row], cmap="viridis", vmin=0, vmax=first - 1)
            for (r, c), block in np.ndenumerate(order[row]):
                if not np.isnan(block):
                    ax.text(c, r, int(block), ha="center", va="center", fontsize=7, color="white")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"group = {group}: {side}", fontsize=9)
    fig.suptitle(f"the first {first} blocks of a {tiles} x {tiles}-tile transpose (number = block index)",
                 fontsize=10)
    plt.close(fig)
    return fig

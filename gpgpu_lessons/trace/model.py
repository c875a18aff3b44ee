"""What the memory system does with each warp request: sectors, bank wavefronts, broadcasts.

The rules (Volta and later; what Nsight Compute counts):

- global and local memory move 32-byte sectors: a request costs the distinct sectors its lanes
  touch; ideally its distinct bytes / 32 (4 for 32 neighbouring floats, 32 for a column),
  counted by the element each lane accesses (each of a complex128's two 8-byte halves: 16);
- shared memory has 32 banks of 4 bytes, byte b in bank (b // 4) % 32; one wavefront returns
  at most 128 bytes; lanes touching different 4-byte words of one bank take turns (an n-way
  conflict costs n wavefronts) and lanes touching the same word share it (broadcast), so a
  request costs the larger of the most distinct words one bank must deliver and its distinct
  words / 32; 8-byte accesses are served a half-warp at a time and 16-byte ones a quarter-warp
  at a time (32 neighbouring float64 are 2 wavefronts, both half-warps reading the same 16
  float64 are 2 too), except a broadcast of one address to every lane (1 wavefront; checked
  against Nsight Compute on an H100 and an H200); ideally the distinct bytes / 128 of each
  half-warp (quarter-warp);
- constant memory serves one address per cycle to the whole warp: n distinct addresses in a
  request are n serialised reads;
- atomics on the same address from lanes of one warp are serialised (contention): in global
  memory each lane's update of one address is its own sector (32 lanes on one float: 32
  sectors, as Nsight Compute counts them), in shared memory its own turn at the bank.

`requests` applies them to every warp request of a trace; the scalar functions below are the
same rules for one request, for lessons that draw or tabulate a pattern by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..hardware import BANK_BYTES, BANKS, SECTOR_BYTES, WAVEFRONT_BYTES
from .accesses import WARP, Accesses, group_starts
from .arrays import ATOMIC, SPACES

GLOBAL, SHARED, CONSTANT, LOCAL = range(4)


def bank_of(byte_address: int) -> int:
    """The bank that holds this byte of shared memory."""
    return (byte_address // BANK_BYTES) % BANKS


def sector_of(byte_address: int) -> int:
    """The 32-byte sector that holds this byte of global memory."""
    return byte_address // SECTOR_BYTES


def lane_group(size: int) -> int:
    """Lanes served together by shared memory: the warp for 4-byte accesses, a half-warp for
    8-byte, a quarter-warp for 16-byte (each group moves at most 128 bytes per wavefront)."""
    return WARP // min(max(size // BANK_BYTES, 1), 4)


def wavefronts(byte_addresses, size: int = 4, lanes=None) -> int:
    """Wavefronts one shared-memory request needs (lane lanes[i], default i, at byte_addresses[i]).

    8- and 16-byte requests are served a half-warp (quarter-warp) at a time, unless every lane
    reads one address (a broadcast: 1 wavefront).
    """
    addresses = list(byte_addresses)
    lanes = range(len(addresses)) if lanes is None else list(lanes)
    if len(set(addresses)) == 1:
        return 1
    groups: dict = {}
    for lane, address in zip(lanes, addresses):
        groups.setdefault(lane // lane_group(size), []).append(address)
    total = 0
    for group in groups.values():
        words: dict = {}
        for address in group:
            for word in range(
                address // BANK_BYTES, (address + max(size, 1) - 1) // BANK_BYTES + 1
            ):
                words.setdefault(word % BANKS, set()).add(word)
        distinct = sum(len(found) for found in words.values())
        total += max(max((len(f) for f in words.values()), default=0), -(-distinct // BANKS))
    return total


def ideal_wavefronts(lanes: int, size: int = 4, distinct_bytes: int | None = None) -> int:
    """Wavefronts without conflicts: the distinct bytes returned / 128, at least 1."""
    nbytes = lanes * size if distinct_bytes is None else distinct_bytes
    return max(1, math.ceil(nbytes / WAVEFRONT_BYTES))


def sectors(byte_addresses, size: int = 4) -> int:
    """Distinct 32-byte sectors one global-memory request touches."""
    return len(
        {
            s
            for a in byte_addresses
            for s in range(a // SECTOR_BYTES, (a + size - 1) // SECTOR_BYTES + 1)
        }
    )


def ideal_sectors(byte_addresses, size: int = 4) -> int:
    """Sectors a perfectly packed request of the same distinct bytes needs."""
    return max(1, math.ceil(len(set(byte_addresses)) * size / SECTOR_BYTES))


@dataclass
class Requests:
    """One row per warp request: where, what, and what it costs."""

    block: np.ndarray
    warp: np.ndarray
    site: np.ndarray
    occurrence: np.ndarray
    space: np.ndarray
    op: np.ndarray
    lanes: np.ndarray  # lanes taking part
    sectors: np.ndarray  # global/local: distinct 32-byte sectors
    ideal_sectors: np.ndarray
    wavefronts: np.ndarray  # shared: wavefronts by the bank rule
    ideal_wavefronts: np.ndarray
    addresses: np.ndarray  # distinct addresses (constant: serialised reads)
    most_on_one: np.ndarray  # most lanes on one address (atomics: contention)
    rows: np.ndarray  # access rows of each request: rows[first[i]:first[i + 1]]
    first: np.ndarray

    def __len__(self) -> int:
        return len(self.site)


def _group_ids(*keys) -> tuple[np.ndarray, np.ndarray, int]:
    """(order, group id of each sorted row, number of groups) for rows sorted by keys."""
    order = np.lexsort(keys[::-1])
    start = np.zeros(len(order), dtype=bool)
    if len(order):
        start[0] = True
        for key in keys:
            start[1:] |= key[order][1:] != key[order][:-1]
    ids = np.cumsum(start) - 1
    return order, ids, int(ids[-1] + 1) if len(ids) else 0


def _distinct_per_group(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Number of distinct values in each group 0..n-1."""
    order = np.lexsort((values, group))
    g, v = group[order], values[order]
    new = np.ones(len(g), dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (v[1:] != v[:-1])
    return np.bincount(g[new], minlength=n)


def _distinct_bytes(group, address, size, n) -> np.ndarray:
    """Bytes of each group counted once per distinct address."""
    order = np.lexsort((address, group))
    g, a = group[order], address[order]
    new = np.ones(len(g), dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (a[1:] != a[:-1])
    return np.bincount(g[new], weights=size[order][new], minlength=n).astype(np.int64)


def _expand(group, address, size, unit):
    """(group, unit index, row) for every `unit`-byte piece each access touches."""
    first = address // unit
    count = (address + np.maximum(size, 1) - 1) // unit - first + 1
    rows = np.repeat(np.arange(len(address)), count)
    step = np.arange(len(rows)) - np.repeat(np.cumsum(count) - count, count)
    return group[rows], first[rows] + step, rows


def _sectors(req, address, size, n):
    group, sector, _ = _expand(req, address, size, SECTOR_BYTES)
    return _distinct_per_group(group, sector, n)


def _wavefronts(req, lane, address, size, atomic, n):
    """Per request: the most distinct words one bank must deliver, or distinct words / 32 if more.

    Atomics are the exception: lanes on one word do not share it, each updates it in turn.
    """
    group, word, rows = _expand(req, address, size, BANK_BYTES)
    bank = word % BANKS
    word = np.where(atomic[rows], word * WARP + lane[rows], word)
    order = np.lexsort((word, bank, group))
    g, b, w = group[order], bank[order], word[order]
    new_word = np.ones(len(g), dtype=bool)
    new_word[1:] = (g[1:] != g[:-1]) | (b[1:] != b[:-1]) | (w[1:] != w[:-1])
    g, b = g[new_word], b[new_word]
    bank_start = np.ones(len(g), dtype=bool)
    bank_start[1:] = (g[1:] != g[:-1]) | (b[1:] != b[:-1])
    per_bank = (
        np.add.reduceat(np.ones(len(g), dtype=np.int64), np.flatnonzero(bank_start))
        if len(g)
        else np.zeros(0, np.int64)
    )
    most = np.zeros(n, dtype=np.int64)
    np.maximum.at(most, g[bank_start], per_bank)
    distinct = np.bincount(g, minlength=n).astype(np.int64)
    return np.maximum(most, -(-distinct // BANKS))


def _shared_wavefronts(acc, shared, req, lane, n):
    """(wavefronts, ideal wavefronts) per request for its shared-memory accesses.

    8-byte accesses are served a half-warp at a time and 16-byte ones a quarter-warp at a time
    (Nsight Compute on an H100: 2-way conflicts inside each half-warp cost 4 wavefronts, both
    half-warps reading the same 16 doubles 2), except when every lane reads one address (1).
    Atomics are served by the whole warp, one turn per lane on one word.
    """
    atomic = acc.op[shared] == ATOMIC
    size, address = acc.size[shared], acc.address[shared]
    group = np.where(atomic, WARP, WARP // np.clip(size // BANK_BYTES, 1, 4))
    part = req[shared] * 4 + lane[shared] // group  # at most 4 lane groups per request
    waves = _wavefronts(part, lane[shared], address, size, atomic, 4 * n).reshape(n, 4).sum(1)
    bytes_ = _distinct_bytes(part, address, size, 4 * n).reshape(n, 4)
    ideal = np.maximum(1, np.where(bytes_ > 0, -(-bytes_ // WAVEFRONT_BYTES), 0).sum(1))
    one_address = (_distinct_per_group(req[shared], address, n) == 1) & (
        np.bincount(req[shared][atomic], minlength=n) == 0
    )
    return np.where(one_address, 1, waves), np.where(one_address, 1, ideal)


def _atomic_sectors(req, address, n):
    """Per request: sectors of global atomics, one per lane updating the same address."""
    sector = address // SECTOR_BYTES
    order = np.lexsort((address, sector, req))
    g, s, a = req[order], sector[order], address[order]
    new_address = np.ones(len(g), dtype=bool)
    new_address[1:] = (g[1:] != g[:-1]) | (a[1:] != a[:-1])
    counts = (
        np.add.reduceat(np.ones(len(g), dtype=np.int64), np.flatnonzero(new_address))
        if len(g)
        else np.zeros(0, np.int64)
    )
    ag, asec = g[new_address], s[new_address]
    new_sector = np.ones(len(ag), dtype=bool)
    new_sector[1:] = (ag[1:] != ag[:-1]) | (asec[1:] != asec[:-1])
    per_sector = (
        np.maximum.reduceat(counts, np.flatnonzero(new_sector))
        if len(ag)
        else np.zeros(0, np.int64)
    )
    return np.bincount(ag[new_sector], weights=per_sector, minlength=n).astype(np.int64)


def _most_on_one(req, address, n):
    """Per request: the most lanes that hit one address."""
    order = np.lexsort((address, req))
    g, a = req[order], address[order]
    start = np.ones(len(g), dtype=bool)
    start[1:] = (g[1:] != g[:-1]) | (a[1:] != a[:-1])
    counts = (
        np.add.reduceat(np.ones(len(g), dtype=np.int64), np.flatnonzero(start))
        if len(g)
        else np.zeros(0, np.int64)
    )
    most = np.zeros(n, dtype=np.int64)
    np.maximum.at(most, g[start], counts)
    return most


def requests(acc: Accesses) -> Requests:
    """Group accesses into warp requests (same block, warp, instruction, occurrence) and cost them.

    The two halves of a complex element are two instructions (Numba splits them), so two requests.
    """
    warp = acc.thread // WARP
    order, ids, n = _group_ids(acc.block, warp, acc.site, acc.part, acc.occurrence)
    req = np.empty(len(acc), dtype=np.int64)
    req[order] = ids
    first_rows = order[group_starts(ids)] if n else np.zeros(0, np.int64)
    lane = acc.thread % WARP
    space = acc.space[first_rows]
    zeros = np.zeros(n, dtype=np.int64)
    sectors_, ideal_s, waves, ideal_w = zeros.copy(), zeros.copy(), zeros.copy(), zeros.copy()
    memory = (acc.space == GLOBAL) | (acc.space == LOCAL)
    # the ideal moves each lane's whole element: a complex128 is two 8-byte requests, each
    # spread over the 16 bytes of the lanes' elements (32 lanes: 512 bytes, 16 sectors)
    distinct = _distinct_bytes(req, acc.address, np.maximum(acc.size, acc.element), n)
    if memory.any():
        sectors_ = _sectors(req[memory], acc.address[memory], acc.size[memory], n)
        atomics = memory & (acc.op == ATOMIC)
        if atomics.any():  # same-address atomics: a sector per lane
            counted = _atomic_sectors(req[atomics], acc.address[atomics], n)
            sectors_ = np.where(np.bincount(req[atomics], minlength=n) > 0, counted, sectors_)
        ideal_s = np.where(
            (space == GLOBAL) | (space == LOCAL), np.maximum(1, -(-distinct // SECTOR_BYTES)), 0
        )
    shared = acc.space == SHARED
    if shared.any():
        waves, ideal_w = _shared_wavefronts(acc, shared, req, lane, n)
        ideal_w = np.where(space == SHARED, ideal_w, 0)
    return Requests(
        block=acc.block[first_rows],
        warp=warp[first_rows],
        site=acc.site[first_rows],
        occurrence=acc.occurrence[first_rows],
        space=space,
        op=acc.op[first_rows],
        lanes=np.bincount(req, minlength=n) if n else zeros,
        sectors=sectors_,
        ideal_sectors=ideal_s,
        wavefronts=waves,
        ideal_wavefronts=ideal_w,
        addresses=_distinct_per_group(req, acc.address, n) if n else zeros,
        most_on_one=_most_on_one(req, acc.address, n) if n else zeros,
        rows=order,
        first=np.append(np.flatnonzero(group_starts(ids)), len(order)),
    )


@dataclass
class Line:
    """One row of Trace.lines: the requests of one source line, memory space and operation."""

    file: str
    line: int
    space: str
    op: str
    arrays: tuple
    requests: int
    lanes: int
    sectors: int
    ideal_sectors: int
    wavefronts: int
    ideal_wavefronts: int
    addresses: int  # constant: distinct addresses summed over requests
    contention: int  # atomics: most lanes on one address, summed over requests
    source: str = ""

    def per_request(self, what: str) -> float:
        """`what` (sectors, wavefronts, addresses, contention, ideal_...) per warp request."""
        return getattr(self, what) / self.requests if self.requests else 0.0

    @property
    def ideal_addresses(self) -> int:
        return self.requests

    @property
    def verdict(self) -> str:
        """What the hardware does with this line's requests, in a few words."""
        if self.op == "atomic" and self.per_request("contention") > 1:
            return f"contention: {self.per_request('contention'):.1f} lanes on one address"
        if self.space in ("global", "local"):
            ratio = self.sectors / self.ideal_sectors if self.ideal_sectors else 1
            verdict = (
                "coalesced" if ratio <= 1.05 else f"uncoalesced ({ratio:.1f}x the ideal sectors)"
            )
            return verdict + (
                ", or registers if every index is a constant" if self.space == "local" else ""
            )
        if self.space == "shared":
            ratio = self.wavefronts / self.ideal_wavefronts if self.ideal_wavefronts else 1
            return "conflict-free" if ratio <= 1.05 else f"{ratio:.1f}-way bank conflict"
        if self.space == "constant":
            per = self.per_request("addresses")
            return "broadcast" if per <= 1.0 else f"serialised ({per:.1f} addresses per request)"
        return ""

    @property
    def ok(self) -> bool:
        """True when the line needs no more than the ideal (within 5 %)."""
        return self.verdict.split(",")[0] in ("coalesced", "conflict-free", "broadcast", "")


def lines(req: Requests, acc: Accesses, sites, views, source) -> list[Line]:
    """Aggregate requests per (file, line, space, op), in source order."""
    from .arrays import OPS

    table: dict = {}
    names: dict = {}
    view_of_request = acc.view[req.rows[req.first[:-1]]] if len(req) else []
    for i in range(len(req)):
        site = sites[req.site[i]]
        key = (site.file, site.line, SPACES[req.space[i]], OPS[req.op[i]])
        row = table.get(key)
        if row is None:
            row = table[key] = [0] * 8
            names[key] = []
        for k, value in enumerate(
            (
                1,
                req.lanes[i],
                req.sectors[i],
                req.ideal_sectors[i],
                req.wavefronts[i],
                req.ideal_wavefronts[i],
                req.addresses[i],
                req.most_on_one[i] if req.op[i] == ATOMIC else 0,
            )
        ):
            row[k] += int(value)
        name = views[view_of_request[i]].name
        if name not in names[key]:
            names[key].append(name)
    return [
        Line(
            file,
            line,
            space,
            op,
            tuple(names[(file, line, space, op)]),
            *values,
            source=source(file, line),
        )
        for (file, line, space, op), values in sorted(table.items(), key=_line_order)
    ]


def _line_order(item):
    (file, line, space, op), _ = item
    return (file, line, SPACES.index(space), ("load", "store", "atomic").index(op))

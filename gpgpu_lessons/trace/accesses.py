"""Turn the records of a traced launch into NumPy columns: one row per access, one per barrier.

Each access gets its block, thread, warp and lane, its simulated byte address and size, its
instruction (`site`: code object, source span and op, so two accesses on one line stay apart),
the barrier interval (``syncthreads`` the thread has passed), the ``syncwarp``s it has passed,
a lockstep clock (accesses of the thread since its interval began: which of two racing accesses
would come first if the threads ran in step) and its occurrence (how many times the thread ran
this instruction before: the lanes of a warp at the same occurrence form one warp request).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..hardware import WARP_SIZE as WARP
from .arrays import ATOMIC, BARRIER, BLOCK, LOCAL, SPACES, SYNCWARP, instruction_at
from .record import Recording


@dataclass(frozen=True)
class Site:
    """One instruction of the kernel (or of a device function it calls) that touches memory."""

    file: str
    line: int
    function: str


@dataclass
class Accesses:
    """Every load, store and atomic of the launch, as columns (row i = access i)."""

    block: np.ndarray  # position in Recording.blocks
    thread: np.ndarray  # linear thread id in the block (x fastest)
    view: np.ndarray  # Recording.views id
    op: np.ndarray  # LOAD, STORE, ATOMIC
    space: np.ndarray  # index into SPACES
    address: np.ndarray  # simulated byte address
    size: np.ndarray  # bytes moved
    element: np.ndarray  # bytes of the element accessed (16 for either half of a complex128)
    index: np.ndarray  # element index, (n, 3), -1 past the array's dimensions
    site: np.ndarray  # index into Trace.sites
    part: np.ndarray  # 1 for the imaginary half of a complex element (a second access)
    interval: np.ndarray  # syncthreads passed by the thread
    warp_interval: np.ndarray  # syncwarps passed by the thread
    clock: np.ndarray  # accesses by the thread since its interval began
    occurrence: np.ndarray  # earlier executions of this site by the thread
    value: np.ndarray  # what a store wrote (objects; None for loads and atomics)

    @property
    def warp(self) -> np.ndarray:
        return self.thread // WARP

    @property
    def lane(self) -> np.ndarray:
        return self.thread % WARP

    def __len__(self) -> int:
        return len(self.op)

    def take(self, rows) -> Accesses:
        """The accesses at `rows` (a mask or indices)."""
        return Accesses(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})


@dataclass
class Barriers:
    """Every syncthreads call: block, thread, site, and which barrier of the thread it was."""

    block: np.ndarray
    thread: np.ndarray
    site: np.ndarray
    count: np.ndarray


def group_starts(keys: np.ndarray) -> np.ndarray:
    """Mask of the rows of a sorted key array where a new group begins."""
    start = np.ones(len(keys), dtype=bool)
    if len(keys):
        start[1:] = keys[1:] != keys[:-1]
    return start


def running_count(start: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """For sorted rows: how many flagged rows come before each row within its group."""
    total = np.cumsum(flags) - flags
    first = np.maximum.accumulate(np.where(start, np.arange(len(start)), 0))
    return total - total[first]


def _index_matrix(indices: list, ndim: int, shape: tuple):
    """(source positions, (m, ndim) int64 indices) for the index objects of one view."""
    try:
        matrix = np.array(indices, dtype=np.int64)
        if matrix.ndim == 1 and ndim == 1:
            matrix = matrix[:, None]
        if matrix.shape == (len(indices), ndim):
            return np.arange(len(indices)), matrix
    except (TypeError, ValueError, OverflowError):
        pass
    sources, rows = [], []
    numbers = np.arange(int(np.prod(shape))).reshape(shape)
    for position, idx in enumerate(indices):
        key = idx if isinstance(idx, tuple) else (idx,)
        if any(isinstance(k, slice) for k in key):  # a slice assignment: every element
            chosen = np.atleast_1d(numbers[key]).ravel()
            rows.extend(np.stack(np.unravel_index(chosen, shape), axis=1).tolist())
            sources.extend([position] * len(chosen))
        else:
            rows.append([int(k) for k in key])
            sources.append(position)
    return np.array(sources, dtype=np.int64), np.array(rows, dtype=np.int64).reshape(-1, ndim)


def build(recording: Recording):
    """(Accesses, Barriers, sites) of a recording."""
    sites: dict = {}
    site_list: list[Site] = []
    nthreads = int(np.prod(recording.block))
    if all(r[2] == BLOCK for r in recording.records):
        empty = np.zeros(0, dtype=np.int64)
        return (
            Accesses(
                *([empty] * 8),
                np.zeros((0, 3), np.int64),
                *([empty] * 6),
                np.zeros(0, dtype=object),
            ),
            Barriers(empty, empty, empty, empty),
            site_list,
        )
    tid, view, op, idx, code, lasti, line, value = zip(*recording.records)
    op = np.array(op, dtype=np.int8)
    marker = op == BLOCK
    block = np.cumsum(marker) - 1
    tid = np.array(tid, dtype=np.int64)
    keys = list(zip(code, lasti, op.tolist()))
    for key, lineno in dict(zip(keys, line)).items():  # each (code, offset, op) once
        if key[0] is None:
            sites[key] = -1
            continue
        instruction = (key[0], instruction_at(key[0], key[1]), key[2])
        if instruction not in sites:
            sites[instruction] = len(site_list)
            site_list.append(Site(key[0].co_filename, lineno, key[0].co_name))
        sites[key] = sites[instruction]
    site = np.fromiter(map(sites.__getitem__, keys), dtype=np.int64, count=len(keys))

    # per thread, in the order it ran: barrier intervals, syncwarps, lockstep clock, occurrence
    keep = np.flatnonzero(~marker)
    thread_key = block[keep] * nthreads + tid[keep]
    order = keep[np.argsort(thread_key, kind="stable")]
    start = group_starts(block[order] * nthreads + tid[order])
    interval = running_count(start, op[order] == BARRIER)
    warp_interval = running_count(start, op[order] == SYNCWARP)
    memory = op[order] <= ATOMIC
    key = (block[order] * nthreads + tid[order]) * (int(interval.max()) + 1) + interval
    clock = running_count(group_starts(key), memory)
    columns = {"interval": interval, "warp_interval": warp_interval, "clock": clock}
    mem = order[memory]
    columns = {name: values[memory] for name, values in columns.items()}

    by_site = np.lexsort((np.arange(len(mem)), site[mem], block[mem] * nthreads + tid[mem]))
    thread_site = (block[mem] * nthreads + tid[mem]) * len(site_list) + site[mem]
    starts = group_starts(thread_site[by_site])
    occurrence = np.empty(len(mem), dtype=np.int64)
    occurrence[by_site] = running_count(starts, np.ones(len(mem), dtype=bool))

    columns["value"] = np.fromiter((value[i] for i in mem), dtype=object, count=len(mem))
    accesses = _addresses(
        recording,
        mem,
        np.array(view)[mem],
        [idx[i] for i in mem],
        nthreads,
        block,
        tid,
        op,
        site,
        occurrence,
        columns,
    )
    bars = order[op[order] == BARRIER]
    barrier_count = interval[op[order] == BARRIER]
    barriers = Barriers(block[bars], tid[bars], site[bars], barrier_count)
    return accesses, barriers, site_list


def _addresses(recording, mem, views, indices, nthreads, block, tid, op, site, occurrence, columns):
    """Expand the memory records into access rows with addresses (slices give several rows)."""
    parts_src, parts_index, parts_address, parts_size, parts_part = [], [], [], [], []
    parts_element = []
    local_total, local_offset = _local_layout(recording)
    for v in np.unique(views):
        view = recording.views[v]
        rows = np.flatnonzero(views == v)
        src, matrix = _index_matrix([indices[r] for r in rows], len(view.shape), view.shape)
        src = rows[src]
        shape = np.array(view.shape, dtype=np.int64)
        matrix = np.where(matrix < 0, matrix + shape, matrix)
        offset = (
            matrix @ np.array(view.strides, dtype=np.int64)
            if len(shape)
            else np.zeros(len(src), np.int64)
        )
        if view.space == LOCAL:
            root = _root_view(recording, v)
            thread = tid[mem[src]]
            warp = block[mem[src]] * (-(-nthreads // WARP)) + thread // WARP
            itemsize = recording.views[root].size
            address = (
                warp * local_total
                + local_offset[root]
                + (offset // itemsize * WARP + thread % WARP) * itemsize
            )
        else:
            address = view.base + offset
        padded = np.full((len(src), 3), -1, dtype=np.int64)
        padded[:, : matrix.shape[1]] = matrix[:, :3]
        size, part = np.full(len(src), view.size, dtype=np.int64), np.zeros(len(src), np.int8)
        if view.dtype.kind == "c" and not view.wide:
            # Numba moves a complex number as two accesses: its real, then its imaginary part
            half = view.size // 2
            src, padded = np.repeat(src, 2), np.repeat(padded, 2, axis=0)
            address = np.stack([address, address + half], axis=1).ravel()
            size, part = np.full(len(src), half, np.int64), np.tile(np.int8([0, 1]), len(src) // 2)
        parts_src.append(src)
        parts_index.append(padded)
        parts_address.append(address)
        parts_size.append(size)
        parts_part.append(part)
        parts_element.append(np.full(len(src), view.size, dtype=np.int64))
    src = np.concatenate(parts_src)
    order = np.argsort(src, kind="stable")
    src = src[order]
    rec = mem[src]
    space_of = np.array([SPACES.index(v.space) for v in recording.views], dtype=np.int8)
    view_col = views[src]
    return Accesses(
        block=block[rec],
        thread=tid[rec],
        view=view_col,
        op=op[rec],
        space=space_of[view_col],
        address=np.concatenate(parts_address)[order],
        size=np.concatenate(parts_size)[order],
        element=np.concatenate(parts_element)[order],
        index=np.concatenate(parts_index)[order],
        site=site[rec],
        part=np.concatenate(parts_part)[order],
        interval=columns["interval"][src],
        warp_interval=columns["warp_interval"][src],
        clock=columns["clock"][src],
        occurrence=occurrence[src],
        value=columns["value"][src],
    )


def _root_view(recording: Recording, v: int) -> int:
    while recording.views[v].parent is not None:
        v = recording.views[v].parent
    return v


def _local_layout(recording: Recording):
    """Bytes of local memory per warp, and each local array's offset in it.

    Local memory is interleaved: word w of lane l of a warp lives at (w * 32 + l) * size, so
    lanes reading the same element of their own array read neighbouring addresses.
    """
    offsets, total = {}, 0
    for view in recording.views:
        if view.space == LOCAL and view.parent is None:
            offsets[view.id] = total
            total += -(-max(1, int(np.prod(view.shape))) * view.size * WARP // 256) * 256
    return max(total, 256), offsets

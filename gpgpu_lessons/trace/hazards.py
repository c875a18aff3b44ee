"""Races, reads of unwritten shared memory, barriers not reached by all, out-of-bounds indices.

A race (as compute-sanitizer's racecheck reports it): two threads of one block touch the same
address (shared memory, or global memory within the block) in the same barrier interval, at
least one writes, neither is an atomic. Threads of one warp separated by ``syncwarp`` do not
race; two threads writing the same value to one place are not reported (benign; racecheck calls
such a hazard a warning at most). Which access came first (RAW: a read after another thread's
write; WAR: a write after another thread's read; WAW: two writes) is decided by a lockstep
clock, as if the threads ran in step (the simulator runs them one after the other, which would
say nothing useful).

Two kinds racecheck does not report: an atomic and a plain access of one address by two threads
of a block in one barrier interval ("atomic race": the atomic protects only against other
atomics), and global memory that one block writes, not atomically, and another block reads or
writes ("race between blocks": on a GPU blocks run at the same time, in any order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .accesses import WARP, Accesses, Barriers
from .arrays import ATOMIC, LOAD, OPS, SPACES, STORE
from .model import GLOBAL, SHARED
from .record import Recording

SCAN = 32  # how far back a racing partner is looked for, per address


@dataclass
class Hazard:
    """One kind of hazard at one place (the first example, and how many were found)."""

    kind: str  # "RAW", "WAR", "WAW", "atomic race", "race between blocks", "uninitialised",
    # "barrier", "out-of-bounds", "negative index"
    space: str
    array: str
    lines: tuple  # source lines (first access, second access) or (line,)
    block: tuple  # blockIdx of the example
    threads: tuple  # threadIdx of the example's thread(s)
    index: tuple  # element index of the example (() when none)
    count: int  # accesses (races: racing pairs; barrier: blocks) found
    message: str
    files: tuple = ()  # file of each line
    # barrier: the syncthreads each example thread passed (a partial barrier: the one that
    # reaches it, then the one that does not), or how many threads wait at each of `lines`
    barriers: tuple = ()
    whole_warps: bool = False  # barrier at different lines: each warp all at one of them

    def __str__(self) -> str:
        return f"{self.kind} ({self.space}, {self.array}): {self.message}"


def thread_index(linear: int, block: tuple) -> tuple:
    """threadIdx (x, y, z) of the thread with linear id `linear` (x fastest)."""
    bx, by, _ = block
    return (int(linear % bx), int(linear // bx % by), int(linear // (bx * by)))


def _trim(point: tuple, shape: tuple) -> tuple:
    """(x, y, z) shown with as many dimensions as the launch used."""
    used = max([1] + [k + 1 for k, n in enumerate(shape) if n > 1])
    return tuple(int(v) for v in point[:used])


def _index(row_index: np.ndarray) -> tuple:
    return tuple(int(v) for v in row_index if v >= 0)


class _Found:
    """Hazards aggregated by their key, keeping the first example."""

    def __init__(self):
        self.items: dict = {}

    def add(self, key, make):
        if key in self.items:
            self.items[key].count += 1
        else:
            self.items[key] = make()

    def list(self) -> list[Hazard]:
        return list(self.items.values())


def _words(acc: Accesses, mask: np.ndarray):
    """(row, key) for every 4-byte word the accesses in `mask` touch (smaller ones: their byte)."""
    rows = np.flatnonzero(mask)
    size = acc.size[rows]
    first = acc.address[rows] // 4
    count = np.where(size >= 4, (acc.address[rows] + size - 1) // 4 - first + 1, 1)
    rows = np.repeat(rows, count)
    step = np.arange(len(rows)) - np.repeat(np.cumsum(count) - count, count)
    key = np.where(acc.size[rows] >= 4, (np.repeat(first, count) + step) * 4, acc.address[rows])
    return rows, key


def _groups(columns, order):
    """(starts, ends) of the runs of equal `columns` in rows sorted by `order`."""
    g = np.zeros(len(order), dtype=bool)
    g[0] = True
    for column in columns:
        g[1:] |= column[order][1:] != column[order][:-1]
    starts = np.flatnonzero(g)
    return starts, np.append(starts[1:], len(order))


def races(acc: Accesses, rec: Recording, sites) -> list[Hazard]:
    """RAW / WAR / WAW races within a block and barrier interval (shared and global memory)."""
    mask = ((acc.space == SHARED) | (acc.space == GLOBAL)) & (acc.op != ATOMIC)
    if not mask.any():
        return []
    rows, key = _words(acc, mask)
    block, space, interval = acc.block[rows], acc.space[rows], acc.interval[rows]
    order = np.lexsort((rows, acc.clock[rows], interval, key, space, block))
    starts, ends = _groups((block, space, key, interval), order)
    stores = np.maximum.reduceat((acc.op[rows] == STORE)[order].astype(np.int8), starts)
    threads = acc.thread[rows][order]
    lo = np.minimum.reduceat(threads, starts)
    hi = np.maximum.reduceat(threads, starts)
    found = _Found()
    for k in np.flatnonzero((stores > 0) & (lo != hi)):
        _scan_group(acc, rows[order[starts[k] : ends[k]]], rec, sites, found)
    return found.list()


def atomic_mix(acc: Accesses, rec: Recording, sites) -> list[Hazard]:
    """An atomic and a plain load or store of one address by two threads of a block, with no
    barrier between them (racecheck does not report these): zeroing bins, then atomics on them
    without syncthreads; or atomics, then reading the bins without syncthreads."""
    mask = (acc.space == SHARED) | (acc.space == GLOBAL)
    if not (mask & (acc.op == ATOMIC)).any():
        return []
    rows, key = _words(acc, mask)
    block, space, interval = acc.block[rows], acc.space[rows], acc.interval[rows]
    order = np.lexsort((rows, acc.clock[rows], interval, key, space, block))
    starts, ends = _groups((block, space, key, interval), order)
    atomic = (acc.op[rows] == ATOMIC)[order].astype(np.int8)
    some = np.maximum.reduceat(atomic, starts)
    every = np.minimum.reduceat(atomic, starts)
    found = _Found()
    for k in np.flatnonzero((some > 0) & (every == 0)):
        group = rows[order[starts[k] : ends[k]]]
        for r in group:
            partner = next(
                (
                    p
                    for p in group
                    if (acc.op[p] == ATOMIC) != (acc.op[r] == ATOMIC)
                    and acc.thread[p] != acc.thread[r]
                    and not (
                        acc.thread[p] // WARP == acc.thread[r] // WARP
                        and acc.warp_interval[p] != acc.warp_interval[r]
                    )
                ),
                None,
            )
            if partner is not None:
                first, second = sorted((partner, r), key=lambda x: (acc.clock[x], x))
                _add_mix(acc, first, second, rec, sites, found)
                break
    return found.list()


def _add_mix(acc, p, r, rec, sites, found):
    first, second = sites[acc.site[p]], sites[acc.site[r]]
    array = rec.views[acc.view[r]].name
    space = SPACES[acc.space[r]]
    block = _trim(rec.blocks[acc.block[r]], rec.grid)
    threads = tuple(_trim(thread_index(acc.thread[x], rec.block), rec.block) for x in (p, r))
    index = _index(acc.index[r])
    what = {LOAD: "reads", STORE: "writes", ATOMIC: "updates (atomic)"}
    fix = (
        "put cuda.syncthreads() between the plain access and the atomics"
        if space == "shared"
        else "make every access to it an atomic, or separate them by a launch"
    )

    def make():
        return Hazard(
            "atomic race",
            space,
            array,
            (first.line, second.line),
            block,
            threads,
            index,
            1,
            f"thread {threads[0]} {what[acc.op[p]]} {array}{list(index)} at line {first.line} "
            f"and thread {threads[1]} {what[acc.op[r]]} it at line {second.line} with no "
            f"syncthreads between them (block {block}): an atomic protects only against other "
            f"atomics, so the plain access may come before or after it; {fix}",
            (first.file, second.file),
        )

    found.add(("atomic race", space, array, first.file, first.line, second.file, second.line), make)


def between_blocks(acc: Accesses, rec: Recording, sites) -> list[Hazard]:
    """Global memory that one block writes (not atomically) and another block reads or writes.

    Blocks run in any order, at the same time, on a GPU (the simulator runs them one after the
    other, so the values may come out right here). Not a race: the same value written by both;
    atomics on both sides; and a hand-over through atomics, where the earlier block's access
    comes before its atomic on some address and the later block's after its own atomic on the
    same address (a ticket counter, as in device.handover).
    """
    mask = acc.space == GLOBAL
    if not (mask & (acc.op == STORE)).any():
        return []
    rows, key = _words(acc, mask)
    block = acc.block[rows]
    order = np.lexsort((rows, key))
    starts, ends = _groups((key,), order)
    ordered = block[order]
    lo = np.minimum.reduceat(ordered, starts)
    hi = np.maximum.reduceat(ordered, starts)
    stores = np.maximum.reduceat((acc.op[rows] == STORE)[order].astype(np.int8), starts)
    candidates = np.flatnonzero((lo != hi) & (stores > 0))
    if not len(candidates):
        return []
    tickets = _atomics_by_block(acc)
    found = _Found()
    for k in candidates:
        _scan_blocks(acc, rows[order[starts[k] : ends[k]]], tickets, rec, sites, found)
    return found.list()


def _atomics_by_block(acc: Accesses) -> dict:
    """{block: {address: [global atomic rows]}}."""
    table: dict = {}
    for r in np.flatnonzero((acc.space == GLOBAL) & (acc.op == ATOMIC)):
        table.setdefault(int(acc.block[r]), {}).setdefault(int(acc.address[r]), []).append(r)
    return table


def _ordered(acc, a, b) -> bool:
    """True when access a comes before (or is) access b within their block."""
    if a == b or acc.interval[a] < acc.interval[b]:
        return True
    return (
        acc.thread[a] == acc.thread[b]
        and acc.interval[a] == acc.interval[b]
        and acc.clock[a] < acc.clock[b]
    )


def _handed_over(acc, p, r, tickets) -> bool:
    """True when block(p)'s access p precedes its atomic on some address, and block(r)'s
    atomic on that address precedes r: the atomics order the two blocks."""
    mine, theirs = tickets.get(int(acc.block[p]), {}), tickets.get(int(acc.block[r]), {})
    for address in mine.keys() & theirs.keys():
        if any(_ordered(acc, p, t) for t in mine[address]) and any(
            _ordered(acc, t, r) for t in theirs[address]
        ):
            return True
    return False


def _scan_blocks(acc, group, tickets, rec, sites, found):
    """Walk one word's accesses in the order the blocks ran; pair each with an earlier access
    of another block that conflicts with it (at least one a plain store)."""
    earlier: list = []
    for r in group:
        store = acc.op[r] == STORE
        for p in reversed(earlier[-SCAN:]):
            if acc.block[p] == acc.block[r]:
                continue
            if not store and acc.op[p] != STORE:
                continue
            if store and acc.op[p] == STORE and _same(acc.value[p], acc.value[r]):
                continue
            if _handed_over(acc, p, r, tickets):
                continue
            _add_between(acc, p, r, rec, sites, found)
            break
        earlier.append(r)


def _add_between(acc, p, r, rec, sites, found):
    first, second = sites[acc.site[p]], sites[acc.site[r]]
    array = rec.views[acc.view[r]].name
    blocks = tuple(_trim(rec.blocks[acc.block[x]], rec.grid) for x in (p, r))
    threads = tuple(_trim(thread_index(acc.thread[x], rec.block), rec.block) for x in (p, r))
    index = _index(acc.index[r])
    what = {LOAD: "reads", STORE: "writes", ATOMIC: "updates (atomic)"}
    element = f"{array}{list(index)}"

    def make():
        return Hazard(
            "race between blocks",
            "global",
            array,
            (first.line, second.line),
            blocks[0],
            threads,
            index,
            1,
            f"block {blocks[0]} (thread {threads[0]}) {what[acc.op[p]]} {element} at line "
            f"{first.line} and block {blocks[1]} (thread {threads[1]}) {what[acc.op[r]]} it at "
            f"line {second.line}, not atomically: on a GPU blocks run at the same time and in "
            "any order, so one block's update can be lost or read half-done (the simulator "
            "runs them one after another, so the values may look right here). Use an atomic "
            "(cuda.atomic.add) for updates that several blocks make, or give each block its "
            "own element",
            (first.file, second.file),
        )

    found.add(("between blocks", array, first.file, first.line, second.file, second.line), make)


def _scan_group(acc, group, rec, sites, found):
    """Walk one address's accesses in lockstep order; pair each with an earlier racing one."""
    writes, reads = [], []
    for r in group:
        thread, warp, store = acc.thread[r], acc.thread[r] // WARP, acc.op[r] == STORE
        partner, kind = None, None
        candidates = ((writes, "WAW"), (reads, "WAR")) if store else ((writes, "RAW"),)
        for earlier, name in candidates:
            for p in reversed(earlier[-SCAN:]):
                if acc.thread[p] == thread or (
                    acc.thread[p] // WARP == warp and acc.warp_interval[p] != acc.warp_interval[r]
                ):
                    continue  # the same thread, or lanes ordered by a syncwarp
                if name == "WAW" and _same(acc.value[p], acc.value[r]):
                    continue  # the same value written twice: benign
                partner, kind = p, name
                break
            if partner is not None:
                break
        (writes if store else reads).append(r)
        if partner is not None:
            _add_race(acc, partner, r, kind, rec, sites, found)


def _same(a, b) -> bool:
    """True when two stores wrote the same value (unknown values are never the same)."""
    if a is None or b is None:
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _add_race(acc, p, r, kind, rec, sites, found):
    first, second = sites[acc.site[p]], sites[acc.site[r]]
    name = rec.views[acc.view[p]].name
    other = rec.views[acc.view[r]].name
    array = name if name == other else f"{name} / {other}"
    space = SPACES[acc.space[r]]
    block = _trim(rec.blocks[acc.block[r]], rec.grid)
    threads = tuple(_trim(thread_index(acc.thread[x], rec.block), rec.block) for x in (p, r))
    index = _index(acc.index[r])
    what = {"RAW": "reads what", "WAR": "overwrites what", "WAW": "overwrites what"}[kind]
    did = {"RAW": "wrote", "WAR": "read", "WAW": "wrote"}[kind]

    def make():
        return Hazard(
            kind,
            space,
            array,
            (first.line, second.line),
            block,
            threads,
            index,
            1,
            f"thread {threads[1]} {what} thread {threads[0]} {did} at {array}{list(index)} "
            f"(lines {first.line} and {second.line}) with no syncthreads between them "
            f"(block {block})",
            (first.file, second.file),
        )

    found.add((kind, space, array, first.file, first.line, second.file, second.line), make)


def uninitialised(acc: Accesses, rec: Recording, sites) -> list[Hazard]:
    """Reads of shared memory that no thread of the block has written before in this launch.

    Written means: by a store in an earlier barrier interval (by an atomic too, for loads).
    """
    rows = np.flatnonzero(acc.space == SHARED)
    if not len(rows):
        return []
    block, address = acc.block[rows], acc.address[rows]
    order = np.lexsort((acc.interval[rows], address, block))
    start = np.ones(len(order), dtype=bool)
    block, address = block[order], address[order]
    start[1:] = (block[1:] != block[:-1]) | (address[1:] != address[:-1])
    never = np.iinfo(np.int64).max
    op, when = acc.op[rows][order], acc.interval[rows][order]
    # an atomic updates memory (later loads read what it wrote) but reads it first
    stored = np.minimum.reduceat(np.where(op == STORE, when, never), np.flatnonzero(start))
    written = np.minimum.reduceat(np.where(op != LOAD, when, never), np.flatnonzero(start))
    group = np.cumsum(start) - 1
    bad = np.where(op == LOAD, when < written[group], (op == ATOMIC) & (when < stored[group]))
    found = _Found()
    for r in rows[order][bad]:
        site = sites[acc.site[r]]
        name = rec.views[acc.view[r]].name
        block_idx = _trim(rec.blocks[acc.block[r]], rec.grid)
        thread = _trim(thread_index(acc.thread[r], rec.block), rec.block)
        index = _index(acc.index[r])
        op = OPS[acc.op[r]]

        def make(site=site, name=name, block_idx=block_idx, thread=thread, index=index, op=op):
            return Hazard(
                "uninitialised",
                "shared",
                name,
                (site.line,),
                block_idx,
                (thread,),
                index,
                1,
                f"thread {thread} {'reads' if op == 'load' else 'updates'} "
                f"{name}{list(index)} at line {site.line} before any thread of block "
                f"{block_idx} has written it",
                (site.file,),
            )

        found.add(("uninitialised", name, site.file, site.line), make)
    return found.list()


def barriers(bar: Barriers, rec: Recording, sites) -> list[Hazard]:
    """syncthreads reached by only part of a block, or by its threads at different lines."""
    nthreads = int(np.prod(rec.block))
    found = _Found()
    for b in np.unique(bar.block) if len(bar.block) else []:
        mine = bar.block == b
        per_thread = np.bincount(bar.thread[mine], minlength=nthreads)
        order = np.lexsort((bar.count[mine], bar.thread[mine]))
        site = bar.site[mine][order]
        reached = int(per_thread.min())
        divergent = False
        if reached:
            table = site[_full_rows(per_thread, reached)].reshape(nthreads, reached)
            for k in range(reached):
                if (table[:, k] != table[0, k]).any():
                    _divergent(table[:, k], k, b, rec, sites, found)
                    divergent = True
                    break
        # after threads waited at different syncthreads, their counts differ as a consequence:
        # a partial barrier is reported only for a block whose barriers lined up until then
        if per_thread.max() > reached and not divergent:
            arrived = np.flatnonzero(per_thread > reached)
            at = site[(np.cumsum(per_thread) - per_thread)[arrived] + reached]
            _partial(per_thread, reached, at, b, rec, sites, found)
    return found.list()


def _full_rows(per_thread: np.ndarray, k: int) -> np.ndarray:
    """Positions (in thread-sorted barrier order) of the first k <= min barriers of each thread."""
    starts = np.cumsum(per_thread) - per_thread
    return (starts[:, None] + np.arange(k)).ravel()


def _divergent(column, k, b, rec, sites, found):
    lines = sorted({sites[s].line for s in column})
    block = _trim(rec.blocks[b], rec.grid)
    groups = {
        line: [t for t in range(len(column)) if sites[column[t]].line == line] for line in lines
    }
    threads = tuple(_trim(thread_index(ts[0], rec.block), rec.block) for ts in groups.values())
    detail = "; ".join(f"{len(ts)} thread(s) at line {line}" for line, ts in groups.items())
    where = np.array([sites[s].line for s in column])
    warps = [where[w : w + WARP] for w in range(0, len(where), WARP)]
    whole = all((w == w[0]).all() for w in warps)
    why = (
        "each side holds whole warps, but that does not make it allowed: the two calls are two "
        "barriers, and which threads one of them waits for is undefined"
        if whole
        else "the CUDA programming guide: likely to hang or produce unintended side effects"
    )
    files = tuple(dict.fromkeys(sites[s].file for s in column))
    found.add(
        ("barrier", tuple(lines)),
        lambda: Hazard(
            "barrier",
            "shared",
            "",
            tuple(lines),
            block,
            threads,
            (),
            1,
            f"barrier {k + 1} of block {block} is a different syncthreads for different threads "
            f"({detail}): CUDA requires every thread of the block to reach the same "
            f"syncthreads, so a syncthreads in a branch that divides the block is undefined "
            f"behaviour ({why}); put one syncthreads after the branch, outside it",
            files,
            tuple(len(ts) for ts in groups.values()),
            whole,
        ),
    )


def _partial(per_thread, reached, at, b, rec, sites, found):
    nthreads = len(per_thread)
    arrived = np.flatnonzero(per_thread > reached)
    missing = np.flatnonzero(per_thread == reached)
    line = sites[at[0]].line if len(at) else 0
    block = _trim(rec.blocks[b], rec.grid)
    threads = tuple(_trim(thread_index(t, rec.block), rec.block) for t in (arrived[0], missing[0]))
    passed = (int(per_thread[arrived[0]]), int(per_thread[missing[0]]))
    found.add(
        ("barrier", line),
        lambda: Hazard(
            "barrier",
            "shared",
            "",
            (line,),
            block,
            threads,
            (),
            1,
            f"syncthreads at line {line} (barrier {reached + 1} of block {block}) is reached by "
            f"{len(arrived)} of {nthreads} threads; the other {len(missing)} (e.g. thread "
            f"{threads[1]}) finish after {passed[1]} syncthreads without reaching it (they "
            "returned early, skipped an `if` or left a loop sooner than the others). On current "
            "GPUs (Volta and later) threads that have exited no longer count at a barrier, so "
            "the others do not hang, and the H100's synccheck and racecheck report nothing; but "
            "the CUDA programming guide makes a syncthreads that not every thread of the block "
            "reaches undefined behaviour: let every thread reach it (the same loop bounds and "
            "branches around it for the whole block; guard the work with an `if`, not the "
            "barrier)",
            (sites[at[0]].file,) if len(at) else (),
            passed,
        ),
    )


def out_of_bounds(rec: Recording) -> list[Hazard]:
    """Indices outside their array (the access was skipped), with thread, line and shape."""
    found = _Found()
    for oob in rec.oob:
        view = rec.views[oob.view]
        block = _trim(oob.block, rec.grid)
        thread = _trim(thread_index(oob.thread, rec.block), rec.block)
        index = oob.index if isinstance(oob.index, tuple) else (oob.index,)
        index = tuple(int(i) if isinstance(i, (int, np.integer)) else i for i in index)
        op = OPS[oob.op]

        def make(view=view, block=block, thread=thread, index=index, op=op, oob=oob):
            return Hazard(
                "out-of-bounds",
                view.space,
                view.name,
                (oob.line,),
                block,
                (thread,),
                index,
                1,
                f"thread {thread} of block {block} at line {oob.line}: {op} of "
                f"{view.name}[{', '.join(map(str, index))}], outside its shape {view.shape} "
                "(on a GPU: a wrong value or a corrupted neighbour, no error)",
                (oob.code.co_filename,),
            )

        found.add(("out-of-bounds", view.name, oob.line, op), make)
    return found.list()


def negative_indices(rec: Recording) -> list[Hazard]:
    """Negative indices: NumPy and Numba (on a GPU too) wrap them to the end of the array."""
    found = _Found()
    for neg in rec.negative:
        view = rec.views[neg.view]
        block = _trim(neg.block, rec.grid)
        thread = _trim(thread_index(neg.thread, rec.block), rec.block)
        index = neg.index if isinstance(neg.index, tuple) else (neg.index,)
        index = tuple(int(i) if isinstance(i, (int, np.integer)) else i for i in index)
        wrapped = tuple(
            i + n if isinstance(i, int) and i < 0 else i for i, n in zip(index, view.shape)
        )
        shown = ", ".join(map(str, index))
        last = all(i == -1 for i in index if isinstance(i, int) and i < 0)
        target = (
            "the last element"
            if last and len(index) == 1
            else f"{view.name}[{', '.join(map(str, wrapped))}]"
        )
        op = OPS[neg.op]

        message = (
            f"thread {thread} of block {block} at line {neg.line}: {op} of "
            f"{view.name}[{shown}]: {view.name}[{shown}] wraps to {target} (NumPy and "
            "Numba, on a GPU too, count a negative index from the end; CUDA C would reach "
            "before the array). Check the index first (e.g. `if i > 0`)"
        )

        def make(view=view, block=block, thread=thread, index=index, neg=neg, message=message):
            return Hazard(
                "negative index",
                view.space,
                view.name,
                (neg.line,),
                block,
                (thread,),
                index,
                1,
                message,
                (neg.code.co_filename,),
            )

        found.add(("negative index", view.name, neg.line, op), make)
    return found.list()


def find(acc: Accesses, bar: Barriers, rec: Recording, sites) -> list[Hazard]:
    """Every hazard of a traced launch: out-of-bounds first, then barriers, races, uninitialised."""
    return [
        *out_of_bounds(rec),
        *negative_indices(rec),
        *barriers(bar, rec, sites),
        *races(acc, rec, sites),
        *atomic_mix(acc, rec, sites),
        *between_blocks(acc, rec, sites),
        *uninitialised(acc, rec, sites),
    ]

"""What the kernel tracer says about lesson 02's mosaics: work per tile and barrier intervals.

Every count comes from `gpgpu_lessons.trace_kernel` running the real kernel with the launch its
wrapper configures (the first band of rows; `blocks=` traces only some tiles), so it means the
same on any machine: in the simulator it stands beside the recorded GPU times it explains. The
races (hazards) are drawn by `figures.barrier_intervals`.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

from .. import notebook
from ..formats import format_ms, format_ratio
from ..trace import Trace, trace_launch


def trace_wrapper(wrapper, image, *args, blocks=1) -> Trace:
    """Trace the kernel `wrapper(image, *args)` launches, on `blocks` of its blocks (tiles)."""
    return trace_launch(wrapper.prepare(image, *args), blocks=blocks)


def code_at(file: str, line: int) -> str:
    """The code of a source line, without its comment."""
    return linecache.getline(file, line).split("  #")[0].strip()


# ---- work per tile -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TileWork:
    """What one block (one tile) asks of memory, counted by the tracer."""

    global_loads: float  # warp-level load requests to global memory
    threads_per_load: float  # lanes that take part in one such request
    global_stores: float
    shared_accesses: float  # warp-level requests to shared memory, loads and stores
    barriers: int  # syncthreads a thread of the block passes


def tile_work(trace: Trace) -> TileWork:
    """Requests per tile (averaged over the traced blocks) and the barriers a thread passes."""
    tiles = len(trace.blocks)

    def rows(space, op=None):
        return [r for r in trace.lines if r.space == space and op in (None, r.op)]

    loads = rows("global", "load")
    requests = sum(r.requests for r in loads)
    intervals = trace.accesses.interval
    return TileWork(
        global_loads=requests / tiles,
        threads_per_load=sum(r.lanes for r in loads) / requests if requests else 0.0,
        global_stores=sum(r.requests for r in rows("global", "store")) / tiles,
        shared_accesses=sum(r.requests for r in rows("shared")) / tiles,
        barriers=int(intervals.max()) if len(intervals) else 0,
    )


WORK_COLUMNS = [
    "global loads per tile",
    "threads per load",
    "shared accesses per tile",
    "barriers",
]


def work_cells(trace: Trace) -> list[str]:
    """The WORK_COLUMNS of one traced kernel, numbers written for people."""
    work = tile_work(trace)
    return [
        f"{work.global_loads:,.0f}",
        f"{work.threads_per_load:,.0f}",
        f"{work.shared_accesses:,.0f}",
        str(work.barriers),
    ]


def show_beside_times(key: str, timings, wrappers: dict, image, *args, title: str, size: str):
    """GPU times of variants (the recorded ones in the simulator) beside their counts per tile.

    timings: this run's, one per variant, named as the keys of wrappers; a GPU run records them
    under key. The counts: each wrapper's first tile traced on `wrapper(image, *args)`, on this
    machine (they are the same anywhere).
    """
    first = timings[0].median_ms
    rows = [[t.name, format_ms(t.median_ms), format_ratio(first / t.median_ms)] for t in timings]
    shown = notebook.recorded_table(
        key, ["variant", "median", "speed-up over the first"], rows, title=title, size=size
    )
    cells = {name: work_cells(trace_wrapper(f, image, *args)) for name, f in wrappers.items()}
    notebook.show_recorded(shown, beside=(WORK_COLUMNS, cells))


# ---- barrier intervals -------------------------------------------------------------------------


@dataclass(frozen=True)
class SharedAccess:
    """The accesses of one source line to one shared array, in the first traced block."""

    line: int
    code: str  # the line's code, without its comment
    array: str
    op: str  # "load" or "store"
    intervals: tuple  # barrier intervals (syncthreads passed) in which they happen
    threads: tuple  # threadIdx of every thread that makes them


def shared_accesses(trace: Trace) -> list[SharedAccess]:
    """Who touches which shared array at which line, and after how many barriers, in use order."""
    # rows ordered by the barrier interval they start in, then by the arrays' first use, stores
    # before loads: the order in which a correct kernel uses them
    first = trace.blocks[0]
    found: dict = {}
    arrays: list = []
    for access in trace.rows():
        if access.space != "shared" or access.block != first:
            continue
        if access.array not in arrays:
            arrays.append(access.array)
        intervals, threads = found.setdefault(
            (access.line, access.array, access.op), (set(), set())
        )
        intervals.add(access.interval)
        threads.add(access.thread)
    return sorted(
        (
            SharedAccess(
                line,
                code_at(trace.file, line),
                array,
                op,
                tuple(sorted(intervals)),
                tuple(sorted(threads, key=lambda t: t[::-1])),
            )
            for (line, array, op), (intervals, threads) in found.items()
        ),
        key=lambda a: (a.intervals[0], arrays.index(a.array), a.op != "store", a.line),
    )

"""The graders' one door to the kernel tracer (gpgpu_lessons.trace): a few plain facts per launch.

The graders ask what a kernel did to memory (sectors per request, bank wavefronts, constant
broadcasts, atomic contention, races, barriers reached by part of a block). This module asks the
tracer and turns its answer into the small records below, so that the graders do not depend on
the tracer's internals; when the tracer is missing or cannot trace a kernel, `observe` raises
`Unavailable` and the graders judge on values alone (and say so).
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field

import numpy as np


class Unavailable(RuntimeError):
    """The tracer is not installed, or could not trace this kernel."""


@dataclass(frozen=True)
class Line:
    """What the warps did at one source line, in one memory space, with one kind of access."""

    line: int
    space: str  # "global", "shared", "constant", "local"
    op: str  # "load", "store", "atomic"
    requests: int  # warp-level requests
    sectors: float = 0.0  # 32-byte sectors moved (global)
    ideal_sectors: float = 0.0
    wavefronts: float = 0.0  # shared-memory wavefronts (the 32-bank rule)
    ideal_wavefronts: float = 0.0
    distinct: float = 0.0  # constant: distinct addresses per request; atomics: the same
    same_address: float = 0.0  # atomics: most lanes of one request on one address
    text: str = ""

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    @property
    def ideal_per_request(self) -> float:
        return self.ideal_sectors / self.requests if self.requests else 0.0

    @property
    def conflict_ways(self) -> float:
        return self.wavefronts / self.ideal_wavefronts if self.ideal_wavefronts else 1.0


@dataclass(frozen=True)
class Hazard:
    """A race, a barrier reached by part of a block, an uninitialised read, an index outside."""

    kind: str  # "RAW", "WAR", "WAW", "barrier", "uninitialised", "out of bounds"
    space: str = ""
    lines: tuple[int, ...] = ()
    block: tuple = ()
    threads: tuple = ()
    detail: str = ""
    array: str = ""  # out of bounds: the array, the index, the array's shape, the file
    index: tuple = ()
    shape: tuple = ()
    file: str = ""
    # barrier: the syncthreads each example thread passed (a partial barrier), or how many
    # threads wait at each of `lines` (different barriers); whole_warps: each warp at one line
    barriers: tuple = ()
    whole_warps: bool = False


@dataclass
class Observation:
    """The tracer's facts about one launch."""

    lines: list[Line] = field(default_factory=list)
    hazards: list[Hazard] = field(default_factory=list)
    warps: int = 0
    fraction: float = 1.0  # the share of the grid's blocks that was traced
    stores: dict = field(default_factory=dict)  # output name -> stores per element (all blocks)

    def select(self, space=None, op=None) -> list[Line]:
        return [
            row
            for row in self.lines
            if (space is None or row.space == space) and (op is None or row.op == op)
        ]


def source_line(kernel, line: int) -> str:
    """The text of a line of the kernel's source file (a notebook cell included)."""
    filename = kernel.py_func.__code__.co_filename
    return linecache.getline(filename, line).strip()


def _tracer():
    try:
        from .. import trace
    except ImportError as error:
        raise Unavailable(f"the kernel tracer is not installed ({error})") from None
    function = getattr(trace, "trace_kernel", None)
    if function is None:
        raise Unavailable("gpgpu_lessons.trace has no trace_kernel")
    return function


def available() -> bool:
    """True when the tracer can be imported."""
    try:
        _tracer()
    except Unavailable:
        return False
    return True


def _get(row, name, default=0):
    if isinstance(row, dict):
        return row.get(name, default)
    return getattr(row, name, default)


def _store_counts(result, name: str, array: np.ndarray) -> np.ndarray:
    """Plain stores (not atomics) to each element of the global array `name`, from its addresses."""
    from ..trace.arrays import SPACES, STORE

    counts = np.zeros(array.size, np.int32)
    roots = [v for v in result.views if v.name == name and v.parent is None and v.space == "global"]
    acc = result.accesses
    if not roots or not len(acc):
        return counts.reshape(array.shape)
    root, itemsize = roots[0], array.dtype.itemsize
    chosen = (acc.op == STORE) & (acc.space == SPACES.index("global")) & (acc.part == 0)
    offset = acc.address[chosen] - root.base
    sizes = acc.size[chosen]
    inside = (offset >= 0) & (offset < array.nbytes)
    first, elements = offset[inside] // itemsize, np.maximum(sizes[inside] // itemsize, 1)
    for k in range(int(elements.max()) if elements.size else 0):  # wide stores cover several
        np.add.at(counts, first[elements > k] + k, 1)
    return counts.reshape(array.shape)


def observe(kernel, grid, block, args, *, blocks=None, count_stores=None) -> Observation:
    """Trace one launch of kernel[grid, block](*args) and return its facts (or raise Unavailable).

    `blocks` samples blocks (see trace_kernel). `count_stores` maps output names to their arrays
    (among args): the observation then counts the stores to each of their elements. Errors of
    the kernel itself propagate as they are.
    """
    trace_kernel = _tracer()
    from ..trace import TraceError

    try:
        result = trace_kernel(kernel, grid, block, *args, blocks=blocks)
    except TraceError as error:
        raise Unavailable(f"the tracer cannot trace this kernel ({error})") from None
    traced = len(_get(result, "blocks", []) or [])
    total = int(np.prod(_get(result, "grid", (1,)) or (1,)))
    observation = Observation(
        warps=int(_get(result, "warps", 0) or 0),
        fraction=traced / total if traced and total else 1.0,
    )
    for row in _get(result, "lines", []) or []:
        line = int(_get(row, "line"))
        requests = int(_get(row, "requests", 0) or 0)
        per_request = 1 / requests if requests else 0.0
        observation.lines.append(
            Line(
                line=line,
                space=str(_get(row, "space", "")),
                op=str(_get(row, "op", "")),
                requests=requests,
                sectors=float(_get(row, "sectors", 0) or 0),
                ideal_sectors=float(_get(row, "ideal_sectors", 0) or 0),
                wavefronts=float(_get(row, "wavefronts", 0) or 0),
                ideal_wavefronts=float(_get(row, "ideal_wavefronts", 0) or 0),
                distinct=float(_get(row, "addresses", 0) or 0) * per_request,
                same_address=float(_get(row, "contention", 0) or 0) * per_request,
                text=str(_get(row, "source", "") or "") or source_line(kernel, line),
            )
        )
    views = _get(result, "views", []) or []
    shapes = {(v.name, v.space): tuple(v.shape) for v in reversed(views) if v.parent is None}
    for hazard in _get(result, "hazards", []) or []:
        kind = str(_get(hazard, "kind", ""))
        array, space = str(_get(hazard, "array", "") or ""), str(_get(hazard, "space", ""))
        files = tuple(_get(hazard, "files", ()) or ())
        observation.hazards.append(
            Hazard(
                kind="out of bounds" if kind == "out-of-bounds" else kind,
                space=space,
                lines=tuple(_get(hazard, "lines", ()) or ()),
                block=tuple(_get(hazard, "block", ()) or ()),
                threads=tuple(_get(hazard, "threads", ()) or ()),
                detail=str(_get(hazard, "message", "") or ""),
                array=array,
                index=tuple(_get(hazard, "index", ()) or ()),
                shape=shapes.get((array, space), ()),
                file=files[0] if files else "",
                barriers=tuple(int(v) for v in _get(hazard, "barriers", ()) or ()),
                whole_warps=bool(_get(hazard, "whole_warps", False)),
            )
        )
    for name, array in (count_stores or {}).items():
        observation.stores[name] = _store_counts(result, name, array)
    return observation

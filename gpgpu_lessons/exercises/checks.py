"""What a kernel with the right values must also do: checks on the tracer's facts, in plain words.

Each check is a small callable: check(observation, kernel, case) -> list of sentences (empty
when the kernel does what the exercise asks). `hazards` turns the tracer's races, partial
barriers and uninitialised reads into sentences; every exercise applies it.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from .tracing import Hazard, Observation, source_line

_VERB = {"load": "reads", "store": "writes", "atomic": "updates"}


def _line(row_or_number, kernel) -> str:
    number = getattr(row_or_number, "line", row_or_number)
    text = getattr(row_or_number, "text", "") or source_line(kernel, number)
    return f"line {number} `{text}`" if text else f"line {number}"


def _threads(threads) -> str:
    return " and ".join(str(tuple(t)) if isinstance(t, (tuple, list)) else str(t) for t in threads)


def describe_hazard(hazard: Hazard, kernel) -> str:
    """One sentence for one hazard found by the tracer."""
    lines = list(hazard.lines)
    who = f" (block {tuple(hazard.block)}, threads {_threads(hazard.threads)})" if hazard.threads else ""
    space = hazard.space or "shared"
    if hazard.kind in ("RAW", "WAR", "WAW"):
        first, second = (lines + lines)[:2]
        what = {"RAW": "reads what another thread writes at",
                "WAR": "is overwritten by another thread at",
                "WAW": "writes the same element as another thread at"}[hazard.kind]
        return (f"A race ({hazard.kind}) on {space} memory{who}: {_line(second, kernel)} {what} "
                f"{_line(first, kernel)}, with no `cuda.syncthreads()` between them. The values "
                "may look right in the simulator (or on one run of a GPU) and be wrong the next "
                "time: put a barrier between the write and the read.")
    if hazard.kind == "barrier":
        where = _line(lines[0], kernel) if lines else "a `cuda.syncthreads()`"
        return (f"{where} is reached by only part of the block{who}: a barrier inside an `if` "
                "that not every thread takes. On a GPU this hangs or silently misbehaves; move "
                "the barrier out of the branch so that every thread of the block reaches it.")
    if hazard.kind == "uninitialised":
        where = _line(lines[0], kernel) if lines else "a line"
        return (f"{where} reads {space} memory that no thread of the block has written yet{who}: "
                "shared memory starts with garbage. Fill every element you read (with a neutral "
                "value where the data ends).")
    if hazard.kind == "out of bounds":
        where = _line(lines[0], kernel) if lines else "a line"
        return f"Out of bounds at {where}{who}: {hazard.detail}"
    return f"{hazard.kind}{who}: {hazard.detail}"


def hazards(observation: Observation, kernel) -> list[tuple[str, str]]:
    """(kind, sentence) for every race, partial barrier, uninitialised read, out-of-bounds index."""
    seen, found = set(), []
    for hazard in observation.hazards:
        key = (hazard.kind, hazard.space, tuple(sorted(hazard.lines)))
        if key not in seen:
            seen.add(key)
            found.append((hazard.kind, describe_hazard(hazard, kernel)))
    return found


@dataclass(frozen=True)
class Coalesced:
    """Every global load (or store) moves at most `slack` times the sectors a packed warp needs."""

    op: str = "load"
    slack: float = 1.3

    def __call__(self, observation, kernel, case) -> list[str]:
        found = []
        for row in observation.select("global", self.op):
            got, ideal = row.sectors_per_request, row.ideal_per_request
            if row.requests and got > ideal * self.slack + 0.5:
                kind = "read" if self.op == "load" else "write"
                found.append(f"{_line(row, kernel).capitalize()} {_VERB[self.op]} {got:.1f} "
                             f"sectors per request; a coalesced {kind} needs {ideal:.1f}. "
                             "Neighbouring threads (lanes) should touch neighbouring elements.")
        return found


@dataclass(frozen=True)
class NoBankConflicts:
    """No shared-memory access needs more wavefronts than a conflict-free one (by `slack`)."""

    op: str | None = None
    slack: float = 1.05

    def __call__(self, observation, kernel, case) -> list[str]:
        found = []
        for row in observation.select("shared", self.op):
            if row.requests and row.ideal_wavefronts and row.conflict_ways > self.slack:
                ways = row.conflict_ways
                found.append(f"{ways:.0f}-way bank conflict on {_line(row, kernel)}: "
                             f"{row.wavefronts / row.requests:.1f} wavefronts per request where "
                             f"{row.ideal_wavefronts / row.requests:.1f} would do. Lanes of a warp "
                             "hit different addresses in the same bank.")
        return found


@dataclass(frozen=True)
class UsesShared:
    """The kernel stages its data in shared memory (loads and stores there)."""

    why: str = "this exercise asks you to stage the data in shared memory"

    def __call__(self, observation, kernel, case) -> list[str]:
        if observation.select("shared", "store") and observation.select("shared", "load"):
            return []
        return [f"Your kernel never goes through shared memory, but {self.why}."]


@dataclass(frozen=True)
class GlobalReadsAtMost:
    """All global loads together move at most `factor` x the sectors of the inputs' bytes."""

    factor: float
    why: str = ""

    def __call__(self, observation, kernel, case) -> list[str]:
        rows = observation.select("global", "load")
        moved = sum(row.sectors for row in rows)
        import numpy as np

        needed = observation.fraction * sum(
            v.nbytes for k, v in case.args.items()
            if isinstance(v, np.ndarray) and k not in case.expected) / 32
        if needed and moved > self.factor * needed:
            worst = max(rows, key=lambda r: r.sectors)
            return [f"Your kernel reads {moved / needed:.1f}x the sectors its input needs "
                    f"({moved:.0f} sectors of 32 bytes for {needed:.0f}); the most at "
                    f"{_line(worst, kernel)}. {self.why}".strip()]
        return []


@dataclass(frozen=True)
class UsesConstant:
    """Some load reads constant memory, with one address per warp request (a broadcast)."""

    what: str = "the weights"

    def __call__(self, observation, kernel, case) -> list[str]:
        rows = observation.select("constant", "load")
        if not rows:
            return [f"Your kernel never reads constant memory: put {self.what} there with "
                    "`cuda.const.array_like(...)` of a module-level NumPy array."]
        return []


@dataclass(frozen=True)
class NoSerialisedConstant:
    """No constant-memory load asks for more than `most` distinct addresses per warp request."""

    most: float = 2.0

    def __call__(self, observation, kernel, case) -> list[str]:
        found = []
        for row in observation.select("constant", "load"):
            if row.distinct > self.most:
                found.append(f"{_line(row, kernel).capitalize()} reads {row.distinct:.1f} different "
                             "addresses of constant memory per warp request: constant memory "
                             "serves one address at a time, so the warp waits that many times. "
                             "A table indexed by data belongs in global (or shared) memory.")
        return found


@dataclass(frozen=True)
class NoAtomicContention:
    """No atomic on `space` memory has more than `most` lanes of a warp on one address."""

    space: str = "global"
    most: float = 1.0

    def __call__(self, observation, kernel, case) -> list[str]:
        found = []
        for row in observation.select(self.space, "atomic"):
            if row.same_address > self.most:
                lanes = row.same_address
                who = ("every lane does an atomic on one address" if lanes >= 31.5 else
                       f"{lanes:.0f} lanes of a warp (on average) do atomics on one address")
                found.append(f"{_line(row, kernel).capitalize()}: {who} ({row.requests} requests); "
                             "the atomics on one address wait for each other. Combine the values "
                             "first (in registers, a warp or a block) and do one atomic per group.")
        return found


@dataclass(frozen=True)
class SourceUses:
    """The kernel's source calls one of `words` (for what the tracer cannot see: shuffles, ballots)."""

    words: tuple[str, ...]
    what: str
    needs_trace = False

    def __call__(self, observation, kernel, case) -> list[str]:
        try:
            text = inspect.getsource(kernel.py_func)
        except (OSError, TypeError):
            return []
        code = re.sub(r"#.*", "", text)
        if any(word in code for word in self.words):
            return []
        return [f"Your kernel does not use {self.what}, which this exercise asks for."]

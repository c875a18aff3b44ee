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


def _code(text: str) -> str:
    """A source line without its trailing comment."""
    return re.sub(r"\s+#.*$", "", text).strip()


def _line(row_or_number, kernel) -> str:
    number = getattr(row_or_number, "line", row_or_number)
    text = _code(getattr(row_or_number, "text", "") or source_line(kernel, number))
    return f"line {number} `{text}`" if text else f"line {number}"


def _thread(thread) -> str:
    return str(tuple(thread)) if isinstance(thread, (tuple, list)) else str(thread)


_RACE = {
    "RAW": "one reads what the other wrote",
    "WAR": "one overwrites what the other read",
    "WAW": "both write it",
}


def describe_hazard(hazard: Hazard, kernel) -> str:
    """One sentence for one hazard found by the tracer."""
    lines = list(hazard.lines)
    block = f" of block {tuple(int(b) for b in hazard.block)}" if hazard.block else ""
    space = hazard.space or "shared"
    if hazard.kind in ("RAW", "WAR", "WAW"):
        first, second = (lines + lines)[:2]
        where = (
            f"at {_line(first, kernel)}"
            if first == second
            else f"at {_line(first, kernel)} and {_line(second, kernel)}"
        )
        threads = (
            f"threads {_thread(hazard.threads[0])} and {_thread(hazard.threads[-1])}"
            if len(hazard.threads) >= 2
            else "two threads"
        )
        return (
            f"A race ({hazard.kind}) on {space} memory: {threads}{block} touch the same "
            f"element {where} with no barrier between them: {_RACE[hazard.kind]}."
        )
    if hazard.kind in ("race between blocks", "atomic race", "negative index"):
        article = "An" if hazard.kind[0] in "aeiou" else "A"  # the tracer's sentence has the fix
        return f"{article} {hazard.kind}: {hazard.detail.rstrip('.')}."
    who = (
        f" (block {tuple(int(b) for b in hazard.block)}, thread {_thread(hazard.threads[0])})"
        if hazard.threads
        else ""
    )
    if hazard.kind == "barrier":
        where = _line(lines[0], kernel) if lines else "a `cuda.syncthreads()`"
        return (
            f"{where[0].upper() + where[1:]} is reached by only part of the block{who}: a "
            "barrier inside an `if` that not every thread takes. On a GPU this hangs or "
            "silently misbehaves; move the barrier out of the branch so that every thread of "
            "the block reaches it."
        )
    if hazard.kind == "uninitialised":
        where = _line(lines[0], kernel) if lines else "a line"
        return (
            f"{where[0].upper() + where[1:]} reads {space} memory that no thread of the block "
            f"has written yet{who}: shared memory starts with garbage. Fill every element you "
            "read (with a neutral value where the data ends)."
        )
    if hazard.kind == "out of bounds":
        where = _line(lines[0], kernel) if lines else "a line"
        return f"Out of bounds at {where}{who}: {hazard.detail}"
    return f"{hazard.kind}{who}: {hazard.detail}"


_RACE_FIX = {
    "shared": "Put `cuda.syncthreads()` between the write and the read (outside any `if`).",
    "one statement": "The read and the write are in one statement ({line}): no barrier fits "
    "between them. Split it: read into a local variable, `cuda.syncthreads()`, then write "
    "(and a barrier again before the next step's read).",
    "global": "Several threads update one element: use an atomic (`cuda.atomic.add`), or give "
    "each thread its own element; a barrier helps only when one thread writes what "
    "others read after it.",
    "global writes": "Several threads write one element: only one of them should (the one "
    "that holds the result, e.g. `if lane == 0:` or `if cuda.threadIdx.x == 0:`), or give "
    "each thread its own element.",
}
SHOWN_RACES = 2  # races described one by one; more are counted


def _race_fix(races: list[Hazard], kernel) -> str:
    """What to do about the races found, by where they are and what the threads do."""
    fixes = []
    for space in dict.fromkeys(h.space or "shared" for h in races):
        mine = [h for h in races if (h.space or "shared") == space]
        if space == "shared":
            same = next((h for h in mine if len(set(h.lines)) == 1), None)
            fix = (
                _RACE_FIX["one statement"].format(line=_line(same.lines[0], kernel))
                if same is not None
                else _RACE_FIX["shared"]
            )
        elif all(h.kind == "WAW" for h in mine):
            fix = _RACE_FIX["global writes"]
        else:
            fix = _RACE_FIX["global"]
        fixes.append(fix)
    return " ".join(fixes)


def hazards(observation: Observation, kernel) -> list[tuple[str, str]]:
    """(kind, sentence) for every partial barrier, uninitialised read, out-of-bounds index, and
    the first races (the rest counted), ending with what races mean and how to fix them."""
    seen, found, races = set(), [], []
    for hazard in observation.hazards:
        key = (hazard.kind, hazard.space, tuple(sorted(hazard.lines)))
        if key in seen:
            continue
        seen.add(key)
        if hazard.kind in _RACE:
            races.append(hazard)
            if len(races) > SHOWN_RACES:
                continue
        found.append((hazard.kind, describe_hazard(hazard, kernel)))
    if races:
        more = (
            f"{len(races) - SHOWN_RACES} more pair(s) of lines race the same way. "
            if len(races) > SHOWN_RACES
            else ""
        )
        last_kind = found[-1][0] if found else "RAW"
        found.append(
            (
                last_kind,
                f"{more}A race gives values that may look right here (or on one "
                f"run of a GPU) and be wrong the next time. {_race_fix(races, kernel)}",
            )
        )
    return found


def _by_line(rows) -> list[list]:
    """Rows grouped by source line, in order."""
    groups: dict = {}
    for row in rows:
        groups.setdefault(row.line, []).append(row)
    return list(groups.values())


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
                found.append(
                    f"{_line(row, kernel).capitalize()} {_VERB[self.op]} {got:.1f} "
                    f"sectors per request; a coalesced {kind} needs {ideal:.1f}. "
                    "Neighbouring threads (lanes) should touch neighbouring elements."
                )
        return found


@dataclass(frozen=True)
class NoBankConflicts:
    """No shared-memory access needs more wavefronts than a conflict-free one (by `slack`)."""

    op: str | None = None
    slack: float = 1.05

    def __call__(self, observation, kernel, case) -> list[str]:
        by_ways: dict = {}
        for rows in _by_line(observation.select("shared", self.op)):
            bad = [
                r
                for r in rows
                if r.requests and r.ideal_wavefronts and r.conflict_ways > self.slack
            ]
            if bad:
                worst = max(bad, key=lambda r: r.conflict_ways)
                ops = " and ".join(f"{r.op}s" for r in bad)
                by_ways.setdefault(round(worst.conflict_ways), []).append((worst, ops))
        found = []
        for ways, places in sorted(by_ways.items(), reverse=True):
            worst = places[0][0]
            where = ", ".join(f"{_line(row, kernel)} ({ops})" for row, ops in places)
            found.append(
                f"{ways}-way bank conflict{'s' if len(places) > 1 else ''} on {where}: "
                f"{worst.wavefronts / worst.requests:.1f} wavefronts per request where "
                f"{worst.ideal_wavefronts / worst.requests:.1f} would do. Lanes of a "
                "warp hit different addresses in the same bank."
            )
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

        needed = (
            observation.fraction
            * sum(
                v.nbytes
                for k, v in case.args.items()
                if isinstance(v, np.ndarray) and k not in case.expected
            )
            / 32
        )
        if needed and moved > self.factor * needed:
            worst = max(rows, key=lambda r: r.sectors)
            return [
                f"Your kernel reads {moved / needed:.1f}x the sectors its input needs "
                f"({moved:.0f} sectors of 32 bytes for {needed:.0f}); the most at "
                f"{_line(worst, kernel)}. {self.why}".strip()
            ]
        return []


@dataclass(frozen=True)
class UsesConstant:
    """Some load reads constant memory, with one address per warp request (a broadcast)."""

    what: str = "the weights"

    def __call__(self, observation, kernel, case) -> list[str]:
        rows = observation.select("constant", "load")
        if not rows:
            return [
                f"Your kernel never reads constant memory: put {self.what} there with "
                "`cuda.const.array_like(...)` of a module-level NumPy array."
            ]
        return []


@dataclass(frozen=True)
class NoSerialisedConstant:
    """No constant-memory load asks for more than `most` distinct addresses per warp request."""

    most: float = 2.0

    def __call__(self, observation, kernel, case) -> list[str]:
        found = []
        for row in observation.select("constant", "load"):
            if row.distinct > self.most:
                found.append(
                    f"{_line(row, kernel).capitalize()} reads {row.distinct:.1f} "
                    "different addresses of constant memory per warp request: constant "
                    "memory serves one address at a time, so the warp waits that many "
                    "times. "
                    "A table indexed by data belongs in global (or shared) memory."
                )
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
                who = (
                    "every lane does an atomic on one address"
                    if lanes >= 31.5
                    else f"{lanes:.0f} lanes of a warp (on average) do atomics on one address"
                )
                found.append(
                    f"{_line(row, kernel).capitalize()}: {who} ({row.requests} requests); "
                    "the atomics on one address wait for each other. Combine the values "
                    "first (in registers, a warp or a block) and do one atomic per group."
                )
        return found


@dataclass(frozen=True)
class SourceUses:
    """The kernel's source calls one of `words` (what the tracer cannot see: shuffles, ballots)."""

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

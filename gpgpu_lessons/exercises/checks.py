"""What a kernel with the right values must also do: checks on the tracer's facts, in plain words.

Each check is a small callable: check(observation, kernel, case) -> list of sentences (empty
when the kernel does what the exercise asks). `hazards` turns the tracer's races, partial
barriers and uninitialised reads into sentences; every exercise applies it.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass

from . import shapes
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
    """A thread or block index as plain integers: (3,) or (3, 1)."""
    if isinstance(thread, (tuple, list)):
        return str(tuple(int(v) for v in thread))
    return str(int(thread))


_BARRIER_CALLS = ("syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or")


class _Source:
    """A kernel's source parsed: nodes found by absolute line, their parents, their text."""

    def __init__(self, kernel):
        self.tree, self.first, self.text = shapes.parsed(kernel)
        self.parents: dict = {}
        if self.tree is not None:
            for node in ast.walk(self.tree):
                for child in ast.iter_child_nodes(node):
                    self.parents[child] = node

    def line(self, node) -> int:
        return self.first + node.lineno - 1

    def code(self, node) -> str:
        """The node's first line of source (a loop's or an `if`'s header, without the colon)."""
        text = ast.get_source_segment(self.text, node) or ""
        return _code(text.splitlines()[0]).rstrip(":") if text else ""

    def calls(self, names, line=None) -> list:
        """Calls of `cuda.<name>` (or `<name>`) for a name in `names`, at `line` when given."""
        if self.tree is None:
            return []
        return [
            node
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in names
            and (line is None or self.line(node) == line)
        ]

    def around(self, node) -> list:
        """The `if`s and loops that hold node, innermost first (within the kernel)."""
        found = []
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, (ast.If, ast.For, ast.While)):
                found.append(node)
        return found

    def returns_before(self, node) -> list:
        """The `return` statements of the kernel before node (in the source), not in a nested
        function."""
        if self.tree is None:
            return []
        nested = [
            n
            for n in ast.walk(self.tree)
            if isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not self.tree
        ]
        inner = {id(m) for n in nested for m in ast.walk(n)}
        return sorted(
            (
                n
                for n in ast.walk(self.tree)
                if isinstance(n, ast.Return) and id(n) not in inner and n.lineno < node.lineno
            ),
            key=lambda n: n.lineno,
        )

    def split(self, groups) -> ast.AST | None:
        """The innermost `if` or loop that puts the calls of different groups (the calls at
        each line) on different sides (its body, its `else`, outside it), or None."""
        calls = [group[0] for group in groups if group]
        if self.tree is None or len(calls) < 2:
            return None

        def side(branch, call) -> str:
            for name in ("body", "orelse"):
                block = getattr(branch, name)
                if block and block[0].lineno <= call.lineno <= block[-1].end_lineno:
                    return name
            return "outside"

        kinds = (ast.If, ast.For, ast.While)
        branches = [n for n in ast.walk(self.tree) if isinstance(n, kinds)]
        apart = [b for b in branches if len({side(b, c) for c in calls}) > 1]
        return max(apart, key=lambda b: b.lineno, default=None)

    def guard(self, node) -> str:
        """`if i >= n: return` for a return in an `if`, else the return's own text."""
        holder = self.parents.get(node)
        if isinstance(holder, ast.If) and node in holder.body:
            return f"{self.code(holder)}: {self.code(node)}"
        return self.code(node)


def source_text(kernel) -> str | None:
    """The kernel's source without its comments, or None when it cannot be read."""
    try:
        text = inspect.getsource(getattr(kernel, "py_func", kernel))
    except (OSError, TypeError):
        return None
    return re.sub(r"#.*", "", text)


def source_calls(kernel, words) -> bool | None:
    """True when the kernel's source (comments left out) names one of `words` (`shfl_`), None
    when it cannot be read."""
    code = source_text(kernel)
    return None if code is None else any(word in code for word in words)


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
        if len(set(lines)) > 1:
            return _different_barriers(hazard, kernel)
        return _partial_barrier(hazard, kernel)
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


def _capital(text: str) -> str:
    return text[0].upper() + text[1:]


_LOOP_FIX = (
    "Make the loop's bounds the same for every thread of the block (start from the block's "
    "first index, e.g. `cuda.blockIdx.x * cuda.blockDim.x`, and add `cuda.threadIdx.x` for "
    "each thread's own index), and guard the work inside the loop with an `if` (`if j < n:`), "
    "the barrier outside that `if`."
)


def _partial_barrier(hazard: Hazard, kernel) -> str:
    """A barrier that some threads of the block never reach: what keeps them away (the loop,
    the early return or the `if` around it, from the source), and the fix for that."""
    line = hazard.lines[0] if hazard.lines else None
    where = _line(line, kernel) if line else "a `cuda.syncthreads()`"
    block = _thread(hazard.block) if hazard.block else "(0,)"
    there, away = (list(hazard.threads) + [None, None])[:2]
    counts = hazard.barriers if len(hazard.barriers) == 2 else None
    source = _Source(kernel) if line and not _other_file(hazard, kernel) else None
    call = next(iter(source.calls(_BARRIER_CALLS, line)), None) if source else None
    around = source.around(call) if call is not None else []
    returns = source.returns_before(call) if call is not None else []
    inner = around[0] if around else None
    undefined = (
        "Every thread of the block must reach each `cuda.syncthreads()`: the CUDA programming "
        "guide makes a barrier that only part of the block reaches undefined behaviour"
    )
    if isinstance(inner, ast.If):
        taken = (
            f", which thread {_thread(there)} of block {block} takes and thread "
            f"{_thread(away)} does not"
            if there is not None and away is not None
            else ", which not every thread of the block takes"
        )
        return (
            f"{_capital(where)} is reached by only part of the block: it is inside the `if` at "
            f"line {source.line(inner)} (`{source.code(inner)}`){taken}. {undefined} (in a "
            "branch: likely to hang or produce unintended side effects). Move the barrier out "
            "of the `if`, so that every thread reaches it, and guard only the work with the `if`."
        )
    if returns:
        back = returns[-1]
        who = (
            f": thread {_thread(away)} of block {block} returns there, while thread "
            f"{_thread(there)} waits at the barrier"
            if there is not None and away is not None
            else ""
        )
        return (
            f"{_capital(where)} is not reached by the threads that return early at line "
            f"{source.line(back)} (`{source.guard(back)}`){who}. {undefined}; current GPUs "
            "stop counting a thread at a barrier once it has exited, so it may seem to work, "
            "but nothing guarantees it. Do not return before a barrier: guard the work with an "
            "`if` (the loads and stores, e.g. `if i < n:`) and let every thread reach the "
            "barrier."
        )
    if isinstance(inner, (ast.For, ast.While)):
        times = (
            f": thread {_thread(there)} of block {block} passes {counts[0]} barriers in all, "
            f"thread {_thread(away)} only {counts[1]}"
            if counts and there is not None and away is not None
            else ""
        )
        return (
            f"{_capital(where)} is inside the loop at line {source.line(inner)} "
            f"(`{source.code(inner)}`), which runs a different number of times for different "
            f"threads of the block{times}. So the threads reach the barrier a different number "
            f"of times, and those that leave the loop early never reach its last ones. "
            f"{undefined}. {_LOOP_FIX}"
        )
    who = (
        f": thread {_thread(there)} of block {block} reaches it, thread {_thread(away)} does not"
        if there is not None and away is not None
        else ""
    )
    return (
        f"{_capital(where)} is reached by only part of the block{who}. {undefined}. Put it "
        "where every thread of the block gets to it: outside any `if`, after no early "
        "`return`, in loops whose bounds are the same for the whole block."
    )


def _different_barriers(hazard: Hazard, kernel) -> str:
    """Threads of a block waiting at different syncthreads calls at the same time: a branch
    that divides the block; not allowed, even when each side holds whole warps."""
    lines = list(hazard.lines)
    block = _thread(hazard.block) if hazard.block else "(0,)"
    counts = hazard.barriers if len(hazard.barriers) == len(lines) else [None] * len(lines)
    waiting = ", ".join(
        f"{n} thread(s) at {_line(line, kernel)}" if n else _line(line, kernel)
        for n, line in zip(counts, lines)
    )
    source = None if _other_file(hazard, kernel) else _Source(kernel)
    groups = [source.calls(_BARRIER_CALLS, line) for line in lines] if source else []
    split = source.split(groups) if source else None
    if isinstance(split, (ast.For, ast.While)):
        return (
            f"Threads of block {block} wait at different `cuda.syncthreads()` calls, each "
            f"reached by only part of the block: {waiting}. The loop at line "
            f"{source.line(split)} (`{source.code(split)}`) runs a different number of times "
            "for different threads of the block, so those that leave it early wait at a "
            "barrier after it while the others still wait in it. Every thread of the block must "
            "reach the same `cuda.syncthreads()`, each one the same number of times (anything "
            f"else is undefined behaviour in CUDA). {_LOOP_FIX}"
        )
    branch = (
        f" (the `if` at line {source.line(split)}, `{source.code(split)}`, sends them apart)"
        if split is not None
        else ""
    )
    if hazard.whole_warps:
        why = (
            "Each side holds whole warps here, but that does not make it allowed: the two calls "
            "are two different barriers, and CUDA's `__syncthreads()` requires every thread of "
            "the block to reach the same one (the CUDA programming guide allows it in a branch "
            "only when the condition is the same for the whole block). What it does is "
            "undefined: it may seem to work on one GPU, or in the simulator, and not on another"
        )
    else:
        why = (
            "CUDA requires every thread of the block to reach the same `cuda.syncthreads()`: "
            "in a branch that divides the block it is undefined behaviour (the CUDA programming "
            "guide: likely to hang or produce unintended side effects)"
        )
    return (
        f"Threads of block {block} wait at different `cuda.syncthreads()` calls, each reached "
        f"by only part of the block: {waiting}{branch}. {why}. Put one `cuda.syncthreads()` "
        "after the branch, outside it, where every thread of the block reaches it."
    )


def _other_file(hazard: Hazard, kernel) -> bool:
    """True when the hazard's line is in another file than the kernel (a device function)."""
    filename = getattr(getattr(kernel, "py_func", None), "__code__", None)
    return bool(hazard.file) and filename is not None and hazard.file != filename.co_filename


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
        if source_calls(kernel, self.words) is not False:  # it does, or its source is unknown
            return []
        return [f"Your kernel does not use {self.what}, which this exercise asks for."]


@dataclass(frozen=True)
class NoReturnBefore:
    """No `return` comes before a warp call that every lane must take part in (a ballot): the
    source says it, whatever lanes the cases happen to send back."""

    calls: tuple[str, ...]
    what: str  # "the ballot"
    fix: str = ""
    needs_trace = False

    def __call__(self, observation, kernel, case) -> list[str]:
        source = _Source(kernel)
        for call in source.calls(self.calls):
            returns = source.returns_before(call)
            if returns:
                back, line = returns[-1], source.line(call)
                return [
                    f"Line {source.line(back)} `{source.guard(back)}` returns before "
                    f"{self.what} at {_line(line, kernel)}: the lanes that return take no part "
                    f"in it, and this exercise asks every lane of the warp to. {self.fix}".strip()
                ]
        return []

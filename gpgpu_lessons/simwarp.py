"""Warp intrinsics for Numba's CUDA simulator (numba issue 8433): shuffle kernels run without a GPU.

Numba's simulator runs each CUDA thread as a Python thread and has no warp-level intrinsics.
`install()` (called by ``import gpgpu_lessons`` in simulator mode only) adds them to the fake
``cuda`` module that simulated kernels see, with the signatures numba-cuda has on a GPU, so the same
kernel source runs in both modes:

    shfl_sync(mask, value, src_lane)      shfl_up_sync(mask, value, delta)
    shfl_down_sync(mask, value, delta)    shfl_xor_sync(mask, value, lane_mask)
    syncwarp(mask=0xFFFFFFFF)             ballot_sync(mask, predicate)
    all_sync / any_sync / eq_sync(mask, predicate)
    match_any_sync(mask, value)           match_all_sync(mask, value)
    activemask()                          lanemask_lt()

Semantics follow PTX (``shfl.sync``, ``vote.sync``, ``match.sync``, ``bar.warp.sync``):

* Warps are 32 consecutive linear thread ids of a block (x fastest), lane = id % 32.
* A ``*_sync`` call is a rendezvous: it returns once every lane named in ``mask`` that has not
  exited has made the same kind of call with the same mask (lanes of a partial warp that do not
  exist count as exited). Calls at different source lines pair up, as on Volta and later GPUs.
* Shuffles use the low 5 bits of the lane/delta argument (numba-cuda passes no ``width``: it is
  always 32). ``shfl_sync`` reads lane ``src_lane % 32``; ``shfl_up_sync`` lane ``lane - delta``
  and ``shfl_down_sync`` lane ``lane + delta``, returning the caller's own value when that is
  below 0 or above 31; ``shfl_xor_sync`` lane ``lane ^ lane_mask``.
* Reading a lane that takes no part in the call (not in the mask, exited, or beyond the block) is
  undefined on a GPU; here it returns a poison value (NaN, or 0xDEADBEEF... for integers) so that
  it shows in the results, or raises `WarpUndefinedError` when ``UNDEFINED = "raise"``.
* ``ballot_sync`` returns an int32 (lane 31 is the sign bit, as on the GPU), ``match_*_sync`` too;
  ``activemask``/``lanemask_lt`` a uint32. They are Python ints (so ``ballot & (1 << 31)`` works as
  Numba's int64 arithmetic does); store them in int32/int64 arrays (uint32 for activemask): NumPy
  refuses a negative ballot in a uint32 array, where a GPU would wrap it. ``activemask`` returns
  the lanes of the warp that are at the same call (same source position) once every other live
  lane of the warp is either there, waiting in another warp call or ``syncthreads``, or has
  exited: the converged set a GPU reports.
* Deadlocks (a lane waits for a lane that is blocked in ``syncthreads`` or in a different warp call,
  so nothing can ever move) are detected exactly, at once, and raise `WarpDeadlockError` naming the
  mask and the lanes; `TIMEOUT_S` is a backstop for lanes that never arrive for other reasons.

`syncthreads_count`, `syncthreads_and` and `syncthreads_or` refuse a bool (or a float) with a
TypeError, as a GPU's compiler does: they take an int32 predicate, `int32(x > 0)`.

`popc`, `ffs`, `clz` and `brev` are replaced too, so that they use the width of the GPU type: a
negative int32 (a ballot with lane 31 set) counts as 32-bit two's complement, NumPy integers by
their dtype, plain Python ints as int64 (Numba's type for them on a GPU; the stock simulator used
32 bits).
"""

from __future__ import annotations

import math
import sys
import threading
import time

import numpy as np

from . import runtime, watchdog
from .hardware import FULL_MASK, WARP_SIZE

#: What a read of a lane that takes no part in a shuffle returns: "poison" (NaN / 0xDEADBEEF...) or
#: "raise" (WarpUndefinedError). Undefined on a GPU either way.
UNDEFINED = "poison"

#: Backstop: a lane that waits this long in a warp call raises WarpDeadlockError. Real deadlocks are
#: found at once; this only catches lanes that never arrive because they run forever.
TIMEOUT_S = 120.0


class WarpDeadlockError(RuntimeError):
    """Lanes wait in a warp intrinsic for lanes that will never make the same call."""


class WarpUsageError(RuntimeError):
    """A warp intrinsic was used in a way whose result is undefined on a GPU."""


class WarpUndefinedError(WarpUsageError):
    """A shuffle read a lane that takes no part in it (only when UNDEFINED == "raise")."""


class _Bits(int):
    """An int that remembers the width of the GPU type it stands for (for popc/ffs/clz/brev)."""

    bits = 64


class _Int32(_Bits):
    bits = 32


class _UInt32(_Bits):
    bits = 32


def _int32(value: int) -> _Int32:
    """Wrap a 32-bit pattern into a signed int32 value, as the GPU's i4 result."""
    value &= FULL_MASK
    return _Int32(value - (1 << 32) if value & 0x80000000 else value)


# ----------------------------------------------------------------------------------------------
# Per-block bookkeeping

_RUNNING, _WAITING, _SYNCING, _EXITED = "running", "waiting", "syncing", "exited"


class _Gathering:
    """One rendezvous of the lanes of a warp in one kind of call with one mask."""

    def __init__(self, key, name, mask):
        self.key = key
        self.name = name
        self.mask = mask
        self.arrivals: dict[int, tuple] = {}
        self.done = False
        self.results: dict[int, object] = {}
        self.error: str | None = None
        self.finished = threading.Event()  # set when done, failed, or the block is aborted


class _Warp:
    def __init__(self, block: _Block, index: int):
        self.block = block
        self.index = index
        self.first = index * WARP_SIZE
        self.size = min(WARP_SIZE, block.nthreads - self.first)
        self.lock = threading.Lock()  # guards this warp's lanes' status and its gatherings
        self.open: dict[object, _Gathering] = {}

    def status(self, lane: int) -> str:
        return self.block.status[self.first + lane] if lane < self.size else _EXITED

    def progress(self) -> None:
        """Complete what can be completed; resolve activemask; detect deadlock. Holds self.lock."""
        again = True
        while again:
            again = False
            for g in list(self.open.values()):
                if g.key[0] == "activemask":
                    continue
                required = {lane for lane in _lanes(g.mask) if self.status(lane) != _EXITED}
                if required <= g.arrivals.keys():
                    self._complete(g)
                    again = True
            if not again and self.open and self._quiescent():
                pending = [g for g in self.open.values() if g.key[0] == "activemask"]
                if pending:
                    for g in pending:
                        self._complete(g)
                    again = True
                else:
                    messages = [(g, self._deadlock_message(g)) for g in self.open.values()]
                    for g, message in messages:
                        self._fail(g, message)

    def _quiescent(self) -> bool:
        """Every live lane waits (in a warp call or syncthreads): nothing can arrive any more."""
        return all(self.status(lane) in (_WAITING, _SYNCING, _EXITED) for lane in range(self.size))

    def _release(self, g: _Gathering) -> None:
        del self.open[g.key]
        for lane in g.arrivals:
            self.block.status[self.first + lane] = _RUNNING
            self.block.waiting_in[self.first + lane] = None
        g.finished.set()

    def _complete(self, g: _Gathering) -> None:
        g.results = _COMPUTE[g.key[0]](self, g)
        g.done = True
        self._release(g)

    def _fail(self, g: _Gathering, message: str) -> None:
        g.error = message
        self._release(g)

    def _deadlock_message(self, g: _Gathering) -> str:
        missing = sorted(
            lane
            for lane in _lanes(g.mask)
            if self.status(lane) != _EXITED and lane not in g.arrivals
        )
        doing = {}
        for lane in missing:
            if self.status(lane) == _SYNCING:
                what = "cuda.syncthreads()"
            else:
                other = self.block.waiting_in[self.first + lane]
                what = f"{other.name}(mask=0x{other.mask:08x})" if other else "another call"
            doing.setdefault(what, []).append(lane)
        detail = "; ".join(
            f"lanes {_ranges(lanes)} wait in {what}" for what, lanes in doing.items()
        )
        return (
            f"warp deadlock in block {self.block.block_idx}, warp {self.index}: "
            f"lanes {_ranges(sorted(g.arrivals))} wait in {g.name}(mask=0x{g.mask:08x}) for lanes "
            f"{_ranges(missing)}, which never make that call ({detail}). "
            "On a GPU this is undefined behaviour (a hang or wrong values): "
            "every lane named in the mask that has not exited "
            "must call the same intrinsic with the same mask."
        )


class _Block:
    def __init__(self, block_dim, block_idx):
        self.nthreads = int(np.prod(block_dim))
        self.block_idx = tuple(int(b) for b in block_idx)
        self.status = [_RUNNING] * self.nthreads
        self.waiting_in: list[_Gathering | None] = [None] * self.nthreads
        self.warps = [_Warp(self, w) for w in range(math.ceil(self.nthreads / WARP_SIZE))]

    def abort(self) -> None:
        """Wake every lane waiting in a warp call (they see their thread's abort flag)."""
        for warp in self.warps:
            with warp.lock:
                for g in warp.open.values():
                    g.finished.set()


def _lanes(mask: int):
    return (lane for lane in range(WARP_SIZE) if mask >> lane & 1)


def _ranges(lanes) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    out, lanes = [], list(lanes)
    i = 0
    while i < len(lanes):
        j = i
        while j + 1 < len(lanes) and lanes[j + 1] == lanes[j] + 1:
            j += 1
        out.append(str(lanes[i]) if i == j else f"{lanes[i]}-{lanes[j]}")
        i = j + 1
    return ", ".join(out) or "none"


# ----------------------------------------------------------------------------------------------
# What each kind of call computes once all its lanes are there

_SHFL_MODES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")


def _source_lane(mode: str, lane: int, b: int) -> int:
    """PTX shfl.sync with numba-cuda's c operand (0x1f; 0 for up): the lane read, or lane itself."""
    b &= 0x1F
    if mode == "shfl_sync":
        return b
    if mode == "shfl_up_sync":
        return lane - b if lane - b >= 0 else lane
    if mode == "shfl_down_sync":
        return lane + b if lane + b <= 31 else lane
    return lane ^ b


_POISON64 = np.array([0xDEADBEEFDEADBEEF], dtype=np.uint64).view(np.int64)[0]


def _poison(value):
    """A value of the same type that makes an undefined read visible."""
    if isinstance(value, (float, np.floating)):
        return type(value)("nan")
    if isinstance(value, np.integer):
        return np.array([_POISON64]).astype(value.dtype)[0]
    return int(_POISON64)


def _compute_shfl(warp: _Warp, g: _Gathering) -> dict:
    mode = g.key[0]
    results = {}
    for lane, (value, b) in g.arrivals.items():
        src = _source_lane(mode, lane, b)
        if src in g.arrivals:
            results[lane] = g.arrivals[src][0]
            continue
        why = (
            "does not exist in this block"
            if src >= warp.size
            else "has exited"
            if warp.status(src) == _EXITED
            else "is not in the mask"
        )
        message = (
            f"lane {lane} of warp {warp.index} (block {warp.block.block_idx}) reads lane {src} "
            f"in {mode}(mask=0x{g.mask:08x}, ..., {b}), but lane {src} {why}: on a GPU the "
            "value read is undefined."
        )
        if UNDEFINED == "raise":
            results[lane] = WarpUndefinedError(message)
        else:
            results[lane] = _poison(value)
    return results


def _ballot_bits(g: _Gathering) -> int:
    return sum(1 << lane for lane, (pred, _) in g.arrivals.items() if pred)


def _compute_ballot(warp, g):
    bits = _int32(_ballot_bits(g))
    return {lane: bits for lane in g.arrivals}


def _compute_all(warp, g):
    result = all(bool(pred) for pred, _ in g.arrivals.values())
    return {lane: result for lane in g.arrivals}


def _compute_any(warp, g):
    result = any(bool(pred) for pred, _ in g.arrivals.values())
    return {lane: result for lane in g.arrivals}


def _compute_eq(warp, g):
    result = len({bool(pred) for pred, _ in g.arrivals.values()}) == 1
    return {lane: result for lane in g.arrivals}


def _bit_pattern(value) -> tuple:
    """What match.sync compares: the value's bits (so NaN matches NaN, 0.0 does not match -0.0)."""
    if isinstance(value, np.floating):
        return value.dtype.itemsize, value.tobytes()
    if isinstance(value, float):
        return 8, np.float64(value).tobytes()
    return 0, int(value)


def _compute_match_any(warp, g):
    patterns = {lane: _bit_pattern(v) for lane, (v, _) in g.arrivals.items()}
    return {
        lane: _int32(sum(1 << other for other, p in patterns.items() if p == mine))
        for lane, mine in patterns.items()
    }


def _compute_match_all(warp, g):
    patterns = {_bit_pattern(v) for v, _ in g.arrivals.values()}
    same = len(patterns) == 1
    mask = _int32(sum(1 << lane for lane in g.arrivals) if same else 0)
    return {lane: (mask, same) for lane in g.arrivals}


def _compute_syncwarp(warp, g):
    return {lane: None for lane in g.arrivals}


def _compute_activemask(warp, g):
    mask = _UInt32(sum(1 << lane for lane in g.arrivals))
    return {lane: mask for lane in g.arrivals}


_COMPUTE = {
    **{mode: _compute_shfl for mode in _SHFL_MODES},
    "ballot_sync": _compute_ballot,
    "all_sync": _compute_all,
    "any_sync": _compute_any,
    "eq_sync": _compute_eq,
    "match_any_sync": _compute_match_any,
    "match_all_sync": _compute_match_all,
    "syncwarp": _compute_syncwarp,
    "activemask": _compute_activemask,
}


# ----------------------------------------------------------------------------------------------
# The rendezvous every intrinsic goes through


def _current():
    """(thread, block state, warp, lane) of the calling simulated CUDA thread."""
    thread = threading.current_thread()
    block = getattr(getattr(thread, "_manager", None), "_simwarp", None)
    if block is None:
        raise WarpUsageError("warp intrinsics can only be called inside a simulated CUDA kernel")
    tid = thread.thread_id
    return thread, block, block.warps[tid // WARP_SIZE], tid % WARP_SIZE


def _mask(mask, name: str, lane: int) -> int:
    try:
        mask = int(mask) & FULL_MASK
    except (TypeError, ValueError):
        raise TypeError(f"{name}: the mask must be an integer, got {mask!r}") from None
    if not mask >> lane & 1:
        raise WarpUsageError(
            f"lane {lane} called {name} with mask 0x{mask:08x}, which does not name lane {lane}: "
            "on a GPU this is undefined behaviour (the calling lane must be in the mask)."
        )
    return mask


def _check_value(value, name: str):
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(
            f"{name} supports 32- and 64-bit ints and floats, got {type(value).__name__} "
            f"({value!r}): a GPU would refuse to compile this call."
        )
    if isinstance(value, np.floating) and value.dtype.itemsize not in (4, 8):
        raise TypeError(
            f"{name} supports 32- and 64-bit ints and floats, got {value.dtype}: "
            "a GPU would refuse to compile this call."
        )


def _gather(name: str, key_extra, mask: int, value, arg=None):
    thread, block, warp, lane = _current()
    key = (name, key_extra)
    tid = warp.first + lane
    deadline = time.monotonic() + TIMEOUT_S
    if thread.abort:
        raise RuntimeError("abort flag set on warp intrinsic call")
    with warp.lock:
        g = warp.open.get(key)
        if g is None:
            g = warp.open[key] = _Gathering(key, name, mask)
        g.arrivals[lane] = (value, arg)
        block.status[tid] = _WAITING
        block.waiting_in[tid] = g
        warp.progress()
    while not g.finished.wait(0.5):
        if thread.abort:
            break
        if time.monotonic() > deadline:
            with warp.lock:
                if not g.finished.is_set():
                    missing = sorted(set(_lanes(mask)) - g.arrivals.keys())
                    warp._fail(
                        g,
                        f"lanes {_ranges(sorted(g.arrivals))} of warp {warp.index} (block "
                        f"{block.block_idx}) waited {TIMEOUT_S:g} s in {name}"
                        f"(mask=0x{mask:08x}) for lanes {_ranges(missing)}, which never "
                        "made that call.",
                    )
    if not g.done and g.error is None:
        raise RuntimeError("abort flag set while waiting in a warp intrinsic")
    if g.error is not None:
        raise WarpDeadlockError(g.error)
    result = g.results[lane]
    if isinstance(result, Exception):
        raise result
    return result


# ----------------------------------------------------------------------------------------------
# The intrinsics, as methods of the simulator's fake `cuda` module


def shfl_sync(self, mask, value, src_lane):
    """Return `value` from lane `src_lane % 32` of the lanes in `mask`."""
    return _shfl("shfl_sync", mask, value, src_lane)


def shfl_up_sync(self, mask, value, delta):
    """Return `value` from lane `lane - delta`, or the caller's own value below lane 0."""
    return _shfl("shfl_up_sync", mask, value, delta)


def shfl_down_sync(self, mask, value, delta):
    """Return `value` from lane `lane + delta`, or the caller's own value above lane 31."""
    return _shfl("shfl_down_sync", mask, value, delta)


def shfl_xor_sync(self, mask, value, lane_mask):
    """Return `value` from lane `lane ^ lane_mask` (butterfly)."""
    return _shfl("shfl_xor_sync", mask, value, lane_mask)


def _shfl(name, mask, value, b):
    _check_value(value, name)
    lane = _current()[3]
    mask = _mask(mask, name, lane)
    return _gather(name, mask, mask, value, int(b))


def _vote(name, mask, predicate):
    lane = _current()[3]
    mask = _mask(mask, name, lane)
    return _gather(name, mask, mask, bool(predicate))


def ballot_sync(self, mask, predicate):
    """int32 with bit i set when lane i (in mask) has a true predicate."""
    return _vote("ballot_sync", mask, predicate)


def all_sync(self, mask, predicate):
    """True when the predicate is true in every participating lane."""
    return _vote("all_sync", mask, predicate)


def any_sync(self, mask, predicate):
    """True when the predicate is true in some participating lane."""
    return _vote("any_sync", mask, predicate)


def eq_sync(self, mask, predicate):
    """True when the predicate has the same truth value in every participating lane."""
    return _vote("eq_sync", mask, predicate)


def match_any_sync(self, mask, value):
    """int32 mask of the participating lanes whose value has the same bits as the caller's."""
    _check_value(value, "match_any_sync")
    lane = _current()[3]
    mask = _mask(mask, "match_any_sync", lane)
    return _gather("match_any_sync", mask, mask, value)


def match_all_sync(self, mask, value):
    """(mask of the participating lanes, True) when all values are equal, else (0, False)."""
    _check_value(value, "match_all_sync")
    lane = _current()[3]
    mask = _mask(mask, "match_all_sync", lane)
    return _gather("match_all_sync", mask, mask, value)


def syncwarp(self, mask=FULL_MASK):
    """Wait until every live lane in `mask` has reached a syncwarp with the same mask."""
    lane = _current()[3]
    mask = _mask(mask, "syncwarp", lane)
    _gather("syncwarp", mask, mask, None)


def activemask(self):
    """uint32 mask of the lanes of the warp that are at this same call (the converged lanes)."""
    frame = sys._getframe(1)
    site = (frame.f_code, frame.f_lasti)
    return _gather("activemask", site, 1 << _current()[3], None)


def lanemask_lt(self):
    """uint32 mask of the lanes below the caller."""
    return _UInt32((1 << _current()[3]) - 1)


def _width(value) -> int:
    if isinstance(value, _Bits):
        return value.bits
    if isinstance(value, np.integer):
        return value.dtype.itemsize * 8
    return 64  # a plain Python int is an int64 on the GPU


def _unsigned(value) -> tuple[int, int]:
    width = _width(value)
    return int(value) & ((1 << width) - 1), width


def popc(self, val):
    """Number of set bits, of the value's GPU width (a negative int32 counts 32-bit)."""
    return bin(_unsigned(val)[0]).count("1")


def ffs(self, val):
    """1 + index of the lowest set bit, 0 when none."""
    bits, _ = _unsigned(val)
    return (bits & -bits).bit_length()


def clz(self, val):
    """Number of leading zero bits, of the value's GPU width."""
    bits, width = _unsigned(val)
    return width - bits.bit_length()


def brev(self, val):
    """The bits reversed, of the value's GPU width."""
    bits, width = _unsigned(val)
    return int(format(bits, f"0{width}b")[::-1], 2)


def _check_predicate(value, name: str):
    """Refuse what a GPU's compiler refuses: the block votes take an integer, not a bool."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return
    given = "bool" if isinstance(value, (bool, np.bool_)) else type(value).__name__
    article = "an" if given[:1] in "aeiou" else "a"
    raise TypeError(
        f"cuda.{name} takes an int32 predicate on a GPU, not {article} {given}: write "
        f"`cuda.{name}(int32(x > 0))` (`from numba import int32`); a GPU would refuse to "
        "compile this call."
    )


def syncthreads_count(self, val):
    """Wait for the block; the number of its threads whose int predicate is not 0."""
    _check_predicate(val, "syncthreads_count")
    return threading.current_thread().syncthreads_count(val)


def syncthreads_and(self, val):
    """Wait for the block; 1 when every thread's int predicate is not 0, else 0."""
    _check_predicate(val, "syncthreads_and")
    return threading.current_thread().syncthreads_and(val)


def syncthreads_or(self, val):
    """Wait for the block; 1 when some thread's int predicate is not 0, else 0."""
    _check_predicate(val, "syncthreads_or")
    return threading.current_thread().syncthreads_or(val)


_INTRINSICS = {
    f.__name__: f
    for f in (
        shfl_sync,
        shfl_up_sync,
        shfl_down_sync,
        shfl_xor_sync,
        ballot_sync,
        all_sync,
        any_sync,
        eq_sync,
        match_any_sync,
        match_all_sync,
        syncwarp,
        activemask,
        lanemask_lt,
        popc,
        ffs,
        clz,
        brev,
        syncthreads_count,
        syncthreads_and,
        syncthreads_or,
    )
}


# ----------------------------------------------------------------------------------------------
# Patching the simulator: thread states the rendezvous needs (syncthreads, exit), per-block state


def _thread_run(self):
    try:
        _ORIGINAL["run"](self)
    finally:
        block = getattr(self._manager, "_simwarp", None)
        if block is not None:
            warp = block.warps[self.thread_id // WARP_SIZE]
            with warp.lock:
                block.status[self.thread_id] = _EXITED
                warp.progress()


def _thread_syncthreads(self):
    block = getattr(self._manager, "_simwarp", None)
    if block is None:
        return _ORIGINAL["syncthreads"](self)
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads call")
    warp = block.warps[self.thread_id // WARP_SIZE]
    with warp.lock:
        self.syncthreads_blocked = True
        block.status[self.thread_id] = _SYNCING
        warp.progress()
    self.syncthreads_event.wait()
    self.syncthreads_event.clear()
    if self.abort:
        raise RuntimeError("abort flag set on syncthreads clear")


def _manager_run(self, grid_point, *args):
    """numba-cuda 0.30's BlockManager.run, with per-block warp state and locked releases.

    Whatever ends the block early (an exception in one thread, the launch's time limit, a
    KeyboardInterrupt in the caller) ends every thread of the block first (`watchdog.stop`).
    Ctrl-C is held back until the next `watchdog.tick`: an interrupt inside `Thread.start` would
    leave a thread that is started but not yet alive, which `stop` cannot see.
    """
    from numba.cuda.simulator.kernel import BlockThread

    block = self._simwarp = _Block(self._block_dim, grid_point)
    threads = []
    with watchdog.held_interrupts():
        try:
            _run_block(self, block, threads, BlockThread, grid_point, args)
        except BaseException:
            watchdog.stop(threads, block)
            raise


def _run_block(self, block, threads, BlockThread, grid_point, args):
    livethreads = set()
    blockedthreads = set()
    for block_point in np.ndindex(*self._block_dim):

        def target():
            self._f(*args)

        t = BlockThread(target, self, grid_point, block_point, self._debug)
        threads.append(t)
        t.start()
        livethreads.add(t)
        # starting a thread waits for the GIL, which spinning threads hold: check as we go
        watchdog.tick(threads)
        if len(threads) % WARP_SIZE == 0:
            for other in threads:
                if other.exception:
                    raise other.exception[0].with_traceback(other.exception[1])

    while livethreads:
        for t in livethreads:
            if t.syncthreads_blocked:
                blockedthreads.add(t)
            elif t.exception:
                raise t.exception[0].with_traceback(t.exception[1])
        if livethreads == blockedthreads:
            # Each warp's lanes are marked running at once, so no warp sees itself half released.
            by_warp = {}
            for t in blockedthreads:
                by_warp.setdefault(t.thread_id // WARP_SIZE, []).append(t)
            for w, lanes in by_warp.items():
                with block.warps[w].lock:
                    for t in lanes:
                        t.syncthreads_blocked = False
                        block.status[t.thread_id] = _RUNNING
            for t in blockedthreads:
                t.syncthreads_event.set()
            blockedthreads = set()
        livethreads = set([t for t in livethreads if t.is_alive()])
        watchdog.tick(livethreads)
        time.sleep(0)  # let the block's threads run: a spinning manager holds the GIL
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


_ORIGINAL: dict = {}


def installed() -> bool:
    """True when the emulation is active (simulator mode, after install())."""
    return bool(_ORIGINAL)


def install(*, anywhere: bool = False) -> bool:
    """Add the warp intrinsics to Numba's CUDA simulator. Idempotent; returns False (and does
    nothing) on a real GPU, where Numba has the real intrinsics, unless `anywhere` is true (the
    kernel tracer runs kernels on the simulator's machinery on a GPU machine too)."""
    if runtime.MODE != runtime.SIMULATOR and not anywhere:
        return False
    if _ORIGINAL:
        return True
    from numba.cuda.simulator import kernel, kernelapi

    for name in ("run", "syncthreads"):
        if not hasattr(kernel.BlockThread, name) or not hasattr(kernel.BlockManager, "run"):
            raise RuntimeError(
                "gpgpu_lessons.simwarp: this numba-cuda simulator is not the one "
                "(0.30) the warp emulation was written for"
            )
    _ORIGINAL["run"] = kernel.BlockThread.run
    _ORIGINAL["syncthreads"] = kernel.BlockThread.syncthreads
    _ORIGINAL["manager_run"] = kernel.BlockManager.run
    _ORIGINAL["module"] = {
        name: getattr(kernelapi.FakeCUDAModule, name, None) for name in _INTRINSICS
    }
    kernel.BlockThread.run = _thread_run
    kernel.BlockThread.syncthreads = _thread_syncthreads
    kernel.BlockManager.run = _manager_run
    for name, function in _INTRINSICS.items():
        setattr(kernelapi.FakeCUDAModule, name, function)
    return True

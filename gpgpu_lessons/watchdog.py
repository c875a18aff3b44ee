"""A time limit on graded and traced launches in the simulator, and a clean stop.

Numba's simulator runs one Python thread per CUDA thread. A kernel that never ends (a grid-stride
loop without ``i += stride``) would spin for ever, and interrupting the notebook (Ctrl-C,
Jupyter's interrupt) used to stop only the main thread, leaving the kernel's threads spinning and
every later launch slow. Here:

- `limit(seconds, kernel)` (the graders and the tracer wrap each launch in it) gives the launch
  `seconds` of CPU time: the process's CPU time (``time.process_time()``, all threads together)
  used since the launch started, so that a busy machine, which slows the launch down but does not
  make it do more work, never stops a kernel that would pass on an idle one. A launch that makes
  no progress without using CPU (threads waiting for ever) is stopped by a wall-clock backstop,
  `BACKSTOP_TIMES` the limit and at least `BACKSTOP_MIN_S` seconds. The simulator's block
  manager (patched by `simwarp`) calls `tick` while the block's threads run, and past either
  limit `LaunchTimeout` is raised, naming the line where the threads spin and, when the source
  says it, why ("the loop at line 7 never advances i");
- while a block runs (`held_interrupts`), Ctrl-C (SIGINT) is held back and raised by the next
  `tick`, never half-way through starting a thread (a thread started but not yet running is one
  that `stop` could not see);
- whatever ends a block early (the time limit, KeyboardInterrupt, an exception in one thread),
  `stop` ends every thread of the block before it returns: waiting threads are woken with their
  abort flag set, running ones get an exception raised inside them (CPython's
  PyThreadState_SetAsyncExc, the only way to stop a Python thread from outside; it costs nothing
  while the kernel runs).

The default limit is `DEFAULT_S` seconds of CPU time per launch, or the environment variable
``GPGPU_LAUNCH_LIMIT_S``; ``limit(None)`` uses it, ``limit(0)`` means no limit. A value that is
not a number of seconds >= 0 raises `BadLimit` (a ValueError), which the grader reports as a
problem of the setup, not of the student's kernel.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import linecache
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass

DEFAULT_S = 30.0  # CPU s; the slowest reference solution launch: 0.42 s on a loaded 2-core machine
ENVIRONMENT = "GPGPU_LAUNCH_LIMIT_S"
BACKSTOP_TIMES = 10  # the wall-clock backstop: this many times the limit ...
BACKSTOP_MIN_S = 60.0  # ... and at least this many seconds
STOP_WAIT_S = 30.0  # how long `stop` waits for the threads of a block to end (they take ms)
RAISE_AGAIN_S = 0.5  # how long a thread may take to get the exception before it is raised again

# The host's clocks, kept here: a pretend GPU (exercises.fakegpu) replaces the time module's own
_cpu_clock = time.process_time
_wall_clock = time.monotonic

_HERE = os.path.dirname(os.path.abspath(__file__))
_OURS = (
    os.path.join(_HERE, "trace") + os.sep,
    os.path.join(_HERE, "simwarp.py"),
    os.path.join(_HERE, "watchdog.py"),
    os.path.join(_HERE, "exercises", "running.py"),
)
_local = threading.local()


class LaunchTimeout(RuntimeError):
    """A simulated launch ran past its time limit; the message says where its threads were."""

    def __init__(self, message: str, line: int | None = None, file: str | None = None):
        super().__init__(message)
        self.line = line
        self.file = file


class BadLimit(ValueError):
    """A time limit that is not a number of seconds >= 0 (GPGPU_LAUNCH_LIMIT_S or limit_s=):
    a problem of the setup, not of the kernel."""


class Stopped(Exception):
    """Raised inside a simulator thread to end it (a subclass of Exception: the simulator's
    thread wrapper catches it and the thread ends quietly)."""


def default_limit() -> float:
    """CPU seconds a graded or traced launch may take: GPGPU_LAUNCH_LIMIT_S, else DEFAULT_S."""
    text = os.environ.get(ENVIRONMENT, "").strip()
    if not text:
        return DEFAULT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise BadLimit(
            f"{ENVIRONMENT} must be a number of seconds >= 0 (0: no limit), got {text!r}: "
            f"set it to e.g. {DEFAULT_S:g}, or unset it for the default"
        )
    return value


@dataclass
class _Limit:
    seconds: float  # of CPU time; 0: no limit
    cpu_start: float
    wall_start: float
    kernel: object  # the kernel's Python function (for its name)

    @property
    def backstop(self) -> float:
        """Wall-clock seconds the launch may take, whatever CPU time it uses."""
        return max(BACKSTOP_TIMES * self.seconds, BACKSTOP_MIN_S)

    def passed(self) -> tuple[float, float] | None:
        """(CPU s, wall s) used so far once past the limit or the backstop, else None."""
        if not self.seconds:
            return None
        cpu, wall = _cpu_clock() - self.cpu_start, _wall_clock() - self.wall_start
        return (cpu, wall) if cpu >= self.seconds or wall >= self.backstop else None


def _check_seconds(seconds) -> float:
    ok = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    if not (ok and math.isfinite(seconds) and seconds >= 0):
        raise BadLimit(
            f"limit_s={seconds!r}: give the time limit of a launch in seconds of CPU time "
            "(0 for none)"
        )
    return float(seconds)


@contextlib.contextmanager
def limit(seconds: float | None = None, kernel=None):
    """Launches made inside this block raise LaunchTimeout after `seconds` of CPU time (None: the
    default; 0: no limit), or at the wall-clock backstop. Nested limits: the innermost applies."""
    seconds = default_limit() if seconds is None else _check_seconds(seconds)
    previous = getattr(_local, "limit", None)
    kernel = getattr(kernel, "py_func", kernel)
    try:
        _local.limit = _Limit(seconds, _cpu_clock(), _wall_clock(), kernel)
        yield
    finally:
        _local.limit = previous


def tick(threads) -> None:
    """Called by the block manager while `threads` run: raise a held-back Ctrl-C; past the limit
    or the backstop, stop the threads and raise LaunchTimeout."""
    _deliver_interrupt()
    current = getattr(_local, "limit", None)
    used = None if current is None else current.passed()
    if used is None:
        return
    error = timeout_error(threads, current, *used)
    stop(threads)
    raise error


# ---- Ctrl-C while a block runs ---------------------------------------------------------------


@dataclass
class _Held:
    handler: object  # the SIGINT handler before the block
    pending: list  # (signum, frame) of each interrupt not yet raised


@contextlib.contextmanager
def held_interrupts():
    """Inside the block, Ctrl-C (SIGINT) is held back until the next `tick` or the block's end,
    where the handler it would have run runs (KeyboardInterrupt). Only in the main thread, where
    Python runs signal handlers; nested blocks hold it once."""
    handler = signal.getsignal(signal.SIGINT)
    main = threading.current_thread() is threading.main_thread()
    if not main or not callable(handler) or getattr(_local, "held", None) is not None:
        yield
        return
    held = _Held(handler, [])
    try:  # an interrupt between any two of these lines leaves the state as it was
        _local.held = held
        signal.signal(signal.SIGINT, lambda signum, frame: held.pending.append((signum, frame)))
        yield
    finally:
        _local.held = None
        signal.signal(signal.SIGINT, handler)
        if held.pending:
            handler(*held.pending[0])


def _deliver_interrupt() -> None:
    """Run the handler of a held-back Ctrl-C now (it raises KeyboardInterrupt)."""
    held = getattr(_local, "held", None)
    if held is not None and held.pending:
        held.handler(*held.pending.pop(0))


# ---- ending the threads of a block -----------------------------------------------------------


def _async_raise(thread: threading.Thread) -> bool:
    """Raise Stopped inside the thread; False when it is not running yet (no ident)."""
    if thread.ident is None:
        return False
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(Stopped)
    )
    return True


def _quiet_hook(previous):
    """A threading.excepthook / sys.unraisablehook that ignores Stopped (a thread that gets it
    outside the kernel, e.g. in a garbage-collector callback, ends or runs on quietly)."""

    def hook(args):
        if args.exc_type is not Stopped:
            previous(args)

    return hook


def stop(threads, block=None) -> list:
    """End every thread of a block: wake the waiting ones (abort flag), raise Stopped inside the
    running ones, and wait up to STOP_WAIT_S for all of them to end (Ctrl-C is held back
    meanwhile). Returns the threads still alive (none, unless one is stuck outside Python)."""
    threads = list(threads)
    with held_interrupts():
        for t in threads:
            t.abort = True
            t.syncthreads_blocked = False
            t.syncthreads_event.set()
        if block is not None:
            block.abort()
        alive = _unfinished(threads)
        if alive:
            alive = _end(alive)
    if alive:
        warnings.warn(
            f"{len(alive)} simulator thread(s) did not stop within {STOP_WAIT_S:g} s; if later "
            "launches are slow, restart the kernel",
            RuntimeWarning,
            stacklevel=2,
        )
    return alive


def _unfinished(threads) -> list:
    """The threads started and not yet ended (threading.enumerate() lists those still starting)."""
    running = set(threading.enumerate())
    return [t for t in threads if t in running]


def _end(alive) -> list:
    """Raise Stopped in each thread (again, after RAISE_AGAIN_S, in those that have not caught
    it) and wait until they have all ended, or STOP_WAIT_S has passed."""
    previous, unraisable = threading.excepthook, sys.unraisablehook
    threading.excepthook = _quiet_hook(previous)
    sys.unraisablehook = _quiet_hook(unraisable)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, 0.001))  # hand the GIL round quickly: each thread ends
    try:
        deadline = _wall_clock() + STOP_WAIT_S
        raised: dict = {}  # thread -> when Stopped was last raised in it
        while alive and _wall_clock() < deadline:
            now = _wall_clock()
            for t in alive:
                caught = getattr(t, "exception", None) is not None  # it is ending
                if not caught and now - raised.get(t, -math.inf) >= RAISE_AGAIN_S:
                    if _async_raise(t):
                        raised[t] = now
            for t in alive:
                if t.is_alive():
                    t.join(max(0.0, min(0.05, deadline - _wall_clock())))
                else:
                    time.sleep(0.001)  # not yet running: it ends once it starts
            alive = _unfinished(alive)
    finally:
        sys.setswitchinterval(switch)
        threading.excepthook, sys.unraisablehook = previous, unraisable
    return alive


# ---- where the threads were, and why ---------------------------------------------------------


def _user_frame(frame):
    """The innermost frame of the kernel (or a device function), past the simulator's own."""
    while frame is not None:
        name = frame.f_code.co_filename
        if not (
            name.startswith(_OURS)
            or "numba" in name
            or os.sep + "numpy" + os.sep in name
            or name.endswith("threading.py")
        ):
            return frame
        frame = frame.f_back
    return None


def _after(current: _Limit, cpu: float, wall: float) -> str:
    """'after 30 s of CPU time (...)', or the backstop's words when the wall clock ran out."""
    how = f"limit_s= or {ENVIRONMENT} changes it"
    if cpu >= current.seconds:
        return (
            f"after {current.seconds:g} s of CPU time (the time limit of a simulated launch: {how})"
        )
    return (
        f"after {wall:.3g} s on the clock, having used {cpu:.3g} of its {current.seconds:g} s of "
        f"CPU time (a launch that waits without working stops at {BACKSTOP_TIMES} times the "
        f"limit, at least {BACKSTOP_MIN_S:g} s: {how})"
    )


def timeout_error(threads, current: _Limit, cpu=None, wall=0.0) -> LaunchTimeout:
    """The LaunchTimeout for threads still running at the deadline (`cpu` and `wall` seconds
    used; cpu None: the limit): where they are, and why."""
    frames = sys._current_frames()
    places: Counter = Counter()
    for t in threads:
        if t.is_alive() and not t.syncthreads_blocked:
            frame = _user_frame(frames.get(t.ident))
            if frame is not None:
                places[(frame.f_code.co_filename, frame.f_lineno)] += 1
    name = getattr(current.kernel, "__name__", "the kernel")
    after = _after(current, current.seconds if cpu is None else cpu, wall)
    if not places:
        return LaunchTimeout(f"{name} was still running {after}")
    (file, line), count = places.most_common(1)[0]
    text = linecache.getline(file, line).strip()
    running = sum(places.values())
    why = loop_reason(file, line)
    where = f"line {line}" + (f" `{text}`" if text else "")
    if why:
        message = (
            f"{name} was stopped {after}: {why}; {count} of {running} running "
            f"threads were at {where}"
        )
    else:
        message = (
            f"{name} was stopped {after}: threads were still running {where} "
            f"({count} of {running} running threads)"
        )
    return LaunchTimeout(message, line, file)


def _names_loaded(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _names_assigned(nodes) -> set:
    found = set()
    for node in nodes:
        for n in ast.walk(node):
            targets = []
            if isinstance(n, ast.Assign):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                targets = [n.target]
            elif isinstance(n, (ast.For, ast.comprehension)):
                targets = [n.target]
            for target in targets:
                found |= _target_names(target)
    return found


def _target_names(target) -> set:
    """The variables an assignment target rebinds (not those inside `a[i] = ...`)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(t) for t in target.elts))
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _counters(tree, loop) -> set:
    """The names the loop's condition reads as numbers that could end it: not an array (`out`
    in `out.size`, `len(out)`, `x[i]`), not a function it calls; the kernel's own variables
    (`i`) before its parameters (`n`, a bound), and module constants only when nothing else."""
    test = loop.test
    arrays = {
        n.value.id
        for n in ast.walk(test)
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.value, ast.Name)
    }
    for call in (n for n in ast.walk(test) if isinstance(n, ast.Call)):
        arrays |= _names_loaded(call.func)
        if getattr(call.func, "id", None) == "len":
            arrays |= {a.id for a in call.args if isinstance(a, ast.Name)}
    read = _names_loaded(test) - arrays - {"cuda", "True", "False"}
    functions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and n.lineno <= loop.lineno <= (n.end_lineno or 0)
    ]
    if not functions:
        return read
    function = max(functions, key=lambda n: n.lineno)
    parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    local = read & (_names_assigned(function.body) - parameters)
    return local or (read & parameters) or read


def loop_reason(file: str, line: int) -> str:
    """Why the `while` loop around `line` never ends, when its source says so (else '')."""
    source = "".join(linecache.getlines(file))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ""
    loops = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.While) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    if not loops:
        return ""
    loop = max(loops, key=lambda n: n.lineno)  # the innermost
    condition = ast.get_source_segment(source, loop.test) or "its condition"
    if isinstance(loop.test, ast.Constant) and loop.test.value:
        return f"the loop at line {loop.lineno} (`while {condition}`) has no end"
    changed = _names_assigned(loop.body + [loop.test])
    read = sorted(_counters(tree, loop) - changed)
    memory = any(isinstance(n, ast.Subscript) for n in ast.walk(loop.test))
    if _names_loaded(loop.test) & changed:
        return ""
    if memory:
        return (
            f"the loop at line {loop.lineno} waits for `{condition}` to change, and nothing "
            "changes it while the block runs (blocks run one at a time in the simulator; on a "
            "GPU a block that waits for another block may hang too)"
        )
    if not read:
        return ""
    names = ", ".join(read)
    return (
        f"the loop at line {loop.lineno} never advances {names}: nothing in its body assigns "
        f"{'it' if len(read) == 1 else 'them'}, so `{condition}` stays true for ever"
    )

"""A time limit on graded and traced launches in the simulator, and a clean stop.

Numba's simulator runs one Python thread per CUDA thread. A kernel that never ends (a grid-stride
loop without ``i += stride``) would spin for ever, and interrupting the notebook (Ctrl-C,
Jupyter's interrupt) used to stop only the main thread, leaving the kernel's threads spinning and
every later launch slow. Here:

- `limit(seconds, kernel)` (the graders and the tracer wrap each launch in it) sets a deadline;
  the simulator's block manager (patched by `simwarp`) calls `tick` while the block's threads run,
  and past the deadline `LaunchTimeout` is raised, naming the line where the threads spin and,
  when the source says it, why ("the loop at line 7 never advances i");
- whatever ends a block early (the time limit, KeyboardInterrupt, an exception in one thread),
  `stop` ends every thread of the block: waiting threads are woken with their abort flag set,
  running ones get an exception raised inside them (CPython's PyThreadState_SetAsyncExc, the
  only way to stop a Python thread from outside; it costs nothing while the kernel runs).

The default limit is `DEFAULT_S` seconds per launch, or the environment variable
``GPGPU_LAUNCH_LIMIT_S``; ``limit(None)`` uses it, ``limit(0)`` means no limit.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import linecache
import os
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass

DEFAULT_S = 30.0  # the slowest reference solution launch: 0.42 s on a loaded 2-core machine
ENVIRONMENT = "GPGPU_LAUNCH_LIMIT_S"
STOP_WAIT_S = 1.5  # how long `stop` waits for the threads of a block to end

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


class Stopped(Exception):
    """Raised inside a simulator thread to end it (a subclass of Exception: the simulator's
    thread wrapper catches it and the thread ends quietly)."""


def default_limit() -> float:
    """Seconds a graded or traced launch may take: GPGPU_LAUNCH_LIMIT_S, else DEFAULT_S."""
    text = os.environ.get(ENVIRONMENT, "").strip()
    if not text:
        return DEFAULT_S
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"{ENVIRONMENT}={text!r}: give the time limit of a simulated launch in seconds "
            "(0 for none)"
        ) from None
    if value < 0:
        raise ValueError(f"{ENVIRONMENT}={text!r}: the time limit must be >= 0 (0 for none)")
    return value


@dataclass
class _Limit:
    seconds: float
    deadline: float
    kernel: object  # the kernel's Python function (for its name)


@contextlib.contextmanager
def limit(seconds: float | None = None, kernel=None):
    """Launches made inside this block raise LaunchTimeout after `seconds` (None: the default;
    0: no limit). Nested limits: the innermost applies."""
    if seconds is None:
        seconds = default_limit()
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise ValueError(
            f"limit_s={seconds!r}: give the time limit of a launch in seconds (0 for none)"
        )
    previous = getattr(_local, "limit", None)
    deadline = time.monotonic() + seconds if seconds else float("inf")
    _local.limit = _Limit(float(seconds), deadline, getattr(kernel, "py_func", kernel))
    try:
        yield
    finally:
        _local.limit = previous


def tick(threads) -> None:
    """Called by the block manager while `threads` run: past the deadline, stop them and raise."""
    current = getattr(_local, "limit", None)
    if current is None or time.monotonic() < current.deadline:
        return
    error = timeout_error(threads, current)
    stop(threads)
    raise error


def _async_raise(thread: threading.Thread) -> None:
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(Stopped)
        )


def _quiet_hook(previous):
    """A threading.excepthook / sys.unraisablehook that ignores Stopped (a thread that gets it
    outside the kernel, e.g. in a garbage-collector callback, ends or runs on quietly)."""

    def hook(args):
        if args.exc_type is not Stopped:
            previous(args)

    return hook


def stop(threads, block=None) -> list:
    """End every thread of a block: wake the waiting ones (abort flag), raise Stopped inside the
    running ones, and wait up to STOP_WAIT_S for all of them. Returns the threads still alive."""
    threads = list(threads)
    for t in threads:
        t.abort = True
        t.syncthreads_blocked = False
        t.syncthreads_event.set()
    if block is not None:
        block.abort()
    alive = [t for t in threads if t.is_alive()]
    if not alive:
        return []
    previous, unraisable = threading.excepthook, sys.unraisablehook
    threading.excepthook = _quiet_hook(previous)
    sys.unraisablehook = _quiet_hook(unraisable)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, 0.001))  # hand the GIL round quickly: each thread ends
    try:
        deadline = time.monotonic() + STOP_WAIT_S
        for attempt in range(3):
            for t in alive:
                _async_raise(t)
            for t in alive:
                t.join(max(0.0, (deadline - time.monotonic()) / (3 - attempt)))
            alive = [t for t in alive if t.is_alive()]
            if not alive:
                break
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


def timeout_error(threads, current: _Limit) -> LaunchTimeout:
    """The LaunchTimeout for threads still running at the deadline: where they are, and why."""
    frames = sys._current_frames()
    places: Counter = Counter()
    for t in threads:
        if t.is_alive() and not t.syncthreads_blocked:
            frame = _user_frame(frames.get(t.ident))
            if frame is not None:
                places[(frame.f_code.co_filename, frame.f_lineno)] += 1
    name = getattr(current.kernel, "__name__", "the kernel")
    seconds = f"{current.seconds:g} s"
    how = f"(the time limit of a simulated launch: limit_s= or {ENVIRONMENT} changes it)"
    if not places:
        return LaunchTimeout(f"{name} was still running after {seconds} {how}")
    (file, line), count = places.most_common(1)[0]
    text = linecache.getline(file, line).strip()
    running = sum(places.values())
    why = loop_reason(file, line)
    where = f"line {line}" + (f" `{text}`" if text else "")
    if why:
        message = (
            f"{name} was stopped after {seconds} {how}: {why}; {count} of {running} running "
            f"threads were at {where}"
        )
    else:
        message = (
            f"{name} was stopped after {seconds} {how}: threads were still running {where} "
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
    read = sorted(_names_loaded(loop.test) - changed - {"cuda", "True", "False"})
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

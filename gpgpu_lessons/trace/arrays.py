"""Recorded arrays: NumPy arrays whose every load and store inside a traced kernel is logged.

A record is the tuple ``(thread, view, op, index, code, lasti, line, value)``: the thread
(linear id in its block), the view (how the array is addressed: `View`), LOAD / STORE / ATOMIC
(or BARRIER, SYNCWARP, BLOCK for events), the index as the kernel wrote it, where (the code
object, the bytecode offset and the line), and the value a store wrote (None otherwise).
`accesses.py` turns the list of records into columns.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from dataclasses import dataclass

import numpy as np

LOAD, STORE, ATOMIC, BARRIER, SYNCWARP, BLOCK = range(6)
OPS = ("load", "store", "atomic")
SPACES = ("global", "shared", "constant", "local")
GLOBAL, SHARED, CONSTANT, LOCAL = SPACES
ALIGNMENT = {GLOBAL: 256, SHARED: 128, CONSTANT: 256, LOCAL: 256}  # where simulated arrays start

_getframe = sys._getframe
_current_thread = threading.current_thread


class TraceError(Exception):
    """The tracer cannot run this kernel or launch (the message says why and what to do)."""


class UnsupportedError(TraceError):
    """The kernel uses a feature the tracer (or Numba's simulator) does not support."""


@dataclass
class View:
    """One way of addressing memory: an array (or a slice, a record field, a wide access of it)."""

    id: int
    name: str
    space: str
    dtype: np.dtype
    shape: tuple
    strides: tuple
    base: int  # simulated byte address of element 0 (local: offset in the thread's slot)
    size: int  # bytes one access moves
    parent: int | None = None  # the view it was derived from (the array as the kernel sees it)
    wide: bool = False  # several elements moved as one access (device.vector)


@dataclass
class OutOfBounds:
    """An index outside an array: recorded, and the access skipped (loads return 0 or NaN)."""

    view: int
    op: int
    index: object
    block: tuple
    thread: int
    code: types.CodeType
    line: int


class Recorded:
    """An array inside a traced kernel: indexing reads or writes the NumPy array and logs it."""

    __slots__ = ("_append", "_ary", "_tracer", "_view")

    def __init__(self, ary: np.ndarray, view: int, tracer: Tracer):
        self._ary = ary
        self._view = view
        self._tracer = tracer
        self._append = tracer.records.append

    def __getitem__(self, idx):
        try:
            value = self._ary[idx]
        except IndexError:
            return self._tracer.out_of_bounds(self, idx, LOAD, _getframe(1))
        if type(value) is np.ndarray:
            return self._tracer.subarray(self, value)
        if type(value) is np.void:
            return RecordRef(self, idx)
        frame = _getframe(1)
        if (idx < 0) if type(idx) is int else _negative(idx):
            self._tracer.negative_index(self, idx, LOAD, frame)
        if frame.f_code in self._tracer.vector_codes:
            return self._tracer.vector_access(self, idx, LOAD, frame, value)
        self._append(
            (
                _current_thread().thread_id,
                self._view,
                LOAD,
                idx,
                frame.f_code,
                frame.f_lasti,
                frame.f_lineno,
                None,
            )
        )
        return value

    def __setitem__(self, idx, value):
        tracer = self._tracer
        try:
            self._ary[idx] = value
        except IndexError:
            tracer.out_of_bounds(self, idx, STORE, _getframe(1))
            return
        frame = _getframe(1)
        if (idx < 0) if type(idx) is int else _negative(idx):
            tracer.negative_index(self, idx, STORE, frame)
        if frame.f_code in tracer.vector_codes:
            tracer.vector_access(self, idx, STORE, frame, value)
            return
        self._append(
            (
                _current_thread().thread_id,
                self._view,
                STORE,
                idx,
                frame.f_code,
                frame.f_lasti,
                frame.f_lineno,
                value,
            )
        )

    def load(self, idx, frame):
        """Read element idx (or a slice), logging it at `frame`'s line."""
        try:
            value = self._ary[idx]
        except IndexError:
            return self._tracer.out_of_bounds(self, idx, LOAD, frame)
        if type(value) is np.ndarray:
            return self._tracer.subarray(self, value)
        if (idx < 0) if type(idx) is int else _negative(idx):
            self._tracer.negative_index(self, idx, LOAD, frame)
        self._append(
            (
                _current_thread().thread_id,
                self._view,
                LOAD,
                idx,
                frame.f_code,
                frame.f_lasti,
                frame.f_lineno,
                None,
            )
        )
        return value

    def store(self, idx, value, frame):
        """Write element idx, logging it at `frame`'s line."""
        try:
            self._ary[idx] = value
        except IndexError:
            self._tracer.out_of_bounds(self, idx, STORE, frame)
            return
        if (idx < 0) if type(idx) is int else _negative(idx):
            self._tracer.negative_index(self, idx, STORE, frame)
        self._append(
            (
                _current_thread().thread_id,
                self._view,
                STORE,
                idx,
                frame.f_code,
                frame.f_lasti,
                frame.f_lineno,
                value,
            )
        )

    def __iter__(self):
        for i in range(len(self._ary)):
            yield self.load(i, _getframe(1))

    def __len__(self):
        return len(self._ary)

    @property
    def shape(self):
        from numba.cuda.simulator.cudadrv.devicearray import FakeShape

        return FakeShape(self._ary.shape)

    @property
    def size(self):
        return self._ary.size

    @property
    def ndim(self):
        return self._ary.ndim

    @property
    def dtype(self):
        return self._ary.dtype

    def __getattr__(self, name):
        if self._ary.dtype.names and name in self._ary.dtype.names:
            return self._tracer.field(self, name)
        value = getattr(self._ary, name)
        if isinstance(value, np.ndarray) and np.shares_memory(value, self._ary):
            return self._tracer.subarray(self, value)  # a.T, a.real, a.imag
        return value

    def __repr__(self):
        view = self._tracer.views[self._view]
        return f"<traced {view.space} array '{view.name}' {self._ary.shape} {self._ary.dtype}>"


class ReadOnly(Recorded):
    """A constant-memory array: reads are recorded, a write is an error (as on a GPU)."""

    __slots__ = ()

    def __setitem__(self, idx, value):
        self.store(idx, value, None)

    def store(self, idx, value, frame):
        view = self._tracer.views[self._view]
        raise UnsupportedError(
            f"constant array '{view.name}' is read-only: a GPU kernel cannot write constant memory"
        )


class RecordRef:
    """Element `idx` of a structured array: reading or writing a field records that field only."""

    __slots__ = ("_array", "_idx")

    def __init__(self, array: Recorded, idx):
        object.__setattr__(self, "_array", array)
        object.__setattr__(self, "_idx", idx)

    def __getattr__(self, name):
        return self._array._tracer.field(self._array, name).load(self._idx, _getframe(1))

    def __getitem__(self, name):
        return self._array._tracer.field(self._array, name).load(self._idx, _getframe(1))

    def __setattr__(self, name, value):
        self._array._tracer.field(self._array, name).store(self._idx, value, _getframe(1))

    __setitem__ = __setattr__


@functools.cache
def _positions(code: types.CodeType) -> tuple:
    return tuple(code.co_positions())


def instruction_at(code: types.CodeType, lasti: int) -> tuple:
    """The source span (line, end line, column, end column) of the instruction at offset `lasti`.

    The interpreter (3.11+) reports different offsets for one instruction before and after it
    specialises it (an offset in its inline cache, or the PRECALL of a CALL); all of them have
    the span of the expression, which two different accesses on one line do not share. Python
    3.10 neither specialises nor has spans: there the offset itself names the instruction.
    """
    if not hasattr(code, "co_positions"):
        return (lasti,)
    return _positions(code)[lasti // 2]


def _root(ary: np.ndarray) -> np.ndarray:
    """The array that owns the memory `ary` views (so aliased arguments share addresses)."""
    while isinstance(ary.base, np.ndarray):
        ary = ary.base
    return ary


def pointer(ary: np.ndarray) -> int:
    """The address of ary's first byte in host memory."""
    return ary.__array_interface__["data"][0]


def _poison(dtype: np.dtype):
    """What an out-of-bounds load returns: NaN for floats (visible in results), 0 otherwise."""
    if dtype.kind in "fc":
        return dtype.type("nan")
    return np.zeros((), dtype)[()]


class Tracer:
    """The state of one traced launch: records, views, simulated address spaces."""

    def __init__(self, kernel_name: str, vector_codes: frozenset):
        self.kernel_name = kernel_name
        self.records: list = []
        self.views: list[View] = []
        self.oob: list[OutOfBounds] = []
        self.negative: list[OutOfBounds] = []  # negative indices (they wrap, as in NumPy)
        self.vector_codes = vector_codes
        self.block_point: tuple = (0, 0, 0)
        self._bases: dict = {}  # (space, root pointer) -> simulated base address
        self._next: dict = {space: 0 for space in SPACES}
        self._derived: dict = {}  # (parent view, kind, key) -> view id
        self._keep: list = []  # roots kept alive so that their pointers stay unique
        self._lock = threading.RLock()  # the simulated threads register views concurrently

    # -- views ----------------------------------------------------------------------------

    def once(self, cache: dict, key, make):
        """cache[key], made by make() the first time (threads racing for it get the same)."""
        found = cache.get(key)
        if found is None:
            with self._lock:
                found = cache.get(key)
                if found is None:
                    found = cache[key] = make()
        return found

    def _base(self, space: str, ary: np.ndarray) -> int:
        """Simulated address of ary[0...]: its root gets an aligned range of its space."""
        root = _root(ary)
        key = (space, pointer(root))

        def allocate():
            align = ALIGNMENT[space]
            start = -(-self._next[space] // align) * align
            self._next[space] = start + max(root.nbytes, 1)
            self._keep.append(root)
            return start

        return self.once(self._bases, key, allocate) + pointer(ary) - key[1]

    def view(self, ary: np.ndarray, name: str, space: str, *, parent=None, base=None) -> int:
        """Register a view of `ary` and return its id."""
        with self._lock:
            if base is None:
                base = 0 if space == LOCAL else self._base(space, ary)
            view = View(
                len(self.views),
                name,
                space,
                ary.dtype,
                ary.shape,
                ary.strides,
                base,
                ary.dtype.itemsize,
                parent,
            )
            self.views.append(view)
            return view.id

    def wrap(self, ary: np.ndarray, name: str, space: str) -> Recorded:
        """A recorded array for `ary` in `space`."""
        kind = ReadOnly if space == CONSTANT else Recorded
        return kind(ary, self.view(ary, name, space), self)

    def subarray(self, parent: Recorded, ary: np.ndarray) -> Recorded:
        """A slice of a recorded array (a row, a window): same memory, its own shape."""
        view = self.views[parent._view]
        if not np.may_share_memory(ary, parent._ary):
            raise UnsupportedError(
                f"array '{view.name}' indexed with an array or a list: a GPU "
                "kernel indexes arrays with integers and slices"
            )
        if view.space == LOCAL:
            raise UnsupportedError(
                f"slicing local array '{view.name}' is not supported by the tracer"
            )
        offset = pointer(ary) - pointer(parent._ary)
        key = (parent._view, "slice", offset, ary.shape, ary.strides)
        derived = self.once(
            self._derived,
            key,
            lambda: self.view(ary, view.name, view.space, parent=view.id, base=view.base + offset),
        )
        return type(parent)(ary, derived, self)

    def field(self, parent: Recorded, name: str) -> Recorded:
        """Field `name` of a structured array, as an array of its own."""
        view = self.views[parent._view]
        ary = parent._ary[name]
        offset = parent._ary.dtype.fields[name][1]
        derived = self.once(
            self._derived,
            (parent._view, "field", name),
            lambda: self.view(
                ary, f"{view.name}.{name}", view.space, parent=view.id, base=view.base + offset
            ),
        )
        return type(parent)(ary, derived, self)

    def wide(self, view_id: int, count: int) -> int:
        """The view for `count` neighbouring elements moved as one access (device.vector)."""

        def make():
            view = self.views[view_id]
            wide = View(
                len(self.views),
                view.name,
                view.space,
                view.dtype,
                view.shape,
                view.strides,
                view.base,
                view.size * count,
                view_id,
                wide=True,
            )
            self.views.append(wide)
            return wide.id

        return self.once(self._derived, (view_id, "wide", count), make)

    # -- accesses the arrays hand over ---------------------------------------------------

    def vector_access(self, array: Recorded, idx, op: int, frame, value):
        """An element access inside device.vector's helpers: one wide access at the caller."""
        inner = frame
        while frame.f_code in self.vector_codes:
            outer, frame = frame, frame.f_back
        if inner.f_locals.get("j", 0) == 0:
            values = outer.f_locals.get("values")
            count = len(values) if "n" not in outer.f_locals else outer.f_locals["n"]
            self.records.append(
                (
                    _current_thread().thread_id,
                    self.wide(array._view, count),
                    op,
                    idx,
                    frame.f_code,
                    frame.f_lasti,
                    frame.f_lineno,
                    tuple(values) if op == STORE else None,
                )
            )
        return value

    def out_of_bounds(self, array: Recorded, idx, op: int, frame):
        """Record an index outside the array; a load returns NaN (floats) or 0."""
        view = self.views[array._view]
        _check_index(idx, view)
        self.oob.append(
            OutOfBounds(
                array._view,
                op,
                idx,
                self.block_point,
                _current_thread().thread_id,
                frame.f_code,
                frame.f_lineno,
            )
        )
        return _poison(array._ary.dtype)

    def negative_index(self, array: Recorded, idx, op: int, frame) -> None:
        """Record a negative index: the access goes ahead, wrapped as Numba wraps it."""
        self.negative.append(
            OutOfBounds(
                array._view,
                op,
                idx,
                self.block_point,
                _current_thread().thread_id,
                frame.f_code,
                frame.f_lineno,
            )
        )

    def event(self, op: int, detail=None) -> None:
        """A barrier or syncwarp of the calling thread, at the caller's caller's line."""
        frame = _getframe(2)
        self.records.append(
            (
                _current_thread().thread_id,
                -1,
                op,
                detail,
                frame.f_code,
                frame.f_lasti,
                frame.f_lineno,
                None,
            )
        )


_INTEGERS = (int, np.integer)


def _negative(idx) -> bool:
    """True when an index (an integer or a tuple of them and slices) has a negative integer."""
    if type(idx) is not tuple:
        return isinstance(idx, _INTEGERS) and idx < 0
    for part in idx:  # a loop, not any(...): this runs on every traced access
        if isinstance(part, _INTEGERS) and part < 0:
            return True
    return False


def _check_index(idx, view: View) -> None:
    """Raise a clear error for an index a GPU kernel could not use (not an out-of-bounds one)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    for part in parts:
        if not isinstance(part, (int, np.integer, slice)):
            raise UnsupportedError(
                f"array '{view.name}' indexed with {idx!r}: a kernel indexes arrays with integers "
                "(a float or an array index would not compile for a GPU)"
            )


# ----------------------------------------------------------------------------------------------

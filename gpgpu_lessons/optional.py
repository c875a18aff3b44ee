"""Optional packages a lesson compares with (CuPy), imported only where they can run."""

from __future__ import annotations

import importlib
from types import ModuleType

from . import runtime


def cupy() -> tuple[ModuleType | None, str]:
    """(the cupy module, '') on a GPU with CuPy installed; else (None, why it is not used)."""
    if runtime.is_simulator():
        return None, "CuPy needs a GPU: this machine runs the simulator"
    try:
        return importlib.import_module("cupy"), ""
    except ImportError:
        return None, "CuPy is not installed here: pip install cupy-cuda12x"

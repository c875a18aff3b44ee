"""The lesson packages' modules of one name, found by scanning (a new lesson needs no edit here).

The tools read what each lesson declares for them: `TUNING` in `lNN_topic/fast.py` (tune.py),
`BENCH` in `lNN_topic/bench.py` (bench/families.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from types import ModuleType

import gpgpu_lessons

LESSON = re.compile(r"l\d\d_\w+")  # a lesson package: l03_bank_conflicts


def lesson_modules(name: str) -> list[ModuleType]:
    """Every lesson's module `name` ("fast", "bench"), imported, in lesson order."""
    found = []
    for info in sorted(pkgutil.iter_modules(gpgpu_lessons.__path__), key=lambda i: i.name):
        if not (info.ispkg and LESSON.fullmatch(info.name)):
            continue
        full = f"gpgpu_lessons.{info.name}.{name}"
        if importlib.util.find_spec(full) is not None:
            found.append(importlib.import_module(full))
    return found

"""What a compiled kernel's PTX holds: its loads and stores, .const/.shared/.local arrays, FMAs.

Read by lesson 04 (where a kernel keeps its filter) and by the PTX checks of the tools
(gpgpu_tools.ptx), which compile every kernel for the GPUs students have.
"""

from __future__ import annotations

import re
from collections import Counter

_MEMORY_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?((?:ld|st)\.[\w.]+)", re.M)
_DECLARATION = re.compile(
    r"^\s*(?:\.(?:visible|extern|weak)\s+)*\.(const|shared|local)\s+(?:\.align\s+\d+\s+)?"
    r"\.([bfsu]\d+)\s+([\w$]+)((?:\[\d*\])*)",
    re.M,
)


def memory_instructions(ptx: str) -> Counter:
    """How often each load and store instruction occurs: {'ld.global.v4.f32': 2, ...}."""
    return Counter(_MEMORY_INSTRUCTION.findall(ptx))


def access_bytes(instruction: str) -> int:
    """Bytes one thread moves with one load or store: 'ld.global.nc.v4.u32' -> 16."""
    parts = instruction.split(".")
    lanes = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
    bits = next((int(p[1:]) for p in reversed(parts) if re.fullmatch(r"[bfsu]\d+", p)), 0)
    return lanes * bits // 8


def wide_accesses(ptx: str, nbytes: int = 16) -> set[str]:
    """The global loads and stores that move nbytes per thread in one instruction."""
    return {op for op in memory_instructions(ptx) if ".global" in op and access_bytes(op) == nbytes}


def declarations(ptx: str, space: str) -> list[tuple[str, int]]:
    """(name, bytes) of every array declared in a state space: 'const', 'shared' or 'local'.

    An array of unknown size (dynamic shared memory, `[]`) counts 0 bytes.
    """
    found = []
    for declared_space, kind, name, dims in _DECLARATION.findall(ptx):
        if declared_space == space:
            sizes = [int(d) if d else 0 for d in re.findall(r"\[(\d*)\]", dims)] or [1]
            count = 1
            for size in sizes:
                count *= size
            found.append((name, count * int(kind[1:]) // 8))
    return found


def const_arrays(ptx: str) -> list[tuple[str, int]]:
    """The __constant__ arrays (.const declarations) of a PTX: [(name, bytes), ...]."""
    return declarations(ptx, "const")


def local_bytes(ptx: str) -> int:
    """Bytes of local memory (a .local depot) a PTX declares: 0 when everything is in registers."""
    return sum(size for _, size in declarations(ptx, "local"))


def static_shared_bytes(ptx: str) -> int:
    """Bytes of static shared memory a PTX declares (one kernel per PTX: per block)."""
    return sum(size for _, size in declarations(ptx, "shared"))


def loads_before_first_store(ptx: str) -> int:
    """Global loads written before the first global store: the loads a thread has in flight."""
    count = 0
    for op in _MEMORY_INSTRUCTION.findall(ptx):
        if op.startswith("st.global"):
            break
        count += op.startswith("ld.global")
    return count


_FMA = re.compile(r"^\s*(?:@!?%\w+\s+)?fma\.rn\.f(?:32|64)\s+[^,]+,([^;]*);", re.M)


def immediate_fmas(ptx: str) -> int:
    """Multiply-adds with an immediate multiplier (`fma.rn.f32 %f3, %f2, 0f3F800000, %f1`): a
    weight the compiler wrote into the instruction."""
    found = 0
    for operands in _FMA.findall(ptx):
        factors = [o.strip() for o in operands.split(",")][:2]
        found += any(f.startswith(("0f", "0d")) for f in factors)
    return found


def summary(ptx: str) -> dict:
    """The facts the checks read from one PTX (JSON-ready)."""
    return {
        "instructions": dict(memory_instructions(ptx)),
        "loads_before_first_store": loads_before_first_store(ptx),
        "immediate_fmas": immediate_fmas(ptx),
        "const_arrays": const_arrays(ptx),
        "local_bytes": local_bytes(ptx),
        "shared_bytes": static_shared_bytes(ptx),
    }

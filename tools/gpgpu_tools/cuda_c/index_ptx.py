"""What unsigned indices change in the PTX of lesson 03's padded transpose.

`python -m gpgpu_tools.cuda_c.index_ptx --into gpgpu_lessons/recorded/yardstick/<gpu>.json
[--cc 9.0]` compiles the textbook `transpose_padded` and spellings.padded_unsigned for that
compute capability (no GPU needed: Numba's compiler alone) and writes, under the record's
"ptx" key, each kernel's instruction count, its negative-index wraparounds (Numba's
`i < 0 ? i + n : i`, spelt `shr.s64 ..., 63` then and, add; for the shared tile, an and with
the sign bit then shift, add) and the instructions that move the tile's second row (from the
first shared store to the second, both included). Lesson 03 shows them beside the
yardstick's times (`profiling.index_ptx`); the yardstick's GPU run writes the same facts for
the GPU it runs on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from numba import cuda

from gpgpu_lessons import runtime
from gpgpu_lessons.l03_bank_conflicts import textbook as transposes

from . import spellings

KERNELS = {
    "padded": transposes.transpose_padded,
    "padded, unsigned indices": spellings.padded_unsigned,
}
_INSTRUCTION = re.compile(r"^\s+(?:@!?%\w+\s+)?[a-z][\w.]*[\s;]")
_WRAPAROUND = re.compile(r"^(shr\.s64 %\w+, %\w+, 63|and\.b64 %\w+, %\w+, -9223372036854775808);")


def instructions(ptx: str) -> list[str]:
    """The PTX's instruction lines, one space apart (no directives, labels, braces, comments)."""
    return [" ".join(line.split()) for line in ptx.splitlines() if _INSTRUCTION.match(line)]


def facts(ptx: str) -> dict:
    """Instruction count, wraparounds, and the instructions moving the tile's second row."""
    lines = instructions(ptx)
    stores = [i for i, line in enumerate(lines) if line.startswith("st.shared")]
    return {
        "instructions": len(lines),
        "wraparounds": sum(bool(_WRAPAROUND.match(line)) for line in lines),
        "second_row": lines[stores[0] + 1 : stores[1] + 1] if len(stores) > 1 else [],
    }


def compiled(cc: tuple[int, int]) -> dict:
    """The "ptx" entry of a yardstick record: facts of each kernel compiled for cc."""
    from numba_cuda import __version__ as numba_cuda_version

    kernels = {
        name: facts(cuda.compile_ptx(kernel.py_func, spellings.MATRIX, cc=cc)[0])
        for name, kernel in KERNELS.items()
    }
    return {"cc": f"{cc[0]}.{cc[1]}", "numba_cuda": numba_cuda_version, "kernels": kernels}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpgpu_tools.cuda_c.index_ptx")
    parser.add_argument("--into", type=Path, required=True, help="a yardstick record to update")
    parser.add_argument("--cc", default="9.0", help="compute capability (default: %(default)s)")
    args = parser.parse_args(argv)
    if runtime.MODE not in (runtime.GPU, runtime.COMPILE_ONLY):  # the simulator has no compiler
        env = {**os.environ, runtime.COMPILE_ONLY_VARIABLE: "1", "GPGPU_LESSONS_QUIET": "1"}
        argv = sys.argv[1:] if argv is None else list(argv)
        return subprocess.call(
            [sys.executable, "-m", "gpgpu_tools.cuda_c.index_ptx", *argv], env=env
        )
    major, minor = (int(part) for part in args.cc.split("."))
    record = json.loads(args.into.read_text())
    record["ptx"] = compiled((major, minor))
    args.into.write_text(json.dumps(record, indent=1) + "\n")
    for name, kernel in record["ptx"]["kernels"].items():
        print(f"{name}: {kernel['instructions']} instructions, {kernel['wraparounds']} wraparounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

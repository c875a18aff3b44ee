"""What every NVIDIA GPU the lessons run on shares: warps, banks, sectors, launch limits.

One home for the hardware's numbers, so that a lesson, the tracer and the launch checks never
write 32 or 0xFFFFFFFF again. `filled_grid` sizes a grid-stride launch to fill the GPU once.
"""

from __future__ import annotations

from . import runtime

WARP_SIZE = 32  # threads of a warp, which issue one instruction together
FULL_MASK = 0xFFFFFFFF  # every lane of a warp, for the *_sync warp intrinsics
BANKS = 32  # shared-memory banks
BANK_BYTES = 4  # each bank delivers one 4-byte word per cycle
WAVEFRONT_BYTES = BANKS * BANK_BYTES  # one shared-memory wavefront serves at most 128 bytes
SECTOR_BYTES = 32  # the unit global memory moves through L1/L2
LINE_BYTES = 128  # a cache line: four sectors
MAX_THREADS_PER_BLOCK = 1024
MAX_THREADS_PER_SM = 2048  # resident threads an SM holds (every GPU since Volta except Turing)
MAX_GRID_X = 2**31 - 1  # blocks along x
MAX_GRID_YZ = 65535  # blocks along y and z
STATIC_SHARED_MEMORY_BYTES = 48 * 1024  # what one block may declare statically
SIMULATED_SMS = 2  # the simulator has no SMs: pretend it has two


def resident_blocks(block_threads: int, per_sm: int | None = None) -> int:
    """Blocks that fill the device once: per_sm per SM (default: as many as the SM's threads)."""
    per_sm = per_sm or max(1, MAX_THREADS_PER_SM // block_threads)
    return (runtime.device_info().sm_count or SIMULATED_SMS) * per_sm


def filled_grid(n: int, block: int, *, per_sm: int | None = None, waves: int = 1) -> int:
    """Blocks for a grid-stride loop over n items (one a thread): `waves` times a full GPU, no
    more than n needs; one block in the simulator, which runs blocks one after another."""
    if runtime.is_simulator():
        return 1
    needed = max(1, -(-n // block))
    return min(needed, waves * resident_blocks(block, per_sm))

"""What every NVIDIA GPU the lessons run on shares: warps, banks, sectors, launch limits.

One home for the hardware's numbers, so that a lesson, the tracer and the launch checks never
write 32 or 0xFFFFFFFF again. `sm_limits` reads what one SM of this device holds,
`resident_blocks` how many blocks fill the device once, and `filled_grid` sizes a grid-stride
launch to fill it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from numba import cuda

from . import runtime

WARP_SIZE = 32  # threads of a warp, which issue one instruction together
FULL_MASK = 0xFFFFFFFF  # every lane of a warp, for the *_sync warp intrinsics
BANKS = 32  # shared-memory banks
BANK_BYTES = 4  # each bank delivers one 4-byte word per cycle
WAVEFRONT_BYTES = BANKS * BANK_BYTES  # one shared-memory wavefront serves at most 128 bytes
SECTOR_BYTES = 32  # the unit global memory moves through L1/L2
LINE_BYTES = 128  # a cache line: four sectors
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)  # threads along x, y and z of a block
MAX_GRID_X = 2**31 - 1  # blocks along x
MAX_GRID_YZ = 65535  # blocks along y and z
STATIC_SHARED_MEMORY_BYTES = 48 * 1024  # what one block may declare statically


@dataclass(frozen=True)
class SMLimits:
    """What one streaming multiprocessor holds at once, and how many the device has."""

    sms: int
    threads: int  # resident threads per SM
    blocks: int  # resident blocks per SM
    registers: int  # 32-bit registers per SM


SIMULATED_SM = SMLimits(sms=2, threads=2048, blocks=32, registers=65536)  # 2 pretend SMs


@functools.cache
def sm_limits() -> SMLimits:
    """The device's own limits (sm_90: 2048 threads, 32 blocks; a T4: 1024 threads, 16 blocks)."""
    if runtime.is_simulator():
        return SIMULATED_SM
    device = cuda.get_current_device()
    return SMLimits(
        device.MULTIPROCESSOR_COUNT,
        device.MAX_THREADS_PER_MULTIPROCESSOR,
        device.MAX_BLOCKS_PER_MULTIPROCESSOR,
        device.MAX_REGISTERS_PER_MULTIPROCESSOR,
    )


def blocks_per_sm(block_threads: int, registers: int | None = None) -> int:
    """Blocks of block_threads threads one SM holds at once (registers: per thread, if known)."""
    limits = sm_limits()
    fits = min(limits.threads // block_threads, limits.blocks)
    if registers:
        fits = min(fits, limits.registers // (registers * block_threads))
    return max(1, fits)


def resident_blocks(
    block_threads: int, per_sm: int | None = None, *, registers: int | None = None
) -> int:
    """Blocks that fill the device once: per_sm per SM (default and at most: what an SM holds)."""
    fits = blocks_per_sm(block_threads, registers)
    return sm_limits().sms * (min(per_sm, fits) if per_sm else fits)


def filled_grid(n: int, block: int, *, per_sm: int | None = None, waves: int = 1) -> int:
    """Blocks for a grid-stride loop over n items (one a thread): `waves` times a full GPU, no
    more than n needs; one block in the simulator, which runs blocks one after another."""
    if runtime.is_simulator():
        return 1
    needed = max(1, -(-n // block))
    return min(needed, waves * resident_blocks(block, per_sm))

"""One launch for a sum over blocks: the block that finishes last hands the total over.

Blocks that add their partial sums into one number need that number cleared first, which is a
second launch (as costly as the sum itself for small arrays). Instead, the blocks add into a
scratch accumulator and each takes a ticket; the block with the last ticket moves the
accumulator to the output and clears the accumulator, and the ticket counter wraps back to 0.
The scratch is left as it was found, so on a GPU one pair per dtype serves every launch of the
CUDA context: launches on its default stream run one after another. In the simulator a kernel
can stop halfway (an exception, or Ctrl-C in Jupyter) and leave a partial sum behind, so there
every call gets a fresh pair.
"""

import numpy as np
from numba import cuda, uint32

from .. import runtime
from .fill import zeros


@cuda.jit(device=True)
def add_and_hand_over(value, total, acc, tickets):
    """Thread 0 of each block adds into acc; the last block moves acc to total[0] and clears it."""
    cuda.atomic.add(acc, 0, value)
    cuda.threadfence()  # our add lands before our ticket
    last = uint32(cuda.gridDim.x - 1)
    if cuda.atomic.inc(tickets, 0, last) == last:  # inc wraps to 0 after the last block
        total[0] = cuda.atomic.add(acc, 0, 0)  # an atomic read sees every block's add
        acc[0] = 0


_SCRATCH: dict = {}  # (dtype, id of the context) -> (context, accumulator, tickets), GPU only


def scratch(dtype, like=None):
    """(accumulator, ticket counter) for add_and_hand_over, both 0: kept per context on a GPU.

    like: a device array of the launch; its memory knows its context (cheaper to ask than CUDA).
    """
    dtype = np.dtype(dtype)
    if runtime.is_simulator():
        return zeros(1, dtype), zeros(1, np.uint32)
    context = getattr(getattr(like, "gpu_data", None), "context", None) or cuda.current_context()
    # the context is kept in the value: its id is not reused while we hold it
    key = (dtype, id(context))
    if key not in _SCRATCH:
        _SCRATCH[key] = (context, zeros(1, dtype), zeros(1, np.uint32))
    return _SCRATCH[key][1:]

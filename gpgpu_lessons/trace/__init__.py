"""The kernel tracer: what any @cuda.jit kernel does to memory, without a GPU.

`trace_kernel(kernel, griddim, blockdim, *args)` runs a kernel on Numba's CUDA simulator with
arrays that record every load, store and atomic, and returns a `Trace`: per source line the warp
requests, 32-byte sectors (global), bank wavefronts (shared), distinct addresses (constant) and
atomic contention, each beside its ideal, with a verdict; and the hazards (races, reads of
unwritten shared memory, barriers reached by part of a block, out-of-bounds indices).

Modules: `record` (running the kernel on the simulator's machinery), `arrays` (the recording
arrays), `fakecuda` (the `cuda` module a traced kernel sees), `swap` (device functions and global
arrays swapped for the trace), `accesses` (records to columns), `model` (the sector and bank
rules), `hazards`, `report` (the Trace, its text and HTML tables), `figures` (which sector or
bank each lane hits), `tracer` (trace_kernel; trace_launch for a wrapper's prepared call). The
cases that check the tracer against Nsight Compute and compute-sanitizer on a GPU live with the
maintainer tools (``python -m gpgpu_tools.trace_verify``).
"""

from .arrays import TraceError, UnsupportedError
from .hazards import Hazard
from .report import Trace
from .tracer import trace_kernel, trace_launch

__all__ = ["Hazard", "Trace", "TraceError", "UnsupportedError", "trace_kernel", "trace_launch"]

"""Kernels the compile loop must reject, each for a reason only a GPU compilation shows."""

import numpy as np
from llvmlite import ir
from numba import cuda, float32, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic

TOO_MANY = 13_000  # 13,000 float32 = 52,000 bytes of shared memory > 48 KiB


@intrinsic
def _load_four_wrong(typingctx, array, index):
    """A 16-byte load that returns its <4 x float> vector where it promised one float32."""

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        pointer = cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]])
        lanes = ir.VectorType(ir.FloatType(), 4)
        return builder.load(builder.bitcast(pointer, lanes.as_pointer()), align=16)

    return types.float32(array, index), codegen


@cuda.jit
def wrong_intrinsic_type(a, out):
    """Uses the intrinsic above: the simulator never sees it; NVVM rejects the LLVM IR."""
    i = cuda.grid(1)
    if i < out.size:
        out[i] = _load_four_wrong(a, i * 4)


@cuda.jit
def too_much_shared(a):
    """Declares more static shared memory than a block may have."""
    buffer = cuda.shared.array(TOO_MANY, float32)
    buffer[cuda.threadIdx.x] = a[cuda.threadIdx.x]
    cuda.syncthreads()
    a[cuda.threadIdx.x] = buffer[TOO_MANY - 1 - cuda.threadIdx.x]


@cuda.jit
def allocates_an_array(a):
    """np.zeros inside a kernel: the simulator runs it as Python, Numba's CUDA target cannot."""
    scratch = np.zeros(4, np.float32)
    scratch[0] = a[0]
    a[0] = scratch[0] + 1


@cuda.jit
def unregistered(a):
    """A kernel its module forgot to register."""
    a[0] = 1


SIGNATURES = {
    wrong_intrinsic_type: ["void(float32[::1], float32[::1])"],
    too_much_shared: ["void(float32[::1])"],
    allocates_an_array: ["void(float32[::1])"],
}

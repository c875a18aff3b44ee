"""Kernels the compile loop must reject, each for a reason only a GPU compilation shows."""

from llvmlite import ir
from numba import cuda, float32, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic

TOO_MANY = 13_000  # 13,000 float32 = 52,000 bytes of shared memory > 48 KiB
TILE = 32


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
def shape_from_expression(a):
    """A shared array shaped (TILE, TILE + 1): the simulator accepts it, Numba's typing does not."""
    tile = cuda.shared.array((TILE, TILE + 1), float32)
    tile[0, 0] = a[0]
    a[0] = tile[0, 0]


@cuda.jit
def unregistered(a):
    """A kernel its module forgot to register."""
    a[0] = 1


SIGNATURES = {
    wrong_intrinsic_type: ["void(float32[::1], float32[::1])"],
    too_much_shared: ["void(float32[::1])"],
    shape_from_expression: ["void(float32[::1])"],
}

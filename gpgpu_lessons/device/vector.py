"""Wide memory accesses: n neighbouring elements moved by ONE 8- or 16-byte instruction on a GPU.

Numba has no float32x4 type and splits a complex128 into two 8-byte accesses, so the fast
kernels call these three functions instead of indexing:

- ``load_vector(a, index, n)``: the tuple (a[..., x], ..., a[..., x + n - 1]) for an index
  (..., x) (or a plain x for a 1-D array), read as one ``ld.global.v2``/``.v4``;
- ``load_vector_readonly(a, index, n)``: the same through the read-only data path
  (``ld.global.nc``, CUDA C's ``__ldg``), for arrays the kernel never writes;
- ``store_vector(a, index, values)``: the reverse, one ``st.global.v2``/``.v4``.

n must be a compile-time constant (a literal or a module constant), n x itemsize must be 4, 8
or 16 bytes, and the first element must be aligned to n x itemsize bytes: the wrappers check
that. In the simulator (and for the kernel tracer) they are the plain loops below, so every
element is still bounds-checked.
"""

from __future__ import annotations

from .. import runtime


def load_vector(a, index, n):
    """(a[..., x], ..., a[..., x + n - 1]) for index (..., x): one n x itemsize-byte load (GPU)."""
    *head, x = index if isinstance(index, tuple) else (index,)
    return tuple(a[(*head, x + j)] for j in range(n))


def load_vector_readonly(a, index, n):
    """load_vector through the read-only data path (ld.global.nc) on a GPU."""
    return load_vector(a, index, n)


def store_vector(a, index, values):
    """a[..., x + j] = values[j] for index (..., x): one store of all of values on a GPU."""
    *head, x = index if isinstance(index, tuple) else (index,)
    for j in range(len(values)):
        a[(*head, x + j)] = values[j]


if not runtime.is_simulator():
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic, overload

    _I32 = ir.IntType(32)

    def _element_pointer(context, builder, array_type, array, index_type, index):
        """Pointer to the element of `array` at `index` (an integer or a tuple of integers)."""
        if isinstance(index_type, types.BaseTuple):
            indices = [
                context.cast(builder, builder.extract_value(index, k), t, types.intp)
                for k, t in enumerate(index_type)
            ]
        else:
            indices = [context.cast(builder, index, index_type, types.intp)]
        ary = context.make_array(array_type)(context, builder, value=array)
        return cgutils.get_item_pointer(
            context, builder, array_type, ary, indices, wraparound=False
        )

    def _lanes(context, dtype, n):
        """The LLVM vector that holds n elements of dtype (complex numbers as pairs of reals)."""
        if isinstance(dtype, types.Complex):
            return ir.VectorType(context.get_value_type(dtype.underlying_float), 2 * n)
        return ir.VectorType(context.get_value_type(dtype), n)

    def _check(array, n, what):
        """Typing: None (try again with a literal n) or the element type and byte count."""
        if not isinstance(array, types.Array) or not isinstance(n, types.IntegerLiteral):
            return None
        nbytes = n.literal_value * array.dtype.bitwidth // 8
        if nbytes not in (4, 8, 16):
            raise TypeError(
                f"{what}: {n.literal_value} x {array.dtype} is {nbytes} bytes; "
                "a vector access moves 4, 8 or 16 bytes"
            )
        return nbytes

    def _unpack(context, builder, dtype, n, vector, tuple_type):
        """The tuple of n elements held in an LLVM vector from _lanes()."""
        parts = [
            builder.extract_element(vector, ir.Constant(_I32, k)) for k in range(vector.type.count)
        ]
        if isinstance(dtype, types.Complex):
            values = []
            for j in range(n):
                z = ir.Constant(context.get_value_type(dtype), ir.Undefined)
                z = builder.insert_value(
                    builder.insert_value(z, parts[2 * j], 0), parts[2 * j + 1], 1
                )
                values.append(z)
            parts = values
        return context.make_tuple(builder, tuple_type, parts)

    def _pack(context, builder, dtype, n, values, values_type, lanes):
        """An LLVM vector from _lanes() holding the n elements of tuple `values` (cast to dtype)."""
        parts = [
            context.cast(builder, builder.extract_value(values, j), values_type[j], dtype)
            for j in range(n)
        ]
        if isinstance(dtype, types.Complex):
            parts = [builder.extract_value(z, k) for z in parts for k in (0, 1)]
        vector = ir.Constant(lanes, ir.Undefined)
        for k, part in enumerate(parts):
            vector = builder.insert_element(vector, part, ir.Constant(_I32, k))
        return vector

    @intrinsic
    def _load(typingctx, array, index, n):
        nbytes = _check(array, n, "load_vector")
        if nbytes is None:
            return None
        count = n.literal_value
        tuple_type = types.UniTuple(array.dtype, count)

        def codegen(context, builder, sig, args):
            lanes = _lanes(context, array.dtype, count)
            ptr = _element_pointer(context, builder, array, args[0], index, args[1])
            vector = builder.load(builder.bitcast(ptr, lanes.as_pointer()), align=nbytes)
            return _unpack(context, builder, array.dtype, count, vector, tuple_type)

        return tuple_type(array, index, n), codegen

    @intrinsic
    def _load_readonly(typingctx, array, index, n):
        nbytes = _check(array, n, "load_vector_readonly")
        if nbytes is None:
            return None
        count = n.literal_value
        tuple_type = types.UniTuple(array.dtype, count)
        words = nbytes // 4  # PTX moves it as 1, 2 or 4 32-bit words
        shape = "" if words == 1 else f".v{words}"
        outputs = ", ".join(f"${k}" for k in range(words))
        text = (
            f"ld.global.nc{shape}.u32 {{{outputs}}}, [${words}];"
            if words > 1
            else "ld.global.nc.u32 $0, [$1];"
        )

        def codegen(context, builder, sig, args):
            returned = ir.LiteralStructType([_I32] * words) if words > 1 else _I32
            asm = ir.InlineAsm(
                ir.FunctionType(returned, [ir.IntType(64)]),
                text,
                ",".join(["=r"] * words + ["l"]),
                side_effect=False,
            )
            ptr = _element_pointer(context, builder, array, args[0], index, args[1])
            got = builder.call(asm, [builder.ptrtoint(ptr, ir.IntType(64))])
            word_vector = ir.Constant(ir.VectorType(_I32, words), ir.Undefined)
            for k in range(words):
                word = builder.extract_value(got, k) if words > 1 else got
                word_vector = builder.insert_element(word_vector, word, ir.Constant(_I32, k))
            vector = builder.bitcast(word_vector, _lanes(context, array.dtype, count))
            return _unpack(context, builder, array.dtype, count, vector, tuple_type)

        return tuple_type(array, index, n), codegen

    @intrinsic
    def _store(typingctx, array, index, values):
        if not isinstance(array, types.Array) or not isinstance(values, types.BaseTuple):
            return None
        count = len(values)
        nbytes = _check(array, types.IntegerLiteral(count), "store_vector")

        def codegen(context, builder, sig, args):
            lanes = _lanes(context, array.dtype, count)
            ptr = _element_pointer(context, builder, array, args[0], index, args[1])
            vector = _pack(context, builder, array.dtype, count, args[2], values, lanes)
            builder.store(vector, builder.bitcast(ptr, lanes.as_pointer()), align=nbytes)
            return context.get_dummy_value()

        return types.void(array, index, values), codegen

    @overload(load_vector, target="cuda", prefer_literal=True)
    def _load_vector_gpu(a, index, n):
        return lambda a, index, n: _load(a, index, n)

    @overload(load_vector_readonly, target="cuda", prefer_literal=True)
    def _load_vector_readonly_gpu(a, index, n):
        return lambda a, index, n: _load_readonly(a, index, n)

    @overload(store_vector, target="cuda")
    def _store_vector_gpu(a, index, values):
        return lambda a, index, values: _store(a, index, values)

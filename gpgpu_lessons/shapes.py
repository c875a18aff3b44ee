"""Shared and local array shapes written as expressions of module constants: `(TILE, TILE + 1)`.

Numba types the shape of `cuda.shared.array` / `cuda.local.array` only when every size is an
integer literal: a module constant is one, but `TILE + 1` is typed as a plain int64 and the
GPU compiler rejects it (the simulator, which runs Python, accepts it). `import gpgpu_lessons`
imports this module on a GPU (and in compile-only mode); it registers a rewrite that folds such
sizes (+, -, * and // of integer constants) into literals before type inference, so a kernel
can show the padding where it happens, as CUDA C does with
`__shared__ float tile[TILE_DIM][TILE_DIM + 1];`. Nothing else in a kernel is changed.
"""

from __future__ import annotations

import operator

from numba import cuda

from . import runtime

FOLDED = {operator.add, operator.sub, operator.mul, operator.floordiv}

if not runtime.is_simulator():
    from numba.cuda.core import errors, ir
    from numba.cuda.core.rewrites import Rewrite, register_rewrite

    ARRAYS = (cuda.shared.array, cuda.local.array)

    def _constant(func_ir, var, assigned):
        """The int value of `var` (a module constant, a literal, or +-*// of those), else None."""
        definition = assigned.get(var.name)
        if isinstance(definition, ir.Expr) and definition.op == "binop" and definition.fn in FOLDED:
            lhs = _constant(func_ir, definition.lhs, assigned)
            rhs = _constant(func_ir, definition.rhs, assigned)
            return None if lhs is None or rhs is None else definition.fn(lhs, rhs)
        try:
            value = func_ir.infer_constant(var)
        except errors.ConstantInferenceError:
            return None
        return value if type(value) is int else None

    @register_rewrite("before-inference")
    class FoldArrayShapes(Rewrite):
        """Replace each size of a shared/local array shape that folds to an int by that int."""

        def match(self, func_ir, block, typemap, calltypes):
            self.block, self.folded = block, {}
            assigned = {
                inst.target.name: inst.value for inst in block.body if isinstance(inst, ir.Assign)
            }
            for expr in block.find_exprs(op="call"):
                try:
                    callee = func_ir.infer_constant(expr.func)
                except errors.ConstantInferenceError:
                    continue
                if not any(callee is f for f in ARRAYS) or not expr.args:
                    continue
                shape = assigned.get(expr.args[0].name)
                sizes = (
                    shape.items
                    if isinstance(shape, ir.Expr) and shape.op == "build_tuple"
                    else [expr.args[0]]
                )
                for size in sizes:
                    if isinstance(assigned.get(size.name), ir.Expr):
                        value = _constant(func_ir, size, assigned)
                        if value is not None:
                            self.folded[size.name] = value
            return bool(self.folded)

        def apply(self):
            for inst in self.block.body:
                if isinstance(inst, ir.Assign) and inst.target.name in self.folded:
                    inst.value = ir.Const(self.folded[inst.target.name], inst.value.loc)
            return self.block

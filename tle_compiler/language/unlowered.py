"""The ``tl`` calls the lowering does not translate, with what to write instead: one table for the
frontend, which refuses such a call where the kernel is read (check ``unlowered-call``), and the
lowering (tle_compiler/lowering/more_ops.py), whose error says the same. Without the frontend's
check tle-dump verified a kernel that ``--gluon`` then refused."""

from __future__ import annotations

UNLOWERED_CALLS: dict[str, str] = {
    # (the values of tl.clamp's default propagate_nan=NONE only: the advice was given to
    # tl.clamp(..., propagate_nan=tl.PropagateNan.ALL) too; lowering adversarial round 14)
    # (for ALL, both calls given propagate_nan=tl.PropagateNan.ALL, which the lowering
    # computes since lowering adversarial round 16)
    "clamp": "write tl.minimum(tl.maximum(x, lo), hi), the values of tl.clamp's default "
             "propagate_nan=NONE (for ALL, a NaN x kept, give both calls "
             "propagate_nan=tl.PropagateNan.ALL: the same values where lo and hi are no NaN)",
    "sigmoid": "write 1 / (1 + tl.exp(-x))",
    # (along dim 0, Triton 3.6's default: the advice spelled axis 1, another softmax, until
    # lowering adversarial round 14)
    "softmax": "write it out along its dim (Triton's default is 0): e = tl.exp(x - tl.max(x, 0, "
               "keep_dims=True)); e / tl.sum(e, 0, keep_dims=True)",
    "argmax": "take m = tl.max(x, axis) and the least index where x equals it: tl.min(tl.where("
              "x == m[:, None], idx, BIG), axis)",
    "argmin": "take m = tl.min(x, axis) and the least index where x equals it: tl.min(tl.where("
              "x == m[:, None], idx, BIG), axis)",
    "broadcast": "add a zero tensor of the target shape (x + tl.zeros(shape, x.dtype)), or use "
                 "tl.broadcast_to(x, shape)",
    "split": "load or compute the two halves separately",
    "cumsum": "a scan is not lowered; compute the prefix sums with a tl.static_range loop or a "
              "tl.dot with a triangular matrix",
    "cumprod": "a scan is not lowered; compute the products with a tl.static_range loop",
    "associative_scan": "a scan is not lowered; compute it with a tl.static_range loop",
    "reduce": "use tl.sum / tl.max / tl.min / tl.xor_sum / tl.reduce_or over an explicit axis",
    "histogram": "count with tl.sum((x[:, None] == bins[None, :]).to(tl.int32), 0)",
    "inline_asm_elementwise": "not lowered: the layout of its packed operands is not derived",
    "gather": "load the gathered elements from global memory with a tensor of pointers",
    "sort": "not lowered",
    "flip": "index the data in reverse order where it is loaded (offsets N - 1 - i)",
    "make_block_ptr": "use a tensor of pointers (base + offsets, with a mask) or a TMA copy "
                      "(tle.gpu.tma_load)",
    "advance": "use a tensor of pointers (base + offsets, with a mask)",
    # a device-side descriptor: the TMA copy of a slot takes a host TensorDescriptor argument
    "make_tensor_descriptor": "pass a host-side TensorDescriptor as a kernel argument and copy "
                              "into a slot with tle.gpu.tma_load, or use a tensor of pointers "
                              "(base + offsets, with a mask)",
    "load_tensor_descriptor": "copy into a slot with tle.gpu.tma_load (a host-side "
                              "TensorDescriptor argument), or use a tensor of pointers",
    "store_tensor_descriptor": "store with a tensor of pointers (base + offsets, with a mask)",
    "rand": "not lowered", "randn": "not lowered", "randint": "not lowered",
    "cat": "store the two parts separately (each with its own offsets); Triton 3.6 refuses "
           "tl.cat unless can_reorder=True (\"current implementation of `cat` always may "
           "reorder elements\")",
    "pointer_type": "a pointer is a kernel argument plus offsets; no cast makes one",
}


#: The member functions of Triton 3.6's tensor (``x.sum(1)``, ``x.reshape(M, N)``), each the
#: library function of the same name with the tensor as its first argument (triton/language's
#: ``_tensor_member_fn``); the frontend reads ``x.f(...)`` as ``tl.f(x, ...)``. ``to`` and ``T``
#: are read apart (a cast; a transposed view).
TENSOR_MEMBERS: frozenset[str] = frozenset({
    "abs", "advance", "argmax", "argmin", "associative_scan", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
    "broadcast_to", "cast", "cdiv", "ceil", "cos", "cumprod", "cumsum", "erf", "exp", "exp2",
    "expand_dims", "flip", "floor", "gather", "histogram", "item", "log", "log2", "logical_and",
    "logical_or", "max", "min", "permute", "ravel", "reduce", "reduce_or", "reshape", "rsqrt",
    "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn", "store", "sum", "trans",
    "view", "xor_sum"})

#: Tensor members that are no library function of the same name, with what to write instead.
TENSOR_ONLY_MEMBERS: dict[str, str] = {
    "item": "use the one-element tensor as it is, or tl.sum(x) for its value as a scalar",
    "logical_and": "write `(a != 0) & (b != 0)` (or `a & b` of booleans)",
    "logical_or": "write `(a != 0) | (b != 0)` (or `a | b` of booleans)",
}

"""Tensor-descriptor arguments of kernels with TMA copies (``tle.gpu.tma_load``).

A kernel argument a TMA copy reads is a tensor descriptor. Its Triton type names the box and the
element type, ``tensordesc<bf16[64, 256]>`` (what ``triton.tools.tensor_descriptor.
TensorDescriptor`` on the host mangles to); Gluon also needs the shared layout the box lands in,
``tensordesc<bf16[64, 256],NVMMASharedLayout(...)>``. The lowering gives the ring a TMA copy
fills the NVMMA layout :func:`~.plan.tma_layout` picks for the slot shape, so it completes the
type with that same layout (:func:`complete_signature`): the author writes the short form (or
passes a host descriptor without a layout), and the descriptor Triton's launcher builds from the
compiled kernel's metadata has the ring's swizzle. A box or element type that is not the slot's
is an error at the ``tma_load`` line (:func:`check_copy`): the copy would land other bytes than
the commit's expect-tx counts, and the full barrier would never complete. The lowering checks
every copy it emits (:func:`check_emitted_copy`, from the translator, which knows the slot's ring
and the descriptor's argument however the copy is spelled); :func:`complete_signature` checks
the plainly spelled ones (:func:`tma_copies`) before lowering.

The box may have more dimensions than the field, every extra one 1: a descriptor over a paged
cache viewed as [blocks, 64, heads, 576] with box [1, 64, 1, 256] fills a [64, 256] field (the
field's shape is the box with its unit dimensions dropped, :func:`box_fits_field`); the copy then
has one offset per box dimension and lands in a view of the slot with the box's shape. Its layout
is that of the box (the same swizzle as the field's, with the box's rank), which is the layout
Triton infers for the view, so the descriptor type is completed with it.
"""

from __future__ import annotations

import re
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.smem import box_fits_field  # the compile's rule, which the frontend checks too
from .plan import GL_DTYPES, nvmma_shared_params, resolve_dim

#: Triton's signature dtype names -> the KIR's (language.gpu.normalize_dtype) names.
SIG_DTYPES = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
              "u16": "uint16", "u32": "uint32", "u64": "uint64"}
#: The most dimensions a TMA box has (cp.async.bulk.tensor.1d .. .5d).
MAX_TMA_RANK = 5
#: Gluon's dtype names (a ring's) -> the KIR's.
KIR_DTYPES = {gl_name: name for name, gl_name in GL_DTYPES.items()}
_DESC = re.compile(r"tensordesc<\s*([A-Za-z0-9_]+)\s*\[([^\]]*)\]\s*(?:,(.*))?>\s*$", re.S)


def parse_descriptor(t: str) -> Optional[tuple[str, list[int], Optional[str]]]:
    """``tensordesc<DT[d0, d1]>`` / ``tensordesc<DT[d0, d1],LAYOUT>`` -> (KIR dtype name, block
    shape, layout text or None); None for another type."""
    m = _DESC.match(t.strip())
    if m is None:
        return None
    dims = [int(x) for x in m.group(2).split(",") if x.strip()]
    dt = SIG_DTYPES.get(m.group(1), m.group(1))
    return dt, dims, (m.group(3).strip() or None) if m.group(3) else None


def layout_repr(block_shape: list[int], dtype: str) -> str:
    """The Gluon layout of a box as Triton prints it in a signature: the repr of the
    ``NVMMASharedLayout`` the ring of that slot shape has (plan.tma_layout), spelled here as
    Triton 3.6's dataclass prints it, so that checking a signature imports no Triton
    (tests/test_descriptor_layouts.py compares the two)."""
    sw, bits, rank = nvmma_shared_params(block_shape, GL_DTYPES[dtype])
    return (f"NVMMASharedLayout(swizzle_byte_width={sw}, element_bitwidth={bits}, rank={rank}, "
            f"transposed=False, fp4_padded=False, cga_layout=[])")


def tma_copies(kir: K.Kernel) -> dict[str, list[tuple[str, str, object, Optional[int]]]]:
    """Kernel argument -> the (pipe, field, location, number of offsets) of the
    ``tle.gpu.tma_load`` copies spelled plainly: the destination ``slot.f`` of a name assigned an
    acquire, the descriptor a partition parameter bound to the argument (through the
    partition's renames); the number is None where the offsets are not a list. Other spellings
    are not found here: the translator checks every copy it emits (:func:`check_emitted_copy`)."""
    args = {p.name for p in kir.params}
    out: dict[str, list] = {}
    for part in kir.partitions:
        bindings = dict(part.bindings)  # the partition's parameters -> kernel-level expressions
        alias: dict[str, K.Expr] = {}  # names of the partition bound to another name
        slots: dict[str, str] = {}  # slot variable -> its pipe
        # a name assigned more than once (or a parameter assigned at all) holds whichever value
        # reaches the copy: not followed here (the translator checks the copy as it emits it)
        assigned: dict[str, int] = {}
        for st in K.walk_stmts(part.body):
            if isinstance(st, K.Assign):
                assigned[st.target] = assigned.get(st.target, 0) + 1
        rebound = {n for n, c in assigned.items() if c > 1 or n in bindings}
        for st in K.walk_stmts(part.body):
            if isinstance(st, K.Assign):
                if isinstance(st.value, K.Name):
                    alias.setdefault(st.target, st.value)
                elif isinstance(st.value, K.Event) and st.value.verb == "acquire":
                    slots[st.target] = st.value.handle.pipe
            for e in K.stmt_exprs(st):
                for op in K.walk_expr(e):
                    if not (isinstance(op, K.Op) and op.name == "tle.gpu.tma_load"):
                        continue
                    dst, desc = op.args[0], op.args[1]
                    name = _resolve(desc, alias, bindings, args, rebound)
                    if name is None or not isinstance(dst, K.SlotField):
                        continue
                    pipe = slots.get(dst.slot.id) if isinstance(dst.slot, K.Name) else None
                    offs = op.args[2] if len(op.args) > 2 else None
                    n = len(offs.items) if isinstance(offs, K.TupleExpr) else None
                    if pipe is not None:
                        out.setdefault(name, []).append((pipe, dst.field, op.loc, n))
    return out


def _resolve(e, alias: dict, bindings: dict, args: set, rebound: set = frozenset()
             ) -> Optional[str]:
    """The kernel argument a partition's name is (through its renames, then its binding); None
    through a name in ``rebound`` (assigned more than once, or a parameter assigned)."""
    seen = set()
    while isinstance(e, K.Name) and e.id in alias and e.id not in seen:
        if e.id in rebound:
            return None
        seen.add(e.id)
        e = alias[e.id]
    if not (isinstance(e, K.Name) and e.id in bindings) or e.id in rebound:
        return None
    e = bindings[e.id]
    return e.id if isinstance(e, K.Name) and e.id in args else None


def check_copy(arg: str, dt: str, block: list[int], field: str, field_dtype: str,
               slot: list[int], n_offsets: Optional[int], loc) -> None:
    """The rule of one copy: the descriptor ``arg`` (``dt`` boxes ``block``) copied into
    ``field`` (``PIPE.FIELD``, a ``field_dtype`` slot of shape ``slot``) with ``n_offsets``
    offsets (None: not known) has the field's element type, a box that is the slot's shape with
    any extra unit dimensions (:func:`box_fits_field`) and one offset per box dimension. Anything
    else lands a box of other bytes than the commit's expect-tx counts (the full barrier never
    completes, or completes early) in another swizzle: a TleError at the copy's line."""
    if not box_fits_field(block, slot) or field_dtype != dt:
        raise TleError(f"argument '{arg}' is a tensor descriptor of {dt} boxes {block}, but this "
                       f"tle.gpu.tma_load copies it into {field}, a {field_dtype} slot of shape "
                       f"{slot} (the box is the slot's shape, or that shape with extra "
                       f"dimensions of size 1)", loc, check="signature")
    if n_offsets is not None and n_offsets != len(block):
        raise TleError(f"this tle.gpu.tma_load gives {n_offsets} offsets, but its descriptor "
                       f"'{arg}' has boxes {block}: one offset per box dimension ({len(block)})",
                       loc, check="signature")


def check_emitted_copy(arg_types: dict, arg: Optional[str], ring, n_offsets: int, loc) -> None:
    """The check of a copy the lowering emits (lowering/translate.py), whatever its spelling:
    the translator knows the ring the destination slot is of and the kernel argument the
    descriptor value is (``arg``: followed through renames, bindings, tuples and helpers, None
    where the value is not one argument unchanged). ``arg_types``: the compile's signature;
    without one (Gluon printed alone) the box is not known and nothing is checked. A descriptor
    the lowering cannot attribute is refused: its box could not be checked against the slot."""
    if not arg_types:
        return
    where = f"{ring.pipe}.{ring.field}"
    if arg is None:
        raise TleError(f"the descriptor of this tle.gpu.tma_load (into {where}) is not a kernel "
                       f"argument the lowering can follow, so its box and element type cannot be "
                       f"checked against the slot: pass the tensor-descriptor argument itself "
                       f"(renamed or bound to a partition parameter, the same one on every path)",
                       loc, check="signature")
    t = arg_types.get(arg)
    parsed = parse_descriptor(t) if isinstance(t, str) else None
    if parsed is None:
        raise TleError(f"the descriptor of this tle.gpu.tma_load (into {where}) is argument "
                       f"'{arg}', of type {t}, not a tensor descriptor (tensordesc<DT[box]>)",
                       loc, check="signature")
    dt, block, _ = parsed
    check_copy(arg, dt, block, where, KIR_DTYPES.get(ring.dtype, ring.dtype), list(ring.shape),
               n_offsets, loc)


def signature_for_compile(info, sig: dict, constexprs: dict) -> dict:
    """``sig`` as the compile reads it: its tensor descriptors completed
    (:func:`complete_signature`, with the kernel's constants and ``constexprs``); a signature
    without descriptors as it is."""
    if not any(str(t).startswith("tensordesc") for t in sig.values()):
        return sig
    return complete_signature(info, sig, {**dict(info.kir.consts), **constexprs})


def complete_signature(info, sig: dict, consts: dict) -> dict:
    """``sig`` with every ``tensordesc<DT[shape]>`` type completed with the layout of the ring
    its TMA copies fill (for a box of higher rank, that layout with the box's rank); a given
    layout must be that one, and for the copies :func:`tma_copies` finds the element type the
    field's, the box the field's slot shape with any extra unit dimensions
    (:func:`box_fits_field`) and the offsets one per box dimension (TleErrors at the copy's line;
    the lowering checks every copy again as it emits it)."""
    kir = getattr(info, "kir", None)
    copies = tma_copies(kir) if kir is not None else {}
    out = dict(sig)
    for arg, t in sig.items():
        parsed = parse_descriptor(t) if isinstance(t, str) else None
        if parsed is None:
            continue
        dt, block, given = parsed
        if dt not in GL_DTYPES:
            raise TleError(f"kernel '{info.name}': argument '{arg}' is a tensor descriptor of "
                           f"{dt}, which the lowering does not support", info.program.loc,
                           check="signature")
        if not 1 <= len(block) <= MAX_TMA_RANK:
            raise TleError(f"kernel '{info.name}': argument '{arg}' is a tensor descriptor of "
                           f"boxes {block}; a TMA box has 1 to {MAX_TMA_RANK} dimensions",
                           info.program.loc, check="signature")
        for pipe, fld, loc, n_offsets in copies.get(arg, ()):
            buf = next(b for b in kir.pipe(pipe).fields if b.name == fld)
            slot = [resolve_dim(d, consts, buf.loc) for d in buf.shape][1:]
            check_copy(arg, dt, block, f"{pipe}.{fld}", buf.dtype, slot, n_offsets, loc)
        layout = layout_repr(block, dt)
        if given is not None and given.replace(" ", "") != layout.replace(" ", ""):
            raise TleError(f"kernel '{info.name}': argument '{arg}' is a tensor descriptor with "
                           f"layout {given}, but the ring its TMA copies fill has {layout} (pass "
                           f"a descriptor without a layout, e.g. triton.tools.tensor_descriptor."
                           f"TensorDescriptor, and the lowering picks it)", info.program.loc,
                           check="signature")
        out[arg] = f"tensordesc<{t.strip()[len('tensordesc<'):].split('[')[0].strip()}" \
                   f"[{', '.join(str(d) for d in block)}],{layout}>"
    return out

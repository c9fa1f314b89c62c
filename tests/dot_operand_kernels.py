"""A kernel whose tl.dot A operands are computed from pipe-slot tiles, and its torch reference:
shared by the CPU tests (tests/test_lowering_dot_operands.py: generated Gluon, the emulated
numbers) and the GPU test (tests/gpu/test_dot_operand_expressions.py: the lowered kernel's numbers).

wgmma reads a shared-memory tile as it is, so only a plain `tl.load(tle.gpu.local_ptr(slot.f))`
may be fed to it from shared memory; every A operand below is something else and must be computed
in registers:
- `tl.exp2(a.to(tl.float32)).to(tl.bfloat16)` and `-a`: expressions of the tile;
- `x`: the tile on even steps, `-x` on odd ones (assigned in an `if`; after it the lowering's walk
  holds only one branch's binding, the tile's).
Read raw from shared memory, each of them gives a visibly different sum."""

from __future__ import annotations

import json

#: the kernel's argument types, written into its DEFAULT_CONFIG and given to the compiler
SIGNATURE = {"a_ptr": "*bf16", "b_ptr": "*bf16", "s_ptr": "*fp32", "N": "i32"}

KERNEL_SRC = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def dot_exprs(a_ptr, b_ptr, s_ptr, N):
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                  b=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, a_ptr, b_ptr, N)), (consume, (kv, s_ptr, N))],
                            [4], [232])


def produce(kv, a_ptr, b_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(a_ptr + t * 4096 + offs))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + t * 4096 + offs))
        w.commit(t)


def consume(kv, s_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        b = tl.load(tle.gpu.local_ptr(res.slot.b))
        ea = tl.exp2(a.to(tl.float32)).to(tl.bfloat16)
        s = tl.dot(ea, b)
        s = tl.dot(-a, b, s)
        x = tl.load(tle.gpu.local_ptr(res.slot.a))
        if t % 2 == 1:
            x = -x
        s = tl.dot(x, b, s)
        r.release(t)
        tl.store(s_ptr + t * 4096 + offs, s)


''' + f"DEFAULT_CONFIG = {json.dumps({'signature': SIGNATURE})}\n"


def inputs(n: int, device: str, seed: int = 0):
    """a, b: [max(n, 1), 64, 64] bf16 tiles (a small enough for exp2 to stay in range); s: the
    fp32 output, NaN-poisoned so a tile never written shows."""
    import torch

    g = torch.Generator().manual_seed(seed)
    shape = (max(n, 1), 64, 64)
    a = (torch.randn(shape, generator=g) * 0.5).to(torch.bfloat16).to(device)
    b = (torch.randn(shape, generator=g) * 0.5).to(torch.bfloat16).to(device)
    s = torch.full(shape, float("nan"), dtype=torch.float32, device=device)
    return a, b, s


def reference(a, b, n: int):
    """What `consume` stores for tile t < n, in fp32 from the bf16 operands: exp2(a) rounded to
    bf16, -a, then x = ±a (- on odd t)."""
    import torch

    out = []
    for t in range(n):
        at, bt = a[t].float(), b[t].float()
        ea = torch.exp2(at).to(torch.bfloat16).float()
        sign = -1.0 if t % 2 == 1 else 1.0
        out.append(ea @ bt - at @ bt + sign * (at @ bt))
    return torch.stack(out) if out else None


#: The same pipe, with tl.dot B operands that are no shared-memory tile as loaded: `-b` (an
#: expression of the tile), `tl.trans(b * 2)` (tl.trans of registers) and `x`, the tile or `-b`
#: depending on the step (assigned twice). Each is staged through a shared-memory buffer of its
#: own for a synchronous wgmma (lowering/translate.py _staged_b_operand); read raw from the slot,
#: each gives a visibly different sum.
B_KERNEL_SRC = KERNEL_SRC.replace("dot_exprs", "dot_b_exprs").replace('''        ea = tl.exp2(a.to(tl.float32)).to(tl.bfloat16)
        s = tl.dot(ea, b)
        s = tl.dot(-a, b, s)
        x = tl.load(tle.gpu.local_ptr(res.slot.a))
        if t % 2 == 1:
            x = -x
        s = tl.dot(x, b, s)
''', '''        s = tl.dot(a, -b)
        s = tl.dot(a, tl.trans(b * 2), s)
        x = tl.load(tle.gpu.local_ptr(res.slot.b))
        if t % 2 == 1:
            x = -x
        s = tl.dot(a, x, s)
''')


def reference_b(a, b, n: int):
    """What `dot_b_exprs` stores for tile t < n: a @ -b + a @ (2 b)^T + a @ (±b), - on odd t."""
    import torch

    out = []
    for t in range(n):
        at, bt = a[t].float(), b[t].float()
        sign = -1.0 if t % 2 == 1 else 1.0
        out.append(at @ (-bt) + at @ (2 * bt).T + sign * (at @ bt))
    return torch.stack(out) if out else None

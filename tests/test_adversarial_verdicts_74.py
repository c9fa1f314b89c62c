"""A seventy-fourth adversarial round (adversarial round 74): derived params and the search for
witnesses (passes/witness.py, passes/witness_solver.py).

Kernels tried: a producer / consumer ring whose two trip counts the kernel body computes from
its arguments, spelt two ways: persistent tile counts (``tl.cdiv(N, 128) * tl.cdiv(M, 128)``
beside the same count clamped to 2 or 3), ``N // 1000`` beside ``(N + 999) // 1000 - 1``,
``(N * 3) // 64`` beside ``N // 64 * 3``, ``N % 4`` beside ``N % 4 + (N % 1000) // 997``,
``tl.where(N > 0, N, 0) // 1000`` beside ``tl.maximum(N, 0) // 1000``; definitions whose i32
steps wrap (``(N * 2**24) // 2**24``); a fault the independent check finds at a combination no
launch gives. Each witness printed was recomputed here as the GPU computes it (i32 steps, C's
truncating ``//`` and ``%``), independently of the compiler's definitions.

False verdicts found:

- A witness that the GPU does not give: ``M = (N * 16777216) // 16777216`` and ``K =
  tl.minimum(M, 200)``, the writer committing M tiles, the reader waiting K. Over the unbounded
  integers M = N, so the enumeration of base values found the fault `when N=201 (M=201, K=200)`
  and the kernel was rejected; on the GPU ``201 * 2**24`` wraps and M = K = -55 (M is N's low
  byte, sign-extended, always below 200): no launch has a fault. The solver's candidates were
  checked against the GPU's i32 steps (ir/derived.derive_on_gpu), the enumerated tuples were
  not. FIXED: passes/witness.py ``_as_on_gpu`` drops an enumerated tuple whose derived values the
  GPU computes otherwise (no fault there is a witness, no claim covers it): bounded for N in
  [-128, 127].
"""

from __future__ import annotations

import json
import re

from .adversarial_support import dump, expect


def w32(v: int) -> int:
    """``v`` wrapped to two's complement i32, as the GPU's i32 arithmetic leaves it."""
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def c_div(a: int, b: int) -> int:
    """C's (Triton's runtime) truncating quotient."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def cdiv(x: int, d: int) -> int:
    """``tl.cdiv(x, d)`` of a runtime i32 ``x``: ``(x + d - 1) // d``, each step in i32."""
    return c_div(w32(x + d - 1), d)


#: a ring of capacity 2: the writer commits P tiles, the reader waits C (both computed in the
#: kernel body from the i32 arguments N and M)
RING = '''import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, y_ptr, N, M):
ASSUMES    P = P_EXPR
    C = C_EXPR
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, P)), (consume, (kv, y_ptr, C))], [4], [232])


def produce(kv, x_ptr, P):
    w = kv.writer()
    for i in range(P):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, C):
    r = kv.reader()
    for i in range(C):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "M": "i32"}}
'''


def ring(p: str, c: str, *assumes: str) -> str:
    return (RING.replace("P_EXPR", p).replace("C_EXPR", c)
            .replace("ASSUMES", "".join(f"    {a}\n" for a in assumes)))


def json_witnesses(tmp_path, capsys, text: str, *flags: str) -> tuple[int, list[dict]]:
    """tle-dump's exit code and the JSON diagnostics' witnesses for ``text``."""
    out = tmp_path / "out.json"
    code, _ = dump(tmp_path, capsys, text, *flags, "--format", "json", "-o", str(out))
    diags = [d for k in json.loads(out.read_text())["kernels"] for d in k["diagnostics"]]
    return code, [d["witness"] for d in diags if "witness" in d]


def test_a_fault_only_the_unbounded_integers_give_is_no_witness(tmp_path, capsys):
    """M = (N * 2**24) // 2**24 is N over the integers but N's low byte on the GPU (the product
    wraps in i32), so K = tl.minimum(M, 200) always equals M on the GPU and the ring is correct
    at every launch. It was rejected `when N=201 (M=201, K=200)`, where the GPU computes M = K =
    -55; now bounded over the base values whose derived values the GPU computes as checked."""
    assert c_div(w32(201 * 2 ** 24), 2 ** 24) == -55
    assert all(min(c_div(w32(n * 2 ** 24), 2 ** 24), 200) == c_div(w32(n * 2 ** 24), 2 ** 24)
               for n in range(-5000, 5000, 7))
    src = ring("(N * 16777216) // 16777216", "tl.minimum(P, 200)")
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, ("bounded", "only for N in [-128, 127]", "at N=128, `16777216*N` in the definition"))
    assert "error" not in err, err

"""A wgmma wait keeps alive only the names a later statement may read.

When a statement calls a helper, the frontend binds each call's value to a temporary
(``_qk2N__t5 = tl.dot(...)``, then ``s = _qk2N__t5``). A chain of accumulating dots inside a
helper then left every intermediate accumulator under a name of its own, and schedule-wgmma
listed each as a dependency of the next wait: the wait rebinds them, so the intermediate values
stay alive after the next wgmma took them as its accumulator, and ptxas inserts waits of its own
to copy registers a wgmma still writes (its warning C7517). A rename that is the last read of a
name assigned once, earlier in the same block (translate.py ``moves_a_temporary``), now moves
the in-flight result to the new name instead of aliasing it.

The checks: the helper chain's wait lists no intermediate accumulator and the kernel compiles
for sm_90a with no injected wait (and with the move turned off, ptxas injects one: the check can
tell); a name the kernel reads again, or one read in a nested block (an ``if`` a path may skip),
stays a dependency."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import compile_kernel, gluon_source, ptxas_stats  # noqa: E402
from tle_compiler.lowering import translate  # noqa: E402

HEAD = '''
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)


@tle.jit(num_warps=4{jit})
def {name}(q_ptr, k_ptr, o_ptr, NT):
    kv = tle.pipe(capacity=2,
                  k0=tle.gpu.alloc([2, BN, D], tl.bfloat16),
                  k1=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (kv, k_ptr, NT)),
                             (attend, (kv, q_ptr, o_ptr, NT))],
                            [4], [232])


def loader(kv, k_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k0), tl.load(k_ptr + t * BN * D + tile))
        tl.store(tle.gpu.local_ptr(slot.k1), tl.load(k_ptr + t * BN * D + tile))
        w.commit(t)


def qk2(q0, q1, slot):
    s = tl.dot(q0, tl.trans(tl.load(tle.gpu.local_ptr(slot.k0))))
    s = tl.dot(q1, tl.trans(tl.load(tle.gpu.local_ptr(slot.k1))), s)
    return s


def attend(kv, q_ptr, o_ptr, NT):
    r = kv.reader()
    tile = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    q0 = tl.load(q_ptr + tile)
    q1 = tl.load(q_ptr + BM * D + tile)
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(NT):
        res = r.wait(t)
{body}
        r.release(t)
    tl.store(o_ptr + tile, acc)
'''

BODIES = {
    # the chain through the helper
    "chain": '''        s = qk2(q0, q1, res.slot)
        acc = acc + s''',
    # the first result read again after the second dot took it (through `u`) as accumulator
    "twice": '''        s0 = tl.dot(q0, tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k0))))
        u = s0
        s1 = tl.dot(q1, tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k1))), u)
        acc = acc + s1 + s0''',
    # read once, but in an `if` the path with t == 0 skips, where `x` stays in flight
    "nested": '''        x = tl.dot(q0, tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k0))))
        if t > 0:
            y = x
            acc = acc + y''',
}
SIGNATURE = {"q_ptr": "*bf16", "k_ptr": "*bf16", "o_ptr": "*fp32", "NT": "i32"}


def kernel_file(tmp_path, name: str, pipelined: bool = False):
    p = tmp_path / f"{name}.py"
    p.write_text(HEAD.format(name=name, body=BODIES[name],
                             jit=", wgmma_pipeline=True" if pipelined else ""))
    return p


def attend_source(path, name: str) -> str:
    src = gluon_source((str(path), name)).source
    return src.split("def attend(", 1)[1].split("\n@gluon.jit", 1)[0]


def waits(body: str) -> list[tuple[list[str], str]]:
    """(deps, why) of each warpgroup_mma_wait that rebinds names, in order."""
    return [([d.strip() for d in deps.split(",")], why) for deps, why in
            re.findall(r"= warpgroup_mma_wait\(\d+, deps=\[([^\]]*)\]\)  # (.*)", body)]


def test_a_helper_chain_waits_for_its_last_accumulator_only(tmp_path):
    body = attend_source(kernel_file(tmp_path, "chain"), "chain")
    (deps, why), = waits(body)
    assert why == "s is read"
    # the helper's temporaries (`_qk2N__tK`) held the two wgmmas' results; neither is a
    # dependency, and every name left holds the second wgmma's result
    assert not [d for d in deps if re.fullmatch(r"_qk2\d+__t\d+", d)], deps
    accs = re.findall(r"(_acc\d+) = warpgroup_mma\(", body)
    assert len(accs) == 2
    holders = {accs[1]} | {m for m in re.findall(r"(\w+) = (?:_acc|_qk2\d+_)", body)}
    assert "s" in deps and set(deps) - {"s"} <= holders | set(re.findall(r"_a\d+", body)), deps


def _compile(path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return ptxas_stats(compile_kernel(getattr(mod, name), SIGNATURE))


def test_the_helper_chain_compiles_without_injected_waits(tmp_path, monkeypatch):
    path = kernel_file(tmp_path, "chain")
    st = _compile(path, "chain")
    assert st["ok"] and not st["wgmma_serialized"], st["log"]
    assert not st["wgmma_wait_injected"], st["log"]  # ptxas C7517
    # the same kernel with every temporary aliased instead of moved: ptxas injects a wait
    monkeypatch.setattr(translate.FnTranslator, "moves_a_temporary", lambda self, node: False)
    st = _compile(path, "chain")
    assert st["ok"] and st["wgmma_wait_injected"], st["log"]


def test_a_name_read_again_stays_a_dependency(tmp_path):
    body = attend_source(kernel_file(tmp_path, "twice"), "twice")
    (deps, why), = waits(body)
    assert why == "s1 is read"
    # s0 (and its alias u) are read after the wait: rebound by it, so ordered after it
    assert {"s0", "u", "s1"} <= set(deps), deps
    assert body.index("warpgroup_mma_wait(0") < body.index("acc = ((acc + s1) + s0)")


def test_a_name_read_in_a_nested_block_stays_in_flight_where_it_is_skipped(tmp_path):
    body = attend_source(kernel_file(tmp_path, "nested", pipelined=True), "nested")
    found = waits(body)
    assert found[0][1] == "y is read"
    # inside the `if`, x is waited with y and made an in-flight accumulator again at the
    # branch's end, since the path with t == 0 reaches the release with x still in flight
    assert "x" in found[0][0] and "y" in found[0][0], found
    assert "x = warpgroup_mma_init(x)" in body
    assert found[1][1].startswith("kv.release") and "x" in found[1][0], found

"""Adversarial kernels on the protocol features newest in the compiler: TMA copies into pipe slots
(expect-tx byte counts), named-barrier pipes, one-shot pipes, reader views (``fields=``),
``wgmma_pipeline=True`` loops, the register budgets of warp_specialize and trip counts read from
memory (opaque params). Each kernel is written to tmp_path and handed to tle-dump; a verified one
is lowered and its generated Gluon's barrier operations are compared with the verified events
(tests/test_lowering_events.py's ``Runs``, tests/adversarial_oracles.py), a refused one must name
the fault at its line.

Wrong before the fixes that came with this file:
- verified (exit 0), though the lowering refused it: a TMA copy into a slot field that no
  reader's view contains (``readers=("a",)``, reader ``a`` with ``fields=("t",)``, the writer
  copying ``t`` and ``u``). No field group holds ``u``, so no full barrier's expect-tx counts its
  bytes: nothing waits for the copy to land, the next acquire of the stage copies over it while
  it may still be in flight, and the CTA may exit with it in flight. verify-protocol now refuses
  it at the copy (passes/tma_windows.py, check ``tma-window``; docs/semantics.md rule 9);
- lowered to a copy nothing waits for: a gather into such a field (``tl.store(local_ptr(s.u),
  tl.load(ptrs))``) became a cp.async that no full barrier's per-thread arrive tracks, still in
  flight at the next acquire of the stage or when the CTA exits. It is now a register store
  (lowering/translate.py, ``_cp_async_source``), as a named pipe's fields are;
- compiled, and hangs on the GPU: a param of the protocol read from memory through a pointer whose
  element type is not i32 (``n = tl.load(n_ptr)`` with ``n_ptr`` a ``*u32``, then ``M = n - 1``
  and ``if M >= 1:`` around a wait whose commit runs under ``if n >= 2:``). The verifier reads
  ``n`` as a signed integer (``M >= 1`` iff ``n >= 2``), the GPU compares the u32 ``n - 1``
  unsigned (``arith.cmpi uge``): at ``n = 0`` the reader waits for a commit the writer never
  makes. The same for ``*i8`` / ``*i16`` / ``*u8`` (arithmetic that wraps at 8 or 16 bits), a
  float pointer (``n >= 2`` and ``n > 1`` differ at 1.5), ``*i64`` (i32 and i64 parts of one
  expression in an order the verifier does not model, why i64 arguments the protocol reads are
  refused) and an atomic's old value; and for a kernel-level value computed in floats (``n = N *
  1.0``, read as an opaque integer param: at N = 1 the fp32 ``(n + 16777216) - 16777216`` is 0.0,
  where the verifier reads 1; since frontend round 9 such a value stays a float, so tle-dump
  rejects events that depend on it as data-dependent). The compile now refuses a value that a partition's events depend
  on unless it is an integer the verifier models (lowering/loaded_params.py, check
  ``signature``), through helpers and tuples; a loaded one cast ``.to(tl.int32)`` or
  ``.to(tl.int64)`` compiles;
- verified, and compiled to a kernel no launch accepts: partitions of 48 warps in all (a CTA has
  at most 32, 1024 threads); verify-protocol now refuses them (``bad-warps``), and a launch's
  ``num_warps`` that overfills the CTA is refused at its compile;
- in ``tle-dump --format json``, a TMA-filled group whose bytes depend on an unbound constexpr
  had ``expect_tx`` 0 (the text table prints ``?``); it is null.

Checked and left as they are (pinned below where this file says so): a TMA copy whose descriptor
box or element type is not the slot's is verified (the verdict does not depend on the signature)
and refused by every compile, which has the descriptor's type; more named pipes than the hardware
barriers left above Triton's are verified and refused by the lowering
(tests/test_named_barrier_lowering.py pins that split); a TMA copy under a data ``if``, in a
``while`` or a data loop, under an affine ``if`` inside its window, twice in one window, into a
destination a conditional expression chooses, or by a reader is refused at the copy (pinned);
named pipes whose hop is missing at one iteration (at 7, at ``N // 2``) are rejected by rule 10
(pinned); pipelined wgmma loops releasing the slot a carried wgmma reads (in an ``if``/``else``,
in an ``if`` that also computes, through a helper) lower to the verified events and retire the
wgmma first (pinned).
"""

from __future__ import annotations

import contextlib
import io
import traceback
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError, TleVerificationWarning

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

HEAD = '''
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
'''


def dump(argv: list[str]) -> tuple[int, str, str]:
    """tle-dump in process: exit status, stdout, stderr; an exception escaping fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = tle_dump(argv)
        except BaseException:  # noqa: BLE001 - main returns its status, it never raises
            pytest.fail(f"tle-dump {' '.join(argv)} raised:\n{traceback.format_exc()}")
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return path


def line_of(source: str, needle: str, nth: int = 0) -> int:
    """The 1-based line of the ``nth`` line of ``source`` that contains ``needle``."""
    return [i for i, ln in enumerate(source.splitlines(), 1) if needle in ln][nth]


def lowering_agrees(path: Path, name: str = "k") -> None:
    """The generated Gluon performs the verified barrier operations on a grid of the params."""
    from .adversarial_oracles import lowering_problems

    assert lowering_problems(path) == []


# ------------------------------------------------------------------ TMA copies and reader views

def tma_view_kernel(view: str) -> str:
    """A capacity-2 pipe whose writer fills ``t`` and ``u`` by TMA copies; its one declared
    reader ``a`` sees ``view``."""
    return HEAD + f'''
@tle.jit(num_warps=4)
def k(x_desc, y_ptr, N):
    p = tle.pipe(capacity=2, readers=("a",), t=tle.gpu.alloc([2, BM, BN], tl.bfloat16),
                 u=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, N)), (drain, (p, y_ptr, N))], [4], [232])


def fill(p, x_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])
        tle.gpu.tma_load(s.u, x_desc, [i * BM, 0])
        w.commit(i)


def drain(p, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = p.reader("a", fields={view})
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + i * BM * BN + offs, v)


DEFAULT_CONFIG = {{"signature": {{"x_desc": "tensordesc<bf16[64, 64]>", "y_ptr": "*bf16",
                                 "N": "i32"}}, "constexprs": {{}}, "num_warps": 4, "grid": (1,)}}
'''


def test_a_tma_copy_into_a_field_no_reader_sees_is_refused_at_the_copy(tmp_path):
    src = tma_view_kernel('("t",)')
    path = write(tmp_path, "tma_unread", src)
    code, out, err = dump([str(path)])
    assert code == 1, err
    assert (f"{path}:{line_of(src, 'tma_load(s.u')}: error: field 'u' of pipe 'p' is filled by "
            f"this TMA copy but is read by no reader") in err
    assert "no expect-tx counts its bytes" in err and "[tma-window]" in err
    # the table tle-dump printed before would have counted t's bytes alone (8192)
    assert "expect-tx=8192" not in out


def test_the_same_copy_is_verified_when_a_view_contains_the_field(tmp_path):
    src = tma_view_kernel('("t", "u")')
    path = write(tmp_path, "tma_read", src)
    code, out, err = dump([str(path)])
    assert code == 0, err
    # one group of both fields: the commit expects both copies' bytes
    assert "expect-tx=16384" in out
    lowering_agrees(path)


def test_a_gather_into_a_field_no_reader_sees_is_a_register_store(tmp_path):
    """A gather (``tl.store(local_ptr(s.u), tl.load(ptrs))``) into a field of no group: no full
    barrier's per-thread cp.async arrive tracks it, so as a cp.async it was never waited for
    (in flight at the next acquire of the stage, or when the CTA exits). The lowering stores it
    through registers, which complete in program order; the read field ``t`` stays a cp.async
    gather."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import gluon_source

    gather = ("tl.load(y_ptr + i * BM * BN + tl.arange(0, BM)[:, None] * BN"
              " + tl.arange(0, BN)[None, :])")
    src = tma_view_kernel('("t",)') \
        .replace("tle.gpu.tma_load(s.u, x_desc, [i * BM, 0])",
                 f"tl.store(tle.gpu.local_ptr(s.u), {gather})") \
        .replace("tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])",
                 f"tl.store(tle.gpu.local_ptr(s.t), {gather})") \
        .replace("(fill, (p, x_desc, N))", "(fill, (p, y_ptr, N))") \
        .replace("def fill(p, x_desc, N)", "def fill(p, y_ptr, N)")
    path = write(tmp_path, "gather_unread", src)
    code, _, err = dump([str(path)])
    # the commit of t's group (gathers only) arrives per thread, no release of the register
    # load of u, and drain then overwrites that tile of y: a race since adversarial round 71
    # (race_order.releases), whose message round 72 made say so rather than call u's load a copy
    assert code == 1 and "[unread-field]" in err and "[memory-race]" in err, err
    assert "fill the slot with loaded tiles only" in err and "fills a slot of" not in err, err
    gluon = gluon_source((str(path), "k")).source
    fill = gluon.split("def fill(", 1)[1].split("@gluon.jit", 1)[0]
    assert "async_copy_global_to_shared(p_t.index(" in fill
    assert "async_copy_global_to_shared(p_u." not in fill and "p_u.index(_p_s1).store(" in fill
    lowering_agrees(path)


# ------------------------------------------------------------------ trip counts read from memory

def loaded_count_kernel(load: str) -> str:
    """``n`` is read from memory at kernel level; the reader waits under ``if M >= 1:`` with
    ``M = n - 1``, the writer commits under ``if n >= 2:`` (the same condition over the
    integers)."""
    return f'''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def k(a_ptr, n_ptr):
    n = {load}
    M = n - 1
    p = tle.pipe(capacity=1, m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(wr, (p, a_ptr, M)), (rd, (p, a_ptr, n))], [4], [232])


def wr(p, a_ptr, M):
    offs = tl.arange(0, 64)
    r = p.reader()
    if M >= 1:
        res = r.wait(0)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(0)
        tl.store(a_ptr + offs, v)


def rd(p, a_ptr, n):
    offs = tl.arange(0, 64)
    w = p.writer()
    if n >= 2:
        s = w.acquire(0)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + offs))
        w.commit(0)
'''


def _compile(path: Path, n_type: str):
    from tle_compiler.lowering import compile_kernel

    return compile_kernel((str(path), "k"), {"a_ptr": "*fp32", "n_ptr": n_type})


def test_the_verifier_reads_a_loaded_count_as_a_signed_integer(tmp_path):
    """What the compile has to hold the GPU to: the protocol is proved for every integer n,
    where n_ptr points to signed integers. With no signature typing n_ptr, that is all tle-dump
    claims (bounded, exit 3: adversarial round 48): through a *u32 n_ptr, `M >= 1` of `M = n -
    1` is an unsigned compare, true at n = 0, where `n >= 2` is false and nothing is
    committed."""
    path = write(tmp_path, "loaded", loaded_count_kernel("tl.load(n_ptr)"))
    code, _, err = dump([str(path)])
    assert code == 3 and "proved for every value of n (every integer n)" in err, err
    assert "only for n_ptr in signed integer element types of 32 or 64 bits" in err, err


@pytest.mark.parametrize("n_type", ["*u32", "*u8", "*i8", "*i16", "*i64", "*fp32"])
def test_a_protocol_param_loaded_as_anything_but_i32_is_refused_at_its_line(tmp_path, n_type):
    pytest.importorskip("triton.experimental.gluon")
    src = loaded_count_kernel("tl.load(n_ptr)")
    path = write(tmp_path, "loaded", src)
    with pytest.raises(TleError) as e:
        _compile(path, n_type)
    assert e.value.check == "signature"
    assert e.value.loc.line == line_of(src, "M = n - 1")
    assert ("'M', which partition 'wr' receives as 'M' and its pipe events depend on, comes "
            "from a load") in str(e.value)
    assert f"of type {n_type[1:]}" in str(e.value)


HELPER = '''


def count_of(p):
    x = tl.load(p)
    return x
'''


def test_a_count_an_atomic_returns_is_read_from_memory_too(tmp_path):
    """``tl.atomic_add`` returns the old value of its pointee: a u32 as a load of it does."""
    pytest.importorskip("triton.experimental.gluon")
    path = write(tmp_path, "atomic", loaded_count_kernel("tl.atomic_add(n_ptr, 0)"))
    with pytest.raises(TleError) as e:
        _compile(path, "*u32")
    assert e.value.check == "signature" and "of type u32" in str(e.value)
    assert _compile(path, "*i32") is not None


def test_a_loaded_count_passed_inside_a_tuple_is_refused_too(tmp_path):
    """``meta = (M, 5)`` handed to both partitions, which unpack it: the tuple's item is what the
    events depend on."""
    pytest.importorskip("triton.experimental.gluon")
    src = loaded_count_kernel("tl.load(n_ptr)") \
        .replace("    M = n - 1\n", "    M = n - 1\n    meta = (M, 5)\n") \
        .replace("(wr, (p, a_ptr, M)), (rd, (p, a_ptr, n))",
                 "(wr, (p, a_ptr, meta)), (rd, (p, a_ptr, meta))") \
        .replace("def wr(p, a_ptr, M):\n", "def wr(p, a_ptr, meta):\n    M, c = meta\n") \
        .replace("def rd(p, a_ptr, n):\n", "def rd(p, a_ptr, meta):\n    M, c = meta\n") \
        .replace("    if n >= 2:\n", "    if M + 1 >= 2:\n")
    path = write(tmp_path, "tuple", src)
    # without a signature, proved only where n_ptr points to signed integers (round 48)
    code, _, err = dump([str(path)])
    assert code == 3, err
    assert "only for n_ptr in signed integer element types of 32 or 64 bits" in err, err
    with pytest.raises(TleError) as e:
        _compile(path, "*u32")
    assert "'M', which partition 'wr' receives as 'meta'" in str(e.value)
    assert _compile(path, "*i32") is not None


def test_a_loaded_count_computed_in_a_helper_is_refused_too(tmp_path):
    """The helper's value reaches the partitions through the kernel's own name (the protocol's
    param is named after the helper's variable)."""
    pytest.importorskip("triton.experimental.gluon")
    path = write(tmp_path, "loaded", loaded_count_kernel("count_of(n_ptr)") + HELPER)
    with pytest.raises(TleError) as e:
        _compile(path, "*u32")
    assert e.value.check == "signature" and "of type u32" in str(e.value)


@pytest.mark.parametrize("load,n_type", [("tl.load(n_ptr)", "*i32"),
                                         ("tl.load(n_ptr).to(tl.int32)", "*u32"),
                                         ("tl.load(n_ptr).to(tl.int32)", "*i64"),
                                         ("tl.load(n_ptr)\n    n = n.to(tl.int32)", "*u32"),
                                         ("tl.load(n_ptr).to(tl.int64)", "*i64"),
                                         # (a raw *i1 load is refused: round 50)
                                         ("tl.load(n_ptr).to(tl.int32)", "*i1")])
def test_an_i32_loaded_count_compiles_with_the_verified_signed_compares(tmp_path, load, n_type):
    pytest.importorskip("triton.experimental.gluon")
    path = write(tmp_path, "loaded", loaded_count_kernel(load))
    ttgir = _compile(path, n_type).asm["ttgir"]
    # (a cast to i64 is modelled by the frontend: it computes what follows in i64)
    assert "arith.cmpi sge" in ttgir and "arith.cmpi uge" not in ttgir


def test_unchecked_a_u32_count_compiles_to_the_unsigned_compare_the_verifier_never_read(
        tmp_path, monkeypatch):
    """The hazard the refusal closes: without the check the condition ``M >= 1`` is compiled as
    an unsigned compare of the u32 ``n - 1``, true at ``n = 0``, where the writer's ``n >= 2``
    is false: the reader would wait for a commit that never comes."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import loaded_params

    # the compile's signature checks (signature_checks.check_signature) look it up there
    monkeypatch.setattr(loaded_params, "check_loaded_params", lambda info, sig: None)
    path = write(tmp_path, "loaded", loaded_count_kernel("tl.load(n_ptr)"))
    ttgir = _compile(path, "*u32").asm["ttgir"]
    # MLIR's integers carry no sign: the compare says how the u32 is read
    assert "tt.load %n_ptr : !tt.ptr<i32>" in ttgir
    assert "arith.cmpi uge" in ttgir


# ------------------------------------------------------------------ warps and register budgets

EXCHANGE = Path(__file__).parent / "fixtures" / "named_barrier" / "exchange.ok.py"
EXCHANGE_SIG = {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_a_ptr": "*fp32", "out_b_ptr": "*fp32",
                "N": "i32"}


def exchange_with(tmp_path: Path, num_warps: int, worker_warps: int) -> Path:
    """The named-barrier exchange fixture with its default partition on ``num_warps`` warps and
    its worker on ``worker_warps`` (24 registers, the least setmaxnreg takes)."""
    src = EXCHANGE.read_text().replace("@tle.jit\n", f"@tle.jit(num_warps={num_warps})\n") \
        .replace("], [4], [232])", f"], [{worker_warps}], [24])")
    return write(tmp_path, f"exchange_{num_warps}_{worker_warps}", src)


def test_partitions_of_more_warps_than_a_cta_holds_are_refused(tmp_path):
    """32 + 16 warps: Triton compiles the kernel (48 warps, 1536 threads), which no launch
    accepts (a CTA has at most 1024 threads). tle-dump proved it before."""
    path = exchange_with(tmp_path, 32, 16)
    code, _, err = dump([str(path)])
    assert code == 1, err
    assert "runs 48 warps (side_a: 32, side_b: 16)" in err and "[bad-warps]" in err
    assert dump([str(exchange_with(tmp_path, 16, 16))])[0] == 0  # 32 warps: a full CTA


def test_a_launch_num_warps_that_overfills_the_cta_is_refused(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    path = exchange_with(tmp_path, 16, 16)
    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "exchange"), EXCHANGE_SIG, num_warps=32)
    assert e.value.check == "bad-warps" and "runs 48 warps in one CTA" in str(e.value)
    assert compile_kernel((str(path), "exchange"), EXCHANGE_SIG, num_warps=16).metadata \
        .num_warps == 32


# ------------------------------------------------------------------ what was checked and holds

COPY_T = "        tle.gpu.tma_load(s.t, x_desc, [i * BM, 0])\n"
COPY_U = "        tle.gpu.tma_load(s.u, x_desc, [i * BM, 0])\n"
TMA_WINDOWS = {
    # the copy into t moved to where its window's expect-tx cannot count it
    "under_a_data_if": ("        if tl.load(f_ptr + i) > 0:\n    " + COPY_T, "tma_load(s.t",
                        "tma-window"),
    "in_a_while": ("        j = tl.load(f_ptr + i)\n        while j > 0:\n    " + COPY_T
                   + "            j -= 1\n", "tma_load(s.t", "tma-window"),
    "in_a_data_loop": ("        for j in range(tl.load(f_ptr + i)):\n    " + COPY_T,
                       "tma_load(s.t", "tma-window"),
    "under_an_affine_if": ("        if i % 2 == 0:\n    " + COPY_T, "tma_load(s.t",
                           "tma-window"),
    "twice": (COPY_T + COPY_T, "tma_load(s.t", "tma-window"),
    "destination_chosen_at_run_time": (
        "        tle.gpu.tma_load(s.t if i % 2 == 0 else s.u, x_desc, [i * BM, 0])\n",
        "tma_load(s.t if", "unknown-slot"),
}


@pytest.mark.parametrize("case", sorted(TMA_WINDOWS))
def test_a_tma_copy_whose_window_bytes_are_not_static_is_refused_at_the_copy(tmp_path, case):
    copy, at, check = TMA_WINDOWS[case]
    src = tma_view_kernel('("t", "u")').replace(COPY_T, copy) \
        .replace("def k(x_desc, y_ptr, N)", "def k(x_desc, y_ptr, f_ptr, N)") \
        .replace("(fill, (p, x_desc, N))", "(fill, (p, x_desc, f_ptr, N))") \
        .replace("def fill(p, x_desc, N)", "def fill(p, x_desc, f_ptr, N)") \
        .replace('"y_ptr": "*bf16",', '"y_ptr": "*bf16", "f_ptr": "*i32",')
    path = write(tmp_path, case, src)
    code, _, err = dump([str(path)])
    assert code == 1, err
    assert f"{path}:{line_of(src, at, 1 if case == 'twice' else 0)}: error:" in err
    assert f"[{check}]" in err


def test_a_reader_copying_into_its_slot_is_refused(tmp_path):
    src = tma_view_kernel('("t", "u")').replace(
        "        v = tl.load(tle.gpu.local_ptr(res.slot.t))\n",
        "        v = tl.load(tle.gpu.local_ptr(res.slot.t))\n"
        "        tle.gpu.tma_load(res.slot.t, x_desc, [i * BM, 0])\n") \
        .replace("(drain, (p, y_ptr, N))", "(drain, (p, y_ptr, x_desc, N))") \
        .replace("def drain(p, y_ptr, N)", "def drain(p, y_ptr, x_desc, N)")
    path = write(tmp_path, "reader_copy", src)
    code, _, err = dump([str(path)])
    assert code == 1 and "[reader-write]" in err
    assert f":{line_of(src, 'tma_load(res.slot.t')}: error:" in err


def named_skip_kernel(k: str) -> str:
    """The exchange of a named pipe x (wa -> wb) whose release is implied by wb's commit of y,
    except at iteration ``k``, where wb commits nothing (its later commits shift down one index,
    so every other rule holds)."""
    return f'''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def k(a_ptr, N):
    x = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, 64], tl.float32))
    y = tle.pipe(capacity=1, m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(wa, (x, y, a_ptr, N)), (wb, (x, y, a_ptr, N))], [4], [232])


def wa(x, y, a_ptr, N):
    offs = tl.arange(0, 64)
    w = x.writer()
    r = y.reader()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + offs))
        w.commit(t)
        if t < {k}:
            res = r.wait(t)
            tl.store(a_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.m)))
            r.release(t)
        if t > {k}:
            res = r.wait(t - 1)
            tl.store(a_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.m)))
            r.release(t - 1)


def wb(x, y, a_ptr, N):
    r = x.reader()
    w = y.writer()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(t)
        if t < {k}:
            s = w.acquire(t)
            tl.store(tle.gpu.local_ptr(s.m), v)
            w.commit(t)
        if t > {k}:
            s = w.acquire(t - 1)
            tl.store(tle.gpu.local_ptr(s.m), v)
            w.commit(t - 1)
'''


@pytest.mark.parametrize("k,use,plain_code", [("7", 8, 0), ("N // 2", 2, 3)])
def test_a_named_release_whose_hop_is_missing_at_one_iteration_is_rejected(tmp_path, k, use,
                                                                            plain_code):
    """(With mbarriers the N // 2 kernel is bounded, not rejected: N and N // 2 are two params.)"""
    src = named_skip_kernel(k)
    path = write(tmp_path, "skip", src)
    code, _, err = dump([str(path)])
    assert code == 1, err
    assert f"this acquire (use {use}) is not ordered after the reader's release of use " \
           f"{use - 1}" in err and "[named-release]" in err
    # with mbarriers the same kernel is fine: the rejection is rule 10's
    plain = write(tmp_path, "skip_plain", src.replace(', barrier="named"', ""))
    assert dump([str(plain)])[0] == plain_code


ATTENTION = Path(__file__).resolve().parent.parent / "tle_kernels" / "examples" / \
    "attention_tile.py"
S_READ = "                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale\n"
DELAYED = {
    "if_else": "        if t > 0:\n            r.release(t - 1)\n        else:\n"
               "            m_i = m_i + 0.0\n",
    "if_that_computes": "        if t > 0:\n            l_i = l_i * 1.0\n"
                        "            r.release(t - 1)\n",
    "through_a_helper": "        if t > 0:\n            let_go(r, t - 1)\n",
}


@pytest.mark.parametrize("case", sorted(DELAYED))
def test_a_pipelined_loop_releases_a_slot_only_after_its_carried_wgmma(tmp_path, case):
    """attention_tile with ``wgmma_pipeline=True`` and kv(t - 1) released in iteration t, the
    P·V wgmma of t - 1 in flight across the back-edge: every release the lowering emits comes
    after a wait that retires the wgmmas reading its slot (the Gluon trace's release check)."""
    src = ATTENTION.read_text() \
        .replace("@tle.jit(num_warps=4)", "@tle.jit(num_warps=4, wgmma_pipeline=True)") \
        .replace("def attention_tile(", "def k(") \
        .replace(S_READ, S_READ + DELAYED[case]).replace("        r.release(t)\n", "") \
        .replace("    out = acc / l_i[:, None]\n",
                 "    if NT > 0:\n        r.release(NT - 1)\n    out = acc / l_i[:, None]\n")
    src += "\n\ndef let_go(r, i):\n    r.release(i)\n"
    path = write(tmp_path, case, src)
    code, _, err = dump([str(path)])
    assert code == 0, err
    lowering_agrees(path)


def test_the_json_table_does_not_call_an_unbound_expect_tx_zero(tmp_path):
    """A TMA-filled field shaped by constexprs tle-dump leaves unbound: the text table prints
    ``expect-tx=?``; the JSON said 0 bytes, what a group without TMA copies has. It is null,
    and the bytes once the constexprs are given."""
    import json

    src = tma_view_kernel('("t", "u")') \
        .replace("def k(x_desc, y_ptr, N):", "def k(x_desc, y_ptr, N, BM: tl.constexpr):") \
        .replace('"N": "i32"}', '"N": "i32", "BM": "constexpr"}') \
        .replace('"constexprs": {}', '"constexprs": {"BM": 64}') \
        .replace("\nBM = tl.constexpr(64)\n", "\n")
    src = src.replace("(fill, (p, x_desc, N))", "(fill, (p, x_desc, N, BM))") \
        .replace("def fill(p, x_desc, N):", "def fill(p, x_desc, N, BM: tl.constexpr):") \
        .replace("(drain, (p, y_ptr, N))", "(drain, (p, y_ptr, N, BM))") \
        .replace("def drain(p, y_ptr, N):", "def drain(p, y_ptr, N, BM: tl.constexpr):")
    path = write(tmp_path, "tma_unbound", src)
    code, out, err = dump([str(path)])
    assert code == 0, err
    assert "expect-tx=?" in out
    full = [b for b in json.loads(dump(["--format", "json", str(path)])[1])["kernels"][0]
            ["barriers"] if b["kind"] == "full"]
    assert full and all(b["tma"] == ["t", "u"] and b["expect_tx"] is None for b in full)
    bound = json.loads(dump(["--format", "json", "--param", "BM=64", str(path)])[1])
    assert {b["expect_tx"] for b in bound["kernels"][0]["barriers"] if b["kind"] == "full"} \
        == {2 * 64 * 64 * 2}


FLOAT_COUNT = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def k(a_ptr, N):
    n = N * 1.0
    p = tle.pipe(capacity=1, m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(wr, (p, a_ptr, n)), (rd, (p, a_ptr, n))], [4], [232])


def wr(p, a_ptr, n):
    offs = tl.arange(0, 64)
    r = p.reader()
    if n >= 1:
        res = r.wait(0)
        v = tl.load(tle.gpu.local_ptr(res.slot.m))
        r.release(0)
        tl.store(a_ptr + offs, v)


def rd(p, a_ptr, n):
    offs = tl.arange(0, 64)
    w = p.writer()
    if (n + 16777216) - 16777216 >= 1:
        s = w.acquire(0)
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + offs))
        w.commit(0)
'''


@pytest.mark.parametrize("spelling", ["N * 1.0", "N / 1", "N + 0.0", "tl.fdiv(N, 1)",
                                      "tl.sqrt(N * N * 1.0)"])
def test_a_count_computed_in_floats_is_refused_at_its_compile(tmp_path, spelling):
    """``n = N * 1.0`` is an fp32: at N = 1 the GPU's ``(1.0 + 16777216.0) - 16777216.0`` is 0.0
    (16777217 rounds to 16777216 in fp32), so the writer skips the commit the reader waits for.
    The frontend read it as an opaque integer param (tle-dump verified the kernel) until a value
    the kernel body computes in floats stayed a float in the partitions (frontend round 9): now
    the events under ``if n >= 1:`` depend on data, so tle-dump rejects the kernel at that line
    (non-affine-if) and the compile refuses it there too; the same kernel in integers verifies
    and compiles."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    sig = {"a_ptr": "*fp32", "N": "i32"}
    src = FLOAT_COUNT.replace("n = N * 1.0", f"n = {spelling}")
    path = write(tmp_path, "float_count", src)
    code, _, err = dump([str(path)])
    cond = line_of(src, "    if n >= 1:")
    if spelling == "tl.fdiv(N, 1)":
        # Triton 3.6 takes floats in tl.fdiv only ("both operands of fdiv must have floating
        # scalar type"): refused at the call since adversarial round 26
        assert code == 1 and "tl.fdiv takes floating operands" in err, err
        return
    assert code == 1 and f"float_count.py:{cond}: error:" in err and "[non-affine-if]" in err
    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "k"), sig)
    assert e.value.check == "non-affine-if" and e.value.loc.line == cond
    ints = write(tmp_path, "int_count", FLOAT_COUNT.replace("n = N * 1.0", "n = N * 1"))
    assert dump([str(ints)])[0] == 0
    assert compile_kernel((str(ints), "k"), sig) is not None


def test_loaded_values_the_events_do_not_depend_on_keep_their_types(tmp_path):
    """A loaded fp32 scale and a u32 offset handed to a partition for its math only: no event
    depends on them, so the compile takes them as they are."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    src = EXCHANGE.read_text() \
        .replace("def exchange(a_ptr, b_ptr, out_a_ptr, out_b_ptr, N):\n",
                 "def exchange(a_ptr, b_ptr, out_a_ptr, out_b_ptr, N, n_ptr):\n"
                 "    scale = tl.load(a_ptr)\n    off = tl.load(n_ptr)\n") \
        .replace("(side_a, (max0, max1, a_ptr, out_a_ptr, N))",
                 "(side_a, (max0, max1, a_ptr, out_a_ptr, N, scale, off))") \
        .replace("def side_a(max0, max1, a_ptr, out_ptr, N):\n",
                 "def side_a(max0, max1, a_ptr, out_ptr, N, scale, off):\n") \
        .replace("        tl.store(out_ptr + p * 64 + offs, tl.maximum(mine, theirs))\n\n\n"
                 "def side_b",
                 "        tl.store(out_ptr + p * 64 + offs + (off & 0), "
                 "tl.maximum(mine, theirs) * scale)\n\n\ndef side_b")
    assert "scale)\n\n\ndef side_b" in src
    path = write(tmp_path, "math_only", src)
    assert dump([str(path)])[0] == 0
    assert compile_kernel((str(path), "exchange"), {**EXCHANGE_SIG, "n_ptr": "*u32"}) is not None


ACCESS_COUNT = '''
import triton.language as tl

import tle_compiler as tle


@tle.jit
def k(a_ptr, n_ptr):
    n = tl.load(n_ptr)
    M = n - 1
    p = tle.pipe(capacity=1, m=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(wr, (p, a_ptr, n)), (rd, (p, a_ptr, M))], [4], [232])


def wr(p, a_ptr, n):
    offs = tl.arange(0, 64)
    w = p.writer()
    s = w.acquire(0)
    if n >= 1:
        tl.store(tle.gpu.local_ptr(s.m), tl.load(a_ptr + offs))
    w.commit(0)


def rd(p, a_ptr, M):
    offs = tl.arange(0, 64)
    r = p.reader()
    res = r.wait(0)
    if M >= 0:
        tl.store(a_ptr + offs, tl.load(tle.gpu.local_ptr(res.slot.m)))
    r.release(0)
'''


def test_a_loaded_value_that_decides_a_slot_access_is_refused_too(tmp_path):
    """No event depends on ``n`` here, only whether the slot is written (``n >= 1``) and read
    (``M >= 0``, the same over the integers: verified). Through a ``*u32`` at n = 0 the read
    runs (``0xffffffff >= 0`` unsigned) and the write does not: the reader reads a slot nothing
    wrote."""
    pytest.importorskip("triton.experimental.gluon")
    path = write(tmp_path, "access", ACCESS_COUNT)
    # without a signature, proved only where n_ptr points to signed integers (round 48)
    code, _, err = dump([str(path)])
    assert code == 3, err
    assert "only for n_ptr in signed integer element types of 32 or 64 bits" in err, err
    with pytest.raises(TleError) as e:
        _compile(path, "*u32")
    assert e.value.check == "signature" and "of type u32" in str(e.value)
    assert _compile(path, "*i32") is not None

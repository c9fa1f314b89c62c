"""A fifty-sixth adversarial round (adversarial round 56): the new user's view, false refusals and
wrong readings of ordinary Triton code inside partitions. The idioms of Triton's own tutorials
(fused softmax, layer norm, the flash-attention forward's online softmax with tl.where masks and
``tl.dot(..., acc=)``, ``tl.cdiv``, ``tl.multiple_of`` / ``tl.max_contiguous`` hints,
``tl.static_assert``, ``tl.device_print``, ``tl.range`` loop options, ``tl.make_block_ptr`` /
``tl.advance``, ``tl.make_tensor_descriptor``, helpers from another module, early ``return``)
placed in producer / consumer partitions around pipe events. Each case is a small kernel read by
tle-dump's main(); where it is about what Triton 3.6 does, a plain ``@triton.jit`` kernel is
compiled for sm_90a on the CPU (tests/adversarial_oracles.py), and where a verified body's math is
the point, it is compiled both by plain Triton and through the lowering and the stored values
compared (tests/triton_diff.py, as tests/test_lowering_matches_triton.py does).

Bugs found, one line each (before the fixes that came with this file):

- a tuple indexed by the variable of a ``tl.static_range`` loop (``ab = (x, y); for j in
  tl.static_range(2): ... ab[j]``), which Triton 3.6 compiles (the variable is a constexpr in
  each unrolled iteration), was refused ("a tuple's index must be a constant"), for tuples of
  tiles, of numbers, of slot fields and of pipe handles alike, and through a helper given the
  variable (``pick(ab, j)``), or over a name a plain assignment bound before (``j = 5``);
  FIXED: such a loop is built unrolled, its body once per value with the variable bound to it
  as a constexpr (build.py ``indexes_by`` / ``unrolled``), as Triton generates it;
  the verdict is the unrolled events' (a release before the read, a mismatched index: rejected)
  and an unrolling past 16384 statements is refused as a loop kept whole is (check bad-loop).
  The refusal of an index on a range / tl.range variable now says to loop with tl.static_range.
- ``f = 1`` then ``if f: m = N`` in a partition: the builder took the folded branch alone where
  Triton 3.6 builds a run-time scf.if (a plain-assigned number is a tensor), so ``m`` bound in
  one branch only and read after it, and a ``tl.static_assert(False)`` in the branch that does
  not run, were verified, and Triton refuses both ("m is not defined", the assertion); FIXED:
  such an ``if`` is built as an ``if`` on a run-time value (constexpr_rules
  ``tensor_condition``): both branches, Triton's names after it; the lowered Gluon keeps the
  ``if`` (or, where the branch that never runs holds pipe events, only the one that runs).
- a name bound to a run-time value that is no affine one (``n = tl.cdiv(N, 64)``) lost being
  run-time when bound (protocol.py ``bind_name`` rebuilt the value without it): ``(n - 100) //
  8`` was read with Python's flooring division where Triton's (and the Gluon's) truncates, so a
  reader looping ``14 + q`` times at N = 1 was verified for 1 window against a writer's 1 and
  waits a second on the GPU (a hang verified; so through a tuple or a helper's result), where
  ``n -= 100`` or ``m = n - 100`` before the division were refused as divisions of a
  compile-time number; and ``8 * n`` was taken for a compile-time number, so the matmul
  tutorial's grouped ordering (``num_pid_in_group = GROUP_M * num_pid_n``, then ``pid //
  num_pid_in_group``) was refused as a division of a tensor constant; FIXED: the binding keeps
  ``runtime`` (the bundled kernels' verdicts and Gluon are unchanged).
- the persistent loop of Triton's tutorials (``for tile in range(pid, N, num_programs)``) around
  pipe events was refused with "the step must be a non-zero integer literal or constant" alone;
  FIXED: the refusal says what to write (a counter over ``tl.cdiv(N - pid, np)`` and ``pid + k *
  np`` in the body, which is verified).
- ``tl.dot(..., input_precision="tf32")`` (and any keyword the lowering takes at its default
  only) was refused as "not supported by the lowering (only its default, None)" without saying
  what to write; FIXED: it says to leave the keyword out where its default computes what is
  meant.
- ``tl.make_tensor_descriptor`` (and ``tl.load_tensor_descriptor`` /
  ``tl.store_tensor_descriptor``) was refused by the lowering with no word of what to write, and
  a descriptor's ``k_desc.load([...])`` with "cannot be called in a kernel" alone; FIXED: both
  say what to write (a host-side TensorDescriptor argument and tle.gpu.tma_load into a slot, or
  a tensor of pointers), the first where the kernel is read (check unlowered-call).

Checked and held (pinned below where a verdict rests on it): fused softmax, layer norm with a
masked mean and variance, the online softmax of the flash-attention forward (``tl.where`` masks
to ``-inf``, ``tl.math.exp2``, ``alpha`` rescales, ``tl.dot(p, v, acc=acc)``, a helper from
another module dividing by ``l_i``, ``tl.cdiv`` grids, ``tl.multiple_of`` / ``tl.max_contiguous``
hints, ``tl.static_assert``, ``tl.device_print``), ``tl.sum(..., keep_dims=True)``, tensor
members (``t.sum(1)``, ``t.max(axis=0)``), ``tl.expand_dims`` / ``tl.broadcast_to``, a helper
returning a tuple, ``tl.range`` over a ``tl.cdiv``, ``tl.dot(..., out_dtype=tl.float32)`` and
``acc += tl.dot(...)``, the matmul tutorial's producer (masks on K, pointer increments
``a_ptrs += BK * stride_ak``) once its grouped ordering reads: verified, lowered, and (where
compared) computing what Triton computes; a ``tl.cdiv`` the kernel body binds and hands to a
partition divides as C's there. Refused with their line and what to write: ``tl.range(..., num_stages=3)``,
``tl.make_block_ptr`` / ``tl.advance``, ``tl.clamp`` / ``tl.cumsum``, an early ``return``
before pipe events, ``tl.dot`` of 32 rows (wgmma's 64), ``range(0, M, 16)`` of an unbounded
``M`` (its i32 counter may wrap: bound it with tle.assume), ``cache_modifier`` with
``eviction_policy``, ``tl.permute``.

Open (no race or hang: Triton refuses the source, and the lowered kernel runs what was
verified): a conditional expression on such a tensor name (``f = 1; n = N if f else 2.0``) is
taken on its folded value, where Triton builds a run-time select and refuses operands of two
types ("inconsistent types int32 and fp32").

Found after the round, fixed with it: in the kernel body, `f = 1; if f: M = N` then `M` handed to
a partition (or stored) was verified, where Triton refuses `M` as not defined: the kernel body
binds no number as a constant, so the `if` did not fold, and its reading as an `if` on a
constexpr kept `M` (build.py s_If, constexpr_rules.tensor_condition: in the kernel body an `if`
on a name a plain assignment bound is a run-time one too).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .adversarial_oracles import lowering_problems, triton_compile_error, triton_ttir
from .adversarial_support import HEAD, dump, expect, get, kernel, loop, put, triton_k

#: a reader of N windows
N_WINDOWS = loop("for p in range(N):", get("p"))
#: a reader of 2 * N windows, two an iteration
TWO_N = loop("for p in range(N):", get("2 * p") + get("2 * p + 1"))


def _lowers_to_its_events(tmp_path: Path, text: str) -> None:
    path = tmp_path / "lowered.py"
    path.write_text(text)
    problems = lowering_problems(path)
    assert not problems, "\n".join(problems)


# ------------------------------------------- a tuple indexed by a tl.static_range variable

def test_triton_indexes_a_tuple_by_a_static_range_variable(tmp_path, monkeypatch):
    """The oracle: under tl.static_range the variable is a constexpr, and `ab[j]` picks the item
    of each unrolled iteration (two stores, of 1.0 and 2.0); under range it is a tensor, and
    Triton refuses the subscript."""
    body = "ab = (1.0, 2.0)\nfor j in LOOP(2):\n    tl.store(x_ptr + j, ab[j])"
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(body.replace("LOOP", "tl.static_range")),
                       "r56tup")
    assert ttir.count("tt.store") == 2 and "2.000000e+00" in ttir, ttir
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(body.replace("LOOP", "range")),
                                "r56tupr") is not None


#: the writer fills its slot from one of two tiles, picked by a tl.static_range variable
TILES = ("a = tl.load(x_ptr + tl.arange(0, 64))\nb = tl.load(x_ptr + 64 + tl.arange(0, 64))\n"
         "ab = (a, b)\n")
PICKED = {
    "a tile": TILES + loop("for j in tl.static_range(2):", put("2 * p + j").replace(
        "tl.load(x_ptr + tl.arange(0, 64))", "ab[j]")),
    "a computed index": TILES + loop("for j in tl.static_range(2):", put("2 * p + j").replace(
        "tl.load(x_ptr + tl.arange(0, 64))", "ab[(j + 1) % 2]")),
    "a reversed loop": TILES + loop("for j in tl.static_range(1, -1, -1):",
                                    put("2 * p + 1 - j").replace(
                                        "tl.load(x_ptr + tl.arange(0, 64))", "ab[j]")),
    "a tuple of offsets": "ofs = (0, 64)\n" + loop("for j in tl.static_range(2):", put(
        "2 * p + j").replace("x_ptr + tl.arange", "x_ptr + ofs[j] + tl.arange")),
    "a tuple of indices": "ix = (0, 1)\n" + loop("for j in tl.static_range(2):",
                                                 put("2 * p + ix[j]")),
    "through a helper": TILES + loop("for j in tl.static_range(2):", "fill(w, ab, 2 * p + j, j)"),
    # the loop binds a constexpr over a name a plain assignment bound (a tensor) before
    "a name bound before": TILES + "j = 5\n" + loop("for j in tl.static_range(2):", put(
        "2 * p + j").replace("tl.load(x_ptr + tl.arange(0, 64))", "ab[j]")),
}
FILL_HELPER = '''
def fill(w, ab, i, j):
    s = w.acquire(i)
    tl.store(tle.gpu.local_ptr(s.tile), ab[j])
    w.commit(i)
'''


@pytest.mark.parametrize("name", sorted(PICKED))
def test_a_tuple_indexed_by_a_static_range_variable_is_read(tmp_path, capsys, name):
    """Before: refused, "a tuple's index must be a constant when the kernel is read"."""
    writer = loop("for p in range(N):", PICKED[name])
    text = kernel(writer, TWO_N, extra=FILL_HELPER)
    expect(*dump(tmp_path, capsys, text), "verified")
    if name in ("a tile", "through a helper"):
        _lowers_to_its_events(tmp_path, text)


def test_the_unrolled_events_are_checked(tmp_path, capsys):
    """Each iteration's index is its own: a writer that commits 2 * p + j only for j = 0 (the
    tuple's item 1 is index 0 again) leaves the reader's odd windows uncommitted."""
    writer = "ix = (0, 0)\n" + loop("for p in range(N):", loop(
        "for j in tl.static_range(2):", put("2 * p + ix[j]")))
    code, err = dump(tmp_path, capsys, kernel(writer, TWO_N))
    expect(code, err, ("rejected",))


#: two pipes whose handles (and the slots of their waits) sit in tuples indexed by j
HANDLES = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    b = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, b, x_ptr, N)), (consume, (a, b, y_ptr, N))],
                            [4], [232])


def produce(a, b, x_ptr, N):
    ws = (a.writer(), b.writer())
    for p in range(N):
        for j in tl.static_range(2):
            s = ws[j].acquire(p)
            tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + j * 64 + tl.arange(0, 64)))
            ws[j].commit(p)


def consume(a, b, y_ptr, N):
    rs = (a.reader(), b.reader())
    for p in range(N):
        got = (rs[0].wait(p), rs[1].wait(p))
        fields = (got[0].slot.tile, got[1].slot.tile)
        for j in tl.static_range(2):
            READ
        for j in tl.static_range(2):
            RELEASE


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {"C": 5}}
'''
READ_J = "tl.store(y_ptr + j * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(fields[j])))"


def _handles(read: str, release: str) -> str:
    return HANDLES.replace("READ", read).replace("RELEASE", release)


def test_pipe_handles_and_slot_fields_indexed_by_a_static_range_variable(tmp_path, capsys):
    """Before: refused at `ws[j].acquire(p)`."""
    text = _handles(READ_J, "rs[j].release(p)")
    expect(*dump(tmp_path, capsys, text), "verified")
    _lowers_to_its_events(tmp_path, text)


@pytest.mark.parametrize("read,release,want", [
    # the release of the first pipe before the read of its slot in the unrolled second loop
    ("rs[j].release(p)\n            " + READ_J, "pass", "[access-outside-window]"),
    # the first iteration releases the other pipe's index p + 0, the second p + 1
    (READ_J, "rs[1 - j].release(p + j)", "[index-mismatch]"),
])
def test_unrolled_handle_misuse_is_rejected(tmp_path, capsys, read, release, want):
    code, err = dump(tmp_path, capsys, _handles(read, release))
    expect(code, err, ("rejected", want))


def test_a_range_variable_index_says_to_loop_with_static_range(tmp_path, capsys):
    """Triton refuses `ab[j]` of a range variable (a tensor): the refusal says what to write."""
    writer = TILES + loop("for j in range(2):", put("j").replace(
        "tl.load(x_ptr + tl.arange(0, 64))", "ab[j]"))
    code, err = dump(tmp_path, capsys, kernel(writer, loop("for p in range(2):", get("p"))))
    expect(code, err, ("rejected", "`ab[j]`: a tuple's index must be a constant",
                       "a run-time value, such as the variable of a range / tl.range loop",
                       "loop with `tl.static_range`"))


def test_an_unrolling_past_the_bound_is_refused(tmp_path, capsys):
    """Built unrolled, a loop of 20000 iterations is refused as one kept whole is."""
    writer = "ix = (0, 1)\n" + loop("for j in tl.static_range(20000):", "q = ix[j % 2]")
    code, err = dump(tmp_path, capsys, kernel(writer + put("0"), loop("for p in range(1):",
                                                                      get("p"))))
    expect(code, err, ("rejected", "[bad-loop]", "unrolls to more than 16384 statements"))


# ------------------------------------------- an `if` on a name a plain assignment bound

def test_triton_makes_an_if_on_an_assigned_number_a_runtime_if(tmp_path, monkeypatch):
    """The oracle: `f = 1; if f:` is an scf.if on a tensor: a name bound in the then branch only
    is not defined after it, and a tl.static_assert in the else branch is evaluated; bound in
    both branches it compiles. Under `f: tl.constexpr = 1` the else branch is never visited."""
    tail = "tl.store(x_ptr + m, 1.0)"
    one = triton_compile_error(tmp_path, monkeypatch, triton_k(
        f"f = 1\nif f:\n    m = N\n{tail}"), "r56if1")
    assert one is not None and "m is not defined" in str(one), one
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(
        f"f = 1\nif f:\n    m = N\nelse:\n    tl.static_assert(False)\n    m = 2\n{tail}"),
        "r56if2") is not None
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(
        f"f = 1\nif f:\n    m = N\nelse:\n    m = 2\n{tail}"), "r56if3") is None
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(
        f"f: tl.constexpr = 1\nif f:\n    m = N\nelse:\n    tl.static_assert(False)\n{tail}"),
        "r56if4") is None


@pytest.mark.parametrize("branches,want", [
    ("if f:\n    m = N\n", ("m` is read here, but it is bound in one branch only")),
    ("if f:\n    m = N\nelse:\n    tl.static_assert(False)\n    m = 2\n",
     ("tl.static_assert failed")),
])
def test_an_if_on_an_assigned_number_is_refused_where_triton_refuses_it(tmp_path, capsys,
                                                                       branches, want):
    """Before: verified, the folded branch taken alone."""
    writer = "f = 1\n" + branches + loop("for p in range(m):", put("p"))
    code, err = dump(tmp_path, capsys, kernel(writer, N_WINDOWS))
    expect(code, err, ("rejected", want))


IF_WRITERS = {
    "both branches bind": "f = 1\nif f:\n    m = N\nelse:\n    m = 2\n"
                          + loop("for p in range(m):", put("p")),
    "events in the branch that runs": "f = 1\n" + loop("if f:", loop("for p in range(N):",
                                                                       put("p"))),
    "events in the else branch": "f = 0\nif f:\n    pass\n" + loop(
        "else:", loop("for p in range(N):", put("p"))),
    "inside the loop": loop("for p in range(N):", "f = 1\n" + loop("if f:", put("p"))),
    "a derived name": "f = 2\ng = f - 2\nif g:\n    pass\n" + loop(
        "else:", loop("for p in range(N):", put("p"))),
}


@pytest.mark.parametrize("name", sorted(IF_WRITERS))
def test_an_if_on_an_assigned_number_triton_compiles_stays_verified(tmp_path, capsys, name):
    text = kernel(IF_WRITERS[name], N_WINDOWS)
    expect(*dump(tmp_path, capsys, text), "verified")
    _lowers_to_its_events(tmp_path, text)


def test_events_in_the_branch_that_does_not_run_are_never_committed(tmp_path, capsys):
    writer = "f = 0\n" + loop("if f:", loop("for p in range(N):", put("p")))
    code, err = dump(tmp_path, capsys, kernel(writer, N_WINDOWS))
    expect(code, err, ("rejected", "[wait-never-committed]"))


def test_the_lowering_keeps_the_runtime_if(tmp_path, capsys):
    """The Gluon tests the tensor, as Triton's scf.if does."""
    path = tmp_path / "kernel.py"
    path.write_text(kernel(IF_WRITERS["both branches bind"], N_WINDOWS))
    from tle_compiler.cli.dump import main as tle_dump
    assert tle_dump(["-q", "--gluon", str(path)]) == 0
    out = capsys.readouterr().out
    assert "if gl.to_tensor(1):" in out and "m = 2" in out, out


# ------------------------------------------- tutorial idioms in the partitions

#: the flash-attention forward's consumer in the style of Triton's tutorial, with a helper from
#: another module (`scale_rows`), `tl.dot(..., acc=)`, hints, a static assertion and a print
ATTENTION = '''import triton
import triton.language as tl

import tle_compiler as tle
from helpers_mod import scale_rows

BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)
LOG2E = tl.constexpr(1.4426950408889634)


@tle.jit(num_warps=4)
def attention_tile(q_ptr, k_ptr, v_ptr, o_ptr, N_KV, sm_scale):
    NT = tl.cdiv(N_KV, BN)
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=2,
                  k=tle.gpu.alloc([2, BN, D], tl.bfloat16),
                  v=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, v_ptr, NT)),
                             (attend, (q, kv, o_ptr, sm_scale, NT, N_KV))],
                            [4], [232])


def loader(q, kv, q_ptr, k_ptr, v_ptr, NT):
    tl.static_assert(BN % 16 == 0)
    rows = tl.max_contiguous(tl.multiple_of(tl.arange(0, BN), BN), BN)
    tile = rows[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tl.arange(0, BM)[:, None] * D
                                                 + tl.arange(0, D)[None, :]))
    qw.commit(0)
    w = kv.writer()
    for t in tl.range(0, NT):
        slot = w.acquire(t)
LOAD
        w.commit(t)


def attend(q, kv, o_ptr, sm_scale, NT, N_KV):
    qk_scale = sm_scale * LOG2E
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, D], dtype=tl.float32)
    offs_n = tl.arange(0, BN)
    for t in range(NT):
        res = r.wait(t)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        qk = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)), tl.trans(k))
        qk = tl.where((t * BN + offs_n)[None, :] < N_KV, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(tle.gpu.local_ptr(res.slot.v))
        acc = tl.dot(p.to(tl.bfloat16), v, acc=acc)
        m_i = m_ij
        tl.device_print("m", m_i)
        r.release(t)
    acc = scale_rows(acc, l_i)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], acc)


DEFAULT_CONFIG = {
    "signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32",
                  "N_KV": "i32", "sm_scale": "fp32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''
HELPERS_MOD = '''import triton
import triton.language as tl


@triton.jit
def scale_rows(acc, l_i):
    return acc / l_i[:, None]
'''
LOADS = {
    "pointers": ("tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile))\n"
                 "tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))"),
    # the two fields filled by a tl.static_range loop over tuples of fields and pointers
    "fields by j": ("dst = (slot.k, slot.v)\nsrc = (k_ptr, v_ptr)\n"
                    "for j in tl.static_range(2):\n"
                    "    tl.store(tle.gpu.local_ptr(dst[j]), tl.load(src[j] + t * BN * D + tile))"),
}


def _attention(tmp_path: Path, load: str) -> Path:
    (tmp_path / "helpers_mod.py").write_text(HELPERS_MOD)
    path = tmp_path / "attention.py"
    path.write_text(ATTENTION.replace("LOAD", textwrap.indent(load, " " * 8)))
    return path


@pytest.mark.parametrize("load", sorted(LOADS))
def test_the_tutorial_attention_forward_is_verified_and_lowered(tmp_path, capsys, load):
    """`fields by j`: before, refused at `dst[j]`."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.cli.dump import main as tle_dump
    path = _attention(tmp_path, LOADS[load])
    assert tle_dump(["-q", "--gluon", str(path)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    for spelt in ("gl.max_contiguous(gl.multiple_of(", "warpgroup_mma(", "gl.exp2(",
                  "acc = (acc / l_i[:, None])"):
        assert spelt in out, out


REFUSED_LOADS = {
    "tl.make_tensor_descriptor": (
        "kd = tl.make_tensor_descriptor(k_ptr, shape=[NT * BN, D], strides=[D, 1], "
        "block_shape=[BN, D])\ntl.store(tle.gpu.local_ptr(slot.k), kd.load([t * BN, 0]))\n"
        "tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))",
        ("[unlowered-call]", "`tl.make_tensor_descriptor` is not supported by the lowering",
         "tle.gpu.tma_load")),
    "tl.make_block_ptr": (
        "kb = tl.make_block_ptr(k_ptr, (NT * BN, D), (D, 1), (t * BN, 0), (BN, D), (1, 0))\n"
        "tl.store(tle.gpu.local_ptr(slot.k), tl.load(kb))\n"
        "tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))",
        ("[unlowered-call]", "use a tensor of pointers")),
}


@pytest.mark.parametrize("name", sorted(REFUSED_LOADS))
def test_unlowered_tutorial_loads_say_what_to_write(tmp_path, capsys, name):
    """Before: tl.make_tensor_descriptor was refused by the lowering with no alternative."""
    load, want = REFUSED_LOADS[name]
    from .adversarial_support import run_dump
    code, _, err = run_dump(capsys, "-q", str(_attention(tmp_path, load)))
    expect(code, err, ("rejected", *want))
    assert "attention.py:37:" in err, err


def test_a_dot_keyword_at_another_value_says_what_to_write(tmp_path, capsys):
    """Before: "... (only its default, None); it would compute something else than the kernel
    says" alone. (``input_precision="tf32"`` of these bf16 operands, which Triton's wgmma does
    not read, lowers since lowering adversarial round 14: a precision Triton does not take is
    refused in these words.)"""
    from .adversarial_support import run_dump
    path = _attention(tmp_path, LOADS["pointers"])
    text = path.read_text()
    assert "tl.trans(k))\n" in text
    path.write_text(text.replace("tl.trans(k))\n", "tl.trans(k), input_precision=\"tf32x9\")\n"))
    code, _, err = run_dump(capsys, "-q", str(path))
    expect(code, err, ("rejected", "`tl.dot(..., input_precision=...)` is not supported by the "
                                   "lowering", "leave `input_precision=` out"))


def test_a_descriptor_method_says_what_to_write(tmp_path, capsys):
    """Before: "`k_desc.load` cannot be called in a kernel" alone."""
    writer = loop("for p in range(N):", put("p").replace("tl.load(x_ptr + tl.arange(0, 64))",
                                                         "x_ptr.load([0])"))
    code, err = dump(tmp_path, capsys, kernel(writer, N_WINDOWS))
    expect(code, err, ("rejected", "`x_ptr.load` cannot be called in a kernel",
                       "copy a tile into a slot with tle.gpu.tma_load(slot.field, x_ptr"))


@pytest.mark.parametrize("stmt,want", [
    ("for t2 in tl.range(0, N, num_stages=3):\n    pass", "num_stages=3) is not supported"),
    ("x = tl.clamp(tl.load(x_ptr + tl.arange(0, 64)), 0.0, 1.0)", "tl.minimum(tl.maximum("),
    ("x = tl.cumsum(tl.load(x_ptr + tl.arange(0, 64)), 0)", "a scan is not lowered"),
])
def test_other_tutorial_idioms_are_refused_with_what_to_write(tmp_path, capsys, stmt, want):
    code, err = dump(tmp_path, capsys, kernel(stmt + "\n" + loop("for p in range(N):", put("p")),
                                              N_WINDOWS))
    expect(code, err, ("rejected", want))


# ------------------------------------------- tutorial math: what Triton computes

#: bodies of the differential reading (tests/triton_diff.py: `t` a [32, 64] fp32 tile, stored
#: to y_ptr), with helpers beside `add`
BODIES = {
    "fused softmax": "m = tl.max(t, 1)\ne = tl.exp(t - m[:, None])\nssum = tl.sum(e, 1)\n"
                     "tl.store(y_ptr + p * 2048 + offs, e / ssum[:, None])",
    "layer norm": "cols = tl.arange(0, 64)\nmask = cols < M\nx = tl.where(mask[None, :], t, 0.0)\n"
                  "mean = tl.sum(x, axis=1) / M\n"
                  "xc = tl.where(mask[None, :], x - mean[:, None], 0.0)\n"
                  "var = tl.sum(xc * xc, axis=1) / M\nrstd = 1 / tl.sqrt(var + 1e-5)\n"
                  "tl.store(y_ptr + p * 2048 + offs, xc * rstd[:, None], mask=mask[None, :])",
    "keep_dims and members": "s = tl.sum(t, axis=1, keep_dims=True)\nmx = t.max(axis=0)\n"
                             "tl.store(y_ptr + p * 2048 + offs, t - s + mx[None, :] + t.sum(1)"
                             "[:, None])",
    "a helper's tuple": "m, s = stats(t)\n"
                        "tl.store(y_ptr + p * 2048 + offs, t * s[:, None] - m[:, None])",
    "tl.range over tl.cdiv": "acc = tl.zeros([32, 64], dtype=tl.float32)\n"
                             "for kk in tl.range(0, tl.cdiv(M, 16)):\n    acc += t\n"
                             "tl.store(y_ptr + p * 2048 + offs, acc)",
    # the static_range picks (before: refused)
    "tiles by j": "ab = (t, t * 2.0)\nsc = (1.0, 3.0)\nacc = tl.zeros([32, 64], dtype=tl.float32)\n"
                  "for j in tl.static_range(len(ab)):\n    acc += ab[j] * sc[j]\n"
                  "tl.store(y_ptr + p * 2048 + offs, acc)",
    "reversed, by j": "ab = (t, t * 2.0)\nacc = tl.zeros([32, 64], dtype=tl.float32)\n"
                      "for j in tl.static_range(1, -1, -1):\n    acc = acc * 2 + ab[j]\n"
                      "tl.store(y_ptr + p * 2048 + offs, acc)",
    "pairs by j": "ab = ((t, 1.0), (t * 2.0, 2.0))\nacc = tl.zeros([32, 64], dtype=tl.float32)\n"
                  "for j in tl.static_range(2):\n    x, w2 = ab[j]\n    acc += x * w2\n"
                  "tl.store(y_ptr + p * 2048 + offs, acc)",
    "a helper indexing by j": "ab = (t, t * 2.0)\nacc = tl.zeros([32, 64], dtype=tl.float32)\n"
                              "for j in tl.static_range(2):\n    acc = pick(ab, j, acc)\n"
                              "tl.store(y_ptr + p * 2048 + offs, acc)",
    "stores by j": "ab = (t, t * 2.0)\nfor j in tl.static_range(2):\n"
                   "    tl.store(y_ptr + p * 2048 + offs, ab[j], mask=offs < (j + 1) * 1024)",
}
HELPERS = '''def add(x, y):
    return x + y


@triton.jit
def stats(x):
    return tl.max(x, 1), tl.sum(x, 1)


@triton.jit
def pick(ab, j: tl.constexpr, acc):
    return acc + ab[j]
'''


@pytest.mark.parametrize("name", sorted(BODIES))
def test_tutorial_math_computes_what_triton_computes(tmp_path, monkeypatch, name):
    pytest.importorskip("triton.experimental.gluon")
    from . import triton_diff

    for template in ("PLAIN", "TLE"):
        text = getattr(triton_diff, template)
        assert "def add(x, y):\n    return x + y\n" in text
        text = text.replace("def add(x, y):\n    return x + y\n", HELPERS)
        if "import triton\n" not in text:
            text = "import triton\n" + text
        monkeypatch.setattr(triton_diff, template, text)
    o = triton_diff.outcome(tmp_path, BODIES[name], "float32", "fp32")
    assert o.plain is not None, o.why_plain
    assert o.tle is not None, o.why_tle or o.tle_crash
    assert o.slices_plain == o.slices_tle, (o.slices_plain, o.slices_tle)


# ------------------------------------------- a run-time value bound to a name stays run-time

def test_triton_truncates_the_division_of_a_named_cdiv(tmp_path, monkeypatch):
    """The oracle: `n = tl.cdiv(N, 64)` is an i32 tensor, and `(n - 100) // 8` Triton's
    truncating signed division (arith.divsi, no flooring correction), -12 at N = 1."""
    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(
        "n = tl.cdiv(N, 64)\nq = (n - 100) // 8\ntl.store(x_ptr + q, 1.0)"), "r56cdiv")
    assert "arith.divsi" in ttir and "arith.select" not in ttir, ttir


#: the count `14 + q` bound in other ways (the loop follows each)
NAMED_CDIVS = {
    "named": "n = tl.cdiv(N, 64)\nq = (n - 100) // 8\n",
    "unpacked": "n, z = tl.cdiv(N, 64), 0\nq = (n - 100) // 8\n",
    "a helper's": "n = cd(N)\nq = (n - 100) // 8\n",
    "augmented": "n = tl.cdiv(N, 64)\nn -= 100\nq = n // 8\n",
    "derived": "n = tl.cdiv(N, 64)\nm = n - 100\nq = m // 8\n",
    # an affine run-time value: read right before too
    "affine": "n = tl.cdiv(N, 64) + 0 * N\nq = (n - 100) // 8\n",
}
CD = "\ndef cd(x):\n    return tl.cdiv(x, 64)\n"
SMALL_N = "tle.assume(N >= 1)\ntle.assume(N <= 64)\n"


@pytest.mark.parametrize("name", sorted(NAMED_CDIVS))
def test_a_named_cdiv_divides_as_triton_does(tmp_path, capsys, name):
    """The reader waits index 1, which the writer never commits. Before: `named`, `unpacked`
    and `a helper's` verified (q = -13, Python's), `augmented` and `derived` refused as a
    division of a compile-time number ("bound more than once", "an expression of a
    tl.static_range variable or a constexpr")."""
    reader = NAMED_CDIVS[name] + loop("for p in range(14 + q):", get("p"))
    text = kernel(loop("for p in range(1):", put("p")), reader, body=SMALL_N, extra=CD)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[wait-never-committed]", "(q=-12)"))


@pytest.mark.parametrize("name", ["augmented", "derived", "named"])
def test_a_named_cdiv_count_on_both_sides_is_verified(tmp_path, capsys, name):
    """Both partitions count `14 + q` alike. Before: `augmented` and `derived` refused."""
    count = NAMED_CDIVS[name]
    text = kernel(count + loop("for p in range(14 + q):", put("p")),
                  count + loop("for p in range(14 + q):", get("p")), body=SMALL_N, extra=CD)
    expect(*dump(tmp_path, capsys, text), "verified")


def test_a_kernel_body_cdiv_handed_to_a_partition_divides_as_triton_does(tmp_path, capsys):
    text = kernel(loop("for p in range(1):", put("p")),
                  "q = (N - 100) // 8\n" + loop("for p in range(14 + q):", get("p")),
                  body=SMALL_N + "n = tl.cdiv(N, 64)\n")
    text = text.replace("(consume, (kv, y_ptr, N, C))", "(consume, (kv, y_ptr, n, C))")
    expect(*dump(tmp_path, capsys, text), ("rejected", "[wait-never-committed]", "(q=-12)"))


def test_the_cdiv_written_in_place_was_and_is_read_alike(tmp_path, capsys):
    text = kernel(loop("for p in range(1):", put("p")),
                  "q = (tl.cdiv(N, 64) - 100) // 8\n" + loop("for p in range(14 + q):",
                                                               get("p")),
                  body=SMALL_N)
    expect(*dump(tmp_path, capsys, text), ("rejected", "[wait-never-committed]"))


def test_a_product_of_a_named_cdiv_is_no_tensor_constant(tmp_path, capsys):
    """Before: refused, "`g` is bound to a compile-time value the frontend does not fold"."""
    writer = ("pid = tl.program_id(0)\nn = tl.cdiv(N, 64)\ng = 8 * n\nx = pid // g\n"
              + loop("for p in range(N):", put("p")) + "tl.store(x_ptr + x, 1.0)\n")
    expect(*dump(tmp_path, capsys, kernel(writer, N_WINDOWS)), "verified")


#: Triton's matmul tutorial (grouped ordering, masks on K, pointer increments, `tl.dot` into the
#: accumulator), its loads in the producer and its wgmma in the consumer
MATMUL = '''import triton
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
BK = tl.constexpr(64)
GROUP_M = tl.constexpr(8)


@tle.jit(num_warps=4)
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
           stride_cm, stride_cn):
    tle.assume(K >= 0)
    NK = tl.cdiv(K, BK)
    ab = tle.pipe(capacity=3, a=tle.gpu.alloc([3, BM, BK], tl.float16),
                  b=tle.gpu.alloc([3, BK, BN], tl.float16))
    tle.gpu.warp_specialize([(load, (ab, a_ptr, b_ptr, M, N, K, NK, stride_am, stride_ak,
                                     stride_bk, stride_bn)),
                             (mma, (ab, c_ptr, M, N, NK, stride_cm, stride_cn))], [4], [232])


def tile_ids(M, N):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


def load(ab, a_ptr, b_ptr, M, N, K, NK, stride_am, stride_ak, stride_bk, stride_bn):
    pid_m, pid_n = tile_ids(M, N)
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    w = ab.writer()
    for k in range(0, NK):
        s = w.acquire(k)
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        tl.store(tle.gpu.local_ptr(s.a), a)
        tl.store(tle.gpu.local_ptr(s.b), b)
        w.commit(k)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk


def mma(ab, c_ptr, M, N, NK, stride_cm, stride_cn):
    pid_m, pid_n = tile_ids(M, N)
    r = ab.reader()
    accumulator = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, NK):
        res = r.wait(k)
        accumulator = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                             tl.load(tle.gpu.local_ptr(res.slot.b)), accumulator)
        r.release(k)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


DEFAULT_CONFIG = {
    "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                  "K": "i32", "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
                  "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


def test_the_matmul_tutorial_is_verified_and_lowered(tmp_path, capsys):
    """Before: refused at `pid // num_pid_in_group` (the product of a named cdiv taken for a
    compile-time number)."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.cli.dump import main as tle_dump
    path = tmp_path / "matmul.py"
    path.write_text(MATMUL)
    assert tle_dump(["-q", "--gluon", str(path)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "warpgroup_mma(" in out and "a_ptrs = (a_ptrs + (BK * stride_ak))" in out, out


# ------------------------------------------- the persistent loop of Triton's tutorials

PERSISTENT = "pid = tl.program_id(0)\nnp = tl.num_programs(0)\n"


def test_a_persistent_loop_says_what_to_write(tmp_path, capsys):
    """`for tile in range(pid, N, num_programs)` with events: the step must be a constant;
    before, the refusal said only that."""
    writer = PERSISTENT + "i = 0\n" + loop("for t in range(pid, N, np):", put("i") + "i += 1\n")
    code, err = dump(tmp_path, capsys, kernel(writer, N_WINDOWS))
    expect(code, err, ("rejected", "[non-affine-loop]", "got `np`; to stride by a run-time step",
                       "`for k in range(tl.cdiv(N - pid, np)):`", "compute `pid + k * np`"))


def test_the_persistent_loop_written_as_said_is_verified(tmp_path, capsys):
    head = "for k in range(tl.cdiv(N - pid, np)):"
    text = kernel(PERSISTENT + loop(head, "t = pid + k * np\n" + put("k")),
                  PERSISTENT + loop(head, "t = pid + k * np\n" + get("k")))
    expect(*dump(tmp_path, capsys, text), "verified")


# ------------------------------------------- the same `if` in the kernel body

BODY_IF = HEAD + """@tle.jit
def k(x_ptr, y_ptr, N):
    f = 1
BRANCHES
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, M)), (cons, (p, y_ptr, READER_N))], [4], [64])


def prod(p, x_ptr, M):
    w = p.writer()
    for i in range(M):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def cons(p, y_ptr, M):
    r = p.reader()
    for i in range(M):
        s = r.wait(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        r.release(i)
"""


def _body_if(branches: str, reader_n: str = "M") -> str:
    return BODY_IF.replace("BRANCHES", textwrap.indent(branches, "    ").rstrip("\n")).replace(
        "READER_N", reader_n)


def test_triton_refuses_a_name_the_kernel_body_binds_in_one_branch(tmp_path, monkeypatch):
    """The oracle: in a kernel's own body, `f = 1; if f: M = N` leaves M undefined as well."""
    err = triton_compile_error(tmp_path, monkeypatch, triton_k(
        "f = 1\nif f:\n    M = N\nfor i in range(M):\n    tl.store(x_ptr + i, 1.0)"), "r56body")
    assert err is not None and "M is not defined" in str(err), err


def test_kernel_body_if_on_an_assigned_number_is_a_runtime_if(tmp_path, capsys):
    """Before: verified (M read as N). Bound in both branches, or before the `if`, it is
    verified; the value the run-time `if` gives (f = 1: the then branch) is what is checked:
    a writer of N windows and a reader of N are verified, of 2N against N rejected."""
    code, err = dump(tmp_path, capsys, _body_if("if f:\n    M = N\n"))
    expect(code, err, ("rejected", "`M` is read here, but it is bound in one branch only"))
    expect(*dump(tmp_path, capsys, _body_if("if f:\n    M = N\nelse:\n    M = N + 1\n")),
           "verified")
    expect(*dump(tmp_path, capsys, _body_if("M = 2 * N\nif f:\n    M = N\n", "N")), "verified")
    code, err = dump(tmp_path, capsys, _body_if("M = N\nif f:\n    M = 2 * N\n", "N"))
    expect(code, err, ("rejected", "[unconsumed]"))

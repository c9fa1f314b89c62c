"""Round FR20: false refusals held by earlier rounds, lifted where the check can prove the kernel,
each beside a seeded-bug twin that stays refused at its line.

- The ping-pong GEMM of adversarial round 73 with a run-time N (tests/test_adversarial_verdicts_73
  ``GEMM_RUNTIME_N``), its offsets bounded into int32 by ``tle.assume``: was memory-race (the
  tile row ``j // tl.cdiv(N, BN)`` a quotient by a non-number, read as any value; the 2-d mask
  ``cols[None, :] < N`` not read with the pointer's lanes), then unknown (z3 could not split
  ``rows * N + cols``); now verified. The memory-race model (frontend/race_terms.py) divides
  by a term exactly where the divisor is neither 0 nor -1, reads a 2-d mask with the
  pointer's lanes where every range lands on one axis, and frontend/global_races.py reads an
  address as rows and columns of a run-time pitch where z3 proves the columns in ``[0, N)``.
- A guard clause in a partition function itself (``if N <= 0: return`` before its events; round
  71 lifted it in helpers only): was unsupported-control-flow ("early `return` ... restructure
  so the function returns after its last event"); now read as an ``if`` / ``else`` holding the
  rest of the partition, as a helper's (frontend/build.py, build_calls.guard_clauses), checked
  and lowered so. Triton 3.6 compiles a Gluon partition with the early return too (a
  ``cf.cond_br`` to its ``tt.return``). A guard on a constexpr keeps its reading (the kernel
  read specialised to the constexpr's value, adversarial round 18).
"""

from __future__ import annotations

from .adversarial_support import dump, expect, run_dump
from .test_adversarial_verdicts_73 import GEMM_RUNTIME_N, variant

#: the run-time-N GEMM with its offsets bounded into int32 (`rows * N + cols` below 2 ** 31)
GEMM_BOUNDED = variant(GEMM_RUNTIME_N, ("    tle.assume(N >= 1)\n",
                                        "    tle.assume(N >= 1)\n    tle.assume(M <= 32767)\n"
                                        "    tle.assume(N <= 65536)\n"))


def test_runtime_n_gemm_with_bounded_offsets_is_verified(tmp_path, capsys):
    """Before: memory-race between the consumers' stores of C (`c_ptr + 256`, a spurious
    witness: the quotient `j // tl.cdiv(N, BN)` any value), then unknown."""
    code, err = dump(tmp_path, capsys, GEMM_BOUNDED)
    expect(code, err, "verified")


def test_runtime_n_gemm_twin_on_one_tile_is_refused(tmp_path, capsys):
    """Both consumers on tile 2p: they store one C tile (line 73)."""
    src = variant(GEMM_BOUNDED, ("mma(ab, c_ptr, M, N, K, 1)", "mma(ab, c_ptr, M, N, K, 0)"))
    code, err = dump(tmp_path, capsys, src, name="gemm.py")
    expect(code, err, ("rejected", "gemm.py:73: error: partitions 'mma0' (store at line 73",
                       "[memory-race]"))


def test_runtime_n_gemm_twin_with_a_mask_one_column_too_wide_is_refused(tmp_path, capsys):
    """`cols < N + 1`: column N of one row is column 0 of the next, which the other consumer's
    tile may hold (the rows are split only where the columns are proved below N)."""
    src = variant(GEMM_BOUNDED, ("(cols[None, :] < N)", "(cols[None, :] < N + 1)"))
    code, err = dump(tmp_path, capsys, src, name="gemm.py")
    expect(code, err, ("rejected", "gemm.py:73: error: partitions 'mma0'", "[memory-race]"))


#: a ring whose writer partition returns early where there is nothing to produce
GUARDED = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    if N <= 0:
        return
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {}}
'''


def test_a_partition_guard_clause_is_verified_and_lowered_as_an_if_else(tmp_path, capsys):
    """Before: unsupported-control-flow at the `return` (line 14)."""
    code, err = dump(tmp_path, capsys, GUARDED)
    expect(code, err, "verified")
    code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
    assert code == 0, err
    assert "    if (N <= 0):\n        pass\n    else:\n        for p in range(N):" in gluon, gluon


def test_a_partition_guard_clause_skipping_windows_the_reader_waits_is_found(tmp_path, capsys):
    """The twin: `if N == 7: return` skips every commit, which the reader waits at N = 7."""
    src = GUARDED.replace("    if N <= 0:", "    if N == 7:")
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, ("rejected", "kernel.py:25: error: the reader waits index 0 of pipe 'kv'",
                       "when N=7", "[wait-never-committed]"))


def test_a_range_on_two_axes_of_a_2d_access_keeps_its_lanes_apart(tmp_path, capsys):
    """The 2-d mask rule's twin: `offs` on axis 1 in the pointer and on axis 0 in the mask
    (and the pointer), so element (i, k) reads offs[k] in one and offs[i] in the other: no
    lane is shared, and the rows >= 64 this partition stores reach columns 0..63 the other
    partition stores (memory-race)."""
    from .test_correct_kernels_accepted import masked

    store = "tl.store(y_ptr + t * 128 + offs, v, mask=offs[:, None] >= 64)"
    src = masked("offs < 64", "offs[:, None] >= 64")
    assert store in src
    src = src.replace(store, "tl.store(y_ptr + t * 128 + offs[None, :] + 0 * offs[:, None], "
                             "v[None, :] + 0.0 * offs[:, None], mask=offs[:, None] >= 64)")
    code, err = dump(tmp_path, capsys, src)
    expect(code, err, ("rejected", "[memory-race]", "`y_ptr` + "))


# ------------------------------------------------ `a, b = t.shape` (lowering adversarial round 19)

def test_a_shape_unpacked_computes_as_triton_does(tmp_path):
    """`a, b = t.shape` of a [32, 64] tile in a partition: was refused ("tuple assignment needs
    a tuple of the same length on the right"); now the shape's items, tensors as Triton's
    visit_Assign makes them (C's `//`, an i32 add): the TTGIR's operations are plain Triton's.
    `(a,) = t.shape` takes the first item, as Triton does."""
    import pytest

    pytest.importorskip("triton.experimental.gluon")
    from .test_lowering_adversarial_13 import S, _same_as_triton

    _same_as_triton(tmp_path, "a, b = t.shape\n" + S % "t + a * 2 + b // -3", "int32")
    _same_as_triton(tmp_path, "(a,) = t.shape\n" + S % "t + a", "int8")


def test_a_shape_unpacked_into_more_names_than_dimensions_is_refused(tmp_path):
    """The twin: three names for a 2-d tile, which Triton refuses (IndexError): refused at
    the line (the item past the rank)."""
    import pytest

    pytest.importorskip("triton.experimental.gluon")
    from .test_lowering_adversarial_13 import S, _tle

    with pytest.raises(AssertionError) as info:
        _tle(tmp_path, "a, b, c = t.shape\n" + S % "t + a", "int32")
    assert "kernel.py:31: error: lowering: tuple index 2 out of range" in str(info.value)

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
"""

from __future__ import annotations

from .adversarial_support import dump, expect
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

"""A thirty-seventh adversarial round (adversarial round 37): round 36's open cases (a
loop-carried integer made wider, a huge tl.static_range) and tensor member calls (``x.sum(1)``,
``ptr.store(v)``, ...). Each case is a small kernel written to a file and read by tle-dump's
main(); the exit code and the verdict's words are pinned, and the plain Triton form a case
rests on is compiled by Triton itself to TTIR (no GPU needed).

Bugs found, one line each:
1. A loop-carried int32 scalar made an int64 (`u = 0` or `u = N`, then in a loop or a branch
   `u = u + N.to(tl.int64)`) was verified; Triton 3.6 refuses it ("Loop-carried variable u has
   initial type int32 but is re-assigned to int64 in loop"). FIXED: where the walk knows a
   scalar integer's width (a number of i32, an i32 / i64 kernel argument, a value of i64
   width: values.I64), a change of it is a type change, the body's value read with the names
   the loop carries at their types before it (frontend/triton_rules.py int_width,
   carried_kind).
2. `tl.static_range(0, 100000)` was verified; Triton 3.6 unrolls it in the kernel's source, its
   compile time grows with the square of the statements unrolled (10000 iterations of one add on
   a tile: 15 s, 30000: 150 s) and 100000 end in a segmentation fault. FIXED: a nest of
   tl.static_range loops unrolling to more than 16384 statements (iterations times the body's
   statements) is refused, `bad-loop` (frontend/triton_rules.py static_range_rule). Round 28's
   100000-iteration case is now 5000, and round 29's 200 x 200 nest is refused by this rule
   first.
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, reader_does
from .test_adversarial_verdicts_26 import triton_refuses


def _stored(stmt: str, value: str = "t + u") -> str:
    """``stmt`` followed by a store of ``value`` as fp32 (a value Triton compiles is used)."""
    return f"{stmt}\ntl.store(y_ptr + tl.arange(0, 64), ({value}).to(tl.float32))"


# ----------------------------------------- bug 1: a loop-carried integer made an int64

@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = N\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = N * 2 + 1\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = 0\nfor i in range(N):\n    u = u * 2 + i.to(tl.int64)",
    "u = 0\nfor i in range(4):\n    v = N.to(tl.int64)\n    u = u + v",
    "u = 0\ni = 0\nwhile i < N:\n    u = u - N.to(tl.int64)\n    i += 1",
    "u = 0\nif N > 2:\n    u = N.to(tl.int64)",
])
def test_an_int32_made_an_int64_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified. Triton 3.6: "Loop-carried variable u has initial type int32 but is
    re-assigned to int64 in loop" ("... the then block redefines it as int64[]")."""
    text = _stored(stmt)
    assert triton_refuses(tmp_path, monkeypatch, text, "r37_carried_i64")
    code, err = dump(tmp_path, capsys, reader_does(text))
    expect(code, err, ("rejected", "is a scalar int (int32) before the", "a scalar int (int64)",
                       "refuses a name whose type a loop or a branch", "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(4):\n    u = u + N",
    "u = N.to(tl.int64)\nfor i in range(4):\n    u = u + 1",
    "u = N.to(tl.int64)\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = 0\nfor i in range(4):\n    u = (u + N.to(tl.int64)).to(tl.int32)",
    "u = 0.0\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = 5000000000\nfor i in range(4):\n    u = u + N.to(tl.int64)",
])
def test_a_loop_keeping_its_integer_width_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = _stored(stmt)
    assert not triton_refuses(tmp_path, monkeypatch, text, "r37_carried_ok")
    code, err = dump(tmp_path, capsys, reader_does(text))
    expect(code, err, "verified")


# ----------------------------------------------------- bug 2: a huge tl.static_range

@pytest.mark.parametrize("stmt,count", [
    ("u = 0.0\nfor i in tl.static_range(0, 100000):\n    u = u + 1.0", "100000 statements"),
    ("u = 0.0\nfor i in tl.static_range(10**9):\n    u = u + 1.0", "1000000000 statements"),
    ("u = 0.0\nfor i in tl.static_range(200):\n    for j in tl.static_range(200):\n"
     "        u = u + 1.0", "40000 statements"),
    ("u = 0.0\nfor i in tl.static_range(6000):\n    u = u + 1.0\n    u = u * 0.5\n"
     "    u = u - 1.0", "18000 statements"),
])
def test_a_static_range_unrolling_too_many_statements_is_rejected(tmp_path, capsys, stmt,
                                                                  count):
    """Before: verified (and Triton 3.6 crashed on the first: a segmentation fault)."""
    code, err = dump(tmp_path, capsys, reader_does(_stored(stmt)))
    expect(code, err, ("rejected", "unrolls", count, "more than 16384", "[bad-loop]"))


@pytest.mark.parametrize("stmt", [
    "u = 0.0\nfor i in tl.static_range(16384):\n    u = u + 1.0",
    "u = 0.0\nfor i in tl.static_range(64):\n    for j in tl.static_range(256):\n"
    "        u = u + 1.0",
    "u = 0.0\nfor i in tl.static_range(2**70, 2**70 + 2):\n    u = u + 1.0",
])
def test_a_static_range_within_the_bound_is_verified(tmp_path, capsys, stmt):
    code, err = dump(tmp_path, capsys, reader_does(_stored(stmt)))
    expect(code, err, "verified")

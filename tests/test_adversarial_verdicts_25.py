"""A twenty-fifth adversarial round (adversarial round 25): host functions of the `triton`
package called in a kernel, and more. Each case is a small kernel written to a file and read by
tle-dump's main(); the exit code and the verdict (the check of a rejection, its words) are
pinned.

Bugs found, one line each:
1. `triton.cdiv(N, 2)` / `triton.next_power_of_2(N)` (the host package's Python functions, not
   tl.cdiv) of a run-time value in a loop bound were verified "for every value of cdiv_N_2" (a
   derived param of their own), though Triton 3.6 runs them as Python on the tensor and fails
   (`n - 1` of a tensor outside its code generator raises), and `--gluon` refused the kernel
   ("`triton.cdiv` is not supported"); of literals or module constants (`triton.cdiv(7, 2)`,
   which Triton computes, 4) they were a param of every integer too and refused by the
   lowering. FIXED: the builder folds such a call of numbers as Python computes it and refuses
   any other where the kernel is read (check unlowered-call; frontend/build.py host_function).

Checked and found right (pinned below): `range(N and 2)` (Triton drops the constant of a
`tensor and constant`, leaving N), `(N > 0) and 3` as a loop bound (refused: an i1 bound),
DEFAULT_CONFIG typing a protocol argument i64 / u32 / i16 / i1 / fp32 (refused), casts of a pipe
index through dtypes the frontend reaches by a module constant, a tuple or `tl.core` (refused),
`warp_specialize` in a loop, an `if`, a helper or twice (refused), conditions on constants
beyond the cutoff (`p != 1000`: rejected with its witness), tuples of pipes indexed from the end
(`ps[-1]`), and tle-dump's exit 2 for a syntax error, a missing file, a file without kernels and
a directory.
"""

from __future__ import annotations

import pytest

from .test_adversarial_python_semantics import run_dump, write_kernel

HEAD = "import triton.language as tl\nimport tle_compiler as tle\nimport triton\n\n\n"


def dump(tmp_path, capsys, text: str, *flags: str, name: str = "kernel.py"):
    """tle-dump's exit code and stderr for the kernel file ``text`` (never a traceback)."""
    path = write_kernel(tmp_path, text, name)
    code, out, err = run_dump(capsys, "-q", *flags, str(path))
    assert "internal error" not in err, err
    return code, err


def expect(code: int, err: str, want) -> None:
    """``want``: "verified", or (kind, *fragments) with kind "rejected" / "bounded"."""
    if want == "verified":
        assert code == 0 and ": verified for " in err, err
        return
    kind, *whats = want
    assert ": verified for " not in err, err
    assert code == (1 if kind == "rejected" else 3), err
    if kind != "rejected":
        assert f": {kind}: " in err, err
    for w in whats:
        assert w in err, err


RING = HEAD + '''PRELUDE


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, WARG, C)), (consume, (kv, y_ptr, RARG, C))],
                            [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr):
    w = kv.writer()
    for p in range(WBOUND):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for p in range(RBOUND):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {"C": 5}}
'''


def ring(wbound: str = "N", rbound: str = "N", body: str = "", prelude: str = "",
         warg: str = "N", rarg: str = "N") -> str:
    return (RING.replace("WBOUND", wbound).replace("RBOUND", rbound)
            .replace("BODY", "".join(f"    {line}\n" for line in body.splitlines()))
            .replace("PRELUDE", prelude).replace("WARG", warg).replace("RARG", rarg))


def test_the_ring_is_verified(tmp_path, capsys):
    """The kernel the cases below change: verified for every N."""
    code, err = dump(tmp_path, capsys, ring())
    expect(code, err, "verified")


# -------------------------------------------- host functions of the triton package (bug 1)

HOST_REFUSED = {
    "cdiv of the run-time N": dict(wbound="triton.cdiv(N, 2)", rbound="triton.cdiv(N, 2)"),
    "next_power_of_2 of N": dict(wbound="triton.next_power_of_2(N)",
                                 rbound="triton.next_power_of_2(N)"),
    "in the kernel body": dict(body="M = triton.next_power_of_2(N)", warg="M", rarg="M"),
    "cdiv in the kernel body": dict(body="M = triton.cdiv(N, 4)", warg="M", rarg="M"),
    "by keyword": dict(wbound="triton.cdiv(x=N, y=2)", rbound="tl.cdiv(N, 2)"),
    "of a constexpr parameter": dict(wbound="triton.cdiv(C, 2)", rbound="3"),
    "imported by name": dict(prelude="from triton import next_power_of_2 as np2",
                             wbound="np2(N)", rbound="np2(N)"),
}


@pytest.mark.parametrize("case", HOST_REFUSED, ids=list(HOST_REFUSED))
def test_a_host_function_of_a_value_the_reading_does_not_know_is_refused(tmp_path, capsys,
                                                                         case):
    """Triton runs `triton.cdiv` / `triton.next_power_of_2` as Python, which fails on a tensor,
    and the lowering translates neither. Before: verified for every value of `cdiv_N_2` (the
    call a derived param of its own), then refused by `--gluon`."""
    code, err = dump(tmp_path, capsys, ring(**HOST_REFUSED[case]))
    expect(code, err, ("rejected", "is a host function", "[unlowered-call]"))


def test_gluon_refuses_the_host_function_where_the_kernel_is_read(tmp_path, capsys):
    """`--gluon` says the same at the call's line (before: the lowering's bare "`triton.cdiv`
    is not supported", after a verdict of verified)."""
    code, err = dump(tmp_path, capsys, ring("triton.cdiv(N, 2)", "tl.cdiv(N, 2)"), "--gluon")
    assert code == 1, err
    assert "kernel.py:19: error: `triton.cdiv(N, 2)`: `triton.cdiv` is a host function" in err


HOST_FOLDED = {
    "cdiv of literals": ("triton.cdiv(7, 2)", "4", "3"),
    "cdiv by keyword": ("triton.cdiv(x=7, y=2)", "4", "3"),
    "next_power_of_2 of a module constant": ("triton.next_power_of_2(NB)", "16", "9"),
    "next_power_of_2 of 0": ("triton.next_power_of_2(0) + 1", "1", "2"),
    "cdiv of a negative": ("triton.cdiv(-7, 2) + 4", "1", "2"),
}


@pytest.mark.parametrize("case", HOST_FOLDED, ids=list(HOST_FOLDED))
def test_a_host_function_of_numbers_is_its_python_value(tmp_path, capsys, case):
    """Of numbers Triton computes the host function as Python does (`triton.cdiv(-7, 2)` is
    Python's floor -3, `next_power_of_2(0)` is 0): the reader waiting that many is verified and
    one waiting another count is rejected. Before: a param of every integer, the reader's
    constant count rejected with a witness no launch gives."""
    call, right, wrong = HOST_FOLDED[case]
    for rbound, want in ((right, "verified"), (wrong, ("rejected",))):
        code, err = dump(tmp_path, capsys, ring(call, rbound, prelude="NB = 9"))
        expect(code, err, want)
    code, err = dump(tmp_path, capsys, ring(call, right, prelude="NB = 9"), "--gluon")
    assert code == 0, err


def test_a_host_function_of_a_local_tensor_is_refused(tmp_path, capsys):
    """`b = 5` makes b an i32 tensor in Triton, so `triton.cdiv(b, 2)` fails there too."""
    text = ring("triton.cdiv(b, 2)", "3").replace("    w = kv.writer()\n",
                                                  "    w = kv.writer()\n    b = 5\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "`b` is bound to 5"))


def test_a_host_cdiv_by_zero_is_refused(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, ring("triton.cdiv(7, 0)", "3"))
    expect(code, err, ("rejected", "divides by zero"))

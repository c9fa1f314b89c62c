"""Lowering against the verdict, adversarial round 49: kernels tle-dump verified and translated to
Gluon whose Gluon computed something else than the source read (Triton 3.6's semantics).

Wrong and fixed:
* test_a_budget_of_a_reassigned_constexpr_is_refused: ``WIDE = 0`` in the kernel body, then
  ``worker_num_regs=[224 + 8 * WIDE]``. The budget expression was recorded as a kernel IR
  expression of the name ``WIDE`` and evaluated (frontend/budgets.py) with the parameter's launch
  value: the Gluon assigned ``WIDE = 0`` and launched the worker with ``[232]``, where the source
  says 224 (and Triton, whose plain assignment makes ``WIDE`` an i32 tensor, has no number there
  at all). The builder now refuses a budget that reads a constexpr parameter the kernel assigns,
  naming the assignment's line (frontend/build.py, ``warp_specialize``); so is one reading a
  local a plain assignment bound (``R = 224 + 8 * WIDE``, an i32 tensor in Triton).

* test_a_load_before_an_atomic_in_one_statement_reads_first: ``tl.store(out_ptr + 1,
  tl.load(out_ptr) + tl.atomic_add(out_ptr, 1.0))``. The lowering emits an atomic as a statement
  of its own before the statement that uses its value; the load Python (and Triton) evaluates
  first stayed inline in the store, so it read the value the atomic had just incremented: the
  Gluon stored 2x + 1 where Triton stores 2x.
* test_atomics_in_keyword_arguments_run_in_the_order_written: ``tl.where(x=tl.atomic_add(p, 1.0),
  y=tl.atomic_add(p, 2.0), condition=tl.atomic_add(p, 4.0) > 0)`` (and ``tl.maximum(y=..., x=...)``,
  ``tl.store(value=..., pointer=...)``): the lowering hoisted the atomics in the order of the
  operation's parameters (condition first), where Python and Triton evaluate keyword arguments as
  written; each atomic returned another old value.
  Both fixed in the builder (frontend/build.py ``_calls_helper``): a statement with an atomic
  beside another memory access is built in sequential form, each call's value bound to a
  temporary in evaluation order, as a statement calling an effectful helper already was.
* test_a_read_and_a_write_split_between_positional_and_keyword_arguments_are_refused:
  ``tl.store(out_ptr + 1, tl.load(out_ptr), mask=st(out_ptr, 3.0) > 0)`` (``st`` a helper that
  stores) was lowered in Python's order, load first, where Triton 3.6 evaluates the keyword
  arguments first (code_generator.visit_Call) and loads the 3.0 just stored. Two writes so split
  were refused already; a write on one side and a read on the other is now refused too
  (``call_arguments``), and with the atomics built in sequential form so are atomics so split.

* test_a_global_write_after_a_gather_waits_for_its_copies: ``tl.store(local_ptr(slot.tile),
  tl.load(ptrs))`` then ``tl.store(ptrs, zeros)`` in the producer (it consumes its input). The
  gather is lowered to a cp.async copy, which reads ``ptrs`` asynchronously; the zeroing store
  was emitted right after it with nothing ordering the copy's reads first (the waits before an
  access covered shared memory only), so the tile could receive the zeros where Triton, whose
  load completes before the store, copies the data. A global store or an atomic now waits for
  the copies that may be in flight (commit_group, wait_group(0), then a barrier of the
  partition: each thread waits for its own copies only), loop back-edges included
  (lowering/cp_async_waits.py ``access_global``).

* test_a_gather_source_overwritten_after_another_commit_is_a_race: a cp.async gather's
  asynchronous read is ordered before the writer's ring commit (its cp.async arrive) only. A
  producer that gathers ``x`` into ring A, then commits another pipe B whose reader overwrites
  ``x``, was verified, the race check placing the load at its statement, before B's commit; on
  the GPU the copy may read the overwritten data. The race check now orders a load stored into
  a slot (race_sites.Access.gathered) only through a later commit of that slot's ring
  (race_order.ordered), and says why in the race it reports.

A false refusal fixed: ``R: tl.constexpr = 224 + 8 * WIDE; worker_num_regs=[R]`` (a constexpr in
Triton) was refused as "register budgets must be integer literals": the budget's constexprs were
looked for in its source text, not in the expression the builder reads it as."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "tle_kernels" / "examples" / "ring.py"


def dump(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def ring_variant(tmp_path: Path, *edits: tuple[str, str], name: str = "ring49") -> Path:
    """The bundled ring kernel with each (old, new) of ``edits`` replaced once."""
    src = RING.read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    return path


def with_wide(budget: str, prelude: str = "") -> tuple[tuple[str, str], ...]:
    """Edits giving the ring kernel a constexpr WIDE (1 by default), ``budget`` as its register
    budget list and ``prelude`` before its pipe."""
    return (("def ring_sum(x_ptr, out_ptr, stride_x, N_TILES):",
             "def ring_sum(x_ptr, out_ptr, stride_x, N_TILES, WIDE: tl.constexpr):"),
            ('"constexprs": {},', '"constexprs": {"WIDE": 1},'),
            ('"N_TILES": "i32"},', '"N_TILES": "i32", "WIDE": "constexpr"},'),
            ("], [4], [232])", f"], [4], {budget})"),
            ("    ring = tle.pipe(", prelude + "    ring = tle.pipe("))


@pytest.mark.parametrize("prelude", ["    WIDE = 0\n", "    WIDE = WIDE + 1\n",
                                     "    WIDE += 1\n"])
def test_a_budget_of_a_reassigned_constexpr_is_refused(tmp_path, prelude):
    path = ring_variant(tmp_path, *with_wide("[224 + 8 * WIDE]", prelude))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 1, (out, err)
    assert "reads `WIDE`, which the kernel assigns at line 17" in err, err
    assert "[232]" not in out


def test_a_budget_of_an_unassigned_constexpr_is_its_value(tmp_path):
    """The refusal is for assigned parameters alone: the same kernel without the assignment
    lowers its budget for the launch's WIDE."""
    path = ring_variant(tmp_path, *with_wide("[232 if WIDE else 224]", "    X = WIDE\n"))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert "], [4], [232])" in out
    code, out, err = dump(["-q", "--gluon", "--param", "WIDE=0", str(path)])
    assert code == 0, err
    assert "], [4], [224])" in out


@pytest.mark.parametrize("prelude", ["    R = 224 + 8 * WIDE\n", "    W = WIDE\n"])
def test_a_budget_of_an_assigned_local_is_refused(tmp_path, prelude):
    """A plain assignment makes the local an i32 tensor in Triton: no register budget."""
    name = prelude.split()[0]
    budget = "[R]" if name == "R" else "[224 + 8 * W]"
    path = ring_variant(tmp_path, *with_wide(budget, prelude))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 1, (out, err)
    assert f"reads `{name}`, which the kernel assigns at line 17" in err, err


def test_a_budget_of_a_constexpr_annotated_local_is_its_value(tmp_path):
    """``R: tl.constexpr = 224 + 8 * WIDE`` is a constexpr in Triton (visit_AnnAssign), and
    ``worker_num_regs=[R]`` its value; it was refused ("register budgets must be integer
    literals, got `R`"): the budget's constexprs were looked for in its source text, not in the
    expression the builder reads for it."""
    path = ring_variant(tmp_path, *with_wide("[R]", "    R: tl.constexpr = 224 + 8 * WIDE\n"))
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    assert "], [4], [232])" in out
    code, out, err = dump(["-q", "--gluon", "--param", "WIDE=0", str(path)])
    assert code == 0, err
    assert "], [4], [224])" in out


# ------------------------------------------------------------ evaluation order around atomics

FINAL_STORE = "    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)"


def after_sum(tmp_path: Path, code: str, extra: str = "") -> Path:
    """The ring kernel with ``code`` (statements of the consumer) after its final store, and
    ``extra`` (module code, helpers) before DEFAULT_CONFIG."""
    edits = [(FINAL_STORE, FINAL_STORE + "\n" + code)]
    if extra:
        edits.append(("\n\nDEFAULT_CONFIG", "\n\n" + extra + "\n\nDEFAULT_CONFIG"))
    return ring_variant(tmp_path, *edits)


def consumer_lines(gluon: str) -> list[str]:
    """The lines of the lowered consumer partition after its final tile store."""
    body = gluon[gluon.index("def sum_tiles("):]
    body = body[:body.index("@gluon.jit")]
    lines = [ln.strip() for ln in body.splitlines()]
    return lines[next(i for i, ln in enumerate(lines) if ln.startswith("gl.store(((out")) + 1:]


def line_of(lines: list[str], text: str) -> int:
    (at,) = [i for i, ln in enumerate(lines) if text in ln]
    return at


@pytest.mark.parametrize("atomic", ["tl.atomic_add(out_ptr, 1.0)", "out_ptr.atomic_add(1.0)"])
def test_a_load_before_an_atomic_in_one_statement_reads_first(tmp_path, atomic):
    path = after_sum(tmp_path, f"    tl.store(out_ptr + 1, tl.load(out_ptr) + {atomic})")
    code, out, err = dump(["-q", "--gluon", str(path)])
    assert code == 0, err
    lines = consumer_lines(out)
    assert line_of(lines, "gl.load(out_ptr)") < line_of(lines, "gl.atomic_add(out_ptr, 1.0)"), \
        lines


@pytest.mark.parametrize("code, order", [
    ("    v = tl.where(x=tl.atomic_add(out_ptr, 1.0), y=tl.atomic_add(out_ptr, 2.0), "
     "condition=tl.atomic_add(out_ptr, 4.0) > 0)\n    tl.store(out_ptr + 1, v)",
     ("1.0", "2.0", "4.0")),
    ("    v = tl.maximum(y=tl.atomic_add(out_ptr, 1.0), x=tl.atomic_add(out_ptr, 2.0))\n"
     "    tl.store(out_ptr + 1, v)", ("1.0", "2.0")),
    ("    tl.store(value=tl.atomic_add(out_ptr, 1.0), "
     "pointer=out_ptr + 2 + tl.atomic_add(out_ptr, 2.0).to(tl.int32))", ("1.0", "2.0")),
    ("    tl.store(out_ptr + 1, mask=tl.atomic_add(out_ptr, 1.0) > 0, "
     "value=tl.atomic_add(out_ptr, 2.0))", ("1.0", "2.0")),
], ids=["where", "maximum", "store", "store-mask"])
def test_atomics_in_keyword_arguments_run_in_the_order_written(tmp_path, code, order):
    code_, out, err = dump(["-q", "--gluon", str(after_sum(tmp_path, code))])
    assert code_ == 0, err
    lines = consumer_lines(out)
    at = [line_of(lines, f"gl.atomic_add(out_ptr, {v})") for v in order]
    assert at == sorted(at), lines


ST = "def st(p, x):\n    tl.store(p, x)\n    return x\n"


@pytest.mark.parametrize("code, extra, words", [
    ("    tl.store(out_ptr + 1, tl.load(out_ptr), mask=st(out_ptr, 3.0) > 0)", ST,
     "a positional argument performs a read (tl.load)"),
    ("    tl.store(out_ptr + 1, tl.load(out_ptr), mask=tl.atomic_add(out_ptr, 1.0) > 0)", "",
     "a positional argument performs a read (tl.load)"),
    ("    tl.store(out_ptr + 2 + tl.atomic_add(out_ptr, 2.0).to(tl.int32), "
     "value=tl.atomic_add(out_ptr, 1.0))", "",
     "a positional argument performs a write (tl.atomic_add)"),
], ids=["helper-store", "atomic-mask", "atomic-value"])
def test_a_read_and_a_write_split_between_positional_and_keyword_arguments_are_refused(
        tmp_path, code, extra, words):
    code_, out, err = dump(["-q", "--gluon", str(after_sum(tmp_path, code, extra))])
    assert code_ == 1, (out, err)
    assert words in err and "Triton 3.6 the keyword ones" in err, err


# ------------------------------------------------------------ global writes beside cp.async gathers

GATHER = "        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))\n"
NEXT_PTRS = "        ptrs = x_ptr + (t * BM + offs_m)[:, None] * stride_x + offs_n[None, :]\n"
ZEROS = "tl.zeros([BM, BN], tl.float32)"


@pytest.mark.parametrize("edit", [
    (GATHER, GATHER + f"        tl.store(ptrs, {ZEROS})\n"),
    (GATHER, GATHER + "        tl.atomic_add(x_ptr + t, 1.0)\n"),
    (NEXT_PTRS, NEXT_PTRS + "        tl.store(x_ptr + ((t - 1) * BM + offs_m)[:, None] * stride_x "
                            f"+ offs_n[None, :], {ZEROS}, mask=t > 0)\n"),
], ids=["store-after", "atomic-after", "store-next-iteration"])
def test_a_global_write_after_a_gather_waits_for_its_copies(tmp_path, edit):
    code, out, err = dump(["-q", "--gluon", str(ring_variant(tmp_path, edit))])
    assert code == 0, err
    body = out[out.index("def load_tiles("):]
    lines = [ln.strip() for ln in body[:body.index("@gluon.jit")].splitlines()]
    gather = line_of(lines, "async_copy.async_copy_global_to_shared(")
    write = next(i for i, ln in enumerate(lines)
                 if ln.startswith("gl.store(") or "gl.atomic_add(" in ln)
    # the write waits for the copies: in the same iteration after the gather, or at the top of
    # the next one (the gather's copies reach it over the back-edge)
    wait = line_of(lines, "async_copy.wait_group(0)")
    assert wait < write and lines[wait + 1] == "gl.thread_barrier()", lines
    assert gather < wait or write < gather, lines


# ------------------------------------------------------------ a gather source written by another partition

CROSS = '''import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 64
BN: tl.constexpr = 64


@tle.jit
def xp(x_ptr, out_ptr, N_TILES):
    tle.assume(N_TILES >= 0)
    ring = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, BM, BN], tl.float32))
    sig = tle.pipe(capacity=1, flag=tle.gpu.alloc([1, 16, 16], tl.int32))
    tle.gpu.warp_specialize([(load_tiles, (ring, sig, x_ptr, N_TILES)),
                             (sum_tiles, (ring, out_ptr, N_TILES)),
                             (zero_src, (sig, x_ptr, N_TILES))], [4, 4], [232, 232])


def load_tiles(ring, sig, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ring.writer()
    s = sig.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM * BN + offs))
        f = s.acquire(t)
        tl.store(tle.gpu.local_ptr(f.flag), tl.zeros([16, 16], tl.int32))
        s.commit(t)
        w.commit(t)


def zero_src(sig, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = sig.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        tl.store(x_ptr + t * BM * BN + offs, tl.zeros([BM, BN], tl.float32))
        r.release(t)


def sum_tiles(ring, out_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N_TILES):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    tl.store(out_ptr + offs, acc)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


def test_a_gather_source_overwritten_after_another_commit_is_a_race(tmp_path):
    """The producer gathers tile t of x into `ring` (a cp.async copy the lowering issues), then
    commits `sig`, whose reader zeroes tile t of x. The copy reads x until `ring`'s commit
    arrives (cp.async.mbarrier.arrive), so `sig`'s hand-off orders nothing before that write:
    the slot may receive zeros. It was verified (the load placed at its own line, before `sig`'s
    commit); now it is a memory race naming the copy, whichever commit comes first."""
    for src in (CROSS, CROSS.replace("        s.commit(t)\n        w.commit(t)\n",
                                     "        w.commit(t)\n        s.commit(t)\n")):
        path = tmp_path / "cross49.py"
        path.write_text(src)
        code, out, err = dump(["-q", str(path)])
        assert code == 1, (out, err)
        assert "[memory-race]" in err and "fills a slot of pipe `ring`, which the lowering " \
            "copies by cp.async" in err, err


def test_a_gather_source_overwritten_by_the_rings_reader_after_its_wait_is_ordered(tmp_path):
    """The ring's own reader zeroing tile t of x after its wait of t: the ring's commit of t
    arrives only once the copy has read x, so the hand-off orders the two (verified)."""
    src = CROSS.replace("        tl.store(x_ptr + t * BM * BN + offs, tl.zeros([BM, BN], "
                        "tl.float32))\n", "")
    src = src.replace("(sum_tiles, (ring, out_ptr, N_TILES))",
                      "(sum_tiles, (ring, x_ptr, out_ptr, N_TILES))")
    src = src.replace("def sum_tiles(ring, out_ptr, N_TILES):",
                      "def sum_tiles(ring, x_ptr, out_ptr, N_TILES):")
    src = src.replace("        res = r.wait(t)\n        acc +=",
                      "        res = r.wait(t)\n        tl.store(x_ptr + t * BM * BN + offs, "
                      "tl.zeros([BM, BN], tl.float32))\n        acc +=")
    assert src.count("tl.store(x_ptr") == 1 and "def zero_src" in src
    path = tmp_path / "ordered49.py"
    path.write_text(src)
    code, out, err = dump(["-q", str(path)])
    assert code == 0, err

"""A fifty-fourth adversarial round (adversarial round 54): the specialised readings, above all
pipe capacities read from constexpr parameters (``tle.pipe(capacity=STAGES, ...)``): a kernel
that reads only with some constexprs bound is read again with values (DEFAULT_CONFIG's
"constexprs", ``--param``, a compile's or a launch's), verified and lowered with them, and the
verdict names them. Each case is a small kernel written to a file and read by tle-dump's main();
where the truth is the lowered kernel, its Gluon (``gluon_source``) is read. The ring is
tests/test_pipe_capacity_constexpr.py's: a writer that holds two slots before committing either
needs capacity 2 and deadlocks at 1, so a verdict at one capacity that the kernel does not have
shows.

Bugs found, one line each (before the fixes that came with this file):

- a capacity constexpr bound again in the kernel body before the pipe (``STAGES = 1``, ``STAGES
  = N``, ``STAGES, _ = 1, 0``, ``STAGES += -1``, the variable of a ``tl.static_range`` loop, or
  given to a helper declaring the pipe after such a binding) was read as the parameter:
  ``tle.pipe(capacity=STAGES, t=tle.gpu.alloc([2, 64], ...))`` verified "with STAGES = 2" a
  ring the kernel declares with capacity 1 (or a run-time N), exit 0; FIXED: refused at the
  capacity naming the rebinding's line (frontend/build.py ``capacity_of_constexprs``,
  ``bad-pipe``).
- likewise a slot dimension (``tle.gpu.alloc([2, W])`` after ``W = 32`` or a ``tl.static_range``
  loop over ``W``) was read as the parameter and lowered at DEFAULT_CONFIG's width (``[2, 64]``)
  where the kernel declares ``[2, 32]``; FIXED: refused like any name the kernel body binds
  (``Builder.alloc``, ``bad-alloc``, naming the binding's line).
- a DEFAULT_CONFIG that is no literal (``"signature": SIG`` with ``SIG`` a module constant) beside
  a capacity read from a constexpr stopped tle-dump with an internal error (``TypeError`` in
  config_literal.decode_config, exit 3) for every flag; FIXED: such a config gives no values
  (decode_config), and the refusal at the capacity says the config is no literal, so --param
  gives the value.
- a DEFAULT_CONFIG without "signature" (``{"constexprs": {"STAGES": 2}}``) was taken for a
  config keyed by kernel name (an entry for a kernel named "constexprs"), so no kernel got
  STAGES and a safe ring was refused (exit 1); FIXED: a keyed config's keys name functions of
  the file (cli/loading.py ``keyed_configs``), as the frontend's kernel_entry picks entries.

Lower priority, fixed too: an annotated ``DEFAULT_CONFIG: dict = {...}`` was no config to the
frontend while tle-dump's other readers of the literal took it: refused for want of a value, or
(keyed) verified and then not lowered (frontend/build.py ``Module``). ``tle-dump --kernel k`` of a
file whose DEFAULT_CONFIG is keyed by kernel name was refused for another kernel's fault (its
entry's value failing a ``tl.static_assert``, or no entry for its capacity): the kernels not asked
for are no longer read (cli/loading.py ``specialised_per_kernel``, ``load(..., only)``). A
DEFAULT_CONFIG value the kernel cannot be built with (``"STAGES": 0``) or one that is no integer
(``True``, ``2.0``, ``"2"``, ``None``) was refused as if the config gave no value ("give it a
value"); the refusal now names the zero-size buffer or the value (cli/loading.py ``literal_config``;
build.py ``_no_integer_in_config``).

Held (pinned below): the same statement binding the constexpr after its right-hand side
(``STAGES, p = 1, tle.pipe(capacity=STAGES, ...)``) declares the constexpr's capacity; a
rebinding after the declaration or after the helper call changes nothing; ``S: tl.constexpr =
STAGES`` is read (and at ``--param STAGES=1`` deadlocks); capacity expressions through ``//``,
``%``, a conditional expression, ``STAGES - STAGES + 1``, ``(STAGES, 1)[0]``, ``~STAGES + 4``,
comparisons and Booleans are the numbers Python computes at each value, and the slot buffer's
leading dimension must agree; keyed configs give two kernels sharing partitions each its own
capacity (verdicts, ``--kernel``, ``--gluon``, ``--print-ir``, the memory-race proof at each
kernel's values); a constexpr bound again before the partitions take it (a window stride:
``STEP = 2``, ``STEP += 1``, a ``tl.static_range`` loop over it) is read with the new value.

Tried and held, not pinned: a launch without a GPU (``k[(1,)](x, y, 4, STAGES=1)`` refused
before compiling, STAGES = 2 and 3 compiled, ``STAGES=True`` refused at the capacity); a module
constant of the capacity's name read by a helper (its
value, also rebound later in the module: the last binding), a helper's default (``def mk(C=
STAGES)``: the module's STAGES, or unknown), helper parameters named like the kernel's constexpr
given ``STAGES - 1`` or a literal, nested helpers (``mk2(C + 1)``); ``min`` / ``max`` / ``abs`` /
``tl.cdiv`` and a helper's conditional expression as a capacity (refused, ``bad-pipe``); floats
(``STAGES / 1``, ``** -1``) refused; ``--param STAGES=0 / -1 / 100000 / 2**40`` (exit 2 naming
the fault); a bool config value with ``--param STAGES=0`` (capacity ``STAGES + 1`` = 1,
rejected); ``--format json`` / ``--graph`` / ``--print-ir`` / ``-p emit-gluon`` / several files
in one run / the same file read with several binds in one process; a TMA copy under a
constexpr ``if`` with per-kernel keyed values (the USE = 0 kernel's race found, the USE = 1 one
lowered with the TMA copy); a kernel-body rebinding of a constexpr that decides an ``if`` around
pipe events or TMA copies (refused: the two views disagree) or a loop bound (``for CNT in
tl.static_range(...)``: read as the loop's last value, the hang found); a ``.kir`` printed from a
kernel read specialised keeps its number capacity (``--param STAGES=1`` then names a value the
.kir kernel, whose ring is fixed, does not read: true of that kernel).
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.lowering.compile import gluon_source

from .adversarial_support import dump, expect, run_dump, write_kernel

KERNEL = '''import triton.language as tl
import tle_compiler as tle
MODULE

@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N, STAGES: tl.constexpr):
    tle.assume(N >= 0)
BODY    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])
HELPERS

def prod(p, x_ptr, N):
    w = p.writer()
    for i in range(N):
        s0 = w.acquire(2 * i)
        s1 = w.acquire(2 * i + 1)
        tl.store(tle.gpu.local_ptr(s0.t), tl.load(x_ptr + 2 * i * 64 + tl.arange(0, 64)))
        tl.store(tle.gpu.local_ptr(s1.t), tl.load(x_ptr + (2 * i + 1) * 64 + tl.arange(0, 64)))
        w.commit(2 * i)
        w.commit(2 * i + 1)


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        for j in range(2):
            s = r.wait(2 * i + j)
            tl.store(y_ptr + (2 * i + j) * 64 + tl.arange(0, 64),
                     tl.load(tle.gpu.local_ptr(s.slot.t)))
            r.release(2 * i + j)
'''

PIPE = "    p = tle.pipe(capacity=STAGES, t=tle.gpu.alloc([STAGES, 64], tl.float32))\n"
SIG = '{"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "STAGES": "constexpr"}'
CONFIG = f'\n\nDEFAULT_CONFIG = {{"signature": {SIG}, "constexprs": {{"STAGES": VALUE}}, ' \
         f'"num_warps": 4}}\n'
DEADLOCK = ("rejected", "[double-acquire]")


def ring(body: str = PIPE, value="2", module: str = "", helpers: str = "",
         config: str = CONFIG) -> str:
    """The two-slot ring with ``body`` declaring its pipe ``p`` and the DEFAULT_CONFIG giving
    STAGES ``value`` (none for None)."""
    text = (KERNEL.replace("MODULE", module).replace("BODY", body)
            .replace("HELPERS", helpers))
    return text + ("" if value is None else config.replace("VALUE", str(value)))


def shapes(path, name: str = "k", **cx) -> list[str]:
    """The slot buffers' shapes the Gluon of kernel ``name`` allocates with ``cx``."""
    src = gluon_source((str(path), name), constexprs=cx).source
    return re.findall(r"gl\.allocate_shared_memory\(gl\.float32, \[(\d+), 64\]", src)


# ------------------------------------------------------------------ a capacity bound again


@pytest.mark.parametrize("rebind", ["STAGES = 1", "STAGES = N", "STAGES, _ = 1, 0",
                                    "STAGES = STAGES - 1", "STAGES += -1", "(STAGES,) = (1,)",
                                    "STAGES = tl.constexpr(1)",
                                    "for STAGES in tl.static_range(1, 2):\n        pass"])
def test_capacity_constexpr_bound_again_in_the_kernel_body_is_refused(tmp_path, capsys, rebind):
    """Bug: read as the parameter (2), the ring the kernel declares with capacity 1 (or N) was
    verified "with STAGES = 2"."""
    body = f"    {rebind}\n" + PIPE.replace("[STAGES, 64]", "[2, 64]")
    code, err = dump(tmp_path, capsys, ring(body))
    if rebind.startswith("for "):
        # a tl.static_range loop leaves its variable bound to its last value, a constexpr in
        # Triton 3.6, read as that value (adversarial round 69): a ring of capacity 1 whose
        # field is declared with 2 slots
        expect(code, err, ("rejected", "[bad-pipe]", "must be the capacity 1"))
        return
    expect(code, err, ("rejected", "[bad-pipe]", "reads 'STAGES', which the kernel body binds "
                       "again (line 8)"))


def test_capacity_through_a_helper_given_the_name_bound_again_is_refused(tmp_path, capsys):
    """Bug: ``mk(STAGES)`` after ``STAGES = 1`` was a ring of capacity 2 "with STAGES = 2"."""
    helper = ("\n\ndef mk(C):\n    return tle.pipe(capacity=C, name=\"p\", "
              "t=tle.gpu.alloc([2, 64], tl.float32))\n")
    code, err = dump(tmp_path, capsys, ring("    STAGES = 1\n    p = mk(STAGES)\n",
                                            helpers=helper))
    expect(code, err, ("rejected", "[bad-pipe]", "which the kernel body binds again (line 8)"))
    # the twin: bound again after the call, the capacity is the constexpr's
    text = ring("    p = mk(STAGES)\n    STAGES = 1\n", helpers=helper)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    assert "with STAGES = 2 (read specialised)" in err
    assert shapes(write_kernel(tmp_path, text), STAGES=2) == ["2"]


def test_the_same_statement_binding_it_after_the_capacity_is_read(tmp_path, capsys):
    """Python evaluates the right-hand side first: ``STAGES, p = 1, tle.pipe(capacity=STAGES,
    ...)`` declares the ring with the constexpr's capacity."""
    body = ("    STAGES, p = 1, tle.pipe(capacity=STAGES, name=\"p\",\n"
            "                           t=tle.gpu.alloc([STAGES, 64], tl.float32))\n")
    code, err = dump(tmp_path, capsys, ring(body))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, ring(body), "--param", "STAGES=1")
    expect(code, err, DEADLOCK)


def test_capacity_from_another_name_bound_once_is_read(tmp_path, capsys):
    """The twin: the other value under another name (a constexpr binding) is the capacity, and
    the parameter bound again after the declaration changes nothing."""
    body = "    S: tl.constexpr = STAGES\n" + PIPE.replace("STAGES", "S")
    code, err = dump(tmp_path, capsys, ring(body))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, ring(body), "--param", "STAGES=1")
    expect(code, err, DEADLOCK)
    code, err = dump(tmp_path, capsys, ring(PIPE + "    STAGES = 1\n"))
    expect(code, err, "verified")
    assert "with STAGES = 2 (read specialised)" in err


@pytest.mark.parametrize("rebind", ["W = 32", "for W in tl.static_range(32, 33):\n        pass"])
def test_slot_width_constexpr_bound_again_is_refused(tmp_path, capsys, rebind):
    """Bug: ``tle.gpu.alloc([2, W])`` after ``W = 32`` was read as the parameter (DEFAULT_CONFIG's
    64) and lowered as ``[2, 64]``: a slot the kernel declares 32 wide; refused as the
    allocation of any name the kernel body binds is."""
    body = f"    {rebind}\n    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, W], tl.float32))\n"
    text = ring(body).replace("STAGES", "W").replace('{"W": 2}', '{"W": 64}')
    code, err = dump(tmp_path, capsys, text)
    if rebind.startswith("for "):
        # the loop leaves W bound to 32, its last value (adversarial round 69): the slot is 32
        # wide and the producer's 64-wide store into it is refused
        expect(code, err, ("rejected", "[bad-store]", "whose slot is [32]"))
    else:
        expect(code, err, ("rejected", "[bad-alloc]",
                           "(the kernel body binds 'W' again at line 8)"))
    # the twin: the parameter itself, lowered at the config's width
    body = "    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, W], tl.float32))\n"
    text = ring(body).replace("STAGES", "W").replace('{"W": 2}', '{"W": 64}')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    src = gluon_source((str(write_kernel(tmp_path, text)), "k"), constexprs={"W": 64}).source
    assert "gl.allocate_shared_memory(gl.float32, [2, 64]" in src


# ------------------------------------------------------------------ DEFAULT_CONFIG's forms


NON_LITERAL = f'\n\nSIG = {SIG}\nDEFAULT_CONFIG = {{"signature": SIG, ' \
              f'"constexprs": {{"STAGES": VALUE}}, "num_warps": 4}}\n'


def test_a_config_that_is_no_literal_is_refused_not_an_internal_error(tmp_path, capsys):
    """Bug: an internal error (TypeError decoding the config's mark), exit 3."""
    text = ring(config=NON_LITERAL)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[constexpr-operand]", "is no literal dict"))
    code, err = dump(tmp_path, capsys, text, "--param", "STAGES=2")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, text, "--param", "STAGES=1")
    expect(code, err, DEADLOCK)


def test_a_keyed_config_that_is_no_literal_is_refused_not_an_internal_error(tmp_path, capsys):
    keyed = (f'\n\nSIG = {SIG}\nDEFAULT_CONFIG = {{"k": {{"signature": SIG, "constexprs": '
             f'{{"STAGES": VALUE}}, "num_warps": 4}}}}\n')
    code, err = dump(tmp_path, capsys, ring(config=keyed))
    expect(code, err, ("rejected", "[constexpr-operand]", "is no literal dict"))
    code, err = dump(tmp_path, capsys, ring(config=keyed), "--gluon", "--param", "STAGES=2")
    assert code == 2 and "internal error" not in err, err


@pytest.mark.parametrize("value,want", [(2, "verified"), (1, DEADLOCK)])
def test_a_config_without_signature_gives_every_kernel_its_constexprs(tmp_path, capsys, value,
                                                                      want):
    """Bug: ``{"constexprs": {...}}`` was read as the entry of a kernel named "constexprs": the
    safe ring was refused for want of a value."""
    config = '\n\nDEFAULT_CONFIG = {"constexprs": {"STAGES": VALUE}}\n'
    code, err = dump(tmp_path, capsys, ring(value=value, config=config))
    expect(code, err, want)
    if want == "verified":
        assert "with STAGES = 2 (read specialised)" in err


# ------------------------------------------------------------------ refusals that name the fault


def test_a_config_value_the_kernel_cannot_take_is_named(tmp_path, capsys):
    """Lower priority: DEFAULT_CONFIG's STAGES = 0 (a capacity and a slot buffer of 0) was
    refused as if the config gave no value ("give it a value"); the reading with 0 now names the
    buffer, and a --param that can be read is verified."""
    code, err = dump(tmp_path, capsys, ring(value=0))
    expect(code, err, ("rejected", "[bad-alloc]", "dimension 0 of shape [0, 64] must be >= 1"))
    assert "give it a value" not in err
    code, err = dump(tmp_path, capsys, ring(value=0), "--param", "STAGES=2")
    expect(code, err, "verified")


@pytest.mark.parametrize("value", ["True", "2.0", '"2"', "None"])
def test_a_config_value_that_is_no_integer_is_named(tmp_path, capsys, value):
    code, err = dump(tmp_path, capsys, ring(value=value))
    expect(code, err, ("rejected", "[constexpr-operand]",
                       f"(DEFAULT_CONFIG gives STAGES {value.replace(chr(34), chr(39))}, "
                       f"no integer)"))


# ------------------------------------------------------------------ held


@pytest.mark.parametrize("cap,stages,want", [
    ("STAGES // 2", 4, "verified"), ("STAGES // 2", 3, DEADLOCK),
    ("2 if STAGES > 1 else 1", 3, "verified"), ("2 if STAGES > 1 else 1", 1, DEADLOCK),
    ("STAGES - STAGES + 1", 5, DEADLOCK), ("(STAGES, 1)[0]", 2, "verified"),
    ("(STAGES, 1)[1]", 2, DEADLOCK), ("~STAGES + 4", 2, DEADLOCK), ("~STAGES + 5", 2, "verified"),
    ("(STAGES > 1) + 1", 2, "verified"), ("(STAGES > 1) + 1", 1, DEADLOCK),
])
def test_capacity_expressions_are_the_numbers_python_computes(tmp_path, capsys, cap, stages,
                                                              want):
    body = f"    p = tle.pipe(capacity={cap}, t=tle.gpu.alloc([{cap}, 64], tl.float32))\n"
    code, err = dump(tmp_path, capsys, ring(body), "--param", f"STAGES={stages}")
    expect(code, err, want)


SECOND = '''

@tle.jit(num_warps=4)
def k2(x_ptr, y_ptr, N, STAGES: tl.constexpr):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=STAGES, t=tle.gpu.alloc([STAGES, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, y_ptr, N))], [4], [64])
'''


def keyed(a: int, b: int) -> str:
    entry = f'{{"signature": {SIG}, "constexprs": {{"STAGES": VALUE}}, "num_warps": 4}}'
    return (ring(value=None, helpers=SECOND)
            + f'\n\nDEFAULT_CONFIG = {{"k": {entry.replace("VALUE", str(a))}, '
              f'"k2": {entry.replace("VALUE", str(b))}}}\n')


def test_two_kernels_sharing_partitions_each_at_its_own_capacity(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, keyed(2, 1))
    assert code == 1 and "[double-acquire]" in err, err  # one kernel verified, one rejected
    assert "k: verified for every value of N (N >= 0), with STAGES = 2" in err
    assert "k2: rejected" in err
    code, err = dump(tmp_path, capsys, keyed(2, 1), "--kernel", "k")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, keyed(2, 1), "--kernel", "k2")
    expect(code, err, DEADLOCK)
    code, err = dump(tmp_path, capsys, keyed(1, 2), "--param", "STAGES=2")
    expect(code, err, "verified")
    path = write_kernel(tmp_path, keyed(2, 3))
    assert shapes(path, "k", STAGES=2) == ["2"] and shapes(path, "k2", STAGES=3) == ["3"]


RACE = '''

def prod(p, x_ptr, N, y_ptr, S: tl.constexpr):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)
    tl.store(y_ptr + S * 64 + tl.arange(0, 64), tl.zeros([64], tl.float32))


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        s = r.wait(i)
        tl.store(y_ptr + 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        r.release(i)
'''


@pytest.mark.parametrize("a,b", [(2, 1), (1, 2)])
def test_the_race_proof_reads_each_kernels_own_values(tmp_path, capsys, a, b):
    """A store at ``y_ptr + STAGES * 64`` meets the reader's at ``y_ptr + 64`` at STAGES = 1
    only: the kernel whose entry gives 1 is rejected, the other verified."""
    text = keyed(a, b).replace("(prod, (p, x_ptr, N))", "(prod, (p, x_ptr, N, y_ptr, STAGES))")
    text = text[:text.index("\n\ndef prod(")] + RACE + text[text.index("\n\nDEFAULT_CONFIG"):]
    code, err = dump(tmp_path, capsys, text)
    assert code == 1 and "can reach the same global address" in err, err
    safe, racy = ("k", "k2") if a == 2 else ("k2", "k")
    assert f"{safe}: verified for " in err and f"{racy}: rejected" in err, err


def test_kernel_flag_reads_only_the_kernels_asked_for_in_a_keyed_file(tmp_path, capsys):
    """Lower priority: ``--kernel k`` of a keyed file was refused for k2's fault (k2's entry
    gives STAGES = 1, where a partition's ``tl.static_assert(S >= 2)`` fails; or k2 has no entry
    and its capacity no value)."""
    text = keyed(2, 1).replace("(prod, (p, x_ptr, N))", "(prod, (p, x_ptr, N, STAGES))").replace(
        "def prod(p, x_ptr, N):\n    w = p.writer()",
        "def prod(p, x_ptr, N, S: tl.constexpr):\n    tl.static_assert(S >= 2)\n    w = p.writer()")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "`tl.static_assert(S >= 2)` fails"))
    code, err = dump(tmp_path, capsys, text, "--kernel", "k")
    expect(code, err, "verified")
    assert "k2" not in err
    code, err = dump(tmp_path, capsys, text, "--kernel", "k2")
    expect(code, err, ("rejected", "`tl.static_assert(S >= 2)` fails"))
    for flags in (("--print-ir",), ("--gluon",)):
        code, out, err = run_dump(capsys, *flags, "--kernel", "k", str(tmp_path / "kernel.py"))
        assert code == 0 and ("capacity=2" in out or "[2, 64]" in out), err
    no_entry = keyed(2, 1).replace(', "k2": {', ', "other": {')
    code, err = dump(tmp_path, capsys, no_entry, "--kernel", "k")
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, no_entry)
    expect(code, err, ("rejected", "[constexpr-operand]"))


@pytest.mark.parametrize("value,want", [(2, "verified"), (1, DEADLOCK)])
def test_an_annotated_default_config_gives_its_values(tmp_path, capsys, value, want):
    """Lower priority: ``DEFAULT_CONFIG: dict = {...}`` was no config to the frontend (tle-dump's
    other readers took it): the safe ring was refused for want of a value, and a keyed one
    verified was then not lowered ("give it a value")."""
    text = ring(value=value).replace("DEFAULT_CONFIG = {", "DEFAULT_CONFIG: dict = {")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    text = keyed(2, 3).replace("DEFAULT_CONFIG = {", "DEFAULT_CONFIG: dict = {")
    code, out, err = run_dump(capsys, "--gluon", str(write_kernel(tmp_path, text)))
    assert code == 0, err
    assert re.findall(r"float32, \[(\d+), 64\]", out) == ["2", "3"]


STEP = '''import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N, STEP: tl.constexpr, STAGES: tl.constexpr):
    tle.assume(N >= 0)
REBIND    p = tle.pipe(capacity=STAGES, t=tle.gpu.alloc([STAGES, 64], tl.float32))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N, STEP)), (cons, (p, y_ptr, N))], [4], [64])


def prod(p, x_ptr, N, S):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i * S)
        tl.store(tle.gpu.local_ptr(s.t), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i * S)


def cons(p, y_ptr, N):
    r = p.reader()
    for i in range(N):
        s = r.wait(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(s.slot.t)))
        r.release(i)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32",
                                "STEP": "constexpr", "STAGES": "constexpr"},
                  "constexprs": {"STEP": 1, "STAGES": 2}, "num_warps": 4}
'''


@pytest.mark.parametrize("rebind", ["", "STEP = 2", "STEP += 1", "STEP, _ = 2, 0",
                                    "for STEP in tl.static_range(2, 3):\n        pass"])
def test_a_window_stride_bound_again_is_read_as_bound(tmp_path, capsys, rebind):
    """Held: a constexpr the kernel body binds again before the partitions take it (a window
    stride here) is read with the new value in the reading specialised to the config's (the
    capacity's STAGES forces it): committed at ``2 * i``, waited at ``i``, rejected."""
    text = STEP.replace("REBIND", f"    {rebind}\n" if rebind else "")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified" if not rebind else ("rejected", "[wait-never-committed]"))

"""A sixty-first adversarial round (adversarial round 61): what tle-dump claims outside its
default run: `-p` pipelines printed with --print-ir or lowering passes (round 60's open item),
`.kir` files beside the `.py` they were printed from, DEFAULT_CONFIG values, and messages. Each
case is a small kernel read by tle-dump's main().

False verdicts, fixed:

- ``tle-dump -p verify-protocol,verify-deadlock --print-ir`` (or any pipeline whose passes give
  a verdict: ``-p schedule-wgmma``, ``-p assign-layouts``) of a kernel whose partitions race on
  global memory (a store and a load of `x_ptr` no hand-off orders) printed "verified for every
  value of N", exit 0, and its IR, where the default run and ``-p verify-protocol`` without
  --print-ir reject it (memory-race); round 48's `while` counter loaded through an untyped
  pointer (bounded by the default run) was verified the same way. The memory-race, signature
  and translation checks are no passes, and round 60 took the default verdict for emit-gluon
  alone. FIXED: cli/dump.py ``_run_print_ir`` takes, for every pipeline that gives a verdict
  (verify-deadlock after verify-protocol, its own or those its lowering passes require:
  ``_protocol_passes_of``, report.py ``makes_claim``), each kernel's verdict of ``-p`` of its
  protocol passes without --print-ir first (``_default_verdict_of`` collects its reports):
  print_ir.py ``run_print_ir`` prints a kernel only those checks reject with their errors and no
  IR (exit 1), one the pipeline rejects itself with its IR as before, and a bounded one with a
  warning, exit 3; in a file of several kernels each is judged on its own. A pipeline that gives no verdict (``-p infer-barriers --print-ir``,
  ``-p materialize-barriers``) still claims nothing (exit 0), as documented.
- DEFAULT_CONFIG ``"constexprs": {"C": "5"}`` (or None, [5], (5,), 5.0, 2.5) for a C the kernel
  uses as a loop bound was "verified for every value of C (every integer C)", exit 0, and
  --gluon / -p emit-gluon printed a Gluon module with ``C: gl.constexpr = '5'`` that Triton 3.6
  refuses ("For loop bounds and step must all be ints", "cannot convert None ... to tensor"),
  while a C given no value (compiled as None) was refused. FIXED: cli/loading.py
  ``check_integer_config_values``: a value that is no integer for a constexpr the kernel uses
  where Triton takes only one (frontend/constexpr_kinds.py) is unusable input, exit 2 at
  DEFAULT_CONFIG's line (a --param value takes its place; a bool is an integer).
- A `.kir` file (printed by ``-p infer-barriers --print-ir``) whose default_config types the
  protocol param N ``u32``, ``i16``, ``i64``, ``i1`` or ``fp32``, or whose trip count is loaded
  through an ``*fp32`` pointer, was verified (exit 0) by the default run and -p emit-gluon; the
  same `.py` is rejected (signature), and docs/passes.md says a .kir is verified as its .py is.
  FIXED: ``check_launch_signature`` reads a .kir kernel's facts (``kir_facts``: lowering/walks
  ``kernel_facts`` and the params' arguments from frontend/protocol ``analyse``) where a .py
  kernel has its KernelInfo.
- A `.kir` whose default_config gives C = 3 to a ``[2, C]`` field (no power of two) or C = 65536
  (rings past 227 KB) was verified and lowered (exit 0); its .py is rejected at the declaration.
  FIXED: ``check_default_shapes`` reads the .kir kernel's IR too.

A wrong exit status, fixed: ``tle-dump -p emit-gluon k.pipe`` exited 1 for a `.pipe` the
verifier rejects (round 60's default verdict ran first) and 2 ("printing the kernel IR needs a
.py or .kir file") for one it verifies; now 2 for both, before any verdict (cli/dump.py
``_run_print_ir``).

Messages, fixed: a `.pipe` TMA copy that states no byte count beside one that states 16384 was
rejected as one that "moves 0 bytes" (0 is the IR's unknown): it now says it states none; a
DEFAULT_CONFIG ``"num_warps": "4"`` was refused as "gives num_warps 4, but kernel 'k' has
num_warps=4": the value is now shown as written ('4').

Checked and held (no hole found): register budgets and warp counts (literal or constexpr),
program-id and num_programs trip counts, slots reached after their release through aliases,
tuples, helpers and pointers, TMA copies in helpers, loops, `if`s and `while`s, `tle.assume` on
loaded, branch-chosen or program-id values, run-time loop steps that may be 0 (`N // 64`,
`N % 2`, `C - 5`, a load), `.pipe` readers, views and capacities edited by hand, `.kir`
capacities, warps, budgets and barrier attributes edited by hand (recomputed), `-p` orders
(`verify-deadlock,verify-protocol,verify-deadlock`), several files under `-p`, a race that needs
a param value other than the one --param gives (the race check covers every value), and the
round trip of every bundled kernel's printed protocol.

Left open: the printed protocol of a kernel rejected for a run-time loop step that may be 0
(``for i in range(0, 10, N)`` with no pipe event) reads back "verified": a `.pipe` file holds no
loop without events, so the obligation (Program.zero_steps) is not printed (the division
obligations of round 59 are, through `def` lines). The filecheck kernels
tests/filecheck/infer_stages.py and infer_barriers.py race on global memory (the default run
rejects them); their pipelines give no verdict, so they still print.
"""

from __future__ import annotations

import pytest

from .adversarial_support import (HEAD, dump, expect, get, kernel, loop, put, run_dump,
                                  write_kernel)

#: the imports every kernel file of adversarial_support starts with
HEAD_LINES = HEAD.rstrip("\n") + "\n"

#: the ring's writer and reader over N windows
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


# ------------------------------------ A: a printed pipeline of a kernel whose partitions race

def _racing() -> str:
    """Round 60's kernel whose writer stores to `x_ptr` while its reader loads it, with no
    hand-off between them (the default run rejects it: memory-race)."""
    w = loop("for p in range(N):", put("p") + "tl.store(x_ptr + tl.arange(0, 64), "
             "tl.zeros([64], tl.float32))\n")
    r = loop("for p in range(N):", get("p") + "tl.store(y_ptr + tl.arange(0, 64), "
             "tl.load(x_ptr + tl.arange(0, 64)))\n")
    return kernel(w, r).replace("(consume, (kv, y_ptr, N, C))",
                                "(consume, (kv, y_ptr, x_ptr, N, C))").replace(
        "def consume(kv, y_ptr, N,", "def consume(kv, y_ptr, x_ptr, N,")


PRINTED_PIPELINES = [
    ("-p", "verify-protocol,verify-deadlock", "--print-ir"),
    ("-p", "verify-protocol,infer-stages,infer-barriers,verify-deadlock", "--print-ir"),
    ("-p", "verify-deadlock,verify-protocol,verify-deadlock", "--print-ir"),
    ("-p", "schedule-wgmma"),
    ("-p", "assign-layouts"),
]


@pytest.mark.parametrize("flags", PRINTED_PIPELINES)
def test_a_printed_pipeline_rejects_a_kernel_whose_partitions_race(tmp_path, capsys, flags):
    """Before: `-p verify-protocol,verify-deadlock --print-ir` and `-p schedule-wgmma` /
    `-p assign-layouts` printed "verified for every value of N" (exit 0) and the IR of a kernel
    the default run rejects (memory-race): the memory-race check is no pass, and round 60
    added it to emit-gluon alone."""
    path = write_kernel(tmp_path, _racing())
    code, err = dump(tmp_path, capsys, _racing())
    expect(code, err, ("rejected", "[memory-race]"))
    for quiet in ((), ("-q",)):
        code, out, err = run_dump(capsys, *quiet, *flags, str(path))
        assert code == 1, (flags, err)
        assert "[memory-race]" in err and ": verified for " not in err, err
        assert "partition produce" not in out and "kernel k(" not in out, out


@pytest.mark.parametrize("flags", PRINTED_PIPELINES)
def test_a_printed_pipeline_of_a_kernel_without_a_race_is_printed(tmp_path, capsys, flags):
    """Held: the ring without the race prints its IR with the verdict it had."""
    path = write_kernel(tmp_path, kernel(WRITER, READER))
    code, out, err = run_dump(capsys, *flags, str(path))
    assert code == 0 and "kernel k(" in out and ": verified for " in err, err


@pytest.mark.parametrize("flags", [("-p", "materialize-barriers"),
                                   ("-p", "infer-barriers", "--print-ir"),
                                   ("-p", "verify-deadlock,verify-protocol", "--print-ir")])
def test_a_printed_pipeline_that_gives_no_verdict_claims_nothing(tmp_path, capsys, flags):
    """Held (documented): a pipeline that gives no verdict prints the IR of the racing kernel,
    "not verified", exit 0: it claims nothing."""
    path = write_kernel(tmp_path, _racing())
    code, out, err = run_dump(capsys, *flags, str(path))
    assert code == 0 and "kernel k(" in out and ": not verified" in err, err


def test_a_printed_pipeline_of_a_kernel_the_passes_reject_keeps_its_ir(tmp_path, capsys):
    """Held: a reader that waits one index more than the writer commits is rejected by the
    pipeline's own passes, which print its IR and their error once."""
    path = write_kernel(tmp_path, kernel(WRITER, loop("for p in range(N + 1):", get("p"))))
    code, out, err = run_dump(capsys, "-p", "verify-protocol,verify-deadlock", "--print-ir",
                              str(path))
    assert code == 1 and "kernel k(" in out, err
    assert err.count("[wait-never-committed]") == 1, err
    code, out, err = run_dump(capsys, "-p", "infer-barriers", "--print-ir", str(path))
    assert code == 0 and "kernel k(" in out, err


def test_a_printed_pipeline_of_a_kernel_the_default_run_leaves_bounded(tmp_path, capsys):
    """Before: round 48's `while` counter loaded through a pointer of no known element type
    (bounded by the default run, exit 3) was "verified" (exit 0) under `-p verify-protocol,
    verify-deadlock --print-ir`; now exit 3 with a warning that the IR printed is not
    proved."""
    from .test_adversarial_verdicts_48 import DOWN_TO_ZERO, ring
    path = write_kernel(tmp_path, ring(DOWN_TO_ZERO))
    assert run_dump(capsys, "-q", "--param", "C=3", str(path))[0] == 3
    code, out, err = run_dump(capsys, "--param", "C=3", "-p", "verify-protocol,verify-deadlock",
                              "--print-ir", str(path))
    assert code == 3 and "tle-dump: warning: " in err and "not proved" in err, err
    assert "kernel k(" in out


def test_a_printed_pipeline_of_a_kir_file_whose_partitions_race(tmp_path, capsys):
    """The same for the kernel's .kir text form (printed by -p infer-barriers --print-ir of
    the kernel without its reader's racing load, then given that load back)."""
    good = _racing().replace("tl.load(x_ptr + tl.arange(0, 64)))\n", "1.0)\n")
    path = write_kernel(tmp_path, good)
    kir = tmp_path / "k.kir"
    code, _, _ = run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir), str(path))
    assert code == 0
    text = kir.read_text()
    line = next(x for x in text.splitlines() if "tl.store(y_ptr + tl.arange(0, 64), 1.0)" in x)
    edited = line.split("  #")[0].replace("1.0)", "tl.load(x_ptr + tl.arange(0, 64)))")
    kir.write_text(text.replace(line, edited))  # its location comment dropped, as kir.md says
    code, _, err = run_dump(capsys, "-q", str(kir))
    assert code == 1 and "[memory-race]" in err, err
    code, out, err = run_dump(capsys, "-p", "verify-protocol,verify-deadlock", "--print-ir",
                              str(kir))
    assert code == 1 and "[memory-race]" in err and ": verified for " not in err, err


# --------------------- B: a DEFAULT_CONFIG constexpr value Triton takes for no integer use

#: the ring whose writer and reader loop over the constexpr C (a loop bound: an integer only)
C_RING = kernel(loop("for p in range(C):", put("p")), loop("for p in range(C):", get("p")))


@pytest.mark.parametrize("value, words", [
    ('"5"', "gives C = '5' (a str)"), ("None", "gives C = None,"),
    ("[5]", "gives C = [5] (a list)"), ("(5,)", "gives C = (5,) (a tuple)"),
    ("5.0", "gives C = 5.0 (a float)"), ("2.5", "gives C = 2.5 (a float)"),
    ("-0.0", "gives C = -0.0 (a float)"),
])
def test_a_config_value_no_integer_use_compiles_with_is_refused(tmp_path, capsys, value, words):
    """Before: `"constexprs": {"C": "5"}` (or None, [5], 5.0, 2.5) for a C the kernel uses as a
    loop bound was "verified for every value of C (every integer C)", exit 0, and --gluon /
    -p emit-gluon printed, exit 0, a Gluon module with `C: gl.constexpr = '5'` that Triton 3.6
    refuses to compile ("For loop bounds and step must all be ints", "cannot convert None ... to
    tensor"), where a signature typing C "constexpr" with no value in "constexprs" (compiled as
    None) is refused (exit 2). Now the same: exit 2 at DEFAULT_CONFIG's line, for every mode."""
    text = C_RING.replace('"constexprs": {"C": 5}', '"constexprs": {"C": ' + value + '}')
    path = write_kernel(tmp_path, text)
    line = text[:text.index("DEFAULT_CONFIG = ")].count("\n") + 1
    for flags in ((), ("--gluon",), ("-p", "emit-gluon"), ("--format", "json")):
        quiet = () if flags[:1] == ("--format",) else ("-q",)
        code, out, err = run_dump(capsys, *quiet, *flags, str(path))
        assert code == 2, (flags, err)
        if flags[:1] == ("--format",):
            assert '"exit_code": 2' in out and "Triton takes only an integer" in out, out
            continue
        assert f"kernel.py:{line}: error: DEFAULT_CONFIG's \"constexprs\" {words}" in err, err
        assert "Triton takes only an integer" in err and ": verified for " not in err, err
        assert "gl.constexpr" not in out, out


def test_a_config_value_a_param_replaces_is_not_refused(tmp_path, capsys):
    """Held: --param C=5 takes the config's place (the lowering lowers C = 5)."""
    path = write_kernel(tmp_path, C_RING.replace('{"C": 5}', '{"C": "5"}'))
    code, _, err = run_dump(capsys, "-q", "--param", "C=5", str(path))
    assert code == 0 and ": verified for C = 5" in err, err


@pytest.mark.parametrize("value", ["5", "True", "-3", "2**31"])
def test_integer_config_values_are_read_as_before(tmp_path, capsys, value):
    """Held: an integer (a bool is the integer Triton reads) is read as before."""
    path = write_kernel(tmp_path, C_RING.replace('{"C": 5}', '{"C": ' + value + '}'))
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 0 and ": verified for every value of C" in err, err


def test_a_float_config_value_of_a_constexpr_of_no_integer_use_stays_bounded(tmp_path, capsys):
    """Held (round 50): a float for a constexpr the kernel does not prove an integer (compared
    only, `if p < C:`) is no refusal: the claim is qualified to the integers (bounded)."""
    reader = loop("for p in range(N):", "res = r.wait(p)\n" + loop(
        "if p < C:", "tl.store(y_ptr + tl.arange(0, 64), "
        "tl.load(tle.gpu.local_ptr(res.slot.tile)))\n") + "r.release(p)\n")
    path = write_kernel(tmp_path, kernel(WRITER, reader, config="1.25"))
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 3 and "C = 1.25" in err, err


def test_a_kir_whose_config_value_is_a_string_is_refused(tmp_path, capsys):
    """The same for a .kir file whose default_config was edited to give C as a string."""
    path = write_kernel(tmp_path, C_RING)
    kir = tmp_path / "k.kir"
    code, _, _ = run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir), str(path))
    assert code == 0 and "('C', 5)" in kir.read_text()
    kir.write_text(kir.read_text().replace("('C', 5)", "('C', '5')"))
    for flags in ((), ("-p", "emit-gluon")):
        code, out, err = run_dump(capsys, "-q", *flags, str(kir))
        assert code == 2 and "gives C = '5' (a str)" in err, err
        assert "gl.constexpr" not in out, out


# ------------------------------- C: a .kir file whose DEFAULT_CONFIG signature the .py refuses

def _kir_of(tmp_path, capsys, text: str):
    """The kernel ``text``'s .kir text form (-p infer-barriers --print-ir, which gives no
    verdict, so that a kernel the default run rejects prints too)."""
    path = write_kernel(tmp_path, text)
    kir = tmp_path / "k.kir"
    code, _, err = run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir),
                            str(path))
    assert code == 0, err
    return path, kir


@pytest.mark.parametrize("n, words", [
    ("u32", "typed u32 in the signature; integer arguments must be i32 or i64"),
    ("i16", "typed i16 in the signature"),
    ("i64", "typed i64 in the signature, but it is a param of the verified pipe protocol"),
    ("i1", "typed i1 in the signature (a bool)"),
    ("fp32", "typed fp32 in the signature (a float)"),
])
def test_a_kir_whose_signature_types_a_protocol_param_otherwise_is_rejected(tmp_path, capsys, n,
                                                                            words):
    """Before: the ring's .kir with its default_config typing N (a loop bound) u32, i16, i64,
    i1 or fp32 was "verified for every value of N", exit 0, by the default run and -p
    emit-gluon, where its .py file is rejected ([signature]): docs/passes.md says a .kir is
    verified as its .py is. The signature checks (cli/kernel_checks.check_launch_signature) read a
    .py kernel's KernelInfo, which a .kir has none of; they now read the facts of the .kir kernel
    (lowering/walks.kernel_facts and the arguments its params come from)."""
    text = kernel(WRITER, READER)
    path, kir = _kir_of(tmp_path, capsys, text)
    assert "('N', 'i32')" in kir.read_text()
    write_kernel(tmp_path, text.replace('"N": "i32"', f'"N": "{n}"'), "typed.py")
    code, _, err = run_dump(capsys, "-q", str(tmp_path / "typed.py"))
    assert code == 1 and words in err and "[signature]" in err, err
    kir.write_text(kir.read_text().replace("('N', 'i32')", f"('N', '{n}')"))
    for flags in ((), ("-p", "emit-gluon"), ("-p", "verify-protocol,verify-deadlock",
                                             "--print-ir")):
        code, out, err = run_dump(capsys, "-q", *flags, str(kir))
        assert code == 1 and words in err and "[signature]" in err, (flags, err)
        assert ": verified for " not in err and "gl.constexpr" not in out, (flags, err)


def test_a_kir_whose_trip_count_is_loaded_as_a_float_is_rejected(tmp_path, capsys):
    """Before: a .kir whose partitions loop over `M = tl.load(x_ptr + 1000)` with x_ptr typed
    *fp32 was verified (exit 0); its .py is rejected (the signature makes M an fp32)."""
    w = loop("for p in range(M):", put("p"))
    r = loop("for p in range(M):", get("p"))
    text = (kernel(w, r, body="M = tl.load(x_ptr + 1000)\n")
            .replace("(produce, (kv, x_ptr, N, C))", "(produce, (kv, x_ptr, M, C))")
            .replace("(consume, (kv, y_ptr, N, C))", "(consume, (kv, y_ptr, M, C))")
            .replace("def produce(kv, x_ptr, N,", "def produce(kv, x_ptr, M,")
            .replace("def consume(kv, y_ptr, N,", "def consume(kv, y_ptr, M,"))
    path, kir = _kir_of(tmp_path, capsys, text)
    for p in (path, kir):
        code, _, err = run_dump(capsys, "-q", str(p))
        assert code == 1 and "comes from a load, and the signature makes it a value of type " \
            "fp32" in err and "[signature]" in err, (p, err)


def test_a_kir_whose_signature_is_the_kernels_is_verified(tmp_path, capsys):
    """Held: the ring's .kir as printed is verified, and lowered by -p emit-gluon."""
    _, kir = _kir_of(tmp_path, capsys, kernel(WRITER, READER))
    code, _, err = run_dump(capsys, "-q", str(kir))
    assert code == 0 and ": verified for every value of N" in err, err
    code, out, err = run_dump(capsys, "-q", "-p", "emit-gluon", str(kir))
    assert code == 0 and "gl.warp_specialize" in out, err


# --------------------------------------------------- D: error messages that misstated

MIXED_TMA_PIPE = """kernel k
param N >= 0

pipe ring capacity=2 fields=(tile)

partition produce default warps=4 {
  for t in range(N) {
    ring.acquire(t)
    ring.tma(t, tile, 16384)
    ring.commit(t)
  }
  ring.acquire(N)
  ring.tma(N, tile)
  ring.commit(N)
}

partition consume warps=4 regs=232 {
  for t in range(N + 1) {
    ring.wait(t)
    ring.read(t, tile)
    ring.release(t)
  }
}
"""


def test_a_pipe_copy_stating_no_bytes_beside_a_stated_one_is_not_said_to_move_zero(tmp_path,
                                                                                 capsys):
    """Before: `ring.tma(N, tile)` (no byte count: unknown) beside `ring.tma(t, tile, 16384)`
    was rejected as "the TMA copy into ring.tile moves 0 bytes" (0 is how the IR holds an
    unknown count; round 60 refuses a stated 0). Still rejected, saying it states no count."""
    code, err = dump(tmp_path, capsys, MIXED_TMA_PIPE, name="k.pipe")
    expect(code, err, ("rejected", "k.pipe:13: error: the TMA copy into ring.tile states no "
                       "byte count, the copy at line 9 16384", "[tma-window]"))
    assert "moves 0 bytes" not in err, err
    # a stated count other than the field's keeps its message
    code, err = dump(tmp_path, capsys, MIXED_TMA_PIPE.replace("ring.tma(N, tile)",
                                                              "ring.tma(N, tile, 8192)"),
                     name="k.pipe")
    expect(code, err, ("rejected", "moves 8192 bytes, the copy at line 9 16384"))


def test_a_config_num_warps_given_as_a_string_is_shown_as_one(tmp_path, capsys):
    """Before: `"num_warps": "4"` beside @tle.jit's 4 was refused with "DEFAULT_CONFIG gives
    num_warps 4, but kernel 'k' has num_warps=4", which contradicts itself; the value is now
    shown as written ('4'). Exit 2 as before."""
    text = kernel(WRITER, READER).replace('"constexprs": {"C": 5}}',
                                          '"constexprs": {"C": 5}, "num_warps": "4"}')
    path = write_kernel(tmp_path, text)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 2 and "DEFAULT_CONFIG gives num_warps '4', but kernel 'k' has num_warps=4" \
        in err, err


# ----------------------- E: a .kir whose DEFAULT_CONFIG shapes a field no launch allocates

#: a ring of [2, C] fp32 fields, C a constexpr (DEFAULT_CONFIG: C = 64)
C_FIELD = kernel(
    loop("for p in range(N):", "s = w.acquire(p)\ntl.store(tle.gpu.local_ptr(s.tile), "
         "tl.zeros([C], tl.float32))\nw.commit(p)\n"),
    loop("for p in range(N):", "res = r.wait(p)\ntl.store(y_ptr + tl.arange(0, C), "
         "tl.load(tle.gpu.local_ptr(res.slot.tile)))\nr.release(p)\n"),
    config="64").replace("tle.gpu.alloc([2, 64], tl.float32)", "tle.gpu.alloc([2, C], tl.float32)")


@pytest.mark.parametrize("c, words", [
    (3, "dimension 3 is not a power of two"),
    (65536, "bytes of shared memory up to field 'tile' of pipe 'kv'"),
])
def test_a_kir_whose_config_shapes_a_field_no_launch_allocates_is_rejected(tmp_path, capsys, c,
                                                                          words):
    """Before: the .kir of a ring of `[2, C]` fields, its default_config edited to C = 3 (no
    power of two) or C = 65536 (512 KiB of rings), was verified, exit 0, by the default run
    and -p emit-gluon, where the .py with that DEFAULT_CONFIG is rejected at the declaration
    (Gluon refuses the allocation): cli/kernel_checks.check_default_shapes read a .py kernel's IR
    only."""
    path, kir = _kir_of(tmp_path, capsys, C_FIELD)
    assert "('C', 64)" in kir.read_text()
    code, _, err = run_dump(capsys, "-q", str(kir))
    assert code == 0, err
    write_kernel(tmp_path, C_FIELD.replace('{"C": 64}', '{"C": %d}' % c), "edited.py")
    code, _, err = run_dump(capsys, "-q", str(tmp_path / "edited.py"))
    assert code == 1 and words in err and f"(DEFAULT_CONFIG: C = {c})" in err, err
    kir.write_text(kir.read_text().replace("('C', 64)", f"('C', {c})"))
    for flags in ((), ("-p", "emit-gluon")):
        code, out, err = run_dump(capsys, "-q", *flags, str(kir))
        assert code == 1 and words in err and f"(DEFAULT_CONFIG: C = {c})" in err, (flags, err)
        assert ": verified for " not in err and "gl.warp_specialize" not in out, (flags, err)


def test_a_printed_pipeline_judges_each_kernel_of_a_file(tmp_path, capsys):
    """A file of two kernels, `k` whose partitions race and `k2` whose reader waits an index
    never committed (the pipeline's own rejection): each gets its own verdict. (With a first fix
    that took the file's verdict, `k` was still "verified for every value of N" on its summary
    line beside `k2`'s rejection, exit 1.) Now `k` is rejected with the race, no IR, and `k2`'s
    IR is printed with its own error."""
    race = _racing().split("DEFAULT_CONFIG")[0]
    hang = kernel(WRITER, loop("for p in range(N + 1):", get("p"))).split("DEFAULT_CONFIG")[0]
    hang = (hang.replace("def k(", "def k2(").replace("produce", "produce2")
            .replace("consume", "consume2").replace(HEAD_LINES, ""))
    text = race + "\n" + hang + '\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", ' \
        '"y_ptr": "*fp32", "N": "i32"}, "constexprs": {"C": 5}}\n'
    path = write_kernel(tmp_path, text)
    code, out, err = run_dump(capsys, "-p", "verify-protocol,verify-deadlock", "--print-ir",
                              str(path))
    assert code == 1, err
    assert "[memory-race]" in err and "tle-dump: k: rejected: 1 error" in err, err
    assert "[wait-never-committed]" in err and "tle-dump: k2: rejected" in err, err
    assert ": verified for " not in err, err
    assert "kernel k2(" in out and "kernel k(" not in out, out


# ------------------------------------------- F: -p emit-gluon of a .pipe file's exit status

REJECTED_PIPE = """kernel k
param N >= 0

pipe kv capacity=2 fields=(tile)

partition produce default warps=4 {
  for p in range(N) {
    kv.acquire(p)
    kv.write(p, tile)
    kv.commit(p)
  }
}

partition consume warps=4 regs=232 {
  for p in range(N + 1) {
    kv.wait(p)
    kv.read(p, tile)
    kv.release(p)
  }
}
"""


@pytest.mark.parametrize("flags", [("-p", "emit-gluon"), ("-p", "materialize-barriers"),
                                   ("-p", "verify-protocol,verify-deadlock", "--print-ir")])
def test_a_pipeline_printing_ir_refuses_a_pipe_file_whatever_its_verdict(tmp_path, capsys,
                                                                         flags):
    """Before: `tle-dump -p emit-gluon k.pipe` exited 1 (the default run's rejection, taken
    first since round 60) for a .pipe the verifier rejects, and 2 ("printing the kernel IR
    needs a .py or .kir file") for one it verifies: the usage error came after the verdict. Now
    exit 2 for both, as for every pipeline that prints the kernel IR."""
    for text in (REJECTED_PIPE, REJECTED_PIPE.replace("range(N + 1)", "range(N)")):
        path = write_kernel(tmp_path, text, "k.pipe")
        code, out, err = run_dump(capsys, "-q", *flags, str(path))
        assert code == 2 and "printing the kernel IR needs a .py or .kir file" in err, err
        assert "error: the reader" not in err, err

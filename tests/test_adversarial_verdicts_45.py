"""A forty-fifth adversarial round (adversarial round 45): constexprs a launch gives (no value in
DEFAULT_CONFIG's ``constexprs`` nor from ``--param``), and DEFAULT_CONFIGs whose signature
says "constexpr" where the kernel was not verified for it. Each case is a small kernel written
to a file and read by tle-dump's main(); where the case is about what Triton 3.6 does, a plain
``@triton.jit`` kernel is compiled for sm_90a on the CPU and its TTIR or refusal read.

Bugs found, one line each (before the fixes that came with this file):

- a constexpr with no value was read as an integer by the memory-race proof: ``(t * 2 *
  SCALE).to(tl.int32)`` is ``2 * t * SCALE``, even, never 5, so a store there verified beside
  another partition's store at ``y_ptr + 5``, where a launch with ``SCALE=0.5`` computes ``t *
  2 * 0.5`` in fp32 (sitofp / fptosi) and stores at ``y_ptr + 5`` at t = 5; likewise a mask or a
  ``tl.where`` on ``t * 2 * SCALE == 1`` (true at t = 1) and ``tl.full([1], t * 2 * SCALE, tl.int32)`` (verified,
  exit 0); FIXED: such a constexpr is read as a float (race_terms.floating: a cast of it any
  value of the type, a comparison either truth) unless the kernel uses it, by itself, where
  Triton takes only an integer, in a statement every compile reaches (a range bound,
  ``tl.arange``, a ``tl.zeros`` / ``tl.full`` shape, a pipe field's shape:
  frontend/constexpr_kinds.py); the refusal names the constexpr and says it may be a float.
- a DEFAULT_CONFIG signature typing a run-time argument "constexpr" (``"S": "constexpr"`` of
  ``def k(..., S)``) was verified with S a run-time value, and ``--ttgir`` compiled another
  kernel (S baked in) or failed (``'NoneType' object has no attribute 'type'`` without a
  value); a signature typing a constexpr "constexpr" while ``"constexprs"`` gives it no value
  was verified and ``--ttgir`` refused it ("constexpr argument(s) C need a value"); FIXED: both
  are unusable input (exit 2) naming the argument, whatever tle-dump is asked to print
  (cli/loading.py check_config_constexprs).
- the pointer of a store that is the result of an operator no pointer comes out of (``y_ptr +
  t * 2 ^ 1``: Python's ``+`` binds before ``^``, so this is ``(y_ptr + 2 * t) ^ 1``; likewise
  ``|``, ``&``, ``<<``, ``(y_ptr + t) * 2``, ``//``, ``%``, ``-(y_ptr + t)``, directly or
  through a name bound to it) was verified without a DEFAULT_CONFIG signature typing y_ptr
  (exit 0), where Triton 3.6 refuses the operator of a pointer ("invalid operands of type
  pointer") and the store of an integer ("Unsupported ptr type") whatever the launch's types;
  FIXED: refused where the kernel is read (triton_rules.pointer_form_rule,
  ``unsupported-expression``).
- the product of a constexpr of no value and a number (``y_ptr + C * 2``) was read as an int32
  product, wrapping at 2 ** 31, where Triton computes constexpr arithmetic in Python (C = 2 ** 30:
  ``y_ptr + 2147483648``): verified beside a store at ``y_ptr + 2147483648``; FIXED: such a
  constexpr is a Python number in the race proof (race_kinds._free_constexpr; its own value is
  still read in int32, as docs/semantics.md states).

Pins beside them: a constexpr proved an integer by ``tl.arange(0, SCALE)``, ``range(SCALE)``,
``tl.static_range(SCALE)`` or ``tl.zeros([SCALE], ...)`` keeps the integer reading (verified);
the same use where a compile may not reach it (under an ``if``, in a ``tl.static_range`` body,
in a conditional expression) or of another value (``int(SCALE)``) proves nothing; a float
DEFAULT_CONFIG value (round 43) and an integer ``--param`` are read as before.

Checked and found right (not pinned): ``tl.clamp``, ``tl.join`` / ``tl.split`` / ``tl.reshape``
/ ``tl.permute``, ``tl.histogram``, ``tl.gather`` and ``tl.make_block_ptr`` are refused as calls
the lowering does not translate; ``tl.range(..., num_stages=...)`` and the other loop options
are refused (``bad-loop``); a ``range`` of a constexpr step with events inside is refused
(``non-affine-loop``) or read specialised to the --param, where a negative step runs no
iteration and the reader's wait is refused; a ``tl.static_range`` of a negative step is walked
as Python's range; ``tl.umulhi``, ``//`` and ``%`` by a negative number or constexpr in an
address are refused beside an access they may meet (not computed exactly: no claim); Python's
``min`` / ``max`` and ``tl.minimum`` / ``tl.maximum`` of offsets, ``~t`` and
``tl.expand_dims`` are read exactly; a tensor descriptor's store is taken to reach anywhere; pipe
indices through ``min``, ``^``, ``~``, ``tl.abs``, ``tl.where`` are refused (``non-affine``).
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect
from .test_adversarial_verdicts_44 import pair, with_constexprs

RACE = ("rejected", "[memory-race]", "can reach the same global address")
MAYBE_FLOAT = "SCALE: a constexpr of no value here, which a launch may give as a float"


def scaled(writer: str, consumer_head: str = "", *extra: str) -> str:
    """Round 44's pair (the writer's store at ``y_ptr + writer``, the reader's at ``y_ptr +
    5``) with the constexpr SCALE (and ``extra`` ones), ``consumer_head`` run by the reader
    before its loop."""
    text = with_constexprs(pair(writer, "5"), "SCALE", *extra)
    if consumer_head:
        head = "".join(f"    {s}\n" for s in consumer_head.splitlines())
        text = text.replace("    for t in range(N):\n        res",
                            f"{head}    for t in range(N):\n        res")
    return text


CAST = "(t * 2 * SCALE).to(tl.int32)"

# ------------------------------------------------------------ what Triton does with a float

TRITON_FLOAT = '''import triton
import triton.language as tl


@triton.jit
def k(x_ptr, N, C: tl.constexpr):
BODY
'''


def _compile(tmp_path, monkeypatch, body: str, c, tag: str):
    """Triton's compile of ``k(x_ptr, N, C)`` of ``body`` with C = ``c`` for sm_90a: the
    compiled kernel, or the exception it raised."""
    triton = pytest.importorskip("triton")
    import importlib
    import sys

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name = f"{tag}_{abs(hash(body))}"
    (tmp_path / f"{name}.py").write_text(TRITON_FLOAT.replace("BODY", body))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    try:
        return triton.compile(ASTSource(mod.k, signature={"x_ptr": "*fp32", "N": "i32",
                                                          "C": "constexpr"},
                                        constexprs={"C": c}), target=GPUTarget("cuda", 90, 32))
    except Exception as e:  # noqa: BLE001 - Triton raises CompilationError and its subclasses
        return e
    finally:
        sys.modules.pop(name, None)


def test_triton_computes_with_a_float_constexpr_in_floats(tmp_path, monkeypatch):
    """`(t * 2 * C).to(tl.int32)` of C = 0.5: t converted to fp32, the product truncated."""
    got = _compile(tmp_path, monkeypatch, "    for t in range(N):\n"
                   "        tl.store(x_ptr + (t * 2 * C).to(tl.int32), 1.0)", 0.5, "r45f")
    assert not isinstance(got, Exception), got
    assert "arith.sitofp" in got.asm["ttir"] and "arith.fptosi" in got.asm["ttir"]


@pytest.mark.parametrize("body", [
    "    q = tl.arange(0, C)\n    tl.store(x_ptr + q, 1.0)",
    "    for t in range(C):\n        tl.store(x_ptr + t, 1.0)",
    "    for t in tl.static_range(C):\n        tl.store(x_ptr + t, 1.0)",
    "    tl.store(x_ptr + tl.arange(0, 64), tl.zeros([C], tl.float32))",
])
def test_triton_takes_only_an_integer_there(tmp_path, monkeypatch, body):
    """The uses that prove a constexpr an integer: Triton refuses C = 64.0 there."""
    assert isinstance(_compile(tmp_path, monkeypatch, body, 64.0, "r45i"), Exception)
    assert not isinstance(_compile(tmp_path, monkeypatch, body, 64, "r45j"), Exception)


# ------------------------------------------------------------ a constexpr of no value


@pytest.mark.parametrize("writer", [
    CAST,
    "tl.where(t * 2 * SCALE == 1, 5, 0)",
    "tl.full([1], t * 2 * SCALE, tl.int32)",
])
def test_a_constexpr_of_no_value_may_be_a_float(tmp_path, capsys, writer):
    """Stores at 5 with SCALE = 0.5 (t = 5; t = 1; t = 5). Before: verified."""
    code, err = dump(tmp_path, capsys, scaled(writer))
    expect(code, err, RACE)
    assert MAYBE_FLOAT in err


def test_a_mask_of_a_constexpr_of_no_value(tmp_path, capsys):
    """A store at 5 masked by `t * 2 * SCALE == 1`, never true of integers, true at t = 1 of
    SCALE = 0.5. Before: verified."""
    text = with_constexprs(pair("0", "5"), "SCALE").replace(
        "tl.store(y_ptr + 0, 1.0)", "tl.store(y_ptr + 5, 1.0, mask=t * 2 * SCALE == 1)")
    expect(*dump(tmp_path, capsys, text), RACE)


@pytest.mark.parametrize("head", [
    "q = tl.arange(0, SCALE)",
    "for j in range(SCALE):\n    pass",
    "for j in tl.range(SCALE, 8):\n    pass",
    "for j in tl.static_range(SCALE):\n    pass",
    "z = tl.zeros([SCALE], tl.float32)",
])
def test_a_constexpr_the_kernel_proves_an_integer(tmp_path, capsys, head):
    """SCALE an integer (Triton refuses a float there): `2 * t * SCALE` is even, never 5."""
    expect(*dump(tmp_path, capsys, scaled(CAST, head)), "verified")


def test_a_pipe_field_shape_proves_an_integer(tmp_path, capsys):
    """`tle.gpu.alloc([2, SCALE], ...)`: Gluon allocates only integer shapes."""
    text = scaled(CAST).replace("tle.gpu.alloc([2, 64], tl.float32)",
                                "tle.gpu.alloc([2, 64], tl.float32), "
                                "aux=tle.gpu.alloc([2, SCALE], tl.float32)")
    expect(*dump(tmp_path, capsys, text), "verified")


@pytest.mark.parametrize("head", [
    # a branch a compile may not take (an `if` on a constexpr compiles one branch)
    "if N > 0:\n    q = tl.arange(0, SCALE)",
    # a static_range body is unrolled B times, maybe none
    "for j in tl.static_range(B):\n    q = tl.arange(0, SCALE)",
    # one operand of a conditional expression is compiled
    "q = tl.arange(0, SCALE if B else 4)",
    # of another value
    "q = tl.arange(0, int(SCALE))",
])
def test_a_use_that_proves_nothing(tmp_path, capsys, head):
    code, err = dump(tmp_path, capsys, scaled(CAST, head, "B"))
    expect(code, err, RACE)
    assert MAYBE_FLOAT in err


def test_a_constexpr_given_a_value(tmp_path, capsys):
    """An integer from --param or DEFAULT_CONFIG: read as it was (even, never 5); a float
    DEFAULT_CONFIG value: a float (round 43)."""
    text = scaled(CAST)
    expect(*dump(tmp_path, capsys, text, "--param", "SCALE=2"), "verified")
    expect(*dump(tmp_path, capsys, text + '\nDEFAULT_CONFIG = {"constexprs": {"SCALE": 2}}\n'),
           "verified")
    code, err = dump(tmp_path, capsys, text + '\nDEFAULT_CONFIG = {"constexprs": {"SCALE": 0.5}}\n')
    expect(code, err, RACE)
    assert MAYBE_FLOAT not in err


# ------------------------------------------------------------ "constexpr" in the signature

SIG = '"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"'
#: the writer stores at `y_ptr + t * S`, the reader nothing
STRIDED = with_constexprs(pair("t * S", "0"), "C").replace("tl.store(y_ptr + 0, 2.0)", "pass")


@pytest.mark.parametrize("config, named", [
    # a run-time argument typed "constexpr" (with a value, and without)
    ('{"signature": {SIG, "S": "constexpr", "C": "constexpr"}, "constexprs": {"S": 4, "C": 3}}',
     "'S' as \"constexpr\", but kernel 'k' takes it at run time"),
    ('{"signature": {SIG, "S": "constexpr", "C": "constexpr"}, "constexprs": {"C": 3}}',
     "'S' as \"constexpr\", but kernel 'k' takes it at run time"),
    # a constexpr typed "constexpr" of no value
    ('{"signature": {SIG, "S": "i32", "C": "constexpr"}, "constexprs": {}}',
     "'C' as \"constexpr\", but its \"constexprs\" gives C no value"),
])
@pytest.mark.parametrize("flags", [(), ("--ttgir",)])
def test_a_signature_constexpr_the_kernel_was_not_verified_for(tmp_path, capsys, config, named,
                                                               flags):
    """Unusable input (exit 2) naming the argument. Before: verified, exit 0 (--ttgir: a
    Triton failure, or "need a value")."""
    text = STRIDED + "\nDEFAULT_CONFIG = " + config.replace("SIG", SIG) + "\n"
    code, err = dump(tmp_path, capsys, text, *flags)
    assert code == 2, err
    assert "DEFAULT_CONFIG's \"signature\" types " + named in err, err
    assert ": verified for " not in err


def test_a_signature_of_the_kernels_constexprs(tmp_path, capsys):
    """A constexpr typed "constexpr" with its value, or left out of the signature: as before."""
    for config in ('{"signature": {SIG, "S": "i32", "C": "constexpr"}, "constexprs": {"C": 3}}',
                   '{"signature": {SIG, "S": "i32"}, "constexprs": {}}'):
        text = STRIDED + "\nDEFAULT_CONFIG = " + config.replace("SIG", SIG) + "\n"
        expect(*dump(tmp_path, capsys, text), "verified")


# ------------------------------------------------------------ a pointer out of a bit operator

#: pointers of a store that Python's precedence (`+` before `&`, `|`, `^`, shifts) or a
#: misplaced parenthesis make the result of an operator no pointer comes out of; read as the
#: offset's, true races at 5 (t = 2, 1, 0, ...)
POINTER_FORMS = ["BASE + t * 2 ^ 1", "BASE + t * 4 | 1", "BASE + t * 2 + 5 & 7",
                 "BASE + t << 1", "(BASE + t) * 2", "(BASE + t) // 1", "(BASE + t) % 7",
                 "-(BASE + t)"]


def stored_at(pointer: str) -> str:
    """Round 44's pair, the writer storing through ``pointer`` (BASE: y_ptr)."""
    return pair("0", "5").replace("tl.store(y_ptr + 0, 1.0)",
                                  f"tl.store({pointer.replace('BASE', 'y_ptr')}, 1.0)")


@pytest.mark.parametrize("form", POINTER_FORMS)
@pytest.mark.parametrize("base", ["x_ptr", "N"])
def test_triton_takes_no_pointer_out_of_an_operator(tmp_path, monkeypatch, form, base):
    """Of a pointer operand Triton refuses the operator ("invalid operands of type pointer",
    "wrong type argument to unary minus"), of an integer base the store ("Unsupported ptr
    type"): no launch's types compile it."""
    from .adversarial_oracles import triton_compile_error
    from .adversarial_support import triton_k

    body = f"for t in range(N):\n    tl.store({form.replace('BASE', base)}, 1.0)"
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(body), "r45p") is not None


@pytest.mark.parametrize("form", POINTER_FORMS)
def test_a_pointer_out_of_an_operator(tmp_path, capsys, form):
    """Without a DEFAULT_CONFIG signature (y_ptr untyped). Before: verified, exit 0."""
    code, err = dump(tmp_path, capsys, stored_at(form))
    assert code == 1 and "Triton 3.6 takes no pointer out of" in err, err
    assert "[unsupported-expression]" in err
    # through a name bound to it too
    code, err = dump(tmp_path, capsys, pair("0", "5").replace(
        "tl.store(y_ptr + 0, 1.0)", f"p = {form.replace('BASE', 'y_ptr')}\n        "
        f"tl.store(p, 1.0)"))
    assert code == 1 and "Triton 3.6 takes no pointer out of" in err, err


def test_a_pointer_plus_a_bit_operation(tmp_path, capsys, monkeypatch):
    """The offset parenthesised: `y_ptr + ((t * 2) ^ 1)` reaches 5 at t = 2, a race; Triton
    compiles it."""
    from .adversarial_oracles import triton_compile_error
    from .adversarial_support import triton_k

    ok = "for t in range(N):\n    tl.store(x_ptr + ((t * 2) ^ 1), 1.0)"
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(ok), "r45q") is None
    expect(*dump(tmp_path, capsys, pair("((t * 2) ^ 1)", "5")), RACE)


# ------------------------------------------------------------ compile-time arithmetic

def test_triton_multiplies_constexprs_in_python(tmp_path, monkeypatch):
    """`x_ptr + C * 2` of C = 2 ** 30: Python's 2 ** 31 (a uint32 constant), no int32 wrap."""
    got = _compile(tmp_path, monkeypatch, "    tl.store(x_ptr + C * 2, 1.0)", 2 ** 30, "r45m")
    assert not isinstance(got, Exception), got
    assert "2147483648" in got.asm["ttir"] and "-2147483648" not in got.asm["ttir"]


def test_constexpr_arithmetic_is_pythons(tmp_path, capsys):
    """`y_ptr + C * 2` meets `y_ptr + 2147483648` at C = 2 ** 30 (before: verified, `C * 2`
    read as an int32 product that wraps to -2 ** 31); never at an odd offset."""
    text = with_constexprs(pair("C * 2", "2147483648"), "C")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, RACE)
    assert "C = 1073741824" in err
    expect(*dump(tmp_path, capsys, with_constexprs(pair("C * 2", "2147483647"), "C")),
           "verified")

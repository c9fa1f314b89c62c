"""What is verified is what is lowered, lowering adversarial round 10 (round 50 overall): kernels
tle-dump verified and translated to Gluon where the Gluon computed something else than the source
means under Triton 3.6, or compiled a construct Triton 3.6 refuses.

Tried (each a small kernel of the templates of rounds 5 and 6, dumped with ``--gluon`` and read
against Triton 3.6's code generator, plain Triton compiled for sm_90a on the CPU where the
reference matters): keyword and method forms of reductions (``t.sum(1, keep_dims=True)``,
``tl.max(..., propagate_nan=...)``, ``tl.sum(t, 1, True)``), ``tl.maximum(y=..., x=...)``,
``tl.where(condition=..., ...)``, ``x.T.T``, builtin ``min`` / ``max`` of tensors, scalars and
three operands, bf16 maximum promotion into a slot store, chained comparisons, unary ``+``,
``not`` in a mask, ``//=`` / ``%=`` and ``//`` / ``%`` by negative constants on scalars, atomics
and effectful helpers in conditional expressions, ``and``, ``elif`` conditions and ``while``
conditions, names clashing with the generated module's (``L2``, ``_v2``, ``kv_tile``,
``kv_full0``, ``_kv_s3``, ``_st1_ret``, ``_old2``, ``gl``), one partition given the same pipe
twice, code after warp_specialize, helpers' parameters rebound in branches and loops.

Wrong and fixed:
* test_a_helper_parameter_given_a_constexpr_is_not_rebound_in_a_region: ``hs(t, 3.0, p < M)``
  with ``def hs(t, s, c): if c: s = 2.0; return t * s`` (and ``s`` given ``3``, rebound in a
  ``for`` or a ``while``): Triton passes a number (a constexpr, arithmetic on constexprs) to a jit
  function as a constexpr, and refuses the rebinding ("initial value for `s` is of type
  constexpr[3.0], but the then block redefines it as fp32[]", "Loop carried variable s changed
  type"); the frontend refused it for a partition's parameter given a number but not for a
  helper's, so tle-dump verified the kernel and the lowering compiled it (``_hs1_s = 3.0`` then
  ``_hs1_s = 2.0`` under the ``if``). The builder now marks a helper's parameter given a constexpr
  as one (frontend/build.py ``inline``, ``constexpr_argument``), and the rebinding is refused at
  its line (constexpr_rules ``constexpr_rebound_in_region``); so too a parameter given a
  ``tl.static_range`` variable (test_a_helper_parameter_given_a_static_range_variable_...),
  and a partition's parameter given a signed or computed number (``-1.5``, ``1.5 * 2``:
  test_a_partition_parameter_given_a_signed_or_computed_number_is_a_constexpr), which the
  lowered partition binds as a ``gl.constexpr`` and then rebound as a tensor.
* test_a_tuple_item_loads_where_the_tuple_is_bound: ``u = (tl.load(y_ptr + 3), 1)``, then
  ``tl.store(y_ptr + 3, 7.0)``, then ``t * u[0]``: the kernel IR keeps a tuple's item
  expressions and reads ``u[0]`` as the item where it is used (its items were copied to
  temporaries only when they read a variable bound again later); the lowering spells a scalar
  load where it stands, so the Gluon loaded after the store (``gl.store((y_ptr + 3), 7.0)``,
  then ``t * gl.load((y_ptr + 3))``) where Python and Triton load before it. A kernel-body
  tuple handed to a partition (test_a_kernel_body_tuple_item_loads_before_the_body_stores) put
  the load into warp_specialize's argument list, after the body's store. An item that loads is
  now bound to a temporary where the tuple is bound (frontend/build.py ``snapshot``,
  ``reads_memory``); a block load was materialised by the lowering already, so only the KIR's
  temporary is new for it.
* test_a_gather_with_a_constant_mask_compiles_as_printed: ``tl.store(local_ptr(slot.tile),
  tl.load(ptrs, mask=True))`` (``mask=False, other=0.0`` too) was printed by tle-dump as the
  cp.async gather ``async_copy_global_to_shared(..., mask=True)``, which Gluon refuses ("'bool'
  object has no attribute 'handle'"); compile_kernel then fell back to register gathers, so the
  compiled module was not the printed one. A True / None mask is now left out of the copy and
  any other constant mask is a register load (lowering/translate.py ``_cp_async_form``).
* test_a_tuple_handed_to_a_partition_holds_values_the_partition_can_read: ``(S, 1)`` handed
  to a partition, ``S`` a kernel-body name bound twice (``S = 100``, ``S = S + 0``; or ``(S +
  0, 1)``, or ``(C, 1)`` of a constexpr parameter ``C``): the partition's ``S[0]`` was spelt as
  the kernel body's name, which the partition does not have, and the compile failed
  ("NameError('S is not defined')"). The item is now the value the verifier read, as the name
  handed alone reaches the partition (lowering/walks.py ``bindings``, ``flat``; values.py
  ``V.bound``, set by translate.py ``assign`` / ``binop`` on a constant spelt as a variable).

Not failing before the fixes (kept as guards and references): test_a_helper_parameter_rebound_
as_triton_allows_lowers (no false refusal), test_a_kernel_body_name_bound_once_stays_as_it_was
(unchanged Gluon), and the two test_plain_triton_* references (Triton 3.6 compiled on the CPU).

Left (strict xfail; fixed by lowering adversarial round 11, a plain test since):
test_a_kernel_body_name_bound_twice_adds_in_i32_in_a_partition: ``S = 100;
S = S + 0`` in the kernel body, ``t + S`` of an int8 tile in a partition adds in i8 (the
partition's ``S: gl.constexpr = 100``; Triton: an i32 tensor, i32 add). Handing the tensor over
was tried and reverted: the frontend reads such a name in the partition as a constexpr of
Python's value (tests/test_adversarial_verdicts_15.py pins ``D // 2`` of -7 as -4 and verifies
the loop for it), so the tensor's C ``//`` (-3) lowered other events than were verified; the
fix belongs in the frontend (read it as a tensor, as a name bound once is). Also left: a tuple
of numbers bound twice in the kernel body (``T = (100, 1)``, then ``T = (T[0] +
0, 1)``) reaches the partition as constants (``t + (100 + 0)`` adds in i8, Triton in i32): the
translator holds a tuple's items without assigning them, so there is no variable to hand over
(the frontend makes the items of a tuple bound once ``to_tensor`` already). Not fixed here.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleVerificationWarning  # noqa: E402

from tests.test_lowering_adversarial_5 import _dump, _reg, _write  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")


def _with_helpers(body: str, helpers: str, dt: str = "float32") -> str:
    """The reader template of round 5 with ``body`` in its loop and ``helpers`` (module code)
    before DEFAULT_CONFIG."""
    text = _reg(body, dt)
    return text.replace("\n\nDEFAULT_CONFIG",
                        "\n\n" + textwrap.dedent(helpers).strip("\n") + "\n\n\nDEFAULT_CONFIG")


def _refused_at(tmp_path: Path, text: str, line_text: str, words: str) -> str:
    path = _write(tmp_path, text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if line_text in t)
    rc, out = _dump(path, "-q", "--gluon")
    assert rc == 1, out
    assert f"kernel.py:{line}: error" in out and words in out, out
    return out


# ------------------------------------------------- helpers' parameters given constexprs

HELPERS = '''
def hs(t, s, c):
    if c:
        s = 2.0
    return t * s


def hi(t, s, c):
    if c:
        s = 2
    else:
        s = 1
    return t * s


def hl(t, s, M):
    for i in range(M):
        t = t * s
        s = 2.0
    return t


def hw(t, s, M):
    while s < M:
        s = s + 1
    return t * s


def hz(t, s):
    s = 2.0
    if s > 1.0:
        t = t * s
    return t
'''

CONSTEXPR_REBOUND = "is a constexpr in Triton"


@pytest.mark.parametrize("call, line_text", [
    ("hs(t, 3.0, p < M)", "        s = 2.0"),
    ("hs(t, -3.0, p < M)", "        s = 2.0"),
    ("hs(t, 1.5 * 2, p < M)", "        s = 2.0"),
    ("hi(t, 3, p < M)", "        s = 2\n"),
    ("hl(t, 3.0, M)", "        s = 2.0"),
    ("hw(t, 3, M)", "        s = s + 1"),
], ids=["if", "negative", "arithmetic", "both-branches", "for", "while"])
def test_a_helper_parameter_given_a_constexpr_is_not_rebound_in_a_region(tmp_path, call,
                                                                         line_text):
    text = _with_helpers(f"tl.store(y_ptr + p * 2048 + offs, {call})", HELPERS)
    line_text = line_text.rstrip("\n")
    lines = text.splitlines()
    # the first line of the helper's body that rebinds the parameter, in the called helper
    start = next(i for i, t in enumerate(lines) if t.startswith(f"def {call.split('(')[0]}("))
    at = next(i for i in range(start, len(lines)) if lines[i] == line_text) + 1
    path = _write(tmp_path, text)
    rc, out = _dump(path, "-q", "--gluon")
    assert rc == 1, out
    assert f"kernel.py:{at}: error" in out and CONSTEXPR_REBOUND in out, out


def test_a_helper_parameter_given_a_static_range_variable_is_a_constexpr(tmp_path):
    """``tl.static_range``'s variable is a constexpr in each unrolled iteration: ``i * 1.0``
    passed to the helper is one, and its rebinding under the `if` is refused as well."""
    text = _with_helpers("for i in tl.static_range(2):\n"
                         "    tl.store(y_ptr + p * 2048 + offs, hs(t, i * 1.0, p < M))", HELPERS)
    lines = text.splitlines()
    start = lines.index("def hs(t, s, c):")
    at = lines.index("        s = 2.0", start) + 1
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 1, out
    assert f"kernel.py:{at}: error" in out and CONSTEXPR_REBOUND in out, out


@pytest.mark.parametrize("arg", ["-1.5", "1.5 * 2"])
def test_a_partition_parameter_given_a_signed_or_computed_number_is_a_constexpr(tmp_path, arg):
    """The same for a partition: its parameter given ``-1.5`` or ``1.5 * 2`` (a constexpr in
    Triton, and a ``gl.constexpr`` in the lowered partition) was not taken for one, only a bare
    number or name was: ``if p < M: S = 2.0`` was verified and lowered (``S: gl.constexpr =
    -1.5``, then ``S = -1.5`` and ``S = 2.0`` under the ``if``)."""
    text = _reg("if p < M:\n    S = 2.0\ntl.store(y_ptr + p * 2048 + offs, t * S)", "float32")
    text = text.replace("(consume, (kv, y_ptr, N, M))", f"(consume, (kv, y_ptr, N, M, {arg}))")
    text = text.replace("def consume(kv, y_ptr, N, M):", "def consume(kv, y_ptr, N, M, S):")
    at = text.splitlines().index("            S = 2.0") + 1
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 1, out
    assert f"kernel.py:{at}: error" in out and CONSTEXPR_REBOUND in out, out


@pytest.mark.parametrize("call", ["hs(t, p * 1.0, p < M)", "hz(t, 3.0)"],
                         ids=["runtime-argument", "rebound-before-the-if"])
def test_a_helper_parameter_rebound_as_triton_allows_lowers(tmp_path, call):
    """A parameter given a runtime value may be rebound in a branch (one type, fp32), and one
    given a number may be rebound outside any region (it is a tensor from there on)."""
    text = _with_helpers(f"tl.store(y_ptr + p * 2048 + offs, {call})", HELPERS)
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 0, out


def test_plain_triton_refuses_a_helper_constexpr_rebound_in_a_branch(tmp_path):
    """The reference: Triton 3.6 compiles a jit helper given 3.0 with the parameter a constexpr,
    and refuses its rebinding under an `if` on a runtime value."""
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget

    src = textwrap.dedent('''
        import triton
        import triton.language as tl


        @triton.jit
        def hs(t, s, c):
            if c:
                s = 2.0
            return t * s


        @triton.jit
        def k(x_ptr, y_ptr, M):
            offs = tl.arange(0, 64)
            tl.store(y_ptr + offs, hs(tl.load(x_ptr + offs), 3.0, M > 0))
    ''')
    path = tmp_path / "ref_hs.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("ref_hs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(Exception) as info:
        triton.compile(triton.compiler.ASTSource(mod.k, {"x_ptr": "*fp32", "y_ptr": "*fp32",
                                                         "M": "i32"}, {}),
                       target=GPUTarget("cuda", 90, 32))
    e = info.value
    texts = []
    while e is not None:
        texts.append(str(e))
        e = e.__cause__ or e.__context__
    assert any("constexpr[3.0], but the then block redefines it" in t for t in texts), texts


# ------------------------------------------------- tuple items that load

def _consumer(gluon: str) -> list[str]:
    body = gluon[gluon.index("def consume("):]
    return [ln.strip() for ln in body[:body.index("@gluon.jit")].splitlines()]


def _at(lines: list[str], text: str) -> int:
    (i,) = [i for i, ln in enumerate(lines) if text in ln]
    return i


@pytest.mark.parametrize("body", [
    "u = (tl.load(y_ptr + 3), 1)\ntl.store(y_ptr + 3, 7.0)\n"
    "tl.store(y_ptr + p * 2048 + offs, t * u[0])",
    "u = ((tl.load(y_ptr + 3) * 2.0, 1), 5)\ntl.store(y_ptr + 3, 7.0)\n"
    "tl.store(y_ptr + p * 2048 + offs, t * u[0][0])",
    "u = (1, tl.load(pointer=y_ptr + 3))\ntl.atomic_add(y_ptr + 3, 7.0)\n"
    "tl.store(y_ptr + p * 2048 + offs, t * u[1])",
    "u = hr((tl.load(y_ptr + 3), 1))\ntl.store(y_ptr + 3, 7.0)\n"
    "tl.store(y_ptr + p * 2048 + offs, t * u[0])",
], ids=["item", "nested-item", "keyword-load", "helper-argument"])
def test_a_tuple_item_loads_where_the_tuple_is_bound(tmp_path, body):
    """``u = (tl.load(y_ptr + 3), 1)``, then ``tl.store(y_ptr + 3, 7.0)``, then ``t * u[0]``:
    Python and Triton load before the store. The tuple kept its item's expression and the
    lowering spells a scalar load where it stands, so the Gluon loaded at ``u[0]``, after the
    store, and multiplied by 7.0. The item is now bound to a temporary where the tuple is
    bound (frontend/build.py ``snapshot``, ``reads_memory``), a tuple written as a helper's
    argument included (``hr((tl.load(p), 1))`` returning it: bound to the helper's parameter
    as it was, and loaded where the caller read the returned item)."""
    text = _with_helpers(body, "def hr(tp):\n    return tp\n")
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 0, out
    lines = _consumer(out)
    load = _at(lines, "gl.load((y_ptr + 3))")
    effect = _at(lines, "(y_ptr + 3), 7.0)")
    assert load < effect, lines


def test_a_kernel_body_tuple_item_loads_before_the_body_stores(tmp_path):
    """The same in the kernel body: ``T = (tl.load(x_ptr + 5), 1)``, ``tl.store(x_ptr + 5,
    0.0)``, ``T`` handed to a partition that reads ``T[0]``: the load was written into
    warp_specialize's argument list, after the store."""
    text = _reg("tl.store(y_ptr + p * 2048 + offs, t * T[0])", "float32")
    text = text.replace("    tle.gpu.warp_specialize(",
                        "    T = (tl.load(x_ptr + 5), 1)\n    tl.store(x_ptr + 5, 0.0)\n"
                        "    tle.gpu.warp_specialize(", 1)
    text = text.replace("(consume, (kv, y_ptr, N, M))", "(consume, (kv, y_ptr, N, M, T))")
    text = text.replace("def consume(kv, y_ptr, N, M):", "def consume(kv, y_ptr, N, M, T):")
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 0, out
    body = out[out.index("def k("):]
    lines = [ln.strip() for ln in body.splitlines()]
    assert _at(lines, "gl.load((x_ptr + 5))") < _at(lines, "gl.store((x_ptr + 5), 0.0)"), lines


# ------------------------------------------------- a gather with a constant mask

@pytest.mark.parametrize("mask", ["True"])
def test_a_gather_with_a_constant_mask_compiles_as_printed(tmp_path, mask):
    """``tl.store(local_ptr(slot.tile), tl.load(ptrs, mask=True))``: tle-dump printed the
    cp.async form ``async_copy_global_to_shared(..., mask=True)``, which Gluon refuses (its
    cp.async takes a tensor mask: "'bool' object has no attribute 'handle'"); the compile then
    fell back to register gathers, so the module compiled was not the one tle-dump printed. A
    mask of True (or None, which compiled already) is now left out of the copy (translate.py
    ``_cp_async_form``), and the printed module is the compiled one."""
    from tests.test_lowering_adversarial_5 import _config, _fill
    from tle_compiler.lowering.compile import compile_kernel

    text = _fill("float32", f"tl.load(x_ptr + offs, mask={mask})")
    path = _write(tmp_path, text)
    rc, out = _dump(path, "-q", "--gluon")
    assert rc == 0, out
    assert "async_copy.async_copy_global_to_shared(kv_tile.index(_kv_s1), (x_ptr + offs))" in out
    compiled = compile_kernel((str(path), "k"), _config(path)["signature"], {})
    assert compiled.tle_generated.uses_cp_async
    assert "async_copy_global_to_local" in compiled.asm["ttgir"]


def test_a_gather_with_a_false_mask_loads_in_registers(tmp_path):
    """``mask=False`` masks every element: the register load of the constant, as tl.load
    computes it (``other``), not a copy with a bool Gluon refuses."""
    from tests.test_lowering_adversarial_5 import _fill

    text = _fill("float32", "tl.load(x_ptr + offs, mask=False, other=0.0)")
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 0, out
    assert "async_copy_global_to_shared" not in out
    assert "gl.load((x_ptr + offs), mask=False, other=0.0)" in out


# ------------------------------------------------- a kernel-body name bound twice, to a partition

I8_ADD = r"arith\.addi %\S+, %\S+ : tensor<32x64xi8"
ADD = "tl.store(y_ptr + p * 2048 + offs, t + S)"


def _handed(prelude: str, arg: str, body: str, dt: str, ys: str,
            head: str = "def k(x_ptr, y_ptr, N, M):", config: str = "") -> str:
    text = _reg(body, dt, ys)
    text = text.replace("    tle.gpu.warp_specialize(", prelude + "    tle.gpu.warp_specialize(",
                        1)
    text = text.replace("(consume, (kv, y_ptr, N, M))", f"(consume, (kv, y_ptr, N, M, {arg}))")
    text = text.replace("def consume(kv, y_ptr, N, M):", "def consume(kv, y_ptr, N, M, S):")
    text = text.replace("def k(x_ptr, y_ptr, N, M):", head)
    return text.replace('"M": "i32"}', '"M": "i32"' + config + "}") if config else text


@pytest.mark.parametrize("prelude, arg, head, config", [
    ("    S = 100\n    S = S + 0\n", "(S, 1)", "def k(x_ptr, y_ptr, N, M):", ""),
    ("    S = 100\n    S = S + 0\n", "(S + 0, 1)", "def k(x_ptr, y_ptr, N, M):", ""),
    ("", "(C, 1)", "def k(x_ptr, y_ptr, N, M, C: tl.constexpr):",
     ', "C": "constexpr"}, "constexprs": {"C": 100'),
], ids=["variable", "arithmetic", "constexpr-parameter"])
def test_a_tuple_handed_to_a_partition_holds_values_the_partition_can_read(tmp_path, prelude,
                                                                          arg, head, config):
    """``(S, 1)`` handed to a partition, ``S`` a kernel-body name bound twice (``S = 100``, ``S
    = S + 0``), or ``(C, 1)`` of a constexpr parameter: the partition's ``S[0]`` was spelt as
    the kernel body's name, which the partition does not have, and the compile failed
    ("NameError('S is not defined')", "C is not defined"); ``S`` handed alone was a
    ``gl.constexpr`` of its value. The item is now that value, as the name alone reaches the
    partition (lowering/walks.py ``bindings``, ``flat``; values.py ``V.bound`` marks a constant
    spelt as a variable of the kernel body)."""
    from tests.test_lowering_adversarial_5 import _config
    from tle_compiler.lowering.compile import compile_kernel

    text = _handed(prelude, arg, "tl.store(y_ptr + p * 2048 + offs, t + S[0])", "int32", "i32",
                   head, config)
    path = _write(tmp_path, text)
    rc, out = _dump(path, "-q", "--gluon")
    assert rc == 0, out
    # the constexpr's value; since lowering adversarial round 11 a name bound twice (and
    # arithmetic on it) is the run-time tensor the kernel body computed, a parameter `S_0`
    expect = "(t + 100)" if prelude == "" else "(t + S_0)"
    assert any(expect in ln for ln in _consumer(out)), out
    config_ = _config(path)
    compile_kernel((str(path), "k"), config_["signature"], config_.get("constexprs", {}))


def test_a_kernel_body_name_bound_twice_adds_in_i32_in_a_partition(tmp_path):
    """``S = 100; S = S + 0`` in the kernel body, ``t + S`` of an int8 tile in the partition:
    Triton holds ``S`` as an i32 tensor (a plain assignment) and adds in i32 (200 for t = 100);
    the partition gets ``S: gl.constexpr = 100`` and adds in i8 (-56). Passing the tensor
    instead (tried in this round) made the partition's ``D // 2`` C's, where the verifier read
    Python's: the frontend has to read such a name as a tensor first (C's ``//``, refusals where
    it differs), as it reads a name bound once. A strict xfail of this round, fixed by lowering
    adversarial round 11 (the name is a run-time value in both views, handed over as the
    tensor: tests/test_lowering_adversarial_11.py)."""
    from tests.test_lowering_adversarial_5 import _config
    from tle_compiler.lowering.compile import compile_kernel

    path = _write(tmp_path, _handed("    S = 100\n    S = S + 0\n", "S", ADD, "int8", "i32"))
    rc, out = _dump(path, "-q", "--gluon")
    assert rc == 0, out
    compiled = compile_kernel((str(path), "k"), _config(path)["signature"], {})
    assert not re.search(I8_ADD, compiled.asm["ttgir"])


def test_plain_triton_hands_a_name_bound_twice_as_a_tensor(tmp_path):
    """The reference: in Triton 3.6 ``S = 100; S = S + 0`` is an i32 tensor, and a jit function
    given it computes ``t + S`` of an int8 tile in i32."""
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget

    src = textwrap.dedent('''
        import triton
        import triton.language as tl


        @triton.jit
        def add(t, s):
            return t + s


        @triton.jit
        def k(x_ptr, y_ptr):
            S = 100
            S = S + 0
            offs = tl.arange(0, 64)
            tl.store(y_ptr + offs, add(tl.load(x_ptr + offs), S))
    ''')
    path = tmp_path / "ref_twice.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("ref_twice", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ttir = triton.compile(triton.compiler.ASTSource(mod.k, {"x_ptr": "*i8", "y_ptr": "*i32"}, {}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    assert re.search(r"arith\.addi %\S+, %\S+ : tensor<64xi32>", ttir), ttir
    assert not re.search(r"arith\.addi %\S+, %\S+ : tensor<64xi8>", ttir), ttir


def test_a_kernel_body_name_bound_once_stays_as_it_was(tmp_path):
    """``S = 100`` bound once: the frontend reads the partition's ``S`` as ``to_tensor(100)``,
    the i32 tensor, and the partition's parameter stays the constexpr it was (unchanged
    Gluon)."""
    text = _reg(ADD, "int8", "i32").replace(
        "    tle.gpu.warp_specialize(", "    S = 100\n    tle.gpu.warp_specialize(", 1)
    text = text.replace("(consume, (kv, y_ptr, N, M))", "(consume, (kv, y_ptr, N, M, S))")
    text = text.replace("def consume(kv, y_ptr, N, M):", "def consume(kv, y_ptr, N, M, S):")
    path = _write(tmp_path, text)
    rc, out = _dump(path, "-q", "--gluon")
    assert rc == 0, out
    assert "S: gl.constexpr = 100" in out and "(t + gl.to_tensor(100))" in out

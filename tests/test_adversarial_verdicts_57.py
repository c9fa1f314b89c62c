"""A fifty-seventh adversarial round (adversarial round 57): named-barrier hand-offs, TMA byte
counts, opaque trip counts, wgmma operands read in place, pointer flow into global-memory
races, exit codes; and a conditional expression on a number a plain assignment bound. Each case
is a small kernel read by tle-dump's main(); where it is about what Triton 3.6 does, a plain
``@triton.jit`` kernel is compiled for sm_90a on the CPU (tests/adversarial_oracles.py).

Bugs found, one line each (before the fixes that came with this file):

- ``f = 1; n = N if f else 2.0`` (in a partition or the kernel body): the builder decided the
  conditional expression on the folded value of ``f`` and built only the chosen operand, where
  Triton 3.6 makes ``f`` a tensor and its visit_IfExp builds both operands as tensors of one
  type and selects at run time. So operands of two types (int32 and fp32, int32 and uint32,
  ``pointer<fp32>`` and int32) were verified where Triton refuses the kernel ("Ternary
  expression with dynamic condition has inconsistent types int32 and fp32": the open item of
  round 56), and so was the select used where Triton takes only a compile-time value
  (``tl.arange(0, 64 if f else 32)``, ``tl.static_range(2 if f else 3)``: "arange's arguments
  must be of type tl.constexpr"); FIXED: such a conditional expression is built with both
  operands and marked ``tensor=True`` (build.py ``e_IfExp``), and the protocol view checks the
  operands' types as for a run-time condition and reads the operand the folded value chooses
  (protocol.py ``Walker.ifexp``); the lowering then refuses the compile-time uses.
- a pointer or a comparison beside a number in a conditional expression on a run-time
  condition (``x_ptr if N > 0 else 0``, ``(N > 0) if N > 1 else 1``, ``c if N > 1 else 1`` of
  ``c = N > 0``) was verified: the type check knew no pointer type and no i1 (Triton: "...
  inconsistent types pointer<fp32> and int32", "int1 and int32"); FIXED: a pointer argument is
  ``pointer<ELEM>`` by the DEFAULT_CONFIG signature, a comparison (or a name bound to one) an
  int1 (``ifexp_types``); two comparisons stay verified.
- a name bound to a comparison and rebound to a number in a branch of an `if` on a run-time
  value or in a loop (``b = N > 0``, then ``b = 1``) was verified where Triton refuses it
  ("initial value for `b` is of type int1[], but the then block redefines it as int32[]",
  "Loop-carried variable b has initial type int1 but is re-assigned to int32"); FIXED: a
  scalar comparison (``not``, ``and`` / ``or`` / ``&`` / ``|`` of them, a name bound to one) is
  an int1 to the join check (triton_rules.py ``type_known``); ``b = True``, ``b | (i == 3)``
  stay verified.
- after a ``tl.static_range`` of no iteration (``tl.static_range(0)``, ``(3, 3)``, a constexpr
  bound to such values) its variable, and a name first bound in its body, were bound (the
  builder kept them as after a loop that runs), so a read of them was verified where Triton,
  which unrolls the loop to nothing, refuses it ("NameError: j is not defined"); FIXED: they
  are undefined after it (build.py ``s_For``), a name bound before keeping its value.
  The same rebinding under an ``if`` on a number a plain assignment bound (``f = 1; b = N >
  0; if f: b = 1``) was verified too: the protocol view took the branch the folded ``f``
  chooses and checked no join; FIXED: such an ``if`` is walked both ways for the join check
  (protocol.py ``Walker.tensor_if``), the branch ``f`` takes alone kept.
- a pointer name rebound to a pointer of another element type in a branch or a loop (``q =
  y_ptr`` of ``*fp32``, then ``q = z_ptr`` of ``*fp16``), or bound so by the two branches, was
  verified where Triton refuses it ("initial value for `q` is of type pointer<fp32>[], but the
  then block redefines it as pointer<fp16>[]"); FIXED: a pointer's type is ``pointer<ELEM>``
  by the signature, through names and offsets (triton_rules.py ``type_known``,
  ``pointer_element``).
- a tuple whose item a run-time ``if`` rebinds to another type (``t = (N > 0, 1)``, then ``t =
  (1, 1)``) was verified where Triton refuses it ("initial value for `t` is of type
  ['int1[]', 'int32[]'], ..."): the builder's item variables (``t__0 = t[0]``) are generated
  assignments, whose types the join check did not know; FIXED: the walk records each item's
  type where the tuple is written (protocol.py ``_s_Assign``). (The refusal names the item
  variable, ``t__0``.)

Checked and held (tle-dump was right; not all pinned): named-barrier pipes (a helper declaring
two pipes of one name is refused; hop matching, the `used` hops of the table, the barrier ids
against Triton 3.6's two reserved ones plus one per worker; Triton's PTX puts a partition
bar.sync before every elected mbarrier arrive and expect-tx, so a TMA-only commit as a hop
follows every warp's reads); TMA copies (a descriptor of another element type or box, reached
through a partition parameter, a tuple item or a rebinding, is refused at the copy; a
descriptor chosen by a conditional is refused; two open windows of a capacity-2 ring, each
copy counted for the slot it names); wgmma operands read in place (the async-proxy fence is
set for a slot loaded then passed to tl.dot directly, through a helper, a name, a view or
``.T``; a tuple-held tile is staged); cp.async gathers followed by a global store or atomic of
the same partition wait for the copies first; opaque trip counts (a partition's own load of a
count, ``range(0, N, 2)`` against ``N // 2``, ``>>`` against ``//``, a negative step,
``tl.minimum``) are refused, bounded or rejected as they should; a slot name carried across
iterations is refused (unknown-slot); pointer flow into global-memory races through
``tl.where``, conditionals, hints, reshapes, tuples and member calls; the closed flag under
``or`` / ``~`` / ``not not`` guards nothing; exit codes for missing files, syntax errors, no
kernel, several kernels; and Triton's refusals of break / continue / for-else / walrus /
lambda / comprehensions / try / with / del / chained assignment, each refused.

Found and not fixed: a ``tl.static_assert(False)`` in the body of a
``tl.static_range(0)`` is refused, where Triton never visits the body (a false refusal). A
conditional expression on a float a plain assignment
bound (``f = 0.5; N if f else 2``) is refused where Triton compiles it (non-affine-loop).
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error
from .adversarial_support import dump, expect, get, kernel, loop, put, triton_k

#: the ring's writer and reader over N windows
WRITER = loop("for p in range(N):", put("p"))
READER = loop("for p in range(N):", get("p"))


# ------------------------------------- a conditional expression on an assigned number

#: (plain Triton body of k(x_ptr, N, C), Triton's words) for selects Triton refuses
TRITON_REFUSED = {
    "float": ("f = 1\nn = N if f else 2.0\nfor i in range(n):\n    tl.store(x_ptr + i, 1.0)",
              "inconsistent types int32 and fp32"),
    "uint": ("f = 1\nn = N if f else 3000000000\nfor i in range(n):\n    tl.store(x_ptr + i, 1.0)",
             "inconsistent types int32 and uint32"),
    "pointer": ("f = 1\nq = x_ptr if f else 0\ntl.store(q, 1.0)",
                "inconsistent types pointer<fp32> and int32"),
    "data": ("f = 1\ntl.store(x_ptr, 2.0 if f else 1)", "inconsistent types fp32 and int32"),
    "arange": ("f = 1\ntl.store(x_ptr + tl.arange(0, 64 if f else 32), 1.0)",
               "arange's arguments must be of type tl.constexpr"),
    "static_range": ("f = 1\nfor j in tl.static_range(2 if f else 3):\n    tl.store(x_ptr + j, 1.0)",
                     "is not a constexpr"),
    "runtime_pointer": ("q = x_ptr if N > 0 else 0\ntl.store(q, 1.0)",
                        "inconsistent types pointer<fp32> and int32"),
    "comparison": ("b = (N > 0) if N > 1 else 1\nif b:\n    tl.store(x_ptr, 1.0)",
                   "inconsistent types int1 and int32"),
    "comparison_name": ("c = N > 0\nb = c if N > 1 else 1\nif b:\n    tl.store(x_ptr, 1.0)",
                        "inconsistent types int1 and int32"),
}

#: the same selects in the ring: (writer, reader, kernel body)
TLE_REFUSED = {
    "float": ("f = 1\nn = N if f else 2.0\n" + WRITER.replace("range(N)", "range(n)"), READER, ""),
    "uint": ("f = 1\nn = N if f else 3000000000\n" + WRITER.replace("range(N)", "range(n)"),
             READER, ""),
    "pointer": ("f = 1\nq = x_ptr if f else 0\n" + WRITER + "tl.store(q, 1.0)\n", READER, ""),
    "data": (WRITER, "f = 1\n" + READER + "tl.store(y_ptr, 2.0 if f else 1)\n", ""),
    "arange": (WRITER, "f = 1\n" + READER + "tl.store(y_ptr + tl.arange(0, 64 if f else 32), "
               "tl.zeros([64], tl.float32))\n", ""),
    "static_range": (WRITER, "f = 1\n" + READER + "for j in tl.static_range(2 if f else 3):\n"
                     "    tl.store(y_ptr + j, 1.0)\n", ""),
    "runtime_pointer": ("q = x_ptr if N > 0 else 0\n" + WRITER + "tl.store(q, 1.0)\n", READER, ""),
    "kernel_body": (WRITER, READER, "f = 1\nn = N if f else 2.0\ntl.store(x_ptr, n)\n"),
    "comparison": (WRITER, READER + "b = (N > 0) if N > 1 else 1\nif b:\n"
                   "    tl.store(y_ptr, 1.0)\n", ""),
    "comparison_name": (WRITER, READER + "c = N > 0\nb = c if N > 1 else 1\nif b:\n"
                        "    tl.store(y_ptr, 1.0)\n", ""),
}


@pytest.mark.parametrize("name", sorted(TRITON_REFUSED))
def test_triton_refuses_these_selects(tmp_path, monkeypatch, name):
    """The oracle: `f = 1` makes `f` a tensor, so `a if f else b` is a run-time select of two
    tensors of one type, whose value is no compile-time one."""
    body, words = TRITON_REFUSED[name]
    err = triton_compile_error(tmp_path, monkeypatch, triton_k(body), f"r57sel{name}")
    assert err is not None and words in str(err), err


@pytest.mark.parametrize("name", sorted(TLE_REFUSED))
def test_a_select_triton_refuses_is_not_verified(tmp_path, capsys, name):
    """Each was verified: the builder chose the operand the folded `f` picks and never built
    the other (or, on a run-time condition, knew no pointer type)."""
    writer, reader, body = TLE_REFUSED[name]
    code, err = dump(tmp_path, capsys, kernel(writer, reader, body=body))
    expect(code, err, ("rejected",))
    if name not in ("arange", "static_range"):
        assert "Ternary expression with dynamic condition has inconsistent types" in err, err


@pytest.mark.parametrize("body", ["f = 1\nn = N if f else 2\nfor i in range(n):\n"
                                  "    tl.store(x_ptr + i, 1.0)",
                                  "f = 1\nfor p in range(N):\n"
                                  "    tl.store(x_ptr + (p if f else 0), 1.0)",
                                  "f = 1\nq = x_ptr if f else x_ptr + 1\ntl.store(q, 1.0)",
                                  "c = N > 0\nb = c if N > 1 else N < 5\nif b:\n"
                                  "    tl.store(x_ptr, 1.0)"])
def test_triton_compiles_selects_of_one_type(tmp_path, monkeypatch, body):
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(body), "r57same") is None


@pytest.mark.parametrize("case", ["bound", "index", "pointers"])
def test_a_select_of_one_type_stays_verified_on_the_chosen_operand(tmp_path, capsys, case):
    """Held: operands of one type are Triton's select, whose value the folded `f` chooses: a
    writer looping `N if f else 2` times, or acquiring `p if f else 0`, matches a reader of N
    windows (and `2 if f else N` does not: the select's value is read, not either operand)."""
    writer = {"bound": "f = 1\nn = N if f else 2\n" + WRITER.replace("range(N)", "range(n)"),
              "index": "f = 1\n" + loop("for p in range(N):", put("p if f else 0")),
              "pointers": "f = 1\nq = x_ptr if f else x_ptr + 1\n" + WRITER
              + "tl.store(q, 1.0)\n"}[case]
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, "verified")
    if case == "bound":
        code, err = dump(tmp_path, capsys, kernel(writer.replace("N if f else 2", "2 if f else N"),
                                                  READER))
        expect(code, err, ("rejected",))


def test_the_select_reads_back_from_the_printed_kernel_ir(tmp_path, capsys):
    """The mark survives --print-ir: the .kir reads back to the same verdict."""
    from .adversarial_support import run_dump, write_kernel
    writer = "f = 1\nn = N if f else 2\n" + WRITER.replace("range(N)", "range(n)")
    path = write_kernel(tmp_path, kernel(writer, READER))
    kir = tmp_path / "k.kir"
    code, _, _ = run_dump(capsys, "-p", "infer-barriers", "--print-ir", "-o", str(kir), str(path))
    assert code == 0
    assert "ifexp(to_tensor(1), N, 2, tensor=True)" in kir.read_text()
    code, _, err = run_dump(capsys, "-q", str(kir))
    assert code == 0 and ": verified for " in err, err


# ------------------------------------------------- an int1 rebound to an int32 at a join

#: (plain Triton body, Triton's words) where a name bound to a comparison is rebound to a number
BOOL_JOINS = {
    "if": ("b = N > 0\nif N > 1:\n    b = 1\nif b:\n    tl.store(x_ptr, 1.0)",
           "initial value for `b` is of type int1[], but the then block redefines it as int32[]"),
    "else": ("b = N > 0\nif N > 1:\n    b = N < 4\nelse:\n    b = 0\ntl.store(x_ptr + b, 1.0)",
             "but the else block redefines it as int32[]"),
    "loop": ("b = N > 0\nfor i in range(N):\n    b = i\ntl.store(x_ptr + b, 1.0)",
             "Loop-carried variable b has initial type int1 but is re-assigned to int32"),
    "tensor_if": ("f = 1\nb = N > 0\nif f:\n    b = 1\nif b:\n    tl.store(x_ptr, 1.0)",
                  "initial value for `b` is of type int1[], but the then block redefines it"),
}
#: the same, compiled by Triton: a bool, a comparison or an `|` of them keep the int1
BOOL_JOINS_HELD = {
    "true": "b = N > 0\nif N > 1:\n    b = True\nif b:\n    tl.store(x_ptr, 1.0)",
    "or": "b = False\nfor i in range(N):\n    b = b | (i == 3)\nif b:\n    tl.store(x_ptr, 1.0)",
    "int_or": "b = 0\nfor i in range(N):\n    b = b | (i == 3)\nif b:\n    tl.store(x_ptr, 1.0)",
    "compare": "b = N > 0\nfor i in range(N):\n    b = (i == 3)\nif b:\n    tl.store(x_ptr, 1.0)",
    "tensor_if": "f = 0\nb = N > 0\nif f:\n    b = N < 3\nif b:\n    tl.store(x_ptr, 1.0)",
}


def _in_reader(body: str) -> str:
    """The ring whose reader runs ``body`` (the Triton oracle's, `x_ptr` its `y_ptr`) after its
    windows."""
    return kernel(WRITER, READER + body.replace("x_ptr", "y_ptr") + "\n")


@pytest.mark.parametrize("name", sorted(BOOL_JOINS))
def test_triton_refuses_an_int1_rebound_to_an_int32(tmp_path, monkeypatch, name):
    body, words = BOOL_JOINS[name]
    err = triton_compile_error(tmp_path, monkeypatch, triton_k(body), f"r57join{name}")
    assert err is not None and words in str(err), err


@pytest.mark.parametrize("name", sorted(BOOL_JOINS))
def test_an_int1_rebound_to_an_int32_is_not_verified(tmp_path, capsys, name):
    """Each was verified: a comparison's type was no type the join check knew."""
    code, err = dump(tmp_path, capsys, _in_reader(BOOL_JOINS[name][0]))
    expect(code, err, ("rejected", "(int1)", "(int32)"))


@pytest.mark.parametrize("name", sorted(BOOL_JOINS_HELD))
def test_joins_that_keep_the_type_stay_verified(tmp_path, capsys, monkeypatch, name):
    body = BOOL_JOINS_HELD[name]
    assert triton_compile_error(tmp_path, monkeypatch, triton_k(body), f"r57held{name}") is None
    code, err = dump(tmp_path, capsys, _in_reader(body))
    expect(code, err, "verified")


# --------------------------------------------------- a tl.static_range of no iteration

#: (plain Triton body, whether Triton compiles it): the names after a static_range of none
STATIC_EMPTY = {
    "variable": ("for j in tl.static_range(0):\n    tl.store(x_ptr, 1.0)\ntl.store(x_ptr + j, 2.0)",
                 False),
    "empty_range": ("for j in tl.static_range(3, 3):\n    tl.store(x_ptr + j, 1.0)\n"
                    "tl.store(x_ptr + j, 2.0)", False),
    "body_name": ("for j in tl.static_range(0):\n    q = 1\ntl.store(x_ptr + q, 2.0)", False),
    "bound_before": ("j = 5\nfor j in tl.static_range(0):\n    tl.store(x_ptr, 1.0)\n"
                     "tl.store(x_ptr + j, 2.0)", True),
    "one_iteration": ("for j in tl.static_range(1):\n    q = j + 1\ntl.store(x_ptr + q + j, 1.0)",
                      True),
}


@pytest.mark.parametrize("name", sorted(STATIC_EMPTY))
def test_triton_binds_nothing_in_a_static_range_of_no_iteration(tmp_path, monkeypatch, name):
    body, compiles = STATIC_EMPTY[name]
    err = triton_compile_error(tmp_path, monkeypatch, triton_k(body), f"r57sr{name}")
    assert (err is None) is compiles, err
    if not compiles:
        assert "is not defined" in str(err), err


@pytest.mark.parametrize("name", sorted(STATIC_EMPTY))
def test_names_after_a_static_range_of_no_iteration(tmp_path, capsys, name):
    """The variable of `tl.static_range(0)`, and a name first bound in its body, read after it
    were verified (the builder left the variable bound after every static_range, and the body's
    names, as after one that runs); a name bound before keeps its value."""
    body, compiles = STATIC_EMPTY[name]
    code, err = dump(tmp_path, capsys, _in_reader(body))
    expect(code, err, "verified" if compiles else ("rejected", "runs no iteration"))


@pytest.mark.parametrize("start, want", [(0, "verified"), (1, ("rejected",))])
def test_a_name_bound_before_an_empty_static_range_keeps_its_value(tmp_path, capsys, start,
                                                                    want):
    """`j = 0` (or 1) then `for j in tl.static_range(0)`: the writer acquires `p + j`, p + 0
    matching a reader of `p`, p + 1 not."""
    writer = (f"j = {start}\nfor j in tl.static_range(0):\n    tl.store(x_ptr, 1.0)\n"
              + loop("for p in range(N):", put("p + j")))
    code, err = dump(tmp_path, capsys, kernel(writer, READER))
    expect(code, err, want)


# ------------------------------------------- pointers of two element types at a join

PTR_KERNEL = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, z_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, z_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, z_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
BODY

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "ZTYPE", "N": "i32"},
                  "constexprs": {}}
'''

#: a pointer name rebound to a pointer of the (signature's) type ZTYPE
PTR_JOINS = {
    "if": "    q = y_ptr\n    if N > 1:\n        q = z_ptr\n    tl.store(q, 1.0)\n",
    "loop": "    q = y_ptr\n    for i in range(N):\n        q = z_ptr + i\n    tl.store(q, 1.0)\n",
    "branches": "    if N > 1:\n        q = y_ptr\n    else:\n        q = z_ptr\n    tl.store(q, 1.0)\n",
    "select": "    q = y_ptr if N > 1 else z_ptr\n    tl.store(q, 1.0)\n",
}


def test_triton_refuses_pointers_of_two_element_types_at_a_join(tmp_path, monkeypatch):
    body = ("q = x_ptr\nif N > 1:\n    q = x_ptr.to(tl.pointer_type(tl.float16))\n"
            "tl.store(x_ptr, 1.0)")
    err = triton_compile_error(tmp_path, monkeypatch, triton_k(body), "r57ptr")
    assert err is not None and "pointer<fp32>[], but the then block redefines it as " \
        "pointer<fp16>[]" in str(err), err


@pytest.mark.parametrize("name", sorted(PTR_JOINS))
@pytest.mark.parametrize("ztype, want", [("*fp16", ("rejected", "pointer<fp16>")),
                                         ("*fp32", "verified")])
def test_pointers_of_two_element_types_at_a_join(tmp_path, capsys, name, ztype, want):
    """`q = y_ptr` (*fp32), then `q = z_ptr` (*fp16) in a branch or a loop was verified (the
    join check knew a pointer but not what it points to); of one element type it stays
    verified."""
    text = PTR_KERNEL.replace("BODY", PTR_JOINS[name]).replace("ZTYPE", ztype)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


@pytest.mark.parametrize("flag, want", [(1, ("rejected", "(int1)", "(int32)")),
                                        (0, ("rejected", "(int1)", "(int32)"))])
def test_a_kernel_body_if_on_an_assigned_number_checks_its_join(tmp_path, capsys, flag, want):
    """In the kernel body too (`f = 1; b = N > 0; if f: b = 1`, Triton's run-time scf.if of
    both branches): verified before, whichever branch `f` takes."""
    body = f"f = {flag}\nb = N > 0\nif f:\n    b = 1\ntl.store(x_ptr + b, 1.0)\n"
    code, err = dump(tmp_path, capsys, kernel(WRITER, READER, body=body))
    expect(code, err, want)


def test_a_kernel_body_if_on_an_assigned_number_keeps_the_branch_it_takes(tmp_path, capsys):
    """Held: the branch `f` does not take is walked for the join only: a load there is no
    trip count of the partitions (`n` stays `N`)."""
    text = kernel(WRITER, READER, body="f = 0\nn = N\nif f:\n    n = tl.load(x_ptr).to(tl.int32)\n")
    text = text.replace("(kv, x_ptr, N, C)", "(kv, x_ptr, n, C)").replace(
        "(kv, y_ptr, N, C)", "(kv, y_ptr, n, C)")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")


@pytest.mark.parametrize("flag, want", [(1, "verified"), (0, ("rejected", "same global address"))])
def test_the_race_check_reads_a_select_on_an_assigned_number(tmp_path, capsys, flag, want):
    """Held (kept so by the fix): the reader stores `x_ptr + (64 if f else 0) + [0, 64)` before
    its windows while the writer loads `x_ptr + [0, 64)`: apart at f = 1, a race at f = 0. The
    builder keeps the select whole now; the race check reads its `to_tensor` test as the
    number it is (race_terms.condition), where it took the store to reach either address."""
    reader = (f"f = {flag}\ntl.store(x_ptr + (64 if f else 0) + tl.arange(0, 64), "
              f"tl.zeros([64], tl.float32))\n" + READER)
    text = kernel(WRITER, reader).replace("(consume, (kv, y_ptr, N, C))",
                                          "(consume, (kv, y_ptr, x_ptr, N, C))").replace(
        "def consume(kv, y_ptr, N, C: tl.constexpr):",
        "def consume(kv, y_ptr, x_ptr, N, C: tl.constexpr):")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


#: a tuple whose item a run-time `if` rebinds to another type (plain Triton body, Triton compiles)
TUPLE_JOINS = {
    "int1_int32": ("t = (N > 0, 1)\nif N > 1:\n    t = (1, 1)\nif t[0]:\n    tl.store(x_ptr, 1.0)",
                   False),
    "pointer_int32": ("t = (x_ptr, 1)\nif N > 1:\n    t = (0, 1)\ntl.store(x_ptr + t[1], 1.0)",
                      False),
    "same_types": ("t = (N > 0, 1)\nif N > 1:\n    t = (N < 3, 2)\nif t[0]:\n"
                   "    tl.store(x_ptr + t[1], 1.0)", True),
    "loop_same_types": ("t = (N > 0, 1)\nfor i in range(N):\n    t = (i < 3, t[1] + 1)\nif t[0]:\n"
                        "    tl.store(x_ptr + t[1], 1.0)", True),
}


@pytest.mark.parametrize("name", sorted(TUPLE_JOINS))
def test_a_tuple_item_rebound_to_another_type_at_an_if(tmp_path, capsys, monkeypatch, name):
    """`t = (N > 0, 1)`, then `t = (1, 1)` in a run-time `if`, was verified: the builder's item
    variables (`t__0 = t[0]`) are generated assignments, whose types the join check did not
    know; Triton refuses it ("initial value for `t` is of type ['int1[]', 'int32[]'], but the
    then block redefines it as ['int32[]', 'int32[]']")."""
    body, compiles = TUPLE_JOINS[name]
    err = triton_compile_error(tmp_path, monkeypatch, triton_k(body), f"r57tup{name}")
    assert (err is None) is compiles, err
    code, out = dump(tmp_path, capsys, _in_reader(body))
    expect(code, out, "verified" if compiles else ("rejected", "before the `if`"))

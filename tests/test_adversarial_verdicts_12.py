"""A twelfth set of adversarial kernels: `--param` values no launch can compute, stores into a
slot of another shape or dtype, reads guarded by the closed flag, `len` of tuples as loop bounds,
`del` of names Python has not bound, relative imports Python refuses, the kernel IR's text form
read back, and kernel arguments used both as pointers and as protocol integers; then constructs
earlier rounds did not pin (handles in tuples and lists passed to helpers, handles rebound in
loops, helpers called with keywords in another order, `while` / `with` / `try` / walrus /
`global` / f-strings / asserts around events, nested warp_specialize, `tl` shadowed, constexpr
operands outside i32). tle-dump must reject (exit 1, the construct named at its line), call
unusable (exit 2) or at least not prove (exit 3) every unsafe kernel, and prove (exit 0) the
safe twins; the test_what_* tests hold each refusal to what Python or Triton itself does.

Wrong before the fixes that came with this file, each found by a kernel below:
- verified for `--param NP=-3` (and NP's domain "every integer"), though the kernel computes
  `NP = tl.maximum(X - Y, 0)`, never negative: a derived param of `min` / `max` / `abs` now
  has the domain its operands' bounds give, as do `tl.clamp`, `x & 7` and `x >> 28`
  (frontend/protocol.py note_function_domain, note_quotient_domain), so the
  value is refused as outside it (exit 2, the message naming the definition) and the verifier
  checks only values a launch computes: a kernel faulty only at NP = -1 was rejected before;
- verified, then refused by Gluon's compile: a `tl.store` into a whole slot field of a tile of
  another shape (`[64, 32]` or `[64]` into a `[64, 64]` slot) or dtype (fp32 or fp16 into a
  bf16 slot, a `tl.dot`'s fp32 result, a load through a pointer the DEFAULT_CONFIG signature
  types `*fp32`, a tile loaded whole from another pipe's slot of another shape or dtype) where
  the frontend knows them (protocol.py check_slot_store, check bad-store);
- rejected (unwritten-field at the closing index), though safe: a reader that loads its slot
  only under `if not res.is_closed:` (or the else of `if res.is_closed:`); such a read is
  recorded as a read that does not run at the index the writer closed (Pipe IR
  `P.openread(i, f)`; passes/instances.py, the simulator), while a load outside the guard, or
  under `if res.is_closed:`, is still a read there;
- an internal error (exit 3) on a safe kernel: a condition on `tl.load(pointer=x_ptr)` (an
  operation given only keywords; protocol.py broadcast);
- rejected (non-affine loop bound), though Python and Triton compute it when they compile:
  `range(len((1, 2, 3)))`, `len` of a list display, of a name bound to a tuple, of a `range`
  of constants or of a tuple sum or repetition (frontend/build.py literal_length); `len` of a
  pointer or a tensor is still refused;
- verified, though Python raises NameError at the import: a module-level `del X` of a name
  no statement before it binds (a builtin's name too), a second `del X`, and `del X` in a class
  body (which deletes from the class's own names) (frontend/import_order.py deletes);
- verified, though Python raises ImportError ("attempted relative import with no known parent
  package"): a relative import in a kernel file whose folder has no `__init__.py` (tle-dump
  names it a top-level module, as `python kernel.py` or an import from its folder does), and
  one of more dots than the module has packages (import_order.py relative);
- the kernel IR read back from `-p verify-protocol --print-ir` named a helper's derived param
  `split_range1_NK` where the .py read names it `NK` (so `--param NK=...` worked on one and not
  the other): the kernel IR now records the helpers it inlined (kernel attribute `helpers`);
- the param of `for N in range(N):` in a partition was named `N_1` (the loop variable kept N),
  so `--param N=3` on the kernel's argument N was unusable input: a loop variable spelt like a
  kernel argument is renamed instead (frontend/params.py finalize);
- verified "for every value of x_ptr": `range(x_ptr)` with x_ptr the pointer a load takes
  (Triton refuses a pointer as a loop bound), with or without a signature (protocol.py
  refuse_pointer_params, check pointer-param), and a protocol param typed as a pointer or a
  float in the DEFAULT_CONFIG signature (lowering/signature_checks.check_scalar_args, check
  signature: tle-dump and the compile).

Checked and left as they are (no wrong verdict found): handles passed in tuples and lists to
helpers, handles rebound or swapped in loops, helpers called with keywords in another order
(Python's binding; `put(p, p=...)` is TypeError, refused), events in lambdas, comprehensions,
`with`, `try`, `while` (refused), walrus (refused: Triton 3.6 has no NamedExpr), `global` in a
partition, f-strings and asserts holding events (refused), a nested warp_specialize (refused),
`tl` or `tle` shadowed by a local (refused at the call), loop bounds and indices with constexpr
operands outside i32 (not proved, exit 3, or rejected). Left as they are: an index `p + 2**32`
is rejected although the GPU, computing in i64, would run the protocol of `p` (stages and
phases agree); a closed slot read after `close` on a stage an earlier index wrote reads that
index's data, which the model counts as written (docs/semantics.md, rule 7). A scalar stored
into a slot field (`tl.store(local_ptr(slot.f), 0.0)`, which Triton broadcasts) is verified and
now lowered as that broadcast (tests/test_adversarial_verdicts_18.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump

from .adversarial_oracles import lowering_problems, triton_compile_error
from .adversarial_support import check
from .test_adversarial_python_semantics import CONFIG, HEAD, reader, ring, writer
from .test_adversarial_verdicts_10 import _run

ROOT = Path(__file__).resolve().parent.parent
_PUT = """\
slot = w.acquire(p)
tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
w.commit(p)
"""


def _dump(args: list, capsys) -> tuple[int, str]:
    code = tle_dump(["-q", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out + err


def _python(cwd: Path, code: str) -> subprocess.CompletedProcess:
    """``python -c code`` in ``cwd``, with this repository importable."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


# ------------------------------------------------- --param values the kernel never computes

def derived(definition: str, wbody: str = None, rloop: str = "for p in range(N):",
            args: str = "X, Y") -> str:
    """The ring whose partitions take (as their N) ``NP = definition`` of kernel arguments
    ``args``."""
    text = ring(wbody or writer(), reader(rloop), warg="NP", rarg="NP",
                kernel_pre=f"NP = {definition}\n")
    return text.replace("def k(x_ptr, y_ptr, N, C: tl.constexpr):",
                        f"def k(x_ptr, y_ptr, {args}, C: tl.constexpr):").replace(
        "    tle.assume(N >= 0)\n", "")


_XY = ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "X": "i32", '
       '"Y": "i32"}, "constexprs": {"C": 3}}\n')


def _write(tmp_path: Path, text: str, config: str = _XY, name: str = "kernel.py") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + config)
    return path


PARAM_VALUES = {
    # (definition, --param values, expected exit, what the output names)
    "tl.maximum(X - Y, 0) at NP=-3": ("tl.maximum(X - Y, 0)", ["NP=-3"], 2,
                                      "outside the domain of NP (NP >= 0: the kernel computes "
                                      "NP = maximum(X - Y, 0)"),
    "max(X - Y, 0) at NP=-1": ("max(X - Y, 0)", ["NP=-1"], 2, "outside the domain of NP"),
    "tl.minimum(X, 4) at NP=5": ("tl.minimum(X, 4)", ["NP=5"], 2, "outside the domain of NP"),
    # (abs of an X that may be -2^31 may be -2^31, so its domain holds -2 too: X >> 1 may not)
    "tl.abs(X >> 1) at NP=-2": ("tl.abs(X >> 1)", ["NP=-2"], 2, "outside the domain of NP"),
    "tl.maximum(tl.minimum(X, 8), 2) at NP=1": ("tl.maximum(tl.minimum(X, 8), 2)", ["NP=1"], 2,
                                                "outside the domain of NP"),
    # tl.clamp is refused where the kernel is read (the lowering does not translate it)
    "tl.clamp(X, 0, 8) at NP=-1": ("tl.clamp(X, 0, 8)", ["NP=-1"], 1,
                                   "`tl.clamp` is not supported by the lowering"),
    "X & 7 at NP=9": ("X & 7", ["NP=9"], 2, "0 <= NP <= 7: the kernel computes NP = X & 7"),
    "7 & X at NP=-1": ("7 & X", ["NP=-1"], 2, "outside the domain of NP"),
    "X >> 28 at NP=100": ("X >> 28", ["NP=100"], 2, "-8 <= NP <= 7"),
    # values a launch computes
    "X & 7 at NP=7": ("X & 7", ["NP=7"], 0, "verified for NP = 7"),
    "X >> 28 at NP=-8": ("X >> 28", ["NP=-8"], 0, "verified for NP = -8"),
    "tl.abs(X) at NP=-2147483648": ("tl.abs(X)", ["NP=-2147483648"], 0,
                                    "verified for NP = -2147483648"),
    # a domain bounded far below is proved as an unbounded one (the cutoff theorem's step 6)
    "X >> 1, no value": ("X >> 1", [], 0,
                         "verified for every value of NP (-1073741824 <= NP <= 1073741823)"),
    "tl.maximum(X - Y, 0) at NP=3": ("tl.maximum(X - Y, 0)", ["NP=3"], 0, "verified for NP = 3"),
    "tl.maximum(X - Y, 0) at NP=0": ("tl.maximum(X - Y, 0)", ["NP=0"], 0, "verified for NP = 0"),
    "tl.maximum(X - Y, 0) from X=1, Y=5": ("tl.maximum(X - Y, 0)", ["X=1", "Y=5"], 0,
                                           "(NP = 0)"),
    "tl.minimum(X, 4) at NP=-7": ("tl.minimum(X, 4)", ["NP=-7"], 0, "verified for NP = -7"),
    "tl.maximum(X - Y, 0), no value": ("tl.maximum(X - Y, 0)", [], 0,
                                       "verified for every value of NP (NP >= 0)"),
}


@pytest.mark.parametrize("name", list(PARAM_VALUES))
def test_param_values_the_kernel_never_computes(tmp_path, capsys, name):
    """The refusals were verified before (`verified for NP = -3`)."""
    definition, params, code, what = PARAM_VALUES[name]
    path = _write(tmp_path, derived(definition))
    got, text = _dump([*[a for p in params for a in ("--param", p)], str(path)], capsys)
    assert got == code and what in text, text
    if code == 2:
        assert "verified" not in text


def test_the_verifier_checks_only_values_a_launch_computes(tmp_path, capsys):
    """The writer commits NP tiles and then index NP (reader: NP + 1): a negative index only at
    NP = -1, which `tl.maximum(X - Y, 0)` never is. Rejected before (negative index at NP=-1);
    the same kernel with NP = X - Y (which is -1 at X = 0, Y = 1) is still rejected."""
    wbody = writer(post=_PUT.replace("(p)", "(N)"))
    safe = _write(tmp_path, derived("tl.maximum(X - Y, 0)", wbody, "for p in range(N + 1):"),
                  name="safe.py")
    check(capsys, safe, (), "verified")
    unsafe = _write(tmp_path, derived("X - Y", wbody, "for p in range(N + 1):"),
                    name="unsafe.py")
    check(capsys, unsafe, (), ("rejected", "[negative-index]"))


# ------------------------------------------------------- stores of another shape or dtype

def slot_store(value: str, field: str = "tle.gpu.alloc([2, 64, 64], tl.bfloat16)",
               rdtype: str = "") -> str:
    """A ring whose slot is [64, 64] bf16 (``field``); the writer stores ``t = value`` into it,
    the reader copies it to y."""
    body = (f"slot = w.acquire(p)\nt = {value}\ntl.store(tle.gpu.local_ptr(slot.tile), t)\n"
            f"w.commit(p)\n")
    offs = "tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]"
    rbody = reader().replace("tl.store(y_ptr + tl.arange(0, 64), t)",
                             f"tl.store(y_ptr + {offs}, t{rdtype})")
    return ring(writer(body=body), rbody).replace(
        "tle.gpu.alloc([2, 64], tl.float32)", field)


_BF16 = ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}, '
         '"constexprs": {"C": 3}}\n')
_OFFS = "tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]"
_BAD_STORE = ("rejected", "[bad-store]")
STORES = {
    "[64, 32] into [64, 64]": ("tl.zeros([64, 32], tl.bfloat16)",
                               _BAD_STORE + ("a tile of shape [64, 32]", "whose slot is [64, 64]")),
    "[64] into [64, 64]": ("tl.zeros([64], tl.bfloat16)", _BAD_STORE + ("shape [64]",)),
    "a [64, 32] load": ("tl.load(x_ptr + tl.arange(0, 64)[:, None] * 32 + "
                        "tl.arange(0, 32)[None, :])", _BAD_STORE + ("[64, 32]",)),
    "fp32 into bf16": ("tl.zeros([64, 64], tl.float32)",
                       _BAD_STORE + ("a tile of fp32", "which holds bf16", ".to(tl.bfloat16)")),
    "fp16 into bf16": ("tl.full([64, 64], 1.0, tl.float16)", _BAD_STORE + ("fp16",)),
    "a load cast to fp32": (f"tl.load(x_ptr + {_OFFS}).to(tl.float32)", _BAD_STORE + ("fp32",)),
    "a sum of fp32 tiles": ("tl.zeros([64, 64], tl.float32) + tl.zeros([64, 64], tl.float32)",
                            _BAD_STORE),
    "tl.where of fp32 tiles": ("tl.where(tl.zeros([64, 64], tl.float32) > 0, "
                               "tl.zeros([64, 64], tl.float32), tl.zeros([64, 64], "
                               "tl.float32))", _BAD_STORE),
    "a dot's fp32 result": ("tl.dot(tl.zeros([64, 64], tl.bfloat16), "
                            "tl.zeros([64, 64], tl.bfloat16))", _BAD_STORE + ("fp32",)),
    # safe: the slot's shape and dtype
    "bf16 [64, 64]": ("tl.zeros([64, 64], tl.bfloat16)", "verified"),
    "a [64, 64] load": (f"tl.load(x_ptr + {_OFFS})", "verified"),
    "fp32 cast to bf16": ("tl.zeros([64, 64], tl.float32).to(tl.bfloat16)", "verified"),
    "bf16 times a Python float": ("tl.zeros([64, 64], tl.bfloat16) * 2.0", "verified"),
    "a dot's result cast to bf16": ("tl.dot(tl.zeros([64, 64], tl.bfloat16), tl.zeros([64, 64], "
                                    "tl.bfloat16)).to(tl.bfloat16)", "verified"),
}


@pytest.mark.parametrize("name", list(STORES))
def test_stores_into_a_slot_of_another_shape_or_dtype(tmp_path, capsys, name):
    """Each refusal was verified before, and its --ttgir compile failed in Gluon."""
    value, expect = STORES[name]
    path = _write(tmp_path, slot_store(value), _BF16)
    check(capsys, path, (), expect)


@pytest.mark.parametrize("store,expect", [
    ("ptr = tle.gpu.local_ptr(slot.tile)\ntl.store(ptr, t)", _BAD_STORE),
    ("tl.store(pointer=tle.gpu.local_ptr(slot.tile), value=t)", _BAD_STORE),
    ("tl.store(value=t, pointer=tle.gpu.local_ptr(slot.tile))", _BAD_STORE),
])
def test_the_store_spelt_otherwise(tmp_path, capsys, store, expect):
    """A [64, 32] tile stored into the [64, 64] slot through a named pointer or by keywords
    (`tl.store(pointer=..., value=...)` crashed the frontend's shape walk before: an internal
    error)."""
    text = slot_store("tl.zeros([64, 32], tl.bfloat16)").replace(
        "tl.store(tle.gpu.local_ptr(slot.tile), t)", store.replace("\n", "\n        "))
    check(capsys, _write(tmp_path, text, _BF16), (), expect)


_F32_IN = _BF16.replace('"x_ptr": "*bf16"', '"x_ptr": "*fp32"')


@pytest.mark.parametrize("value,expect", [
    (f"tl.load(x_ptr + {_OFFS})", _BAD_STORE + ("a tile of fp32",)),
    (f"tl.load(x_ptr + N * 64 + {_OFFS}, mask=N > 0, other=0.0)", _BAD_STORE),
    (f"tl.load(x_ptr + {_OFFS}).to(tl.bfloat16)", "verified"),
])
def test_a_load_typed_by_the_signature(tmp_path, capsys, value, expect):
    """x_ptr is `*fp32` in the DEFAULT_CONFIG signature: its tile stored into the bf16 slot
    was verified, and Gluon refused the store."""
    check(capsys, _write(tmp_path, slot_store(value), _F32_IN), (), expect)


RELAY = HEAD + """
@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    a = tle.pipe(capacity=2, t=tle.gpu.alloc([2, AS], ADT))
    b = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (relay, (a, b, N)),
                             (consume, (b, y_ptr, N))], [4, 4], [232, 232])


def produce(a, x_ptr, N):
    w = a.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.t), tl.load(x_ptr + tl.arange(0, AS)).to(ADT))
        w.commit(p)


def relay(a, b, N):
    r = a.reader()
    w = b.writer()
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.t))
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.t), t)
        w.commit(p)
        r.release(p)


def consume(b, y_ptr, N):
    r = b.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.t)))
        r.release(p)
"""


@pytest.mark.parametrize("shape,dtype,expect", [
    ("64", "tl.float32", "verified"),
    ("32", "tl.float32", _BAD_STORE + ("a tile of shape [32]",)),
    ("64", "tl.bfloat16", _BAD_STORE + ("a tile of bf16",)),
])
def test_a_slot_tile_relayed_into_another_slot(tmp_path, capsys, shape, dtype, expect):
    """A tile loaded whole from one pipe's slot, stored into another's: the source field's
    shape and dtype are known (a [32] tile into a [64] slot was verified)."""
    text = RELAY.replace("AS", shape).replace("ADT", dtype)
    check(capsys, _write(tmp_path, text, CONFIG), (), expect)


def test_a_condition_on_a_load_by_keyword(tmp_path, capsys):
    """`if tl.load(pointer=x_ptr) > 0:` around the writer's store was an internal error
    (exit 3: the shape walk of the condition broadcast no operands)."""
    body = ("slot = w.acquire(p)\nif tl.load(pointer=x_ptr) > 0:\n"
            "    tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))\n"
            "else:\n    tl.store(tle.gpu.local_ptr(slot.tile), tl.zeros([64], tl.float32))\n"
            "w.commit(p)\n")
    _run(tmp_path, capsys, ring(writer(body=body)), (), "verified")


@pytest.mark.parametrize("name", [n for n, (_, e) in STORES.items() if e == "verified"][:2])
def test_a_store_of_the_slot_type_compiles(tmp_path, capsys, name):
    """The safe twins compile for sm_90a (the check refuses no kernel Gluon takes)."""
    pytest.importorskip("triton.experimental.gluon")
    value, _ = STORES[name]
    path = _write(tmp_path, slot_store(value), _BF16)
    code, text = _dump(["--ttgir", str(path)], capsys)
    assert code == 0 and "ttg.warp_specialize" in text, text[-2000:]


# ------------------------------------------------------------------- the closed flag as a guard

def closed_ring(rbody: str, rloop: str = "for p in range(N + 1):") -> str:
    """The writer commits N tiles and closes at N; the reader waits 0..N with ``rbody``."""
    return ring(writer(post="w.close(N)\n"),
                f"    {rloop}\n" + textwrap.indent(textwrap.dedent(rbody), "        "))


_LOAD = "t = tl.load(tle.gpu.local_ptr(res.slot.tile))\ntl.store(y_ptr + tl.arange(0, 64), t)\n"
_UNWRITTEN = ("rejected", "[unwritten-field]")


def guarded(cond: str, before: str = "", after: str = "") -> str:
    return closed_ring(f"res = r.wait(p)\n{before}if {cond}:\n"
                       + textwrap.indent(_LOAD, "    ") + after + "r.release(p)\n")


CLOSED_GUARDS = {
    "if not res.is_closed": (guarded("not res.is_closed"), "verified"),
    "the else of if res.is_closed": (closed_ring(
        "res = r.wait(p)\nif res.is_closed:\n    pass\nelse:\n" + textwrap.indent(_LOAD, "    ")
        + "r.release(p)\n"), "verified"),
    "a name bound to the flag": (guarded("not done", before="done = res.is_closed\n"),
                                 "verified"),
    "res.is_closed == False": (guarded("res.is_closed == False"), "verified"),  # noqa: E712
    "res.is_closed == 0": (guarded("res.is_closed == 0"), "verified"),
    "res.is_closed != True": (guarded("res.is_closed != True"), "verified"),  # noqa: E712
    "a name bound to not res.is_closed": (guarded("open_", before="open_ = not res.is_closed\n"),
                                          "verified"),
    "(res.is_closed == 0) & data": (guarded("(res.is_closed == 0) & (tl.load(y_ptr) > 0)"),
                                    "verified"),
    "a conjunction with data": (guarded("not res.is_closed and tl.load(y_ptr) > 0"),
                                "verified"),
    "the tile kept in a variable and stored after": (closed_ring(
        "res = r.wait(p)\nt = tl.zeros([64], tl.float32)\nif not res.is_closed:\n"
        "    t = tl.load(tle.gpu.local_ptr(res.slot.tile))\nr.release(p)\n"
        "tl.store(y_ptr + tl.arange(0, 64), t)\n"), "verified"),
    # unsafe: the closing slot (never written at N = 0 and N = 1) is read
    "if res.is_closed": (guarded("res.is_closed"), _UNWRITTEN),
    "no guard": (closed_ring("res = r.wait(p)\n" + _LOAD + "r.release(p)\n"), _UNWRITTEN),
    "a disjunction with an affine part": (guarded("not res.is_closed or N > 0"), _UNWRITTEN),
    "res.is_closed == True": (guarded("res.is_closed == True"), _UNWRITTEN),  # noqa: E712
    "a guarded read, then an unguarded one": (guarded("not res.is_closed", after=_LOAD),
                                              _UNWRITTEN),
    "an unguarded read, then a guarded one": (guarded("not res.is_closed", before=_LOAD),
                                              _UNWRITTEN),
    # the flag tested is index p's, the read index p + 1's: at p + 1 = N it reads the close
    "the flag of the previous index": (ring(writer(post="w.close(N)\n"), textwrap.indent(
        "res = r.wait(0)\ndone = res.is_closed\nr.release(0)\nfor p in range(N):\n"
        "    res = r.wait(p + 1)\n    if not done:\n" + textwrap.indent(_LOAD, "        ")
        + "    done = res.is_closed\n    r.release(p + 1)\n", "    ")), _UNWRITTEN),
    "not not res.is_closed": (guarded("not not res.is_closed"), _UNWRITTEN),
    "the flag bound again on one path": (guarded("not done", before=(
        "done = res.is_closed\nif tl.load(y_ptr) > 0:\n    done = tl.load(y_ptr) > 1\n")),
        _UNWRITTEN),
    "the flag overwritten in an affine branch": (guarded("not done", before=(
        "done = res.is_closed\nif N > 0:\n    done = False\n")), _UNWRITTEN),
    "the guard after the release": (closed_ring(
        "res = r.wait(p)\nr.release(p)\nif not res.is_closed:\n" + textwrap.indent(_LOAD, "    ")),
        ("rejected", "[access-outside-window]")),
}


@pytest.mark.parametrize("name", list(CLOSED_GUARDS))
def test_reads_guarded_by_the_closed_flag(tmp_path, capsys, name):
    """The verified ones were rejected before (unwritten-field at the closing index)."""
    text, expect = CLOSED_GUARDS[name]
    _run(tmp_path, capsys, text, (), expect)


@pytest.mark.parametrize("name", ["if not res.is_closed", "if res.is_closed", "no guard"])
def test_the_simulator_agrees_on_the_guard(name):
    """Every interleaving of the semantics: the guarded read never runs at the close."""
    from tle_compiler.frontend import read_source
    from tle_compiler.semantics.simulator import simulate

    text, expect = CLOSED_GUARDS[name]
    (program,) = read_source(text + CONFIG, "kernel.py").kernels
    kinds = {n: {e.kind for e in simulate(program, {"N": n}).errors} for n in range(4)}
    if expect == "verified":
        assert all(not k for k in kinds.values()), kinds
    else:
        assert "unwritten-field" in kinds[0] and "unwritten-field" in kinds[1], kinds


def test_the_guarded_read_prints_and_parses_back(tmp_path, capsys):
    """The .pipe text form spells the guarded read `kv.openread(p, tile)`; read back, the same
    verdict (an unguarded `kv.read` there is rejected)."""
    path = _write(tmp_path, CLOSED_GUARDS["if not res.is_closed"][0], CONFIG)
    code = tle_dump(["-o", str(tmp_path / "k.pipe"), str(path)])
    capsys.readouterr()
    assert code == 0
    pipe = (tmp_path / "k.pipe").read_text()
    assert "kv.openread(p, tile)" in pipe, pipe
    assert _dump([str(tmp_path / "k.pipe")], capsys)[0] == 0
    (tmp_path / "bad.pipe").write_text(pipe.replace("kv.openread(p, tile)", "kv.read(p, tile)"))
    code, text = _dump([str(tmp_path / "bad.pipe")], capsys)
    assert code == 1 and "[unwritten-field]" in text, text


@pytest.mark.parametrize("name", ["if not res.is_closed", "if res.is_closed"])
def test_the_guard_read_back_from_the_kernel_ir(tmp_path, capsys, name):
    """The .kir of the kernel derives the same guard: the same verdict as the .py."""
    text, expect = CLOSED_GUARDS[name]
    py = _write(tmp_path, text, CONFIG)
    kir = tmp_path / "kernel.kir"
    assert tle_dump(["-p", "verify-protocol", "--print-ir", "-o", str(kir), str(py)]) in (0, 1)
    capsys.readouterr()
    check(capsys, kir, (), expect)


def test_a_guarded_reader_lowers_to_its_events(tmp_path, capsys):
    path = _write(tmp_path, CLOSED_GUARDS["if not res.is_closed"][0], CONFIG)
    check(capsys, path, (), "verified")
    problems = lowering_problems(path, min_grid=3)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------- len of known tuples

def len_loop(wbound: str, rbound: str, pre: str = "") -> str:
    return ring(writer(f"for p in range({wbound}):", pre=pre), reader(f"for p in range({rbound}):"))


LENS = {
    "len of a tuple display": (len_loop("len((1, 2, 3))", "3"), "verified"),
    "len of a list of runtime values": (len_loop("len([N, N])", "2"), "verified"),
    "len of a name bound to a tuple": (len_loop("len(t)", "3", pre="t = (N, N, 1)\n"),
                                       "verified"),
    "len of an empty tuple": (len_loop("len(())", "0"), "verified"),
    "len of a string": (len_loop('len("ab")', "2"), "verified"),
    "len of a range of constants": (len_loop("len(range(1, 7, 2))", "3"), "verified"),
    "len of a tuple sum": (len_loop("len((1, 2) + (3,))", "3"), "verified"),
    "len of a repeated tuple": (len_loop("len((N,) * 3)", "3"), "verified"),
    "len of an empty range": (len_loop("len(range(3, 0))", "1"),
                              ("rejected", "[wait-never-committed]")),
    # unsafe or unknown length
    "len of a tuple display, one short": (len_loop("len((1, 2, 3))", "4"),
                                          ("rejected", "[wait-never-committed]")),
    # (refused at the call since adversarial round 26: the lowering translates len only of a
    # tuple the kernel spells out)
    "len of a pointer": (len_loop("len(x_ptr)", "2"), ("rejected", "[unsupported-expression]")),
}


@pytest.mark.parametrize("name", list(LENS))
def test_len_of_known_tuples(tmp_path, capsys, name):
    """The verified ones were refused before (`len((1, 2, 3))` is not affine)."""
    text, expect = LENS[name]
    _run(tmp_path, capsys, text, (), expect)


@pytest.mark.parametrize("bound,ok", [("len((1, 2, 3))", True), ("len([N, N])", True),
                                      ('len("ab")', True), ("len(range(1, 7, 2))", True),
                                      ("len((1, 2) + (3,))", True), ("len((N,) * 3)", True),
                                      ("len(x_ptr)", False), ("len(tl.arange(0, 4))", False)])
def test_what_triton_does_with_len(tmp_path, monkeypatch, bound, ok):
    source = HEAD.replace("import tle_compiler as tle\n", "import triton\n") + textwrap.dedent(f"""
        @triton.jit
        def k(x_ptr, N, C: tl.constexpr):
            for p in range({bound}):
                tl.store(x_ptr + p * 64 + tl.arange(0, 64), tl.zeros([64], tl.float32))
        """)
    err = triton_compile_error(tmp_path, monkeypatch, source, "adv12len")
    assert (err is None) == ok, err


# ------------------------------------------------------------- del of names Python has not bound

_NAME_ERROR = ("rejected", "[bad-import]", "NameError")
DELETES = {
    "del of a name never bound": ("\ndel UNBOUND\n", _NAME_ERROR + ("`del UNBOUND`",)),
    "del twice": ("\nQ = 1\ndel Q\ndel Q\n", _NAME_ERROR),
    "del of a builtin": ("\ndel print\n", _NAME_ERROR),
    "del of an unbound name in a tuple": ("\nQ = 1\ndel (Q, R)\n", _NAME_ERROR + ("'R'",)),
    "del in a class body of a module name": ("\nW = 1\n\n\nclass A:\n    del W\n",
                                             _NAME_ERROR + ("class A",)),
    # safe
    "del of a bound name": ("\nQ = 1\ndel Q\n", "verified"),
    "del, bind again, del": ("\nQ = 1\ndel Q\nQ = 2\ndel Q\n", "verified"),
    "del in a class body of its own name": ("\n\nclass A:\n    Z = 1\n    del Z\n", "verified"),
    "del in a function never called": ("\n\ndef g():\n    del W\n", "verified"),
    "del under if False": ("\nif False:\n    del W\n", "verified"),
}


@pytest.mark.parametrize("name", list(DELETES))
def test_del_of_names_python_has_not_bound(tmp_path, capsys, name):
    """Each refusal was verified before."""
    tail, expect = DELETES[name]
    _run(tmp_path, capsys, ring() + tail, (), expect)


@pytest.mark.parametrize("name", list(DELETES))
def test_what_python_does_with_del(tmp_path, name):
    pytest.importorskip("triton")
    tail, expect = DELETES[name]
    (tmp_path / "kernel.py").write_text(ring() + tail + CONFIG)
    r = _python(tmp_path, "import kernel")
    if expect == "verified":
        assert r.returncode == 0, r.stderr
    else:
        assert "NameError" in r.stderr, r.stderr


# ------------------------------------------------------------------ relative imports Python refuses

_HELPERS = HEAD + "STEPS = 4\n"


def relative(dots: str = ".", init: bool = False, folder: str = "kdir") -> tuple[str, dict]:
    """A kernel module in ``folder`` looping STEPS times, STEPS imported by ``from <dots>helpers
    import STEPS``; helpers.py beside it (and in the folder above); ``init``: the folder is a
    package."""
    text = ring(writer("for p in range(STEPS):"), reader("for p in range(4):")).replace(
        "import tle_compiler as tle\n", f"import tle_compiler as tle\nfrom {dots}helpers import "
                                        f"STEPS\n")
    files = {f"{folder}/helpers.py": _HELPERS, "helpers.py": _HELPERS}
    if init:
        files[f"{folder}/__init__.py"] = ""
    return text, files


_NO_PARENT = ("rejected", "[bad-import]", "attempted relative import with no known parent "
                                          "package")
RELATIVE = {
    "from .helpers in a folder without __init__.py": (relative(), _NO_PARENT),
    "from ..helpers in a folder without __init__.py": (relative(".."), _NO_PARENT),
    "from ..helpers beyond the package": (relative("..", init=True),
                                          ("rejected", "[bad-import]",
                                           "beyond top-level package")),
    # safe
    "from .helpers in a package": (relative(init=True), "verified"),
}


@pytest.mark.parametrize("name", list(RELATIVE))
def test_relative_imports_python_refuses(tmp_path, capsys, name):
    """The refusals were verified before (the folder read as a package)."""
    (text, files), expect = RELATIVE[name]
    _run(tmp_path, capsys, text, (), expect, name="kdir/kernel.py", files=files)


@pytest.mark.parametrize("name", list(RELATIVE))
def test_what_python_does_with_the_relative_imports(tmp_path, name):
    """Python imports the kernel module as tle-dump names it: a top-level module from its own
    folder when that folder is no package, else `kdir.kernel` from the folder above."""
    pytest.importorskip("triton")
    (text, files), expect = RELATIVE[name]
    for f, body in {**files, "kdir/kernel.py": text + CONFIG}.items():
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(body)
    if (tmp_path / "kdir" / "__init__.py").exists():
        r = _python(tmp_path, "import kdir.kernel")
    else:
        r = _python(tmp_path / "kdir", "import kernel")
    if expect == "verified":
        assert r.returncode == 0, r.stderr
    else:
        assert "ImportError" in r.stderr and expect[2] in r.stderr, r.stderr


# ------------------------------------------------------------------- the kernel IR read back

HELPER_PARAM = ring(writer("for p in range(NK):", pre="NK = split_range(N)\n"),
                    reader("for p in range(tl.cdiv(N, 64)):"),
                    extra="\n\ndef split_range(N):\n    NK = tl.cdiv(N, 64)\n    return NK\n")


@pytest.mark.parametrize("params", [(), ("NK=3",), ("N=130",)])
def test_the_kernel_ir_read_back_names_params_as_the_py(tmp_path, capsys, params):
    """The .kir of `-p verify-protocol --print-ir` read back: the same param names and verdict
    as the .py (its helper's param was `split_range1_NK`, and `--param NK=3` was unusable)."""
    py = _write(tmp_path, HELPER_PARAM, CONFIG)
    kir = tmp_path / "kernel.kir"
    assert tle_dump(["-p", "verify-protocol", "--print-ir", "-o", str(kir), str(py)]) == 0
    capsys.readouterr()
    flags = [a for p in params for a in ("--param", p)]
    got = []
    for path in (py, kir):
        code = tle_dump([*flags, str(path)])
        out, err = capsys.readouterr()
        verdict = [ln for ln in err.splitlines() if ln.startswith("tle-dump: k: ")]
        got.append((code, [ln for ln in out.splitlines() if ln.startswith("param ")],
                    [v.rsplit(" (", 1)[0] for v in verdict]))
    assert got[0] == got[1], got
    assert got[0][0] == 0 and "split_range" not in str(got), got


# ----------------------------------------------------- kernel arguments used as pointers and counts

def pointer_bound(rarg: str = "x_ptr") -> str:
    """Writer and reader loop `range(x_ptr)` (the reader gets x_ptr as its y_ptr)."""
    return ring(writer("for p in range(x_ptr):"), reader("for p in range(y_ptr):")).replace(
        "(consume, (kv, y_ptr, N, C))", f"(consume, (kv, {rarg}, N, C))")


_SIG = ('\nDEFAULT_CONFIG = {{"signature": {{"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "{t}"}}, '
        '"constexprs": {{"C": 3}}}}\n')
POINTERS = {
    "range(x_ptr), no signature": (pointer_bound(), "", ("rejected", "[pointer-param]",
                                                         "'x_ptr' is used as a pointer")),
    "range(x_ptr), x_ptr typed *fp32": (pointer_bound(), _SIG.format(t="i32"),
                                        ("rejected", "[pointer-param]")),
    "N typed *fp32 in the signature": (ring(), _SIG.format(t="*fp32"),
                                       ("rejected", "[signature]", "typed *fp32")),
    "N typed fp32 in the signature": (ring(), _SIG.format(t="fp32"),
                                      ("rejected", "[signature]", "(a float)")),
    # safe: a pointer offset by a count, the count an integer
    "x_ptr + N * 64 with N the bound": (ring(writer(body=_PUT.replace(
        "x_ptr + tl.arange", "x_ptr + N * 64 + tl.arange"))), _SIG.format(t="i32"), "verified"),
    "no signature": (ring(), "", "verified"),
}


@pytest.mark.parametrize("name", list(POINTERS))
def test_kernel_arguments_as_pointers_and_counts(tmp_path, capsys, name):
    """Each refusal was verified before ("for every value of x_ptr")."""
    text, config, expect = POINTERS[name]
    check(capsys, _write(tmp_path, text, config), (), expect)


def test_what_triton_does_with_a_pointer_bound(tmp_path, monkeypatch):
    source = HEAD.replace("import tle_compiler as tle\n", "import triton\n") + textwrap.dedent("""
        @triton.jit
        def k(x_ptr, N, C: tl.constexpr):
            for p in range(x_ptr):
                tl.store(x_ptr + p + tl.arange(0, 64), tl.zeros([64], tl.float32))
        """)
    err = triton_compile_error(tmp_path, monkeypatch, source, "adv12ptr")
    assert err is not None and "For loop bounds" in str(err), err


# --------------------------------------------------------------- constructs checked, pinned

def helper_ring(call: str, params: str, unpack: str, idx: str = "p") -> str:
    body = textwrap.indent(unpack + _PUT.replace("(p)", f"({idx})"), "    ")
    return ring(writer(body=call + "\n"), extra=f"\n\ndef put({params}):\n{body}")


CONSTRUCTS = {
    "handles in a tuple to a helper": (
        helper_ring("put((w, x_ptr), p)", "args, p", "w, x_ptr = args\n"), "verified"),
    "handles in a tuple to a helper, index off": (
        helper_ring("put((w, x_ptr), p)", "args, p", "w, x_ptr = args\n", "p + 1"),
        ("rejected", "[unconsumed]")),
    "handles in a list, items taken by index": (
        helper_ring("put([x_ptr, w], p)", "args, p", "w = args[1]\nx_ptr = args[0]\n"),
        "verified"),
    "handles in a list, the wrong item": (
        helper_ring("put([w, x_ptr], p)", "args, p", "w = args[1]\nx_ptr = args[0]\n"),
        ("rejected", "[unknown-handle]")),
    "keywords in another order": (
        helper_ring("put(p=p, x_ptr=x_ptr, w=w)", "w, x_ptr, p", ""), "verified"),
    "keywords in another order, index off": (
        helper_ring("put(p=p + 1, x_ptr=x_ptr, w=w)", "w, x_ptr, p", ""),
        ("rejected", "[unconsumed]")),
    "a keyword repeating a positional": (
        helper_ring("put(p, p=p + 1, w=w)", "w, x_ptr, p", ""), ("rejected", "[bad-call]")),
    "a handle rebound in the loop": (ring(writer(body="w2 = w\n" + _PUT.replace("w.", "w2."))),
                                     "verified"),
    "two aliases swapped in the loop": (ring(writer(
        pre="a = w\nb = w\n", body="a, b = b, a\n" + _PUT.replace("w.", "a."))), "verified"),
    "a return inside the loop": (ring(writer(body=_PUT + "if p == 2:\n    return\n")),
                                 ("rejected", "[unsupported-control-flow]")),
    "a commit in a lambda": (ring(writer(body=_PUT.replace("w.commit(p)",
                                                           "f = lambda: w.commit(p)\nf()"))),
                             ("rejected", "[conditional-event]")),
    "events under with": (ring(writer(body="with tl.static_range(1):\n"
                                      + textwrap.indent(_PUT, "    "))),
                          ("rejected", "[unsupported-control-flow]")),
    "events under try/finally": (ring(writer(body="try:\n" + textwrap.indent(_PUT, "    ")
                                              + "finally:\n    pass\n")),
                                 ("rejected", "[unsupported-control-flow]")),
    "events in a while with a data exit": (ring(writer(body="i = 0\nwhile tl.load(x_ptr) > i:\n"
                                                       + textwrap.indent(_PUT, "    ")
                                                       + "    i += 1\n")),
                                           ("rejected", "[unsupported-control-flow]")),
    "a walrus loop bound": (ring(writer("for p in range((M := N)):")), ("rejected",)),
    "global in a partition": (ring(writer(pre="global G\n"), prelude="G = 1\n"),
                              ("rejected", "[unsupported-statement]")),
    "a commit in an f-string": (ring(writer(body=_PUT.replace(
        "w.commit(p)", 'print(f"{w.commit(p)}")'))), ("rejected",)),
    "a commit in an assert": (ring(writer(body=_PUT.replace(
        "w.commit(p)", "assert w.commit(p) is None"))), ("rejected",)),
    "a nested warp_specialize": (ring(writer(pre="tle.gpu.warp_specialize([(other, (x_ptr,))], "
                                               "[4], [232])\n"),
                                      extra="\n\ndef other(x_ptr):\n    pass\n"),
                                 ("rejected", "[bad-warp-specialize]")),
    "tl shadowed by a local": (ring(writer(pre="tl = 3\n")), ("rejected",)),
    # (unknown, "outside i32", until lowering adversarial round 19: Triton 3.6 refuses the
    # bound, "Scalar 4294967296 is out of range for type int32", and so does the lowering now)
    "a loop bound past i32": (ring(writer("for p in range(N + 4294967296):")),
                              ("rejected", "Scalar 4294967296 is out of range for type int32")),
}


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_constructs_around_events(tmp_path, capsys, name):
    text, expect = CONSTRUCTS[name]
    _run(tmp_path, capsys, text, (), expect)


@pytest.mark.parametrize("idx,params,expect", [
    ("N", ("N=3",), "verified"),
    ("N", (), "verified"),
    ("N + 1", ("N=2",), ("rejected", "(when N=2, N_1=")),
])
def test_a_loop_variable_spelt_like_the_param(tmp_path, capsys, idx, params, expect):
    """`for N in range(N):` (Python evaluates `range(N)` before it binds the loop variable): the
    param keeps the kernel argument's name, so `--param N=3` names it (it was `N_1`, and
    `--param N=3` was unusable input: no such param)."""
    _run(tmp_path, capsys, ring(writer("for N in range(N):", idx=idx)), params, expect)


@pytest.mark.parametrize("name", ["handles in a tuple to a helper", "keywords in another order"])
def test_verified_constructs_lower_to_their_events(tmp_path, capsys, name):
    text, _ = CONSTRUCTS[name]
    path = _run(tmp_path, capsys, text, (), "verified")
    problems = lowering_problems(path, min_grid=3)
    assert not problems, "\n".join(problems)

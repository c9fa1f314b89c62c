"""Differential reading of a reader's loop body: plain Triton 3.6 against the TLE lowering.

A body is Triton code run in a loop over ``p`` with ``t`` a [32, 64] tile (and ``add``, a helper
returning the sum of its arguments). Plain Triton compiles it in an ordinary @triton.jit kernel
(``t`` loaded from global memory); TLE compiles it as the reader of a capacity-2 ring (``t`` loaded
from the slot the writer filled), through tle-dump's verdict and the lowering to Gluon. Both
compile for sm_90a on the CPU. What each computes is read off its TTGIR (after the same constant
propagation, :func:`normalized`) as the *value slice* of every store to ``y_ptr``: the operations
the stored value depends on, followed back through SSA operands to the tile, the kernel's arguments
and the loop variable, each written as its name, its comparison predicate, its constant and its
element types. The two slices must be the same multiset; the addresses, layouts, shapes (an
elementwise operation computes the same on a scalar before its splat as on the splat tile) and the
pipe's own operations are not in them. The property tests (tests/test_lowering_matches_triton.py)
use :func:`outcome`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: Triton's type names of the tile dtypes the bodies use
SIG = {"int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "float16": "fp16",
       "bfloat16": "bf16", "float32": "fp32"}

PLAIN = '''
import triton
import triton.language as tl


@triton.jit
def add(x, y):
    return x + y


@triton.jit
def ref(x_ptr, y_ptr, N, M):
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        t = tl.load(x_ptr + p * 2048 + offs)
BODY
'''

# the kernel body's bindings (KBODY) of k0 and k1, handed to the loop: plain Triton's jit call,
# TLE's warp_specialize into the reader
PLAIN_KB = '''
import triton
import triton.language as tl


@triton.jit
def add(x, y):
    return x + y


@triton.jit
def part(x_ptr, y_ptr, N, M, k0, k1):
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        t = tl.load(x_ptr + p * 2048 + offs)
BODY


@triton.jit
def ref(x_ptr, y_ptr, N, M):
KBODY
    part(x_ptr, y_ptr, N, M, k0, k1)
'''

TLE = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.DT))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, y_ptr, N, M))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile),
                 tl.load(x_ptr + p * 2048 + tl.arange(0, 32)[:, None] * 64
                         + tl.arange(0, 64)[None, :]))
        w.commit(p)


def consume(kv, x_ptr, y_ptr, N, M):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
BODY
        r.release(p)


def add(x, y):
    return x + y


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32", "M": "i32"}}
'''

# The writer computes the body's value and stores it into the slot (a field of the y type); the
# reader copies the slot out. ``t`` is the tile the writer loads from global memory.
TLE_WRITER = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.YT))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, M)), (consume, (kv, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N, M):
    w = kv.writer()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        slot = w.acquire(p)
        t = tl.load(x_ptr + p * 2048 + offs)
BODY
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 2048 + offs, tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


def add(x, y):
    return x + y


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32", "M": "i32"}}
'''

#: Triton's type names -> tl dtypes, for the slot field of the writer's form
TL_DTYPE = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
            "fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}

_LOCAL_STORE = re.compile(r"^\s*ttg\.local_store\s+(%[\w.$-]+),\s*(%[\w.$-]+)")
_LINE = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)?\s*=\s*([\w.]+)(.*)$")
#: an operation in MLIR's generic form with a region (``%x = "tt.reduce"(%y) <{axis = 1}> ({``)
_GENERIC = re.compile(r'^\s*(%[\w.$-]+)(?::\d+)?\s*=\s*"([\w.]+)"\((.*?)\)'
                      r'\s*(<\{.*\}>)?\s*\(\{\s*$')
#: where the SSA names start again: a function or a warp_specialize partition (isolated from
#: above); the default partition sees its function's names
_ISOLATED = re.compile(r"^\s*(tt\.func\b|partition\d+\(|default\s*\{)")
_VALUE = re.compile(r"%[\w.$-]+")
_STORE = re.compile(r"^\s*tt\.store\s+(%[\w.$-]+),\s*(%[\w.$-]+)")
_LOC = re.compile(r"\s*loc\(.*\)\s*$")
#: operations that move a value without computing (their operand stands for them)
_PASS_THROUGH = {"ttg.convert_layout", "tt.splat", "tt.broadcast", "tt.expand_dims"}
#: where a slice stops: the tile (from global or shared memory)
_TILE = {"tt.load", "ttg.local_load"}


def _indented(body: str, spaces: int) -> str:
    return textwrap.indent(textwrap.dedent(body).strip("\n"), " " * spaces)


def _kernel_body(kbody: str) -> str:
    """``kbody`` with k0 and k1 bound (to 0 where it does not bind them)."""
    bound = {re.split(r"(?::| =)", line, maxsplit=1)[0] for line in kbody.splitlines()}
    return "\n".join([f"{n} = 0" for n in ("k0", "k1") if n not in bound]
                     + ([kbody] if kbody else []))


def plain_source(body: str, kbody: str = "") -> str:
    if kbody:
        return (PLAIN_KB.replace("KBODY", _indented(_kernel_body(kbody), 4))
                .replace("BODY", _indented(body, 8)))
    return PLAIN.replace("BODY", _indented(body, 8))


def tle_source(body: str, dt: str, ys: str, writer: bool = False, kbody: str = "") -> str:
    """The TLE kernel running ``body`` in its reader, or with ``writer`` in its writer, where
    the body's stores to ``y_ptr`` become stores into the slot (the field of y's type); with
    ``kbody``, the kernel body binds k0 and k1 and hands them to the reader."""
    if kbody:
        text = TLE.replace("BODY", _indented(body, 8)).replace("tl.DT", f"tl.{dt}")
        text = text.replace("    tle.assume(N >= 0)\n", "    tle.assume(N >= 0)\n"
                            + _indented(_kernel_body(kbody), 4) + "\n")
        text = text.replace("(consume, (kv, x_ptr, y_ptr, N, M))",
                            "(consume, (kv, x_ptr, y_ptr, N, M, k0, k1))")
        text = text.replace("def consume(kv, x_ptr, y_ptr, N, M):",
                            "def consume(kv, x_ptr, y_ptr, N, M, k0, k1):")
        return text.replace("XS", SIG[dt]).replace("YS", ys)
    if writer:
        body = body.replace("tl.store(y_ptr + p * 2048 + offs, ",
                            "tl.store(tle.gpu.local_ptr(slot.tile), ")
        return (TLE_WRITER.replace("BODY", _indented(body, 8))
                .replace("tl.YT", f"tl.{TL_DTYPE[ys]}")
                .replace("XS", SIG[dt]).replace("YS", ys))
    return (TLE.replace("BODY", _indented(body, 8)).replace("tl.DT", f"tl.{dt}")
            .replace("XS", SIG[dt]).replace("YS", ys))


def _types(text: str) -> str:
    """The types of an operation's text, layouts dropped (``tensor<32x64xi32, #blocked>`` is
    ``tensor<32x64xi32>``)."""
    text = _LOC.sub("", text)
    if " : " not in text:
        return ""
    return _element_types(text.split(" : ", 1)[1]).strip()


def _element_types(text: str) -> str:
    """``text`` with every ``tensor<32x64xi32, #layout<...>>`` written as its element type."""
    out, k = [], 0
    while True:
        start = text.find("tensor<", k)
        if start < 0:
            return "".join(out) + text[k:]
        depth, end = 0, start + len("tensor")
        while end < len(text):
            depth += {"<": 1, ">": -1}.get(text[end], 0)
            end += 1
            if depth == 0:
                break
        inner = text[start + len("tensor<"):end - 1]
        out += [text[k:start], re.sub(r"^(\d+x)+", "", inner.split(",", 1)[0]).strip()]
        k = end


def _signature(op: str, rest: str) -> str:
    rest = _LOC.sub("", rest)
    pred = re.match(r"\s*(eq|ne|slt|sle|sgt|sge|ult|ule|ugt|uge|oeq|one|olt|ole|ogt|oge|ueq|une|"
                    r"uno|ord|true|false)\b", rest)
    const = ""
    if op == "arith.constant":
        const = " " + re.sub(r"^dense<(.*)>$", r"\1", rest.split(" : ")[0].strip())
    return f"{op}{' ' + pred.group(1) if pred else ''}{const} : {_types(rest)}"


def _is_join(op: str, rest: str) -> bool:
    """A value one of several bindings of a name reaches: an ``scf.if`` / ``scf.for`` result, or
    a select of scalars (plain Triton's make_ttir folds an ``scf.if`` yielding constants into
    one; Gluon's pipeline keeps the ``scf.if``)."""
    return op.startswith("scf.") or (op == "arith.select" and "tensor<" not in _types(rest))


def _join_types(op: str, rest: str) -> str:
    rest = _LOC.sub("", rest)
    if op == "arith.select":
        return _types(rest).split(",")[-1].strip()
    m = re.search(r"->\s*\(?([^){]*)\)?", rest)
    return _element_types(m.group(1)).strip() if m else ""


def _bool_to_float(defs: dict, op: str, rest: str):
    """``truncf`` / ``extf`` of a boolean converted to a float (``uitofp`` / ``sitofp`` of an
    i1): the values are 0 and 1 (or -1) in every float type, so the pair is the one conversion
    plain Triton's canonicalizer makes of it. Returns (its signature, the boolean) or None."""
    if op not in ("arith.truncf", "arith.extf"):
        return None
    operand = _VALUE.findall(_LOC.sub("", rest).split(" : ")[0])[0]
    while operand in defs and defs[operand][0] in _PASS_THROUGH:
        operand = _VALUE.findall(_LOC.sub("", defs[operand][1]).split(" : ")[0])[0]
    if operand not in defs:
        return None
    op2, rest2 = defs[operand]
    types2 = _types(rest2)
    if op2 not in ("arith.uitofp", "arith.sitofp") or not types2.startswith("i1 to"):
        return None
    dest = _types(rest).split(" to ")[-1]
    return (f"{op2} : i1 to {dest}", _VALUE.findall(_LOC.sub("", rest2).split(" : ")[0])[0])


def _operands(rest: str) -> list[str]:
    return _VALUE.findall(_LOC.sub("", rest).split(" : ")[0])


def _result_type(op: str, rest: str) -> str:
    """The element type of the value an operation defines."""
    if _is_join(op, rest):
        return _join_types(op, rest)
    if op in ("arith.cmpi", "arith.cmpf"):
        return "i1"
    types = _types(rest)
    for arrow in (" -> ", " to "):
        if arrow in types:
            return types.rsplit(arrow, 1)[1].strip()
    return types.split(",")[-1].strip()


def _scopes(ir_text: str) -> list[dict]:
    """The module's name scopes in order: each ``{"defs": name -> (op, text after the name),
    "stores": [stored value], "parent": index or None}``. An operation with a region in the
    generic form (``tt.reduce``) is one definition, named with its attributes and the
    operations of its combine region (``tt.reduce<{axis = 1:i32}>[arith.addi : i32]``), whose
    text holds its operands and, from the region's closing line, its types."""
    scopes: list[dict] = []
    func = None
    lines = ir_text.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        start = _ISOLATED.match(line)
        if start or not scopes:
            default = bool(start) and start.group(1).startswith("default")
            scopes.append({"defs": {}, "stores": [], "slot_stores": [], "slot_copies": 0,
                           "parent": func if default else None})
            if start and start.group(1).startswith("tt.func"):
                func = len(scopes) - 1
        scope = scopes[-1]
        g = _GENERIC.match(line)
        if g:
            name, op, operands, attrs = g.group(1), g.group(2), g.group(3), g.group(4) or ""
            combine = []
            while k < len(lines) and not lines[k].lstrip().startswith("})"):
                inner = _LINE.match(lines[k])
                if inner and not inner.group(2).endswith(".return"):
                    combine.append(_signature(inner.group(2), inner.group(3)))
                k += 1
            close = lines[k] if k < len(lines) else ""
            k += 1
            types = _LOC.sub("", close).split(" : ", 1)[1] if " : " in close else ""
            attrs = attrs.replace(" : ", ":")
            scope["defs"][name] = (f"{op}{attrs}[{', '.join(sorted(combine))}]",
                                   f" {operands} : {types}")
            continue
        m = _LINE.match(line)
        if m:
            scope["defs"][m.group(1)] = (m.group(2), m.group(3))
            continue
        st = _STORE.match(line)
        if st and "tensor<32x64x!tt.ptr" in line:
            scope["stores"].append(st.group(2))
        ls = _LOCAL_STORE.match(line)
        if ls and "tensor<32x64x" in line:
            scope["slot_stores"].append(ls.group(1))
        if "async_copy_global_to_local" in line and "32x64x" in line:
            scope["slot_copies"] += 1
    return scopes


def value_slices(ir_text: str, slot: bool = False) -> list[Counter]:
    """For every ``tt.store`` of ``ir_text`` whose pointer is a [32, 64] tensor (the body's
    stores to ``y_ptr``; with ``slot``, every ``ttg.local_store`` of a [32, 64] tile: the
    writer's stores into its slot, and ``{"tile": 1}`` for a cp.async copy of the tile as it
    is), the multiset of operation signatures its value depends on.

    A value that depends on neither the tile, the loop variable nor an argument is a
    compile-time value, which plain Triton's constant propagation folds to one constant and
    Gluon's pipeline may leave computed (inside a partition, through a branch or a loop that
    binds a name): each such operand is written ``const : <its type>``, once per type."""
    scopes = _scopes(ir_text)
    slices = []
    for scope in scopes:
        chain = [scope["defs"]]
        if scope["parent"] is not None:
            chain.append(scopes[scope["parent"]]["defs"])
        defs: dict[str, tuple[str, str]] = {}
        for d in reversed(chain):
            defs.update(d)
        dynamic: dict[str, bool] = {}

        def is_dynamic(v: str) -> bool:
            if v not in dynamic:
                if v not in defs:
                    dynamic[v] = True  # a block or function argument: the loop variable, N, M
                else:
                    op, rest = defs[v]
                    dynamic[v] = op in _TILE or (not _is_join(op, rest)
                                                 and any(is_dynamic(u) for u in _operands(rest)))
            return dynamic[v]

        if slot:
            slices += [Counter(tile=1)] * scope["slot_copies"]
        for root in scope["slot_stores" if slot else "stores"]:
            seen, todo, sig = set(), [root], Counter()
            while todo:
                v = todo.pop()
                if v in seen:
                    continue
                seen.add(v)
                if not is_dynamic(v):
                    sig[f"const : {_result_type(*defs[v])}"] = 1
                    continue
                if v not in defs:
                    sig["arg"] += 1
                    continue
                op, rest = defs[v]
                if op in _TILE:
                    sig["tile"] += 1
                    todo.extend(_operands(rest)[1:])  # a load's mask and other, not its address
                    continue
                inner = _bool_to_float(defs, op, rest)
                if inner is not None:  # one exact conversion of a boolean, however spelt
                    sig[inner[0]] += 1
                    todo.append(inner[1])
                    continue
                if op not in _PASS_THROUGH:
                    sig[_signature(op, rest)] += 1
                todo.extend(_operands(rest))
            slices.append(sig)
    return slices


def normalized(ir_text: str) -> str:
    """``ir_text`` (a TTGIR module) after the passes of plain Triton's pipeline that Gluon's
    lacks and that fold or move computations: sparse conditional constant propagation (a branch
    yielding the same number on both sides), Triton's combine and broadcast-reordering patterns
    (an elementwise operation of a splat becomes the splat of a scalar operation, where
    `-(-p)` folds), the canonicalizer and CSE. Both sides are compared after the same passes."""
    from triton._C.libtriton import ir, nvidia, passes

    ctx = ir.context()
    ir.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "module.mlir"
        path.write_text(ir_text)
        mod = ir.parse_mlir_module(str(path), ctx)
    mod.context = ctx
    pm = ir.pass_manager(ctx)
    passes.common.add_sccp(pm)
    passes.common.add_canonicalizer(pm)
    passes.ttir.add_combine(pm)
    passes.ttir.add_reorder_broadcast(pm)
    passes.common.add_canonicalizer(pm)
    passes.common.add_cse(pm)
    pm.run(mod, "tle_diff_normalize")
    return str(mod)


def _plain_ir(tmp_path: Path, body: str, dt: str, ys: str, kbody: str = "") -> str:
    import triton
    from triton.backends.compiler import GPUTarget

    path = tmp_path / "plain_ref.py"
    path.write_text(plain_source(body, kbody))
    spec = importlib.util.spec_from_file_location(
        f"plain_ref_{abs(hash((body, dt, ys, kbody)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"x_ptr": f"*{SIG[dt]}", "y_ptr": f"*{ys}", "N": "i32", "M": "i32"}
    return triton.compile(triton.compiler.ASTSource(mod.ref, sig, {}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttgir"]


@dataclass
class Outcome:
    """How each side read a body: ``plain`` / ``tle`` the TTGIR or None where refused (``why``
    the refusal's text), and the value slices of each."""
    plain: str | None
    tle: str | None
    why_plain: str = ""
    why_tle: str = ""
    tle_crash: str = ""
    slices_plain: list = field(default_factory=list)
    slices_tle: list = field(default_factory=list)


def outcome(tmp_path: Path, body: str, dt: str, ys: str, writer: bool = False,
            kbody: str = "") -> Outcome:
    """Compile ``body`` both ways (in TLE's reader, or with ``writer`` in its writer, storing
    into the slot; ``kbody``: the kernel body's bindings of k0 and k1, handed to the reader:
    :func:`tle_source`). A TLE refusal is tle-dump's error (exit 1) or the
    lowering's TleError; any other exception from the TLE side is a crash (``tle_crash``)."""
    from tle_compiler.cli.dump import main as tle_dump
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering.compile import compile_kernel

    try:
        plain = _plain_ir(tmp_path, body, dt, ys, kbody)
        why_plain = ""
    except Exception as e:  # Triton's CompilationError and what its semantics raise
        plain, why_plain = None, f"{type(e).__name__}: {e}"
    path = tmp_path / "kernel.py"
    path.write_text(tle_source(body, dt, ys, writer, kbody))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = tle_dump(["-q", str(path)])
    res = Outcome(plain, None, why_plain=why_plain)
    if rc != 0:
        res.why_tle = f"tle-dump exit {rc}: {out.getvalue()}"
    else:
        try:
            compiled = compile_kernel((str(path), "k"), {"x_ptr": f"*{SIG[dt]}",
                                                         "y_ptr": f"*{ys}", "N": "i32",
                                                         "M": "i32"})
            res.tle = compiled.asm["ttgir"]
        except TleError as e:
            res.why_tle = f"lowering: {e}"
        except Exception as e:  # noqa: BLE001 - reported as a crash, not a refusal
            res.tle_crash = f"{type(e).__name__}: {e}"
    if res.plain is not None:
        res.slices_plain = value_slices(normalized(res.plain))
    if res.tle is not None:
        res.slices_tle = value_slices(normalized(res.tle), slot=writer)
    return res

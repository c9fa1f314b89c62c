"""A twentieth adversarial round: kernels built to make tle-dump say `verified` where it is not
true (a race, a hang, a kernel `--gluon` then refuses) or leave a kernel Python makes out of the
file's verdict. Each case is a small kernel written to a file and read by tle-dump's main(); the
exit code and the verdict (the check of a rejection) are pinned, and verified ones are lowered
to their events (tests/adversarial_oracles.py).

Wrong before the fixes that came with this file:
- how a decorator is read. Python evaluates a decorator, and the names of its options, where the
  def stands; the frontend read the names' last module-level bindings. `myjit = tle.jit` (or
  `myjit = tle.jit(num_warps=4)`) then `@myjit` over a faulty kernel then `myjit = print`: the
  kernel, which Python makes, was left out of the file's verdict (exit 0 beside a correct one).
  `W = 4; @tle.jit(num_warps=W)` then `W = 8`: read with 8 warps, while Python's kernel has 4.
  Now a decorator is read with the bindings above its def (frontend/scope.ModuleScope.at,
  frontend/kernel.jit_decorator, jit_options).
- `myjit = tle.jit(num_warps=8)`, `@myjit`: refused (bad-jit) the round before; now read with the
  call's options, one reading for the verdict, the lowering and a launch (kernel.jit_call).
- kernels Python makes that tle-dump left out of the file's verdict (exit 0 beside a correct
  kernel, the faulty one unread): a def that calls warp_specialize under
  `@functools.partial(tle.jit, ...)` (through a name), under a function of the file that calls
  tle.jit, under a conditional expression (`@(tle.jit if C else print)`), and `bad =
  myjit(bad_fn)` with `myjit` bound to a call of tle.jit. Now refused (bad-jit) at the decorator
  or the call (kernel.foreign_decorated_kernel, jit_call_kernel). A builtin decorator (`@print`,
  which makes no kernel) and `@triton.jit` stay no kernel.
- `@tle.jit(**OPTS)` was read with 4 warps whatever OPTS held (Python's kernel had OPTS's): now
  refused (bad-jit); `@tle.jit(num_warps=None)`, Python's default, was refused: now 4 warps.
- a reshaped tile stored into a slot of another shape or dtype (`tl.reshape(tl.arange(0, 64),
  (8, 8))` into a [64] slot) was verified and Gluon refused the compile (the reshape lowered
  since tests/test_adversarial_verdicts_18.py): the slot-store check now follows a reshape's
  shape and dtype (frontend/protocol.py block_dims, tile_dtype).


Found, each verified by tle-dump and refused by `--gluon`: `tl` calls the lowering does not
translate (`tl.sort`, `tl.flip`, `tl.cumsum`, `tl.clamp`, `tl.sigmoid`, `tl.argmax`,
`tl.permute`: refused where the kernel is read since, from the lowering's own table,
tle_compiler/language/unlowered.py); `tl.trans` of a register tensor, and of a slot's tile that
no tl.dot reads (the lowering read tl.trans only as a tl.dot operand; stored directly it lowered
to `gl.store(ptr, )`): now lowered as Triton runs it, a register load where it stands and a
`gl.permute` (lowering/more_ops.py transpose; a name bound to tl.trans of a tile stays a view
that wgmma reads in place only while a tl.dot is its only reader); a `tl.dot` whose B operand is
not a shared-memory tile as loaded (a register tensor, an expression, cast or reshape of a slot
tile, tl.trans of tl.trans, a masked load, a name assigned twice): now computed in registers
where it stands, stored into a shared-memory buffer of its own with a proxy fence and read by a
synchronous wgmma (translate.py _staged_b_operand); pointer arithmetic on a slot's pointer
(`local_ptr(slot.f) + 0`, refused by the lowering, "operator + on a lptr"): `+ 0` (and `0 +`,
`- 0`) is now lowered as the pointer itself, and any other arithmetic on a shared-memory
pointer, which the lowering cannot address (a descriptor of the whole buffer), is refused where
the kernel is read and by the lowering in the words of one rule
(frontend/partition_rules.py slot_pointer_arithmetic_refusal); before, an offset pointer was
read as one reaching part of the field, and a whole store after it made the kernel verified.

Checked and found right (pinned as twins): pipe indices computed through helpers and keyword
forwarding, aliased handles, trip counts that differ only for some values (`(N // 2) * 2`,
`max(N, 1)`, `N // 2` against `(N + 1) // 2`; `tl.cdiv(N, 2)` against `(N + 1) // 2` is equal),
negative steps, commits and waits under nested or equal conditions, lagged releases, double waits
and releases, readers holding more slots than the capacity, closed flags through names, a
partition defined twice or rebound through an alias, two writers or a reader in two partitions,
and Python syntax Triton refuses (`continue`, walrus, lambda, comprehension, star-args, `while`
around events, `range` / `tle` rebound).
"""

from __future__ import annotations

import importlib
import textwrap

import pytest

from .adversarial_oracles import lowers_to_its_events
from .adversarial_support import run_dump, verdict, write_kernel
from .test_adversarial_python_semantics import CONFIG, reader, ring, writer
from .test_adversarial_verdicts_19 import HEAD, PARTS, kernel

MODES = ((), ("--gluon",), ("--print-ir",))
PUT = ("slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), "
       "tl.load(x_ptr + tl.arange(0, 64)))\nw.commit(p)\n")


def every_mode(capsys, path, code: int, *said: str, kernel_name: str = "k") -> None:
    """tle-dump, --gluon and --print-ir on ``path`` all exit ``code`` saying ``said``; a refusal
    never calls ``kernel_name`` verified."""
    for mode in MODES:
        got, out, err = run_dump(capsys, "-q", *mode, str(path))
        assert got == code, (mode, out, err)
        for what in said:
            assert what in err, (mode, err)
        if code:
            assert f"{kernel_name}: verified for" not in err, (mode, err)


def consume_loop(body: str) -> str:
    """The reader's body (after ``r = kv.reader()``): ``body`` dedented, indented once."""
    return textwrap.indent(textwrap.dedent(body), "    ")


# ---------------------------------------------------------------------- which defs are kernels

P8 = PARTS.replace('"num_warps": 4', '"num_warps": 8')


def _is_python_kernel(tmp_path, monkeypatch, text: str, module: str, name: str) -> bool:
    """Whether Python, importing ``text``, binds ``name`` to a TleKernel (what a launch runs)."""
    from tle_compiler.jit import TleKernel

    (tmp_path / f"{module}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    return isinstance(getattr(importlib.import_module(module), name), TleKernel)


LEFT_OUT = {
    # a decorator name rebound after the def: Python made the kernel with the earlier binding
    "myjit = tle.jit, rebound to print after the def": (
        "myjit = tle.jit\n", "@myjit", "\nmyjit = print\n", "[wait-never-committed]"),
    "myjit = tle.jit(num_warps=4), rebound after the def": (
        "myjit = tle.jit(num_warps=4)\n", "@myjit", "\nmyjit = print\n",
        "[wait-never-committed]"),
    # decorators that make a kernel tle-dump does not read: refused at the decorator
    "functools.partial(tle.jit, num_warps=4)": (
        "import functools\nmyjit = functools.partial(tle.jit, num_warps=4)\n", "@myjit", "",
        "[bad-jit]"),
    "a function of the file calling tle.jit": (
        "def myjit(fn):\n    return tle.jit(fn)\n\n\n", "@myjit", "", "[bad-jit]"),
    "a conditional expression": ("", "@(tle.jit if STAGES == 2 else print)", "", "[bad-jit]"),
}


@pytest.mark.parametrize("name", list(LEFT_OUT))
def test_a_faulty_kernel_python_makes_fails_the_file(tmp_path, capsys, monkeypatch, name):
    """Before: exit 0 with `good`'s verdict only; `bad` (its reader waits N + 1 tiles of N),
    which Python makes a kernel, was left out. Now it is read and rejected, or refused at its
    decorator, in every mode."""
    before, deco, after, check = LEFT_OUT[name]
    text = HEAD + before + kernel("good") + kernel("bad", deco, " + 1") + after + PARTS
    module = "lo20_" + "".join(c if c.isalnum() else "_" for c in name)[:40]
    assert _is_python_kernel(tmp_path, monkeypatch, text, module, "bad")
    path = write_kernel(tmp_path, text)
    every_mode(capsys, path, 1, check, kernel_name="bad")


def test_a_kernel_made_by_a_call_through_a_bound_decorator(tmp_path, capsys, monkeypatch):
    """`myjit = tle.jit(num_warps=4)`, then `bad = myjit(bad_fn)`: Python's kernel. Before: left
    out (exit 0 beside `good`); now refused at the call (bad-jit)."""
    text = (HEAD + "myjit = tle.jit(num_warps=4)\n" + kernel("good")
            + kernel("bad_fn", "", " + 1").replace("\n\ndef", "def", 1)
            + "\n\nbad = myjit(bad_fn)\n" + PARTS)
    assert _is_python_kernel(tmp_path, monkeypatch, text, "call20", "bad")
    path = write_kernel(tmp_path, text)
    line = text.splitlines().index("bad = myjit(bad_fn)") + 1
    every_mode(capsys, path, 1, "[bad-jit]", f"kernel.py:{line}:", "makes 'bad_fn' a kernel",
               kernel_name="bad")


def _warps(capsys, path, kernel_name: str = "k") -> int:
    code, out, err = run_dump(capsys, "--gluon", "--kernel", kernel_name, str(path))
    assert code == 0, err
    (line,) = [ln for ln in out.splitlines() if "(default partition)" in ln]
    return int(line.split(":")[1].split()[0])


def test_decorator_options_are_read_where_the_def_stands(tmp_path, capsys, monkeypatch):
    """`W = 4; @tle.jit(num_warps=W)`, then `W = 8`: Python's kernel has 4 warps. Before: read
    (verified, lowered) with 8. Now with 4, as Python and a launch have it."""
    from tle_compiler.lowering import compile_kernel

    text = HEAD + "W = 4\n" + kernel("k", "@tle.jit(num_warps=W)") + "\nW = 8\n" + PARTS
    (tmp_path / "w20.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.import_module("w20").k.num_warps == 4
    path = write_kernel(tmp_path, text)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 0 and "k: verified" in err, err
    assert _warps(capsys, path) == 4
    pytest.importorskip("triton.experimental.gluon")
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"}
    compiled = compile_kernel((str(path), "k"), sig)
    assert "# partition 'prod': 4 warps (default partition)" in compiled.tle_generated.source


def test_a_name_bound_to_a_jit_call_gives_each_kernel_its_options(tmp_path, capsys):
    """`myjit = tle.jit(num_warps=8)` over `a`, then `myjit = tle.jit(num_warps=4)` over `b`:
    each kernel has the options of the call its decorator named at its def."""
    text = (HEAD + "myjit = tle.jit(num_warps=8)\n" + kernel("a", "@myjit")
            + "\nmyjit = tle.jit(num_warps=4)\n" + kernel("b", "@myjit")
            + PARTS.replace('    "num_warps": 4,\n', ""))
    path = write_kernel(tmp_path, text)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 0 and "a: verified" in err and "b: verified" in err, err
    assert _warps(capsys, path, "a") == 8 and _warps(capsys, path, "b") == 4
    # DEFAULT_CONFIG's num_warps must agree with the call's, as with @tle.jit(num_warps=8)
    bad = write_kernel(tmp_path, HEAD + "myjit = tle.jit(num_warps=8)\n" + kernel("k", "@myjit")
                       + PARTS, "cfg.py")
    code, _, err = run_dump(capsys, "-q", str(bad))
    assert code == 2 and "kernel 'k' has num_warps=8" in err, err
    ok = write_kernel(tmp_path, HEAD + "myjit = tle.jit(num_warps=8)\n" + kernel("k", "@myjit")
                      + P8, "cfg8.py")
    assert run_dump(capsys, "-q", str(ok))[0] == 0


def test_jit_options_python_reads_otherwise(tmp_path, capsys):
    """`@tle.jit(num_warps=None)` is Python's default (4 warps; it was refused), and
    `@tle.jit(**OPTS)` holds options the reading does not see (it was read with 4 warps while
    Python's kernel had OPTS's 8): refused at the argument."""
    path = write_kernel(tmp_path, HEAD + kernel("k", "@tle.jit(num_warps=None)") + PARTS)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code == 0 and "k: verified" in err, err
    assert _warps(capsys, path) == 4
    path = write_kernel(tmp_path, HEAD + "OPTS = {'num_warps': 8}\n"
                        + kernel("k", "@tle.jit(**OPTS)") + P8, "kw.py")
    every_mode(capsys, path, 1, "[bad-jit]", "a `**` argument's options are not")


def test_decorators_that_make_no_kernel(tmp_path, capsys, monkeypatch):
    """Twins: `@print` over a def calling warp_specialize makes no kernel (Python binds None),
    so the file's verdict is `good`'s; `myjit = tle.jit` then `myjit = print` above the def: no
    kernel either."""
    text = HEAD + kernel("good") + kernel("bad", "@print", " + 1") + PARTS
    assert not _is_python_kernel(tmp_path, monkeypatch, text, "print20", "bad")
    code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, text)))
    assert code == 0 and "good: verified" in err and "bad" not in err, err
    text = HEAD + kernel("good") + "\nmyjit = tle.jit\nmyjit = print\n" + kernel(
        "bad", "@myjit", " + 1") + PARTS
    code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, text, "p2.py")))
    assert code == 0 and "good: verified" in err and "bad" not in err, err


@pytest.mark.parametrize("decos", ["@functools.lru_cache\n@tle.jit",
                                   "@tle.jit\n@functools.lru_cache", "@myjit\n@tle.jit"])
def test_stacked_decorators_are_refused(tmp_path, capsys, decos):
    """Twins: a decorator beside @tle.jit (however spelt) stays refused at it (bad-jit): Python
    binds the name to what the decorators return."""
    text = ("import functools\n" + HEAD + "myjit = tle.jit(num_warps=4)\n" + kernel("good")
            + kernel("bad", decos, " + 1") + PARTS)
    path = write_kernel(tmp_path, text)
    every_mode(capsys, path, 1, "[bad-jit]", "kernel 'bad' has the decorator", kernel_name="bad")


# ------------------------------------------------------------------ protocols: the true answers

REJECTED = ("rejected",)
NEVER = REJECTED + ("[wait-never-committed]",)
REFUSED = REJECTED

PROTOCOLS = {
    # indices through helpers and keyword forwarding
    "an index through a helper, shifted in the writer": (
        ring(writer(idx="nxt(p)"), extra="\n\ndef nxt(p):\n    return p + 1\n"), NEVER),
    "an index through a helper that computes p": (
        ring(writer(idx="same(p)"), extra="\n\ndef same(p):\n    q = p * 2\n    return q - p\n"),
        "verified"),
    "keyword forwarding of the handle and index": (
        ring(writer(body="put(w=w, x_ptr=x_ptr, i=p)\n"),
             extra="\n\ndef put(w, x_ptr, i):\n" + textwrap.indent(PUT.replace("(p)", "(i)"),
                                                                    "    ")), "verified"),
    "keyword forwarding in another order than the parameters": (
        ring(writer(body="put(i=p, x_ptr=x_ptr, w=w, j=p + 1)\n"),
             extra="\n\ndef put(w, x_ptr, j, i):\n" + textwrap.indent(PUT.replace("(p)", "(j)"),
                                                                       "    ")), NEVER),
    # aliased handles
    "a writer handle aliased for the commit": (
        ring(writer(body="w2 = w\n" + PUT.replace("w.commit", "w2.commit"))), "verified"),
    "a writer handle unpacked twice from a tuple": (
        ring(writer(body="a, b = w, w\n" + PUT.replace("w.acquire", "a.acquire")
                    .replace("w.commit", "b.commit"))), "verified"),
    "the reader also writing the pipe": (
        ring(rbody="    w = kv.writer()\n" + reader().replace(
            "        r.release(p)\n",
            "        r.release(p)\n        s2 = w.acquire(p + N)\n        w.commit(p + N)\n")),
        REJECTED + ("[two-writers]",)),
    "the writer also reading the pipe": (
        ring(writer(body=PUT + "r = kv.reader()\nres = r.wait(p)\nr.release(p)\n")),
        REJECTED + ("[reader-in-two-partitions]",)),
    # trip counts equal only for some values
    "(N // 2) * 2 commits for N waits": (ring(writer(loop="for p in range((N // 2) * 2):")),
                                         NEVER + ("when N=1",)),
    "max(N, 1) waits for N commits": (ring(rbody=reader(loop="for p in range(max(N, 1)):")),
                                      NEVER + ("when N=0",)),
    "N // 2 commits for (N + 1) // 2 waits": (
        ring(writer(loop="for p in range(N // 2):"),
             rbody=reader(loop="for p in range((N + 1) // 2):")), NEVER + ("when N=1",)),
    "tl.cdiv(N, 2) commits for (N + 1) // 2 waits (equal for N >= 0)": (
        ring(writer(loop="for p in range(tl.cdiv(N, 2)):"),
             rbody=reader(loop="for p in range((N + 1) // 2):")), "verified, lowered"),
    "a negative step, the index counting up": (
        ring(writer(loop="for q in range(N, 0, -1):", idx="N - q")),
        ("bounded", "only for N in [0, 64]")),
    "a negative step, the index one ahead": (
        ring(writer(loop="for q in range(N, 0, -1):", idx="N - q + 1")), NEVER),
    "tl.static_range(C) against range(C - 1)": (
        ring(writer(loop="for p in range(C - 1):"),
             rbody=reader(loop="for p in tl.static_range(C):")), NEVER),
    # commits and waits under conditions
    "a commit on every path of nested ifs": (
        ring(writer(body=PUT.replace("w.commit(p)\n", "") + "if p % 2 == 0:\n    if p % 3 == 0:\n"
                    "        w.commit(p)\n    else:\n        w.commit(p)\nelse:\n"
                    "    w.commit(p)\n")), "verified"),
    "a nested path without its commit": (
        ring(writer(body=PUT.replace("w.commit(p)\n", "") + "if p % 2 == 0:\n    if p % 3 == 0:\n"
                    "        w.commit(p)\nelse:\n    w.commit(p)\n")),
        REJECTED + ("[uncommitted-acquire]",)),
    "an extra tile under N > 2 and N < 10, waited under not (N <= 2 or N >= 10)": (
        ring(writer(post="if N > 2 and N < 10:\n" + textwrap.indent(
            PUT.replace("(p)", "(N)"), "    ")),
             rbody=reader() + "    if not (N <= 2 or N >= 10):\n        res = r.wait(N)\n"
                              "        r.release(N)\n"), "verified"),
    "an extra tile under N > 2, waited under N >= 2": (
        ring(writer(post="if N > 2:\n" + textwrap.indent(PUT.replace("(p)", "(N)"), "    ")),
             rbody=reader() + "    if N >= 2:\n        res = r.wait(N)\n        r.release(N)\n"),
        NEVER + ("when N=2",)),
    # what the reader holds
    "a lagged release, the slot read after it": (
        ring(rbody=consume_loop("""\
            for p in range(N):
                res = r.wait(p)
                if p > 0:
                    r.release(p - 1)
                t = tl.load(tle.gpu.local_ptr(res.slot.tile))
                tl.store(y_ptr + tl.arange(0, 64), t)
            if N > 0:
                r.release(N - 1)
            """)), "verified"),
    "a second wait of the held index": (
        ring(rbody=reader().replace("        res = r.wait(p)\n",
                                    "        res0 = r.wait(p)\n        res = r.wait(p)\n")),
        REJECTED + ("[wait-on-held-stage]",)),
    "a second release": (
        ring(rbody=reader().replace("        r.release(p)\n",
                                    "        r.release(p)\n        r.release(p)\n")),
        REJECTED + ("[release-without-wait]",)),
    "three slots held of a ring of two": (
        ring(rbody=consume_loop("""\
            for q in range(N // 3):
                a = r.wait(3 * q)
                b = r.wait(3 * q + 1)
                c = r.wait(3 * q + 2)
                r.release(3 * q)
                r.release(3 * q + 1)
                r.release(3 * q + 2)
            """), warg="(N // 3) * 3"), REJECTED + ("[wait-on-held-stage]",)),
    "a slot read after its release, through an earlier result": (
        ring(rbody=consume_loop("""\
            for q in range(N // 2):
                a = r.wait(2 * q)
                r.release(2 * q)
                b = r.wait(2 * q + 1)
                t = tl.load(tle.gpu.local_ptr(a.slot.tile))
                r.release(2 * q + 1)
                tl.store(y_ptr + tl.arange(0, 64), t)
            """), warg="(N // 2) * 2"), REJECTED + ("[access-outside-window]",)),
    # closed flags
    "a closed flag through names, compared with False": (
        ring(writer(post="w.close(N)\n"), rbody=consume_loop("""\
            for p in range(N + 1):
                res = r.wait(p)
                done = res.is_closed
                if done == False:
                    t = tl.load(tle.gpu.local_ptr(res.slot.tile))
                    tl.store(y_ptr + tl.arange(0, 64), t)
                r.release(p)
            """)), "verified"),
    "the closed flag of an earlier wait": (
        ring(writer(post="w.close(N)\n"), rbody=consume_loop("""\
            prev = r.wait(0)
            r.release(0)
            for p in range(1, N + 1):
                res = r.wait(p)
                if not prev.is_closed:
                    t = tl.load(tle.gpu.local_ptr(res.slot.tile))
                    tl.store(y_ptr + tl.arange(0, 64), t)
                r.release(p)
            """)), REJECTED + ("[access-outside-window]",)),
    # which function a partition is
    "a partition defined twice, the later one faulty": (
        ring() + "\n\ndef consume(kv, y_ptr, N, C: tl.constexpr):\n    r = kv.reader()\n"
        + reader(loop="for p in range(N + 1):"), NEVER),
    "a partition named through an alias rebound to a faulty one": (
        ring().replace("(consume, (kv", "(cons2, (kv") + "\n\ncons2 = consume\n\n\n"
        "def consume_bad(kv, y_ptr, N, C: tl.constexpr):\n    r = kv.reader()\n"
        + reader(loop="for p in range(N + 1):") + "\n\ncons2 = consume_bad\n", NEVER),
    # what Triton refuses: refused at the line
    "continue before the release": (
        ring(rbody=reader().replace("        r.release(p)\n",
                                    "        if p == 1:\n            continue\n"
                                    "        r.release(p)\n")),
        REFUSED + ("[unsupported-control-flow]", "`continue`")),
    "a walrus in the index": (ring(writer(body=PUT.replace("acquire(p)", "acquire(i := p)")
                                          .replace("commit(p)", "commit(i)"))),
                              REFUSED + ("`(i := p)` is not supported",)),
    "a lambda for the index": (
        ring(writer(body="f = lambda q: q + 1\n" + PUT.replace("(p)", "(f(p))"))),
        REFUSED + ("`lambda q: q + 1` is not supported",)),
    "a comprehension for the index": (
        ring(writer(body="ids = [p for _ in range(1)]\n" + PUT.replace("(p)", "(ids[0])"))),
        REFUSED + ("is not supported in a kernel",)),
    "star-args to the verbs": (ring(writer(body=PUT.replace("(p)", "(*(p,))"))),
                               REFUSED + ("`*(p,)` is not supported",)),
    "waits in a while loop": (
        ring(rbody=consume_loop("""\
            p = 0
            while p < N:
                res = r.wait(p)
                t = tl.load(tle.gpu.local_ptr(res.slot.tile))
                r.release(p)
                tl.store(y_ptr + tl.arange(0, 64), t)
                p = p + 1
            """)), REFUSED + ("[unsupported-control-flow]", "`while` loop")),
    "range rebound at module level": (
        ring(prelude="def range(n):\n    return tl.static_range(n + 1)\n\n\n"),
        REFUSED + ("[non-affine-loop]",)),
    "range rebound in the partition": (
        ring(rbody="    range = tl.static_range\n" + reader()), REFUSED + ("`range` would hold",)),
    "tle rebound in the partition": (ring(writer(pre="tle = tl\n")),
                                     REFUSED + ("`tle` would hold",)),
    "partitions passed through a variable": (
        ring().replace("    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), "
                       "(consume, (kv, y_ptr, N, C))],\n                            [4], [232])",
                       "    parts = [(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N + 1, "
                       "C))]\n    tle.gpu.warp_specialize(parts, [4], [232])"),
        REFUSED + ("[bad-warp-specialize]",)),
    "a kernel defined under if __name__": (
        ring(extra="\n\nif __name__ == '__main__':\n    @tle.jit\n    def k2(x_ptr, y_ptr, N):\n"
                   "        kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))\n"
                   "        tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, 3)), "
                   "(consume, (kv, y_ptr, N + 1, 3))], [4], [232])\n"),
        REFUSED + ("[bad-jit]", "inside a module-level `if`")),
}


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_protocols(tmp_path, capsys, name):
    """The verdict is the true answer: a hang (a wait never committed, a held stage waited
    again), a race (a read after the release) or a fault rejected at its line; what Triton
    refuses refused; what is safe verified and lowered to exactly its events."""
    text, expect = PROTOCOLS[name]
    path = verdict(tmp_path, capsys, text + CONFIG, expect.split(",")[0] if isinstance(
        expect, str) else expect)
    if expect == "verified, lowered":
        # (its param is tl.cdiv(N, 2), which the events oracle cannot map back to N)
        every_mode(capsys, path, 0)
    elif expect == "verified":
        every_mode(capsys, path, 0)
        lowers_to_its_events(path)
    elif expect[0] == "rejected":
        every_mode(capsys, path, 1, *expect[1:2])


# ------------------------------------------------------------------------- reshape, beside a dot

def test_a_reshaped_register_tile_as_a_dot_operand(tmp_path, capsys):
    """A reshape of a register tile feeding a tl.dot's A operand (B a slot tile): verified,
    lowered (gl.reshape, converted to the solver's layout, then to the wgmma's operand layout)
    and compiled for sm_90a."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    text = ring(writer(body="slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), "
                            "tl.load(x_ptr + tl.arange(0, 64)[:, None] * 64 + "
                            "tl.arange(0, 64)[None, :]).to(tl.bfloat16))\nw.commit(p)\n"),
                rbody=consume_loop("""\
                    acc = tl.zeros([64, 64], tl.float32)
                    for p in range(N):
                        res = r.wait(p)
                        a = tl.reshape(tl.load(y_ptr + tl.arange(0, 4096)), (64, 64))
                        acc = tl.dot(a.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.tile)),
                                     acc)
                        r.release(p)
                    tl.store(y_ptr + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :],
                             acc)
                    """)).replace("alloc([2, 64], tl.float32)", "alloc([2, 64, 64], tl.bfloat16)")
    path = verdict(tmp_path, capsys, text + CONFIG, "verified")
    every_mode(capsys, path, 0)
    lowers_to_its_events(path)
    compiled = compile_kernel((str(path), "k"), {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                              {"C": 3})
    assert "gl.reshape(" in compiled.tle_generated.source


X8 = "tl.load(x_ptr + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :])"
RESHAPED = {
    # lowered and compiled: a reshape of pointers, of an arange, of a mask, of i64 values
    "a load through reshaped pointers": (
        "tl.load(tl.reshape(x_ptr + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :], "
        "(64,)))", "verified"),
    "an arange reshaped there and back": (
        "tl.reshape(tl.reshape(tl.arange(0, 64), (8, 8)), (64,)).to(tl.float32)", "verified"),
    "a reshaped mask": (f"tl.where(tl.reshape({X8} > 0, (64,)), 1.0, 0.0)", "verified"),
    "reshaped i64 values": ("tl.reshape(tl.arange(0, 64).to(tl.int64) * N, (64,))"
                            ".to(tl.float32)", "verified"),
    # the store of a reshaped tile into a slot of another shape or dtype: refused at the store
    # (it was verified, and Gluon refused the compile)
    "a reshape to the slot's shape's transpose": (
        "tl.reshape(tl.arange(0, 64), (8, 8))", ("rejected", "[bad-store]", "shape [8, 8]")),
    "a reshape of bf16 values into an fp32 slot": (
        f"tl.reshape({X8}.to(tl.bfloat16), (64,))", ("rejected", "[bad-store]", "of bf16")),
}


@pytest.mark.parametrize("name", list(RESHAPED))
def test_reshaped_tiles_stored_into_a_slot(tmp_path, capsys, name):
    """A reshape's shape and dtype are followed into the slot-store check (block_dims,
    tile_dtype), as a cast's are: the lowered shared-memory store takes the slot's shape and
    dtype only. The forms that match are verified, lowered and compiled for sm_90a."""
    value, expect = RESHAPED[name]
    text = ring(writer(body=f"slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), "
                            f"{value})\nw.commit(p)\n")) + CONFIG
    path = verdict(tmp_path, capsys, text, expect)
    if expect != "verified":
        every_mode(capsys, path, 1, *expect[1:])
        return
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    every_mode(capsys, path, 0)
    compiled = compile_kernel((str(path), "k"), {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                              {"C": 3})
    assert "gl.reshape(" in compiled.tle_generated.source


# ------------------------------------------------------- found by this round, fixed after it

X = "tl.load(x_ptr + tl.arange(0, 64))"
X2 = "tl.load(x_ptr + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :])"
UNLOWERED = {
    "tl.sort": f"tl.sort({X})",
    "tl.flip": f"tl.flip({X}, 0)",
    "tl.cumsum": f"tl.cumsum({X}, 0)",
    "tl.clamp": f"tl.clamp({X}, 0.0, 1.0)",
    "tl.sigmoid": f"tl.sigmoid({X})",
    "tl.argmax": f"{X} + tl.argmax({X}, 0)",
    "tl.trans of a register tile": f"tl.reshape(tl.trans({X2}), (64,))",
}


#: of UNLOWERED, the calls of the lowering's table (tle_compiler/language/unlowered.py)
TABLED = [n for n in UNLOWERED if n != "tl.trans of a register tile"]
#: the kernels' argument types (compile_kernel)
SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}


@pytest.mark.parametrize("name", TABLED)
def test_a_tl_call_the_lowering_refuses_is_not_verified(tmp_path, capsys, name):
    """Fixed after this round: a call of the lowering's table is refused where the kernel is read
    (unlowered-call, with the lowering's words), so it is never verified and then refused by
    --gluon."""
    text = ring(writer(body=f"slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), "
                            f"{UNLOWERED[name]})\nw.commit(p)\n")) + CONFIG
    path = write_kernel(tmp_path, text)
    got, _, err = run_dump(capsys, "-q", str(path))
    assert got == 1 and "verified" not in err and "unlowered-call" in err, err


TRANSPOSED = {
    "tl.trans of a register tile": UNLOWERED["tl.trans of a register tile"],
    "tl.trans with the axes one by one": f"tl.reshape(tl.trans({X2}, 1, 0), (64,))",
    "tl.trans with the axes as a tuple": f"tl.reshape(tl.trans({X2}, (1, 0)), (64,))",
    "tl.trans of a 3-D tile, axes given": "tl.reshape(tl.trans(tl.reshape(" + X + ", (2, 4, 8)), "
                                          "2, 0, 1), (64,))",
    "tl.trans of a 3-D tile, the last two swapped": "tl.reshape(tl.trans(tl.reshape(" + X
                                                    + ", (2, 4, 8))), (64,))",
    # tl.permute (tl.trans without the default swap) was refused from the lowering's table
    # until lowering adversarial round 13 lowered it as tl.trans with dims
    "tl.permute": f"tl.reshape(tl.permute({X2}, (1, 0)), (64,))",
    "tl.permute of a 3-D tile, axes one by one": "tl.reshape(tl.permute(tl.reshape(" + X
                                                 + ", (2, 4, 8)), 2, 0, 1), (64,))",
}


@pytest.mark.parametrize("name", list(TRANSPOSED))
def test_a_trans_of_registers_is_verified_and_lowered(tmp_path, capsys, name):
    """Fixed after this round: tl.trans of a register tensor was verified and refused by --gluon
    (the lowering read tl.trans only of a shared-memory tile fed to tl.dot). Now it is lowered as
    Triton runs it, a permute in registers (`gl.permute`, its layout converted to the solver's:
    lowering/more_ops.py transpose), and the kernel compiles for sm_90a."""
    text = ring(writer(body=f"slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), "
                            f"{TRANSPOSED[name]})\nw.commit(p)\n")) + CONFIG
    path = write_kernel(tmp_path, text)
    every_mode(capsys, path, 0)
    lowers_to_its_events(path)
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    compiled = compile_kernel((str(path), "k"), SIG, {"C": 3})
    assert "gl.permute(" in compiled.tle_generated.source


#: a reader of [8, 8] tiles whose tl.trans of the slot's tile is no tl.dot operand (each was
#: verified; the first lowered to `gl.store(ptr, )`, the others were refused by --gluon)
STORE8 = "tl.store(y_ptr + tl.arange(0, 8)[:, None] * 8 + tl.arange(0, 8)[None, :], {})\n"
TILE8 = "tl.load(tle.gpu.local_ptr(res.slot.tile))"
SLOT_TRANSPOSED = {
    "stored directly": f"res = r.wait(p)\n{STORE8.format(f'tl.trans({TILE8})')}r.release(p)\n",
    "through a name": f"res = r.wait(p)\nt = tl.trans({TILE8})\n{STORE8.format('t')}r.release(p)\n",
    "through a name read after the release": (f"res = r.wait(p)\nt = tl.trans({TILE8})\n"
                                              f"r.release(p)\n{STORE8.format('t')}"),
    "of a name read after the release": (f"res = r.wait(p)\nt = {TILE8}\nr.release(p)\n"
                                         f"{STORE8.format('tl.trans(t)')}"),
}


@pytest.mark.parametrize("name", list(SLOT_TRANSPOSED))
def test_a_trans_of_a_slot_tile_outside_a_dot_is_loaded_where_it_stands(tmp_path, capsys, name):
    """tl.trans of a slot's tile that no tl.dot reads is a register load where it is written,
    inside the slot's window as the verifier reads it, then a permute: a deferred view (which
    only a tl.dot reads in place) would load it where the name is used, past the release."""
    w = writer(body="slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), " + X2
               + ")\nw.commit(p)\n")
    rbody = "    for p in range(N):\n" + textwrap.indent(SLOT_TRANSPOSED[name], "        ")
    text = (ring(w, rbody=rbody) + CONFIG).replace("alloc([2, 64], tl.float32)",
                                                   "alloc([2, 8, 8], tl.float32)")
    path = write_kernel(tmp_path, text)
    every_mode(capsys, path, 0)
    lowers_to_its_events(path)
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    src = compile_kernel((str(path), "k"), SIG, {"C": 3}).tle_generated.source
    consume = src.split("def consume(", 1)[1].split("@gluon.jit", 1)[0]
    assert "gl.permute(" in consume
    assert consume.index("kv_tile.index(") < consume.index("mbarrier.arrive(kv_empty")


T = "tl.load(tle.gpu.local_ptr(res.slot.tile))"


def _dot_reader(pre: str, b: str) -> str:
    """A ring of [64, 64] bf16 tiles whose reader runs `acc = tl.dot(a, B, acc)` with ``b`` as B,
    after the lines ``pre`` (``res`` the wait's result)."""
    body = (f"acc = tl.zeros([64, 64], tl.float32)\na = tl.zeros([64, 64], tl.bfloat16)\n"
            f"for p in range(N):\n    res = r.wait(p)\n{textwrap.indent(pre, '    ')}"
            f"    acc = tl.dot(a, {b}, acc)\n    r.release(p)\n"
            f"tl.store(y_ptr + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], acc)\n")
    w = writer(body="slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + "
                    "tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]).to(tl.bfloat16))"
                    "\nw.commit(p)\n")
    return ring(w, rbody=textwrap.indent(body, "    ")).replace(
        "alloc([2, 64], tl.float32)", "alloc([2, 64, 64], tl.bfloat16)") + CONFIG


DOT_B_LOWERED = {
    "the slot's tile": ("", T),
    "a name assigned once to it": (f"t = {T}\n", "t"),
    "an alias of that name": (f"t = {T}\nu = t\n", "u"),
    "tl.trans of it": ("", f"tl.trans({T})"),
    "a name assigned once to tl.trans of it": (f"t = tl.trans({T})\n", "t"),
    "a load through a name bound to the pointer": ("q = tle.gpu.local_ptr(res.slot.tile)\n",
                                                   "tl.load(q)"),
}
DOT_B_STAGED = {
    "a register tensor": ("", "a"),
    "arithmetic on the tile": (f"t = {T}\n", "t * 2"),
    "a cast of the tile": (f"t = {T}\n", "t.to(tl.bfloat16)"),
    "a reshape of the tile": (f"t = {T}\n", "tl.reshape(t, (64, 64))"),
    "tl.trans of tl.trans of the tile": ("", f"tl.trans(tl.trans({T}))"),
    "tl.trans of a register tensor": ("", "tl.trans(a)"),
    "a masked load": ("", "tl.load(tle.gpu.local_ptr(res.slot.tile), mask=tl.arange(0, 64)"
                          "[:, None] < 64, other=0.0)"),
    "a name assigned twice": (f"t = {T}\nt = {T}\n", "t"),
}


@pytest.mark.parametrize("name", list(DOT_B_STAGED))
def test_a_b_operand_in_registers_is_verified_and_lowered(tmp_path, capsys, name):
    """Fixed after this round: a tl.dot whose B operand is not a shared-memory tile as loaded
    was verified and refused by --gluon ("B operand must be ..."). Now the lowering computes it
    in registers where it stands (where the verifier reads it), stores it into a shared-memory
    buffer of its own, fences it for the async proxy and runs that wgmma synchronously
    (translate.py _staged_b_operand); the kernel lowers to its events and compiles for sm_90a."""
    path = write_kernel(tmp_path, _dot_reader(*DOT_B_STAGED[name]))
    every_mode(capsys, path, 0)
    lowers_to_its_events(path)
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    src = compile_kernel((str(path), "k"), SIG, {"C": 3}).tle_generated.source
    assert "gl.allocate_shared_memory(gl.bfloat16, [64, 64], gl.NVMMASharedLayout(" in src
    assert "is_async=False)" in src and "fence_async_shared()  # generic-proxy stores" in src


#: arithmetic on a slot's pointer in the writer's store: `+ 0` is the pointer itself (verified
#: and lowered as it); any other is refused where the kernel is read and by the lowering, in
#: one rule's words (frontend/partition_rules.py slot_pointer_arithmetic_refusal)
SLOT_POINTER = {
    "local_ptr(slot.tile) + 0": ("tle.gpu.local_ptr(slot.tile) + 0", 0),
    "0 + local_ptr(slot.tile)": ("0 + tle.gpu.local_ptr(slot.tile)", 0),
    "local_ptr(slot.tile) - 0": ("tle.gpu.local_ptr(slot.tile) - 0", 0),
    "a name bound to local_ptr(slot.tile) + 0": ("q", 0),
    "local_ptr(slot.tile) + 1": ("tle.gpu.local_ptr(slot.tile) + 1", 1),
    "local_ptr(slot.tile) + an arange": ("tle.gpu.local_ptr(slot.tile) + tl.arange(0, 64) * 0",
                                         1),
    "0 - local_ptr(slot.tile)": ("0 - tle.gpu.local_ptr(slot.tile)", 1),
    "local_ptr(slot.tile) + N": ("tle.gpu.local_ptr(slot.tile) + N", 1),
}


@pytest.mark.parametrize("name", list(SLOT_POINTER))
def test_pointer_arithmetic_on_a_slot(tmp_path, capsys, name):
    """Fixed after this round: `tl.store(tle.gpu.local_ptr(slot.tile) + 0, x)` was verified and
    --gluon refused it ("operator + on a lptr"); a store through the pointer plus an offset was
    read as one that may write part of the field, and verified where a whole store followed.
    Now the lowering reads `+ 0` as the pointer itself (lowered to the slot's store, to its
    events), and every other arithmetic on a slot pointer is refused by tle-dump, --gluon and
    --print-ir alike."""
    ptr, code = SLOT_POINTER[name]
    body = PUT.replace("tl.store(tle.gpu.local_ptr(slot.tile),", f"tl.store({ptr},")
    if ptr == "q":
        body = body.replace("tl.store(", "q = tle.gpu.local_ptr(slot.tile) + 0\ntl.store(", 1)
    path = write_kernel(tmp_path, ring(writer(body=body)) + CONFIG)
    if code:
        every_mode(capsys, path, 1, "[unsupported-expression]", "on a shared-memory pointer")
        return
    every_mode(capsys, path, 0)
    lowers_to_its_events(path)
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    src = compile_kernel((str(path), "k"), SIG, {"C": 3}).tle_generated.source
    assert "kv_tile.index(_kv_s1).store(" in src

"""A twenty-second adversarial round: kernels built to make tle-dump say `verified` where it is not
true, or refuse a correct kernel for a reason that is not the kernel's. Each case is a small kernel
written to a file and read by tle-dump's main(); the exit code and the verdict (the check of a
rejection, its witness or its words) are pinned, and verified ones are lowered to their events
where the events oracle maps the params back to arguments (tests/adversarial_oracles.py).

Wrong before the fixes that came with this file:
- verified, for a kernel Python refuses: a pipe verb given its index by a keyword the language
  does not have (`r.wait(foo=p)`, `w.commit(index=p)`, `w.close(j=N)`). The verbs are
  `acquire(self, i)`, `commit(self, i)`, ... (tle_compiler/language/pipe.py), so Python raises
  TypeError (and so does the CPU emulator), while the frontend took any keyword's value as the
  index. Now refused at the call (check bad-event, frontend/build.py call_method); `i=p` is read
  as before.
- verified, for a kernel Python refuses: a `tle.pipe` option or a reader's name given a shared
  buffer or a pipe (`tle.pipe(..., name=tle.gpu.alloc(...))`, `name=other_pipe`,
  `kv.reader(tle.gpu.alloc(...))`). The frontend holds such a value as a static beside a None
  constant, and its reading of literals took that None for `name=None` (the variable's name) or
  for no reader name (an SPSC reader); the language's validate_pipe / validate_reader raise.
  Now read as no literal (frontend/build.py literal), so the declaration rules refuse it with
  their own words (bad-pipe, undeclared-reader).
- a correct kernel refused with words that are false: a writer holding two windows of one
  TMA-filled pipe open at once (`s0 = w.acquire(2 * t)`, `s1 = w.acquire(2 * t + 1)`, a copy into
  each, both commits) was rejected "the TMA copy into ring.tile (index 2*t) must stand between
  ring.acquire(2*t) and ring.commit(2*t) in the same block" (it does) and "ring.commit(2*t + 1)
  must be in the same block as its acquire" (it is): passes/tma_windows.py kept one open window
  per pipe, so the second acquire replaced the first. The lowering emits each copy on its own
  stage's barrier and each commit's expect-tx on its own (checked here against the verified
  events), so the kernel is now verified; its faulty twins are rejected at the window that is
  wrong (a window with no copy, a slot copied twice, a copy after its commit), not at one that
  is right. Windows are keyed by their index expression.
- verified (exit 0), a partition that never finishes: a `while` spinning on a shared-memory
  flag reached through a name (`q = tle.gpu.local_ptr(flag)`, then `while tl.load(q) == 0`),
  a helper, a tuple, a partition argument or `q + 0`. frontend/memory_waits.py refused the spin
  only where `tle.gpu.local_ptr` stood in the load itself; it now follows the pointer's names
  as it already did for kernel arguments (check memory-wait).
- verified (exit 0), a hang on the GPU: a consumer spinning on a global flag the producer sets
  after its loop (capacity 1: the producer's second acquire needs the consumer's release),
  the flag written or read with `pointer=` (`tl.store(pointer=flag_ptr, value=1)`,
  `tl.atomic_xchg(pointer=..., val=1)`, `tl.load(pointer=flag_ptr)`): the check found a
  store's or load's pointer by its first positional argument only. Now by keyword too.
- verified (exit 0), a partition that never finishes: a `while` whose body assigns nothing its
  condition reads (`while True: pass`, `while N >= 0: pass`, a loop on an input the kernel never
  writes), in a partition or the kernel body; Triton has no `break`, so once the condition holds
  it never ends. Now refused (check endless-loop, frontend/protocol.py Walker.refuse_endless),
  unless the condition is known false where the loop stands (`k = 0; while k > 1`, `while
  False`: a loop that never runs); a counter the body advances is read as before.
- verified (exit 0), a hang (found by tests/test_adversarial_verdicts_23.py, strict xfails
  there): a commit of another index than every open acquire of its block (a look-ahead producer's
  `commit(i)` after `acquire(i + 1)`, `commit(N + K)` after `acquire(N)` with K == 0) was skipped
  by the structural TMA rule as "a pairing fault", so the window it closes was never checked for
  its copies (none, or two). passes/tma_windows.py now refuses such a commit as rule 9 words it
  (its acquire, of the same index expression, in its statement list; check tma-window). The
  strict xfails of tests/test_adversarial_verdicts_23.py for it pass since (its markers dropped).
- verified "for every value of x_ptr" (exit 0), refused by Triton: a kernel argument the kernel
  loads through with `tl.load(pointer=x_ptr + ...)` and loops over (`range(x_ptr)`): the
  frontend found a load's pointer by its first positional argument only, so the pointer-param
  rule missed it. Now by keyword too (frontend/protocol.py; `ptr=` of prefetch_l2, `base=` of
  the make_* calls).

Checked and found right (pinned as twins below): the closed flag of the previous iteration
carried into the next (a read of the closing slot), reader lists with a name twice or a reader
that never reads, writers looping backwards, pipe verbs through getattr, a stored bound method or
a starred call, warp_specialize arguments by keyword, free shared buffers aliased through a
name, a tuple, a list, a helper returning one buffer twice and a conditional expression, a pipe
field's buffer handed to a partition, one partition function twice, code after
warp_specialize, two writers of one pipe, two handles of one reader with different views,
partitions and helpers defined twice or rebound after their def, a helper of another module
reading its own module's constant, witnesses of C's `//` and `%` (`N // 4 == -1` first at
N = -4, `N % 4 == -1` at N = -1), kernel-body loads and atomics read twice (two values), a
kernel argument rebound before and after its `tle.assume`, loop variables shadowed by an inner
loop or spelt like a kernel argument, `with` / `try` / `match` / walrus / lambda /
comprehension / `global` / `yield` / `del` / nested defs around events, a tile loaded from a
slot before its release and fed to `tl.dot` after it (through tl.trans, tl.reshape, .to, a
tuple; `t + 0` is a register value the Gluon loads before the release), and a writer or reader
holding two windows of one ring with register stores.

Also run against the simulator (not pinned: random programs, docs/semantics.md): the protocol
generator of tests/protocol_gen.py with its capacity-1 SPSC pipes made `barrier="named"` and one
statement of a partition moved (1716 programs, 13962 instances), and random rings with a close,
reads under `if not res.is_closed:`, writes that may not run and read-backs (6000 instances):
no instance the passes accept was one the simulator rejects.

Found here, fixed since (babedee, tests/test_frontend_fixes_23.py; the test below was a strict
xfail): a loop without pipe events whose step is a run-time value (`for q in range(0, N, S):
pass`, S a kernel argument) was accepted, and Triton builds scf.for from it unchecked, so a launch
with S = 0 never ends that partition: verified "for every value of N". Now rejected at the loop
[zero-step] unless the step's domain excludes 0 (`tle.assume(S >= 1)`, `tl.num_programs(0)`).
Also left: a kernel-body value computed by a loop or an `if` on a run-time param (`M = 0;
for q in range(N): M = M + 1`) is a param of its own, so a correct kernel whose reader loops `N`
times against the writer's `M` is rejected with a witness no launch gives (`when M=0, N=1`);
tests/test_adversarial_verdicts_15.py pins that reading as a conservative refusal.
"""

from __future__ import annotations

import textwrap

import pytest

from .adversarial_oracles import lowers_to_its_events
from .adversarial_support import run_dump, verdict, write_kernel
from .test_adversarial_python_semantics import CONFIG, _run, reader, ring, writer

HEAD = "import triton.language as tl\nimport tle_compiler as tle\n\n\n"


def rbody(body: str) -> str:
    """The reader's body after ``r = kv.reader()``: ``body`` dedented, indented once."""
    return textwrap.indent(textwrap.dedent(body), "    ")


# ------------------------------------------------------------------- the verbs' keyword argument

VERB_KEYWORDS = {
    "r.wait(foo=p)": (ring(rbody=reader().replace("r.wait(p)", "r.wait(foo=p)")),
                      ("rejected", "[bad-event]", "not `foo=...`")),
    "w.commit(index=p)": (ring(writer().replace("w.commit(p)", "w.commit(index=p)")),
                          ("rejected", "[bad-event]", "not `index=...`")),
    "r.release(j=p)": (ring(rbody=reader().replace("r.release(p)", "r.release(j=p)")),
                       ("rejected", "[bad-event]", "not `j=...`")),
    "w.close(j=N)": (ring(writer(post="w.close(j=N)\n"),
                          reader() + "    res = r.wait(N)\n    r.release(N)\n"),
                     ("rejected", "[bad-event]", "not `j=...`")),
    "w.acquire(**{'i': p})": (ring(writer().replace("w.acquire(p)", "w.acquire(**{'i': p})")),
                              ("rejected", "[bad-call]")),
    # the language's own keyword: read as before
    "w.acquire(i=p), w.commit(i=p), r.wait(i=p), r.release(i=p)": (
        ring(writer().replace("(p)", "(i=p)"), reader().replace("(p)", "(i=p)")), "verified"),
}


@pytest.mark.parametrize("name", list(VERB_KEYWORDS))
def test_a_verbs_index_is_given_as_python_binds_it(tmp_path, capsys, name):
    text, expect = VERB_KEYWORDS[name]
    path = verdict(tmp_path, capsys, text + CONFIG, expect)
    if expect == "verified":
        lowers_to_its_events(path)


# ------------------------------------------------------- a pipe option holding a buffer or a pipe

_PIPE = "    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))\n"
PIPE_OPTIONS = {
    "name=tle.gpu.alloc(...)": (
        ring().replace("capacity=2,", "capacity=2, name=tle.gpu.alloc([2, 64], tl.float32),"),
        ("rejected", "[bad-pipe]", "pipe name must be an identifier string")),
    "name= another pipe": (
        ring().replace(_PIPE, "    z = tle.pipe(capacity=1, zz=tle.gpu.alloc([1, 64], "
                              "tl.float32))\n"
                              + _PIPE.replace("capacity=2,", "capacity=2, name=z,")),
        ("rejected", "[bad-pipe]", "pipe name must be an identifier string, got `z`")),
    "kv.reader(tle.gpu.alloc(...))": (
        ring().replace("kv.reader()", "kv.reader(tle.gpu.alloc([64], tl.float32))"),
        ("rejected", "[undeclared-reader]")),
    "scope=tle.gpu.alloc(...)": (
        ring().replace("capacity=2,", "capacity=2, scope=tle.gpu.alloc([64], tl.float32),"),
        ("rejected", "[bad-pipe]", "scope must be")),
    # twins: None is the variable's name, a string names the pipe
    "name=None": (ring().replace("capacity=2,", "capacity=2, name=None,"), "verified"),
    "name='ring'": (ring().replace("capacity=2,", "capacity=2, name='ring',"), "verified"),
}


@pytest.mark.parametrize("name", list(PIPE_OPTIONS))
def test_pipe_options_are_literals(tmp_path, capsys, name):
    text, expect = PIPE_OPTIONS[name]
    verdict(tmp_path, capsys, text + CONFIG, expect)


# ---------------------------------------------------- two TMA windows of one pipe open at a time

TMA = HEAD + """\
BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def k(x_desc, y_ptr, N):
    tle.assume(N >= 0)
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (ring, x_desc, N)), (consume, (ring, y_ptr, N))],
                            [4], [232])


def produce(ring, x_desc, N):
    w = ring.writer()
    for t in range(N):
        s0 = w.acquire(2 * t)
        s1 = w.acquire(2 * t + 1)
WINDOWS


def consume(ring, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = ring.reader()
    for t in range(N):
        res = r.wait(2 * t)
        x = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(2 * t)
        res = r.wait(2 * t + 1)
        z = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(2 * t + 1)
        tl.store(y_ptr + offs, x + z)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 64]>", "y_ptr": "*bf16",
                                "N": "i32"}, "constexprs": {}}
"""
C0 = "tle.gpu.tma_load(s0.tile, x_desc, [t * BM, 0])"
C1 = "tle.gpu.tma_load(s1.tile, x_desc, [t * BM, 0])"


def windows(*lines: str) -> str:
    return TMA.replace("WINDOWS", "\n".join("        " + ln for ln in lines))


TMA_WINDOWS = {
    # before: "the TMA copy into ring.tile (index 2*t) must stand between ring.acquire(2*t)
    # and ring.commit(2*t)" and "ring.commit(2*t + 1) must be in the same block as its acquire"
    "a copy into each, commits in order": (
        windows(C0, C1, "w.commit(2 * t)", "w.commit(2 * t + 1)"), "verified"),
    "a copy into each, the second window committed first": (
        windows(C1, "w.commit(2 * t + 1)", C0, "w.commit(2 * t)"), "verified"),
    # the faulty twins, each at its wrong window
    "a copy into the second slot only (the first commit's expect-tx never met)": (
        windows(C1, "w.commit(2 * t)", "w.commit(2 * t + 1)"),
        ("rejected", "[tma-window]", ":23: error: ring.commit(2*t) closes a window with no TMA "
                                     "copy into field 'tile'")),
    "both copies into the first slot": (
        windows(C0, C0, "w.commit(2 * t)", "w.commit(2 * t + 1)"),
        ("rejected", "[tma-window]", "copied twice in the window of ring.acquire(2*t)",
         "ring.commit(2*t + 1) closes a window with no TMA copy")),
    "the first slot's copy after its commit": (
        windows(C1, "w.commit(2 * t)", C0, "w.commit(2 * t + 1)"),
        ("rejected", "[tma-window]", "ring.commit(2*t) closes a window with no TMA copy",
         ":24: error: the TMA copy into ring.tile (index 2*t) must stand between")),
    # a commit of another index than every open acquire of its block: refused at the commit
    "a commit of another index": (
        windows(C0, C1, "w.commit(2 * t + 2)", "w.commit(2 * t + 1)"),
        ("rejected", "[tma-window]", ":24: error: ring.commit(2*t + 2) must be in the same block "
                                     "as its acquire, ring.acquire(2*t + 2)")),
    # a look-ahead producer: `acquire(2t + 2)` then `commit(2t)`, the copies of the window it
    # closes not counted by the structural rule: before, verified without a copy in the loop's
    # windows (tests/test_adversarial_verdicts_23.py: a hang); now refused at the commit
    "a look-ahead window with no copy": (
        windows(C0, C1, "w.commit(2 * t)", "w.commit(2 * t + 1)").replace(
            "        s0 = w.acquire(2 * t)\n        s1 = w.acquire(2 * t + 1)\n"
            "        tle.gpu.tma_load(s0.tile, x_desc, [t * BM, 0])\n"
            "        tle.gpu.tma_load(s1.tile, x_desc, [t * BM, 0])\n"
            "        w.commit(2 * t)\n        w.commit(2 * t + 1)",
            "        s0 = w.acquire(2 * t + 2)\n        w.commit(2 * t)\n"
            "        s1 = w.acquire(2 * t + 3)\n        w.commit(2 * t + 1)").replace(
            "    w = ring.writer()\n",
            "    w = ring.writer()\n    s = w.acquire(0)\n"
            "    tle.gpu.tma_load(s.tile, x_desc, [0, 0])\n"
            "    s = w.acquire(1)\n    tle.gpu.tma_load(s.tile, x_desc, [0, 0])\n")
        + "", ("rejected", "[tma-window]", "ring.commit(2*t) must be in the same block as its "
                                           "acquire, ring.acquire(2*t)")),
}


@pytest.mark.parametrize("name", list(TMA_WINDOWS))
def test_tma_windows_open_together(tmp_path, capsys, name):
    text, expect = TMA_WINDOWS[name]
    path = verdict(tmp_path, capsys, text, expect)
    if expect == "verified":
        lowers_to_its_events(path)


# ------------------------------------------------------------------- checked and found right

_CLOSED = """\
for p in range(N + 1):
    res = r.wait(p)
    if c:
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(y_ptr + tl.arange(0, 64), t)
    c = not res.is_closed
    r.release(p)
"""
_X = "tl.load(x_ptr + tl.arange(0, 64))"
_BAD_CONSUME = """

def consume_bad(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
""" + reader("for p in range(N + 1):")
_HELPER_RING = ring(writer(body="put(w, x_ptr, p)\n"))
_PUT = f"""

def put(w, x_ptr, p):
    slot = w.acquire(p)
    tl.store(tle.gpu.local_ptr(slot.tile), {_X})
    w.commit(p)
"""
_PUT_LATE = f"""

def put(w, x_ptr, p):
    slot = w.acquire(p)
    w.commit(p)
    tl.store(tle.gpu.local_ptr(slot.tile), {_X})
"""


def free_buffer(alias: str, pre: str = "") -> str:
    """A free buffer written by one partition and read by the other through ``alias``."""
    return HEAD + pre + f"""\
@tle.jit
def k(x_ptr, y_ptr, N):
    b1 = tle.gpu.alloc([64], tl.float32)
    {alias}
    tle.gpu.warp_specialize([(produce, (b1, x_ptr)), (consume, (b2, y_ptr))], [4], [232])


def produce(b, x_ptr):
    tl.store(tle.gpu.local_ptr(b), {_X})


def consume(b, y_ptr):
    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(b)))
"""


def derived_extra(defn: str, cond: str) -> str:
    """The reader waits one tile more where ``cond`` holds, over ``M = defn`` of N (any
    integer; both loop max(N, 0) times)."""
    return ring(writer("for p in range(tl.maximum(N, 0)):"),
                reader("for p in range(tl.maximum(N, 0)):")
                + f"    if {cond}:\n        res = r.wait(tl.maximum(N, 0))\n"
                  f"        r.release(tl.maximum(N, 0))\n",
                kernel_pre=f"M = {defn}\n", rarg="N, M").replace(
        "    tle.assume(N >= 0)\n", "").replace("def consume(kv, y_ptr, N, C: tl.constexpr):",
                                            "def consume(kv, y_ptr, N, M, C: tl.constexpr):")


def body_values(pre: str, warg: str, rarg: str) -> str:
    return ring(kernel_pre=pre, warg=warg, rarg=rarg)


def mma(operand: str) -> str:
    """A tile loaded from the slot before the release, fed to tl.dot after it as ``operand``."""
    return HEAD + f"""\
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, y_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + offs))
        w.commit(p)


def consume(kv, x_ptr, y_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    b = tl.load(x_ptr + offs)
    acc = tl.zeros([64, 64], tl.float32)
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(p)
        acc = tl.dot({operand}, b, acc)
    tl.store(y_ptr + offs, acc)


DEFAULT_CONFIG = {{"signature": {{"x_ptr": "*bf16", "y_ptr": "*fp32", "N": "i32"}},
                  "constexprs": {{}}}}
"""


def two_windows(wlines: list[str]) -> str:
    """A ring whose writer holds the windows of 2t and 2t + 1 open together (``wlines`` between
    the acquires and the commits), and whose reader holds both waits and reads both slots."""
    w = ("for t in range(N):\n    s0 = w.acquire(2 * t)\n    s1 = w.acquire(2 * t + 1)\n"
         + "".join(f"    {ln}\n" for ln in wlines)
         + "    w.commit(2 * t)\n    w.commit(2 * t + 1)\n")
    r = ("for t in range(N):\n    a = r.wait(2 * t)\n    b = r.wait(2 * t + 1)\n"
         "    tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(a.slot.tile))"
         " + tl.load(tle.gpu.local_ptr(b.slot.tile)))\n"
         "    r.release(2 * t)\n    r.release(2 * t + 1)\n")
    return ring(rbody(w), rbody(r))


_S0 = f"tl.store(tle.gpu.local_ptr(s0.tile), {_X})"
_S1 = f"tl.store(tle.gpu.local_ptr(s1.tile), {_X})"
_KV = "    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))\n"

FOUND_RIGHT = {
    # the closed flag of iteration p - 1 guards the read of p: at the close (p = N = 1) it is
    # clear, and stage 1 was never written
    "a closed flag carried one iteration late": (
        ring(writer(post="w.close(N)\n"), rbody("c = False\n" + _CLOSED)),
        ("rejected", "[unwritten-field]")),
    "the flag of the slot read": (
        ring(writer(post="w.close(N)\n"),
             rbody("c = False\n" + _CLOSED.replace("    if c:", "    c = not res.is_closed\n"
                                                                 "    if c:"))),
        "verified"),
    "readers=('a', 'a')": (
        ring(rbody=reader()).replace("capacity=2,", "capacity=2, readers=('a', 'a'),")
        .replace("kv.reader()", "kv.reader('a')"),
        ("rejected", "[bad-pipe]", "reader 'a' is declared twice")),
    "readers=('a', 'b'), b never reads": (
        ring(rbody=reader()).replace("capacity=2,", "capacity=2, readers=('a', 'b'),")
        .replace("kv.reader()", "kv.reader('a')"),
        ("rejected", "[unconsumed]", "reader 'b'")),
    "the writer loops backwards": (
        ring(writer("for p in range(N - 1, -1, -1):")), ("rejected", "[phase-aliasing]")),
    "w.commit(*(p,))": (ring(writer().replace("w.commit(p)", "w.commit(*(p,))")),
                        ("rejected", "not supported")),
    "getattr(w, 'commit')(p)": (
        ring(writer().replace("w.commit(p)", "getattr(w, 'commit')(p)")),
        ("rejected", "[unknown-name]")),
    "a bound verb stored": (
        ring(writer().replace("w.commit(p)", "c = w.commit\nc(p)")),
        ("rejected", "[verb-as-value]")),
    "warp_specialize(..., num_warps=..., num_regs=...)": (
        ring().replace("[4], [232])", "num_warps=[4], num_regs=[232])"),
        ("rejected", "[bad-warp-specialize]")),
    "free buffer: b2 = b1": (free_buffer("b2 = b1"), ("rejected", "[buffer-race]")),
    "free buffer: (b1, 0)[0]": (free_buffer("b2 = (b1, 0)[0]"), ("rejected", "[buffer-race]")),
    "free buffer: [b1][0]": (free_buffer("b2 = [b1][0]"), ("rejected", "[buffer-race]")),
    "free buffer: b1 if N > 0 else b1": (
        free_buffer("b2 = b1 if N > 0 else b1"), ("rejected", "[buffer-race]")),
    "free buffer: a helper returns it twice": (
        free_buffer("b1, b2 = mk()", "def mk():\n    b = tle.gpu.alloc([64], tl.float32)\n"
                                     "    return b, b\n\n\n")
        .replace("    b1 = tle.gpu.alloc([64], tl.float32)\n", ""),
        ("rejected", "[buffer-race]")),
    "a pipe field's buffer handed to a partition": (
        ring(rbody=reader() + "    tl.store(y_ptr + tl.arange(0, 64), "
                              "tl.load(tle.gpu.local_ptr(buf)))\n")
        .replace(_KV, "    buf = tle.gpu.alloc([2, 64], tl.float32)\n"
                      "    kv = tle.pipe(capacity=2, tile=buf)\n")
        .replace("(consume, (kv, y_ptr, N, C))", "(consume, (kv, y_ptr, N, C, buf))")
        .replace("def consume(kv, y_ptr, N, C: tl.constexpr):",
                 "def consume(kv, y_ptr, N, C: tl.constexpr, buf):"),
        ("rejected", "[field-buffer]")),
    "one partition function twice": (
        ring().replace("[(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, C))],\n"
                       "                            [4], [232]",
                       "[(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, C)), "
                       "(consume, (kv, y_ptr, N, C))], [4, 4], [232, 232]"),
        ("rejected", "[duplicate-partition]")),
    "a partition defined twice (the later faulty)": (
        ring(extra=_BAD_CONSUME.replace("consume_bad", "consume")),
        ("rejected", "[wait-never-committed]", "(when N=0, p=0)")),
    "a partition rebound after its def": (
        ring(extra=_BAD_CONSUME + "\n\nconsume = consume_bad\n"),
        ("rejected", "[wait-never-committed]")),
    "a partition rebound by a tuple": (
        ring(extra=_BAD_CONSUME + "\n\nconsume, other = consume_bad, 1\n"),
        ("rejected", "[unknown-partition]")),
    "a helper defined twice (the later commits before its store)": (
        _HELPER_RING + _PUT + _PUT_LATE, ("rejected", "[access-outside-window]")),
    "a helper defined twice (the later right)": (_HELPER_RING + _PUT_LATE + _PUT, "verified"),
    "a helper rebound after its def": (
        _HELPER_RING + _PUT + _PUT_LATE.replace("def put", "def put_late") + "\n\nput = put_late\n",
        ("rejected", "[access-outside-window]")),
    # C's quotient: N // 4 == -1 for N in [-7, -4] (Python's: [-4, -1])
    "C's //: the witness": (derived_extra("N // 4", "M == -1"),
                            ("rejected", "[wait-never-committed]", "(when N=-4 (")),
    # C's remainder: N % 4 == -1 at N = -1 (Python's % never gives -1)
    "C's %: the witness": (derived_extra("N % 4", "M == -1"),
                           ("rejected", "[wait-never-committed]", "(when N=-1 (")),
    "C's %: M == 3 at N = 3": (derived_extra("N % 4", "M == 3"),
                               ("rejected", "[wait-never-committed]", "(when N=3 (")),
    "two kernel-body loads, a store between": (
        body_values("n1 = tl.load(x_ptr).to(tl.int32)\ntl.store(x_ptr, n1 + 1.0)\n"
                    "n2 = tl.load(x_ptr).to(tl.int32)\n", "n1", "n2"), ("rejected",)),
    "two kernel-body atomics": (
        body_values("n1 = tl.atomic_add(x_ptr, 1.0).to(tl.int32)\n"
                    "n2 = tl.atomic_add(x_ptr, 1.0).to(tl.int32)\n", "n1", "n2"), ("rejected",)),
    "one kernel-body atomic read by both": (
        body_values("n1 = tl.atomic_add(x_ptr, 1.0).to(tl.int32)\n", "n1", "n1"), "verified"),
    "N rebound after its assumption": (
        ring(writer(post="w.close(N)\n"), reader() + "    res = r.wait(N)\n    r.release(N)\n",
             kernel_pre="N = N - 1\n"),
        ("rejected", "[negative-index]", "(when N=0)")),
    "N rebound before its assumption": (
        ring(writer(post="w.close(N)\n"), reader() + "    res = r.wait(N)\n    r.release(N)\n")
        .replace("    tle.assume(N >= 0)\n", "    N = N - 1\n    tle.assume(N >= 0)\n"),
        "verified"),
    "a loop variable shadowed by an inner loop": (
        ring(writer(pre="", loop="for p in range(N):\n        for p in range(3):\n"
                                 "            pass")),
        ("rejected", "[unknown-name]", "is the variable of the loop at line")),
    "a loop variable spelt like the argument": (
        ring(writer("for N in range(N):", idx="N")), "verified"),
    "events in a with": (
        ring(writer(body=f"with tl.static_range(1):\n    slot = w.acquire(p)\n"
                         f"tl.store(tle.gpu.local_ptr(slot.tile), {_X})\nw.commit(p)\n")),
        ("rejected", "[unsupported-control-flow]")),
    "an event in a match": (
        ring(writer(body=f"match p:\n    case _:\n        slot = w.acquire(p)\n"
                         f"tl.store(tle.gpu.local_ptr(slot.tile), {_X})\nw.commit(p)\n")),
        ("rejected", "[unsupported-statement]")),
    "an index through a walrus": (
        ring(writer().replace("w.acquire(p)", "w.acquire((q := p))")),
        ("rejected", "not supported")),
    "an index through a comprehension": (
        ring(writer().replace("w.acquire(p)", "w.acquire([p for _ in range(1)][0])")),
        ("rejected", "not supported")),
    "a tile loaded before the release, fed to tl.dot after it": (
        mma("t"), ("rejected", "[access-outside-window]")),
    "... through tl.trans": (mma("tl.trans(t)"), ("rejected", "[access-outside-window]")),
    "... through tl.reshape": (mma("tl.reshape(t, (64, 64))"),
                               ("rejected", "[access-outside-window]")),
    "... through .to of its own dtype": (mma("t.to(tl.bfloat16)"),
                                         ("rejected", "[access-outside-window]")),
    "... through a tuple": (mma("(t, 0)[0]"), ("rejected", "[access-outside-window]")),
    # a sum is a register tile: the Gluon loads t before the release
    "... as t + 0": (mma("t + 0"), "verified"),
    "two ring windows open, both stored": (two_windows([_S0, _S1]), "verified"),
    "two ring windows open, the first never stored": (
        two_windows([_S1]), ("rejected", "[unwritten-field]", "its writes fill stage 1")),
    "two ring windows open, the first read back before its store": (
        two_windows([_S1, "tl.store(tle.gpu.local_ptr(s1.tile), "
                          "tl.load(tle.gpu.local_ptr(s0.tile)))", _S0]),
        ("rejected", "[unwritten-field]", "reads back kv.tile at index 0")),
    "two ring windows open, their slots swapped and stored again": (
        two_windows([_S0, _S1, "s0, s1 = s1, s0", _S0]), "verified"),
}


@pytest.mark.parametrize("name", list(FOUND_RIGHT))
def test_found_right(tmp_path, capsys, name):
    text, expect = FOUND_RIGHT[name]
    if "DEFAULT_CONFIG" not in text:
        text += CONFIG
    path = verdict(tmp_path, capsys, text, expect)
    if expect == "verified" and "a loop variable spelt" not in name and "N rebound" not in name:
        lowers_to_its_events(path)


_HELPERS = HEAD + f"""\
T = 5


def put_all(w, x_ptr):
    for p in range(T):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), {_X})
        w.commit(p)
"""


@pytest.mark.parametrize("t, expect", [(4, ("rejected", "[unconsumed]", "helpers.py:12")),
                                       (5, "verified")])
def test_a_helper_reads_its_own_modules_constant(tmp_path, capsys, t, expect):
    """`T` in the helper is helpers.py's 5, not the kernel module's."""
    text = ring(writer(loop="put_all(w, x_ptr)\n    if True:", body="pass\n"),
                reader(f"for p in range(T):"),
                prelude=f"from .helpers import put_all\n\nT = {t}\n")
    _run(tmp_path, capsys, text + CONFIG, (), expect,
         files={"pkg/__init__.py": "", "pkg/helpers.py": _HELPERS})


# --------------------------------------------------------------------- while loops that never end

SPIN = HEAD + """\
@tle.jit
def k(x_ptr, y_ptr, flag_ptr, N):
    tle.assume(N >= 0)
    flag = tle.gpu.alloc([1], tl.int32)
    kv = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, flag, x_ptr, flag_ptr, N)),
                             (consume, (kv, flag, y_ptr, flag_ptr, N))], [4], [232])


def produce(kv, flag, x_ptr, flag_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)
SIGNAL


def consume(kv, flag, y_ptr, flag_ptr, N):
    r = kv.reader()
WAIT
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(p)
        tl.store(y_ptr + tl.arange(0, 64), t)
"""


def spin(wait: str, signal: str = "", extra: str = "") -> str:
    """The consumer runs ``wait`` before its loop, the producer ``signal`` after its own (a
    capacity-1 ring: for N >= 2 the producer's second acquire needs the consumer's release)."""
    return (SPIN.replace("WAIT", textwrap.indent(textwrap.dedent(wait), "    ").rstrip("\n"))
            .replace("SIGNAL", textwrap.indent(textwrap.dedent(signal), "    ").rstrip("\n"))
            + extra)


_SET = "tl.store(flag_ptr, 1)\n"
_MW = ("rejected", "[memory-wait]", "through a pipe")
_ENDLESS = ("rejected", "[endless-loop]", "never ends once its condition")
WHILE_LOOPS = {
    # a spin on a shared-memory flag through a name: before, verified (only a local_ptr written
    # in the load itself was seen), a partition that never finishes
    "a shared flag through a name": (
        spin("q = tle.gpu.local_ptr(flag)\nwhile tl.load(q) == 0:\n    pass\n"), _MW),
    "a shared flag through a partition argument": (
        spin("while tl.load(flag) == 0:\n    pass\n").replace(
            "(consume, (kv, flag, y_ptr", "(consume, (kv, tle.gpu.local_ptr(flag), y_ptr")
        .replace("    flag = tle.gpu.alloc([1], tl.int32)\n",
                 "    flag = tle.gpu.alloc([1], tl.int32)\n"), _MW),
    "a shared flag through a helper's pointer": (
        spin("q = ptr_of(flag)\nwhile tl.load(q) == 0:\n    pass\n",
             extra="\n\ndef ptr_of(b):\n    return tle.gpu.local_ptr(b)\n"), _MW),
    "a shared flag through a helper's condition": (
        spin("q = tle.gpu.local_ptr(flag)\nwhile is_zero(q):\n    pass\n",
             extra="\n\ndef is_zero(q):\n    return tl.load(q) == 0\n"), _MW),
    "a shared flag through a tuple": (
        spin("qq = (tle.gpu.local_ptr(flag), 0)\nq = qq[0]\nwhile tl.load(q) == 0:\n    pass\n"),
        _MW),
    "a shared flag re-read in the body": (
        spin("q = tle.gpu.local_ptr(flag)\nv = tl.load(q)\nwhile v == 0:\n    v = tl.load(q)\n"),
        _MW),
    "a shared flag + 0": (
        spin("q = tle.gpu.local_ptr(flag)\nwhile tl.load(q + 0) == 0:\n    pass\n"), _MW),
    "a shared flag written in the load (as before)": (
        spin("while tl.load(tle.gpu.local_ptr(flag)) == 0:\n    pass\n"), _MW),
    # a global flag the producer sets after its loop, with keywords: before, verified (the
    # writes and reads were found by their first positional argument only), a hang at N >= 2
    "tl.store(pointer=flag_ptr, value=1)": (
        spin("while tl.load(flag_ptr) == 0:\n    pass\n",
             "tl.store(pointer=flag_ptr, value=1)\n"), _MW),
    "tl.store(value=1, pointer=flag_ptr)": (
        spin("while tl.load(flag_ptr) == 0:\n    pass\n",
             "tl.store(value=1, pointer=flag_ptr)\n"), _MW),
    "tl.atomic_xchg(pointer=flag_ptr, val=1)": (
        spin("while tl.load(flag_ptr) == 0:\n    pass\n",
             "tl.atomic_xchg(pointer=flag_ptr, val=1)\n"), _MW),
    "while tl.load(pointer=flag_ptr) == 0": (
        spin("while tl.load(pointer=flag_ptr) == 0:\n    pass\n", _SET), _MW),
    "positional (as before)": (spin("while tl.load(flag_ptr) == 0:\n    pass\n", _SET), _MW),
    # a condition the body never changes: before, verified, a partition that never finishes
    "while True": (spin("while True:\n    pass\n"), _ENDLESS),
    "while N >= 0": (spin("while N >= 0:\n    pass\n"), _ENDLESS),
    "while 1, a store in the body": (
        spin("while 1:\n    tl.store(y_ptr, 1.0)\n"), _ENDLESS),
    "while on an input never written": (
        spin("while tl.load(flag_ptr) > 0:\n    pass\n"), _ENDLESS),
    "in the kernel body": (
        spin("pass\n").replace("    tle.assume(N >= 0)\n",
                               "    tle.assume(N >= 0)\n    while N > 3:\n        pass\n"),
        _ENDLESS),
    # twins: loops that end, or never run
    "a counter": (spin("k = 0\nwhile k < 4:\n    k += 1\n"), "verified"),
    "a counter to N": (spin("k = 0\nwhile k < N:\n    k += 1\n"), "verified"),
    "a loop that never runs": (spin("k = 0\nwhile k > 1:\n    pass\n"), "verified"),
    # round 28: Triton 3.6 refuses a `while` on a compile-time condition ("'constexpr' object
    # has no attribute 'handle'"), one that never runs too
    "while False": (spin("while False:\n    pass\n"),
                    ("rejected", "a `while` loop whose condition is a compile-time value")),
}


@pytest.mark.parametrize("name", list(WHILE_LOOPS))
def test_while_loops_that_never_end(tmp_path, capsys, name):
    text, expect = WHILE_LOOPS[name]
    verdict(tmp_path, capsys, text, expect)


# ------------------------------------------- a kernel argument used as a pointer given by keyword

def pointer_param(load: str) -> str:
    """The writer loads through ``x_ptr`` (``load``) and both partitions loop ``x_ptr`` times."""
    return ring(writer("for p in range(x_ptr):").replace("tl.load(x_ptr + tl.arange(0, 64))",
                                                          load),
                reader("for p in range(x_ptr):"), warg="N, x_ptr", rarg="x_ptr").replace(
        "def produce(kv, x_ptr, N, C: tl.constexpr):",
        "def produce(kv, x_ptr, N, ptr, C: tl.constexpr):").replace(
        "def consume(kv, y_ptr, N, C: tl.constexpr):",
        "def consume(kv, y_ptr, x_ptr, C: tl.constexpr):").replace(
        "tle.assume(N >= 0)", "tle.assume(x_ptr >= 0)")


POINTER_PARAMS = {
    # before: verified "for every value of x_ptr" (the pointer found by position only); Triton
    # refuses a pointer as a loop bound
    "tl.load(pointer=x_ptr + ...)": (
        pointer_param("tl.load(pointer=x_ptr + tl.arange(0, 64))"),
        ("rejected", "[pointer-param]", "kernel argument 'x_ptr' is used as a pointer")),
    "tl.load(x_ptr + ...) (as before)": (
        pointer_param("tl.load(x_ptr + tl.arange(0, 64))"), ("rejected", "[pointer-param]")),
}


@pytest.mark.parametrize("name", list(POINTER_PARAMS))
def test_a_pointer_given_by_keyword_is_a_pointer(tmp_path, capsys, name):
    text, expect = POINTER_PARAMS[name]
    verdict(tmp_path, capsys, text + CONFIG, expect)


# ------------------------------------------------------------------------------- left as it is

def test_a_runtime_step_that_may_be_zero_is_not_verified(tmp_path, capsys):
    text = spin("for q in range(0, N, S):\n    pass\n").replace(
        "def k(x_ptr, y_ptr, flag_ptr, N):", "def k(x_ptr, y_ptr, flag_ptr, N, S):").replace(
        "(consume, (kv, flag, y_ptr, flag_ptr, N))", "(consume, (kv, flag, y_ptr, flag_ptr, N, S))"
    ).replace("def consume(kv, flag, y_ptr, flag_ptr, N):",
              "def consume(kv, flag, y_ptr, flag_ptr, N, S):")
    path = write_kernel(tmp_path, text)
    code, _, err = run_dump(capsys, "-q", str(path))
    assert code != 0 and ": verified for " not in err, err

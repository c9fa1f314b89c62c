"""What the adversarial verdict tests (tests/test_adversarial_*.py) share: writing a kernel file,
reading it with tle-dump's main(), checking the exit code and the verdict's words, and the kernel
templates several rounds build their cases from. (The oracles they check tle-dump against, Triton
itself and the lowering, are tests/adversarial_oracles.py.)

Running tle-dump:

- ``write_kernel`` / ``run_dump``: a file written, tle-dump's exit code and output for argv;
- ``check`` / ``verdict`` / ``run_check``: the verdict on a kernel file checked against an
  expectation, "verified" or ``(kind, *fragments)`` (kind "rejected", "bounded" or "unknown");
- ``dump`` / ``expect``: the same in two steps (round 25 on), the exit code and stderr kept.

Kernel templates:

- ``HEAD``, ``RING`` / ``ring``: round 25's producer / consumer ring (one pipe `kv` of capacity 2,
  [2, 64] fp32 tiles, the constexpr C = 5), with ``reader_does`` / ``writer_does`` (round 26) to
  add statements to a window and ``without_config`` to drop its DEFAULT_CONFIG;
- ``kernel``, ``put``, ``get``, ``loop``: round 28's ring assembled from the partitions' bodies,
  and ``STORE``, ``N_EVENTS``, ``FIXED_EVENTS``, ``data_loop`` (round 29): a loop without events
  in the reader;
- ``TRITON_JIT``, ``TRITON_K``, ``triton_kernel``, ``triton_k``, ``TRITON`` / ``triton_refuses``:
  plain @triton.jit kernels for the Triton oracle.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tle_compiler.cli.dump import main as tle_dump

from .adversarial_oracles import triton_compile_error

# ------------------------------------------------------------------------- running tle-dump


def check(capsys, path: Path, params: tuple, expect) -> None:
    """tle-dump's verdict on the kernel file ``path`` with each of ``params`` (``N=5``) given
    by --param: "verified" (exit 0), or ``(kind, *fragments)``: nothing verified, exit 1 for
    "rejected", 3 and the kind named for "bounded" / "unknown", each fragment in stderr."""
    code = tle_dump(["-q", *[a for p in params for a in ("--param", p)], str(path)])
    out, err = capsys.readouterr()
    text = out + err
    assert "Traceback" not in text, text
    if expect == "verified":
        assert code == 0, text
        assert ": verified for " in err, text
        return
    kind, *whats = expect
    assert ": verified for " not in text, text
    if kind == "rejected":
        assert code == 1, text
    else:  # "bounded" / "unknown": nothing claimed beyond the values named
        assert code == 3, text
        assert f": {kind}: " in err, text
    for what in whats:
        assert what in err, text


def write_kernel(tmp_path: Path, text: str, name: str = "kernel.py") -> Path:
    """``text`` written to ``tmp_path / name``."""
    path = tmp_path / name
    path.write_text(text)
    return path


def verdict(tmp_path, capsys, text, expect, params=()) -> Path:
    """The kernel file ``text``, its tle-dump verdict checked against ``expect`` (``check``)."""
    path = write_kernel(tmp_path, text)
    check(capsys, path, params, expect)
    return path


def run_check(tmp_path, capsys, text, params, expect, name="kernel.py", files=None,
              config: str = "") -> Path:
    """``files`` (a relative path: its text) and the kernel file ``name`` of ``text`` followed by
    ``config`` written under ``tmp_path``, the kernel file's verdict checked against ``expect``
    (``check``); the kernel file's path."""
    for fname, body in (files or {}).items():
        f = tmp_path / fname
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(body)
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + config)
    check(capsys, path, params, expect)
    return path


def run_dump(capsys, *argv: str) -> tuple[int, str, str]:
    """tle-dump's exit code, stdout and stderr for ``argv`` (never a traceback)."""
    code = tle_dump(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err


def dump(tmp_path, capsys, text: str, *flags: str, name: str = "kernel.py"):
    """tle-dump's exit code and stderr for the kernel file ``text`` (never a traceback)."""
    path = write_kernel(tmp_path, text, name)
    code, out, err = run_dump(capsys, "-q", *flags, str(path))
    assert "internal error" not in err, err
    return code, err


def expect(code: int, err: str, want) -> None:
    """``want``: "verified", or (kind, *fragments) with kind "rejected" / "bounded"."""
    if want == "verified":
        assert code == 0 and ": verified for " in err, err
        return
    kind, *whats = want
    assert ": verified for " not in err, err
    assert code == (1 if kind == "rejected" else 3), err
    if kind != "rejected":
        assert f": {kind}: " in err, err
    for w in whats:
        assert w in err, err


# ------------------------------------------------------------------ the rings of rounds 25-30

HEAD = "import triton.language as tl\nimport tle_compiler as tle\nimport triton\n\n\n"

#: the writer's statement that fills the slot `s` with a tile it loads from global memory
FILL = "tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))"
#: the reader's statement that stores the tile of the slot of `res` whole to global memory
DRAIN = "tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))"

RING = HEAD + '''PRELUDE


@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
BODY    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, WARG, C)), (consume, (kv, y_ptr, RARG, C))],
                            [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr):
    w = kv.writer()
    for p in range(WBOUND):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for p in range(RBOUND):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
                  "constexprs": {"C": 5}}
'''


def ring(wbound: str = "N", rbound: str = "N", body: str = "", prelude: str = "",
         warg: str = "N", rarg: str = "N") -> str:
    """Round 25's ring: the writer's loop over ``wbound``, the reader's over ``rbound``, ``body``
    in the kernel body before the pipe, ``prelude`` before the kernel, the partitions called with
    ``warg`` / ``rarg`` for N."""
    return (RING.replace("WBOUND", wbound).replace("RBOUND", rbound)
            .replace("BODY", "".join(f"    {line}\n" for line in body.splitlines()))
            .replace("PRELUDE", prelude).replace("WARG", warg).replace("RARG", rarg))


#: the reader's line of round 25's ring: it loads the slot's tile whole and stores it
READ = f"        {DRAIN}\n"
#: the writer's line: it stores a tile it loads from global memory into the slot
WRITE = f"        {FILL}\n"


def reader_does(stmt: str) -> str:
    """Round 25's ring whose reader also runs ``stmt`` in its window, `t` the tile it read."""
    text = ring()
    assert READ in text
    return text.replace(READ, READ + "        t = tl.load(tle.gpu.local_ptr(res.slot.tile))\n"
                        + "".join(f"        {line}\n" for line in stmt.splitlines()))


def stored_after(stmt: str, value: str = "t + u") -> str:
    """``stmt`` followed by a store of ``value`` as fp32 (so that a value Triton compiles is
    used), for :func:`reader_does`."""
    return f"{stmt}\ntl.store(y_ptr + tl.arange(0, 64), ({value}).to(tl.float32))"


def writer_does(stmt: str) -> str:
    """Round 25's ring whose writer also runs ``stmt`` in its window, `s` its slot."""
    text = ring()
    assert WRITE in text
    return text.replace(WRITE, WRITE + "".join(f"        {line}\n" for line in stmt.splitlines()))


def without_config(text: str) -> str:
    """The kernel file ``text`` without its DEFAULT_CONFIG (and what follows it)."""
    return text[:text.index("DEFAULT_CONFIG = ")]


def indented(text: str, n: int) -> str:
    """``text`` dedented, then indented by ``n`` spaces."""
    return textwrap.indent(textwrap.dedent(text), " " * n)


def kernel(writer: str, reader: str, extra: str = "", body: str = "", config: str = "5") -> str:
    """A producer / consumer kernel over one pipe `kv` of capacity 2 ([2, 64] fp32 tiles):
    ``writer`` after `w = kv.writer()`, ``reader`` after `r = kv.reader()`, ``body`` in the
    kernel body after `tle.assume(N >= 0)`, ``extra`` after the partitions."""
    return (HEAD + "@tle.jit\ndef k(x_ptr, y_ptr, N, C: tl.constexpr):\n    tle.assume(N >= 0)\n"
            + indented(body, 4)
            + "    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))\n"
            "    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, "
            "C))],\n                            [4], [232])\n\n\n"
            "def produce(kv, x_ptr, N, C: tl.constexpr):\n    w = kv.writer()\n"
            + indented(writer, 4)
            + "\n\ndef consume(kv, y_ptr, N, C: tl.constexpr):\n    r = kv.reader()\n"
            + indented(reader, 4) + "\n" + textwrap.dedent(extra)
            + '\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},'
            '\n                  "constexprs": {"C": ' + config + '}}\n')


def put(i: str) -> str:
    """The writer's window of index ``i``: acquire, fill the tile, commit."""
    return f"s = w.acquire({i})\n{FILL}\nw.commit({i})\n"


def get(i: str) -> str:
    """The reader's window of index ``i``: wait, store the tile out, release."""
    return f"res = r.wait({i})\n{DRAIN}\nr.release({i})\n"


def loop(head: str, stmts: str) -> str:
    """``stmts`` as the body of the loop (or `if`) ``head``, ending its line."""
    return head + "\n" + indented(stmts.rstrip("\n") + "\n", 4)


#: a data loop's body: a store that is no pipe event
STORE = "    tl.store(y_ptr, 1.0)\n"
#: events that N decides (so N is a base of the Program, checked at --param values)
N_EVENTS = (loop("for p in range(N // 1000000):", put("p")),
            loop("for p in range(N // 1000000):", get("p")))
#: events that no param decides (N is then no value the verdict checks)
FIXED_EVENTS = (loop("for p in range(4):", put("p")), loop("for p in range(4):", get("p")))


def data_loop(pre: str, events=N_EVENTS, body: str = "") -> str:
    """The kernel of round 28 whose reader runs ``pre`` (a loop without events) first."""
    writer, reader = events
    return kernel(writer, pre + reader, body=body)


# ------------------------------------------------------------ plain @triton.jit kernels

TRITON_JIT = "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
#: the head of the plain kernel `k` the Triton oracle compiles (its body follows)
TRITON_K = TRITON_JIT + "def k(x_ptr, N, C: tl.constexpr):\n"


def triton_kernel(body: str) -> str:
    """The plain kernel `k` of ``body`` (indented as written)."""
    return TRITON_K + body


def triton_k(lines: str) -> str:
    """The plain kernel `k` of ``lines``, each indented by four spaces."""
    return TRITON_K + "".join(f"    {line}\n" for line in lines.splitlines())


#: round 26's statements in a plain @triton.jit kernel, `t` a tile loaded from global memory
TRITON = TRITON_K + "    y_ptr = x_ptr\n    t = tl.load(x_ptr + tl.arange(0, 64))\nSTMT"


def triton_refuses(tmp_path, monkeypatch, stmt: str, tag: str) -> bool:
    """Whether Triton refuses ``stmt`` in ``TRITON``."""
    source = TRITON.replace("STMT", "".join(f"    {line}\n" for line in stmt.splitlines()))
    return triton_compile_error(tmp_path, monkeypatch, source, tag) is not None


def judged_as_triton(tmp_path, capsys, monkeypatch, stmt: str, tag: str, refused: bool,
                     want) -> str:
    """``stmt`` in the reader's window (:func:`reader_does`): first, whether plain Triton
    refuses it is ``refused`` (the oracle the verdict is held to); then tle-dump's verdict on it
    is ``want`` (:func:`expect`). Returns tle-dump's stderr."""
    assert triton_refuses(tmp_path, monkeypatch, stmt, tag) is refused
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, want)
    return err

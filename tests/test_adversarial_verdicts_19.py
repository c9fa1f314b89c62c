"""A nineteenth adversarial round, on what tle-dump prints and returns for a file as a whole: which
of its functions it takes for kernels (decorators bound through a name, a kernel whose
warp_specialize is in a helper, several kernels one of them faulty), how it decodes the file and
the modules it imports, and that `--gluon` and the runtime's reading (``TleKernel.pipe_ir``) agree
with the plain verdict. Each case runs tle-dump's main() in-process and pins the exit code and
the line printed.

Wrong before the fixes that came with this file:
- a ``@tle.jit`` kernel whose pipes and ``tle.gpu.warp_specialize`` call are in a helper it calls
  (``def bad(...): launch(...)``, ``launch`` declaring the pipes and calling warp_specialize, its
  reader waiting one tile more than the writer commits) was left out of the file: beside a
  correct kernel tle-dump printed that kernel's verdict only and exited 0 ("every kernel
  proved"), ``--kernel bad`` said "no kernel named bad" (exit 2), alone the file was "no @tle.jit
  kernel that calls tle.gpu.warp_specialize" (exit 2); the runtime could not launch it ("has no
  Pipe IR"). Now refused at the helper's call (check bad-warp-specialize, exit 1) by the
  frontend's reading both tle-dump and the runtime use (frontend/kernel.helper_warp_specialize).
- a ``@tle.jit`` kernel defined in the body of a module-level class (``Kernels.bad``) or
  function (a factory: ``bad = make()``), which Python makes a kernel: left out in the same way
  (exit 0 beside a correct kernel, its faulty protocol unread). Now refused at its def (check
  bad-jit, exit 1), as a kernel defined under a module-level `if` already was
  (frontend/kernel.nested_kernel).
- a kernel made by calling the decorator (``bad = tle.jit(bad_fn)``, ``tle.jit(num_warps=4)
  (bad_fn)``): left out in the same way; now refused at the call (check bad-jit,
  frontend/kernel.jit_call_kernel).
- a kernel under a name bound to a call of the decorator (``myjit = tle.jit(num_warps=4)``,
  then ``@myjit``): left out in the same way; refused at the decorator (bad-jit) here, and read
  with the call's options since tests/test_adversarial_verdicts_20.py.
- a kernel decorated through a module-level name bound to the decorator (``myjit = tle.jit``,
  then ``@myjit``; or ``T = tle`` then ``@T.jit``), which Python makes a kernel as
  ``@tle.jit`` does: left out in the same way (exit 0 beside a correct kernel even when it is
  faulty, exit 2 "no @tle.jit kernel" alone, "has no Pipe IR" at launch). A module-level name
  bound to a dotted path of an imported module now resolves to that path, as an import's name
  does (frontend/scope.ModuleScope), so the kernel is read, verified and lowered.
- a kernel file with a PEP 263 coding declaration (``# -*- coding: latin-1 -*-``) and a
  non-ASCII byte in a comment, which Python imports, was refused as "not UTF-8 text" (exit 2); a
  module it imports with such a declaration gave an internal error (UnicodeDecodeError, exit 3);
  an imported module whose bytes are no text in its encoding gave the same internal error, and
  one declaring an encoding Python does not know (``# coding: nope``, Python's import raises
  SyntaxError) was read and the kernel verified (exit 0). Every reader of a kernel's files now
  decodes as Python does (frontend/source_text.py): the declared file is read, the broken
  module is a syntax error at that module (exit 2, unusable input, as a syntax error there is).
  The CPU emulator (tle_compiler/testing/emulator.py) failed on such a file and on one with a
  byte-order mark; it decodes with the same rule now.

Checked and found right (pinned below as twins): a kernel defined twice (the later def, the one
Python binds, is the one verified, in either order), `import tle_compiler as t; @t.jit`, `from
tle_compiler import jit as J`, a missing --kernel name, `--param` misuse (unknown name, twice with
two values, a non-integer), files that are no kernels (empty, a syntax error, bytes that are not
UTF-8 without a declaration, a directory, a missing path), and the barrier table `--graph` prints
against the `mbarrier.init` counts of the Gluon `--gluon` prints for a bundled kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleError

HEAD = """\
import triton.language as tl
import tle_compiler as tle

STAGES = 2
BM: tl.constexpr = 16
"""

PARTS = """

def prod(ring, x_ptr, N):
    offs = tl.arange(0, BM)
    w = ring.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + offs))
        w.commit(t)


def cons(ring, out_ptr, N):
    offs = tl.arange(0, BM)
    r = ring.reader()
    acc = tl.zeros([BM], tl.float32)
    for t in range(N):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    tl.store(out_ptr + offs, acc)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
"""

RING = "    ring = tle.pipe(capacity=STAGES, tile=tle.gpu.alloc([STAGES, BM], tl.float32))\n"


def kernel(name: str, deco: str = "@tle.jit", extra: str = "") -> str:
    """A kernel ``name`` over prod/cons; ``extra`` added to the reader's trip count (" + 1": the
    reader waits a tile the writer never commits)."""
    return (f"\n\n{deco}\ndef {name}(x_ptr, out_ptr, N):\n    tle.assume(N >= 0)\n{RING}"
            f"    tle.gpu.warp_specialize([(prod, (ring, x_ptr, N)), "
            f"(cons, (ring, out_ptr, N{extra}))], [4], [232])\n")


def helper_kernel(name: str, extra: str = "", via: int = 1) -> str:
    """A kernel ``name`` whose pipe and warp_specialize are in a helper (``via`` helpers deep)."""
    out = (f"\n\n@tle.jit\ndef {name}(x_ptr, out_ptr, N):\n    tle.assume(N >= 0)\n"
           f"    launch_{name}_1(x_ptr, out_ptr, N)\n")
    for i in range(1, via):
        out += (f"\n\ndef launch_{name}_{i}(x_ptr, out_ptr, N):\n"
                f"    launch_{name}_{i + 1}(x_ptr, out_ptr, N)\n")
    return out + (f"\n\ndef launch_{name}_{via}(x_ptr, out_ptr, N):\n{RING}"
                  f"    tle.gpu.warp_specialize([(prod, (ring, x_ptr, N)), "
                  f"(cons, (ring, out_ptr, N{extra}))], [4], [232])\n")


def write(tmp_path: Path, text: str, name: str = "k.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = tle_dump([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, out, err


def ws_line(path: Path, nth: int = 1) -> int:
    lines = [i for i, ln in enumerate(path.read_text().splitlines(), 1)
             if "tle.gpu.warp_specialize(" in ln]
    return lines[nth - 1]


# ----------------------------------------------------------------------------------------------
# a kernel whose warp_specialize is in a helper


def test_a_faulty_kernel_with_its_warp_specialize_in_a_helper_fails_the_file(tmp_path, capsys):
    """Before: exit 0, the verdict of `good` only; `bad` (its reader waits N + 1 tiles of N) was
    left out. Now exit 1 at the helper's call, in every mode."""
    path = write(tmp_path, HEAD + kernel("good") + helper_kernel("bad", " + 1") + PARTS)
    for flags in ((), ("--gluon",), ("--format", "json"), ("--graph",), ("--print-ir",)):
        code, _, err = run(capsys, "-q", *flags, path)
        assert code == 1, (flags, err)
        assert f"k.py:{ws_line(path, 2)}:" in err and "[bad-warp-specialize]" in err, err
        assert "kernel 'bad'" in err and "'launch_bad_1'" in err, err


def test_a_kernel_with_its_warp_specialize_in_a_helper_alone(tmp_path, capsys):
    """Before: exit 2, "no @tle.jit kernel that calls tle.gpu.warp_specialize" (the kernel is
    there). Now exit 1 naming the kernel and its helpers, for a correct protocol too."""
    path = write(tmp_path, HEAD + helper_kernel("k", via=3) + PARTS)
    code, _, err = run(capsys, path)
    assert code == 1, err
    assert "kernel 'k' (line" in err and "'launch_k_1' -> 'launch_k_2' -> 'launch_k_3'" in err
    assert f"k.py:{ws_line(path)}:" in err and "move the call into 'k'" in err, err


def test_the_runtime_reads_the_helper_kernel_as_tle_dump_does(tmp_path, monkeypatch):
    """The launch path (TleKernel.pipe_ir, the frontend's reading) gives the same refusal."""
    import importlib

    path = write(tmp_path, HEAD + kernel("good") + helper_kernel("bad") + PARTS, "hk19.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("hk19")
    with pytest.raises(TleError, match=r"calls tle.gpu.warp_specialize in its helper "
                                       r"'launch_bad_1'"):
        mod.bad.pipe_ir()
    assert mod.good.pipe_ir().name == "good"  # a launch of the other kernel reads it alone
    assert path.exists()


def test_helpers_without_warp_specialize_change_nothing(tmp_path, capsys):
    """Twins: a kernel that calls a helper without warp_specialize and calls warp_specialize
    itself is verified; a @tle.jit function with no warp_specialize anywhere stays "no kernel"
    (exit 2), and a helper calling warp_specialize that no kernel calls is not read."""
    text = HEAD + kernel("good").replace("    tle.assume(N >= 0)\n",
                                         "    tle.assume(N >= 0)\n    note(N)\n") + PARTS + \
        "\n\ndef note(N):\n    return N + 1\n"
    code, _, err = run(capsys, "-q", write(tmp_path, text))
    assert code == 0 and "good: verified for every value of N" in err, err
    code, _, err = run(capsys, "-q", write(tmp_path, HEAD + "\n\n@tle.jit\ndef k(x):\n    pass\n",
                                           "empty_kernel.py"))
    assert code == 2 and "no @tle.jit kernel that calls tle.gpu.warp_specialize" in err, err
    lone = HEAD + helper_kernel("k").replace("@tle.jit\n", "") + PARTS
    code, _, err = run(capsys, "-q", write(tmp_path, lone, "lone.py"))
    assert code == 2 and "no @tle.jit kernel that calls tle.gpu.warp_specialize" in err, err


def _indented(text: str) -> str:
    return "\n".join(("    " + ln) if ln.strip() else ln for ln in text.split("\n"))


@pytest.mark.parametrize("wrap,kw", [
    (lambda k: "\n\nclass Kernels:" + _indented(k), "class"),
    (lambda k: "\n\ndef make():" + _indented(k) + "    return bad\n\n\nbad = make()\n", "def"),
])
def test_a_faulty_kernel_in_a_class_or_a_factory_fails_the_file(tmp_path, capsys, wrap, kw):
    """Before: exit 0 with `good`'s verdict only; `Kernels.bad` / `make()`'s kernel, which
    Python makes a kernel (its reader waits N + 1 tiles of N), was left out. Now refused at its
    def (check bad-jit, exit 1), as a kernel inside a module-level `if` already was."""
    path = write(tmp_path, HEAD + kernel("good") + wrap(kernel("bad", extra=" + 1")) + PARTS)
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1)
                if ln.strip().startswith("def bad("))
    for flags in ((), ("--gluon",)):
        code, _, err = run(capsys, "-q", *flags, path)
        assert code == 1 and f"k.py:{line}:" in err and "[bad-jit]" in err, (flags, err)
        assert f"kernel 'bad' is defined inside a module-level `{kw}`" in err, err


@pytest.mark.parametrize("call", ["bad = tle.jit(bad_fn)", "bad = tle.jit(num_warps=4)(bad_fn)"])
def test_a_kernel_made_by_calling_the_decorator_fails_the_file(tmp_path, capsys, call):
    """Before: exit 0 with `good`'s verdict only, `bad` (Python's kernel, its reader waiting
    N + 1 tiles of N) left out, and its launch "has no Pipe IR". Now refused at the call."""
    text = HEAD + kernel("good") + kernel("bad_fn", "", " + 1").replace("\n\ndef", "def", 1) \
        + f"\n\n{call}\n" + PARTS
    path = write(tmp_path, text)
    line = text.splitlines().index(call) + 1
    for flags in ((), ("--gluon",)):
        code, _, err = run(capsys, "-q", *flags, path)
        assert code == 1 and f"k.py:{line}:" in err and "[bad-jit]" in err, (flags, err)
        assert "makes 'bad_fn' a kernel by a call" in err, err


def test_a_plain_function_or_class_in_the_file_changes_nothing(tmp_path, capsys):
    """Twins: a module-level class and function holding no kernel (a @tle.jit def that calls no
    warp_specialize, a nested plain def calling it) leave the verdict as it was."""
    extra = ("\n\nclass Tools:\n    @tle.jit\n    def noop(x):\n        pass\n"
             "\n\ndef outer():\n    def inner(ring, x_ptr, N):\n"
             "        tle.gpu.warp_specialize([(prod, (ring, x_ptr, N))], [], [])\n"
             "    return inner\n")
    code, _, err = run(capsys, "-q", write(tmp_path, HEAD + kernel("good") + extra + PARTS))
    assert code == 0 and "good: verified for every value of N" in err, err


# ----------------------------------------------------------------------------------------------
# decorators bound through a name


@pytest.mark.parametrize("binding,deco", [
    ("myjit = tle.jit\n", "@myjit"),
    ("T = tle\n", "@T.jit"),
    ("J = tle.jit\nmyjit = J\n", "@myjit"),
])
def test_a_decorator_bound_to_a_name_is_a_kernel(tmp_path, capsys, binding, deco):
    """Before: exit 2 "no @tle.jit kernel ..."; now verified, lowered, and read by the runtime."""
    path = write(tmp_path, HEAD + binding + kernel("k", deco) + PARTS)
    code, _, err = run(capsys, "-q", path)
    assert code == 0 and "k: verified for every value of N" in err, err
    code, out, err = run(capsys, "--gluon", path)
    assert code == 0, err
    assert len(re.findall(r"mbarrier\.init\(", out)) == 4, out  # full and empty, two stages


@pytest.mark.parametrize("binding,deco", [("myjit = tle.jit\n", "@myjit"), ("T = tle\n", "@T.jit")])
def test_a_faulty_kernel_under_a_bound_decorator_fails_the_file(tmp_path, capsys, binding, deco):
    """Before: exit 0 with the other kernel's verdict only; now the faulty one is rejected."""
    path = write(tmp_path, HEAD + binding + kernel("good") + kernel("bad", deco, " + 1") + PARTS)
    code, _, err = run(capsys, "-q", path)
    assert code == 1, err
    assert "good: verified" in err and "bad: rejected: 1 error" in err, err
    assert "[wait-never-committed]" in err, err
    code, _, err = run(capsys, "-q", "--kernel", "bad", path)
    assert code == 1 and "bad: rejected" in err, err


def test_the_runtime_reads_a_kernel_under_a_bound_decorator(tmp_path, monkeypatch):
    import importlib

    write(tmp_path, HEAD + "myjit = tle.jit\n" + kernel("k", "@myjit") + PARTS, "bd19.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.import_module("bd19").k.pipe_ir().name == "k"


@pytest.mark.parametrize("imports,deco", [
    ("import tle_compiler as t\n", "@t.jit"),
    ("from tle_compiler import jit as J\n", "@J"),
    ("from tle_compiler.jit import jit\n", "@jit"),
    ("", "@tle.jit(num_warps=4)"),
])
def test_imported_decorator_spellings_stay_kernels(tmp_path, capsys, imports, deco):
    path = write(tmp_path, HEAD + imports + kernel("k", deco) + PARTS)
    code, _, err = run(capsys, "-q", path)
    assert code == 0 and "k: verified for every value of N" in err, err


def test_a_name_rebound_after_the_decorator_binding_is_no_decorator(tmp_path, capsys):
    """Twin: the last module-level binding decides, as for constants (`myjit = tle.jit`, then
    `myjit = print`: the kernel below is not read; no kernel is left, exit 2)."""
    path = write(tmp_path, HEAD + "myjit = tle.jit\nmyjit = print\n" + kernel("k", "@myjit")
                 + PARTS)
    code, _, err = run(capsys, "-q", path)
    assert code == 2 and "no @tle.jit kernel" in err, err


def test_a_faulty_kernel_under_a_name_bound_to_a_jit_call_fails_the_file(tmp_path, capsys):
    """Before: exit 0 with `good`'s verdict only (`myjit = tle.jit(num_warps=4)`, then `@myjit`
    over a faulty kernel, which Python makes a kernel, left out). Refused at the decorator
    (bad-jit) the round after; now read with the call's options (tests/test_adversarial_verdicts_20
    .py): the faulty kernel is rejected at its reader's line, beside the verified one."""
    text = HEAD + "myjit = tle.jit(num_warps=4)\n" + kernel("good") + kernel("bad", "@myjit",
                                                                              " + 1") + PARTS
    path = write(tmp_path, text)
    code, _, err = run(capsys, "-q", path)
    assert code == 1 and "bad: rejected: 1 error" in err and "good: verified" in err, err
    assert "[wait-never-committed]" in err, err
    path = write(tmp_path, text.replace("num_warps=4)\n", "num_warps=4)\nmyjit = tle.jit\n"),
                 "rebound.py")
    code, _, err = run(capsys, "-q", path)
    assert code == 1 and "bad: rejected: 1 error" in err and "good: verified" in err, err


def test_a_decorator_bound_to_a_call_of_jit(tmp_path, capsys):
    """`myjit = tle.jit(num_warps=8)`, then `@myjit`: Python's kernel has the call's options, and
    so has the reading (frontend/kernel.py jit_call, jit_options: one reading for the verdict,
    the lowering and a launch): verified and lowered on 8 warps."""
    path = write(tmp_path, HEAD + "myjit = tle.jit(num_warps=8)\n" + kernel("k", "@myjit")
                 + PARTS.replace('"num_warps": 4', '"num_warps": 8'))
    code, _, err = run(capsys, "-q", path)
    assert code == 0 and "k: verified for every value of N" in err, err
    code, out, err = run(capsys, "--gluon", path)
    assert code == 0 and "# partition 'prod': 8 warps (default partition)" in out, err


# ----------------------------------------------------------------------------------------------
# how the kernel's files are decoded

LATIN = b"# -*- coding: latin-1 -*-\n# r\xe9glages du noyau\n"


def test_a_kernel_file_with_a_coding_declaration(tmp_path, capsys):
    """Before: exit 2 "not UTF-8 text (byte 37)", though Python imports the file. Now read as
    Python reads it: verified, its faulty twin rejected at the reader's line, lowered."""
    good = tmp_path / "lat.py"
    good.write_bytes(LATIN + (HEAD + kernel("k") + PARTS).encode())
    code, _, err = run(capsys, "-q", good)
    assert code == 0 and "k: verified for every value of N" in err, err
    code, out, err = run(capsys, "--gluon", good)
    assert code == 0 and "mbarrier.init(" in out, err
    bad = tmp_path / "lat_bad.py"
    bad.write_bytes(LATIN + (HEAD + kernel("k", extra=" + 1") + PARTS).encode())
    code, _, err = run(capsys, "-q", bad)
    line = next(i for i, ln in enumerate(bad.read_bytes().split(b"\n"), 1) if b"r.wait(t)" in ln)
    assert code == 1 and f"lat_bad.py:{line}: error:" in err and "wait-never-committed" in err


@pytest.mark.parametrize("prefix", [LATIN, b"\xef\xbb\xbf"])
def test_the_emulator_runs_the_file_tle_dump_verifies(tmp_path, prefix):
    """The CPU emulator (tle_compiler/testing/emulator.py), the executable check of a verified
    kernel, read the file as UTF-8 text with no byte-order mark skipped: a latin-1 file raised
    UnicodeDecodeError and a byte-order mark a SyntaxError ("invalid non-printable character
    U+FEFF"). It decodes as Python does now, as tle-dump."""
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    path = tmp_path / "emu.py"
    path.write_bytes(prefix + (HEAD + kernel("k") + PARTS).encode())
    mod = load_kernel_module(path)
    x = torch.arange(3 * 16, dtype=torch.float32)
    out = torch.full((16,), float("nan"))
    mod.k[(1,)](x, out, 3)
    assert torch.equal(out, x.view(3, 16).sum(0))


def _package(tmp_path: Path, module: bytes) -> Path:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "settings.py").write_bytes(module)
    return write(tmp_path, HEAD.replace("STAGES = 2\n", "from .settings import STAGES\n")
                 + kernel("k") + PARTS, "kern.py")


def test_an_imported_module_with_a_coding_declaration(tmp_path, capsys):
    """Before: an internal error (UnicodeDecodeError, exit 3). Now verified."""
    path = _package(tmp_path, LATIN + b"STAGES = 2\n")
    code, _, err = run(capsys, "-q", path)
    assert code == 0 and "k: verified for every value of N" in err, err


@pytest.mark.parametrize("module,why", [
    (b"# r\xe9glages\nSTAGES = 2\n", "(unicode error) 'utf-8' codec can't decode byte 0xe9"),
    (b"# coding: nope\nSTAGES = 2\n", "unknown encoding: nope"),
])
def test_an_imported_module_python_cannot_decode(tmp_path, capsys, module, why):
    """Before: an internal error (exit 3) for bytes that are no UTF-8 text, verified (exit 0) for
    an unknown encoding. Python's import raises SyntaxError for both: now a syntax error at that
    module, exit 2, in every mode."""
    path = _package(tmp_path, module)
    for flags in ((), ("--gluon",), ("--print-ir",)):
        code, _, err = run(capsys, "-q", *flags, path)
        assert code == 2, (flags, err)
        assert "settings.py:1:1: error: Python syntax error: " + why in err, err


def test_undecodable_kernel_files_stay_unusable(tmp_path, capsys):
    """Bytes that are not UTF-8 and no declaration (twins, unchanged), a declaration Python
    refuses and a byte-order mark with a contradicting declaration: exit 2, one line. The last two
    were exit 2 before too, as "no @tle.jit kernel" (the file was read as UTF-8 text); now the
    line says why Python does not import the file."""
    cases = {"raw.py": (b"\xff\xfe\x00garbage", "raw.py: error: not UTF-8 text (byte 0)"),
             "nodecl.py": (b"x = 1\n# r\xe9glages\n", "nodecl.py: error: not UTF-8 text (byte 9)"),
             "cookie.py": (b"# coding: nope\nx = 1\n",
                           "cookie.py:1: error: Python syntax error: unknown encoding: nope"),
             "bom.py": (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
                        "bom.py:1: error: Python syntax error: encoding problem: utf-8")}
    for name, (data, line) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        code, _, err = run(capsys, "-q", path)
        assert code == 2 and line in err and len(err.strip().splitlines()) == 1, (name, err)


def test_a_byte_order_mark_is_still_skipped(tmp_path, capsys):
    path = tmp_path / "bom_kernel.py"
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + kernel("k") + PARTS).encode())
    code, _, err = run(capsys, "-q", path)
    assert code == 0 and "k: verified" in err, err


# ----------------------------------------------------------------------------------------------
# checked and found right: twins of the whole-file outputs


@pytest.mark.parametrize("order,code", [(("good", "bad"), 1), (("bad", "good"), 0)])
def test_a_kernel_defined_twice_is_the_later_def(tmp_path, capsys, order, code):
    """Python binds the name to the later def; tle-dump verifies that one, in both orders."""
    defs = {"good": kernel("K"), "bad": kernel("K", extra=" + 1")}
    path = write(tmp_path, HEAD + defs[order[0]] + defs[order[1]] + PARTS)
    got, _, err = run(capsys, "-q", path)
    assert got == code and err.count("tle-dump: K: ") == 1, err


def test_several_kernels_flags_and_names(tmp_path, capsys):
    path = write(tmp_path, HEAD + kernel("good") + kernel("bad", extra=" + 1") + PARTS)
    assert run(capsys, "-q", "--kernel", "good", path)[0] == 0
    assert run(capsys, "-q", "--kernel", "bad", path)[0] == 1
    code, _, err = run(capsys, "-q", "--kernel", "nope", path)
    assert code == 2 and "no kernel named nope (kernels: good, bad)" in err, err
    code, _, err = run(capsys, "-q", "--kernel", "good", "--kernel", "nope", path)
    assert code == 2 and "no kernel named nope" in err, err
    for flags in (("--gluon",), ("--graph",), ("--format", "json"), ("--print-ir",)):
        assert run(capsys, "-q", *flags, path)[0] == 1, flags
    code, out, _ = run(capsys, "--gluon", "--kernel", "good", path)
    assert code == 0 and "mbarrier.init(" in out


@pytest.mark.parametrize("param,line", [
    ("M=3", "--param M: no such param (known: N)"),
    ("N=x", "--param expects NAME=INTEGER"),
    ("N=1.5", "--param expects NAME=INTEGER"),
    ("N=-1", "--param N=-1 is outside the domain of N (N >= 0)"),
])
def test_param_misuse_is_one_line(tmp_path, capsys, param, line):
    path = write(tmp_path, HEAD + kernel("k") + PARTS)
    code, _, err = run(capsys, "-q", "--param", param, path)
    assert code == 2 and line in err and len(err.strip().splitlines()) == 1, err


def test_param_twice_and_the_values_the_verdict_names(tmp_path, capsys):
    path = write(tmp_path, HEAD + kernel("k") + PARTS)
    code, _, err = run(capsys, "-q", "--param", "N=1", "--param", "N=2", path)
    assert code == 2 and "--param N given twice (1 and 2)" in err, err
    code, _, err = run(capsys, "-q", "--param", "N=3", "--param", "N=3", path)
    assert code == 0 and "k: verified for N = 3:" in err, err


@pytest.mark.parametrize("make,line", [
    (lambda p: p.write_text(""), "error: no @tle.jit kernel that calls tle.gpu.warp_specialize"),
    (lambda p: p.write_text("def f(:\n"), ":1:7: error: Python syntax error: invalid syntax"),
    (lambda p: p.mkdir(), "error: is a directory"),
    (lambda p: None, "error: no such file"),
])
def test_files_that_are_no_kernels(tmp_path, capsys, make, line):
    path = tmp_path / "x.py"
    make(path)
    for flags in ((), ("--gluon",), ("--print-ir",), ("--graph",)):
        code, _, err = run(capsys, "-q", *flags, path)
        assert code == 2 and len(err.strip().splitlines()) == 1, (flags, err)
        assert line in err or (flags == ("--print-ir",) and "no kernel" in err), (flags, err)


def test_the_barrier_table_matches_the_gluon_barriers():
    """--graph's barrier table (counts in partition arrivals) against the mbarrier.init of the
    Gluon --gluon prints for the same kernel: every barrier in both, the same count in partition
    units (the Gluon comment's `N x ...` plus the elected arrivals of a mixed barrier)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    src = Path(__file__).resolve().parents[1] / "tle_kernels" / "examples" / "spmc.py"

    def dump(*flags):
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            assert tle_dump([*flags, str(src)]) == 0
        return out.getvalue()

    table = {}
    for m in re.finditer(r"^#\s+(\w+\.(?:full|empty)\[g\d+\])\[(\d+)(?:\.\.(\d+))?\]\s+(\d+)\s",
                         dump("--graph"), re.M):
        for i in range(int(m.group(2)), int(m.group(3) or m.group(2)) + 1):
            table[f"{m.group(1)}[{i}]"] = int(m.group(4))
    gluon = {}
    for m in re.finditer(r"mbarrier\.init\(\w+\.index\(\d+\), count=(\d+)\)\s*#\s*(\S+)\s+(.*)",
                         dump("--gluon")):
        count, rest = int(m.group(1)), m.group(3)
        units = count if rest.startswith("partition") else \
            int(re.search(r"= (\d+) x", rest).group(1)) + sum(
                int(e) for e in re.findall(r"\+ (\d+) elected", rest))
        gluon[m.group(2)] = units
    assert table and table == gluon

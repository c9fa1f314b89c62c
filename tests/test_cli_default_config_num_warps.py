"""A DEFAULT_CONFIG ``"num_warps"`` must agree with the kernel's ``@tle.jit(num_warps=...)``.

The kernel's value is what a launch compiles and what sets the barrier counts of the Gluon
source (each thread of the default partition arrives on a full barrier after its copy: the
count is 128 with 4 warps, 256 with 8).
A DEFAULT_CONFIG that gave another value once made ``--gluon`` print a 4-warp kernel and
``--ttgir`` compile an 8-warp one from the same file, without a word. Now the contradiction is
unusable input (exit 2) at the config's ``"num_warps"`` line, naming both values, whatever
tle-dump prints; a config that agrees (or gives none) makes ``--gluon`` and ``--ttgir`` show the
same kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import EXIT_OK, EXIT_UNUSABLE, main

KERNEL = '''\
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit{JIT}
def k(x_ptr, out_ptr, N):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(prod, (ring, x_ptr, N)), (cons, (ring, out_ptr, N))], [4], [232])


def prod(ring, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ring.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)


def cons(ring, out_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile)).to(tl.float32)
        r.release(t)
    tl.store(out_ptr + offs, acc)


'''

CONFIG = '''DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*bf16", "out_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
{WARPS}    "grid": (1,),
}
'''

#: The same config, keyed by kernel name (a file of several kernels).
KEYED_CONFIG = '''DEFAULT_CONFIG = {
    "k": {
        "signature": {"x_ptr": "*bf16", "out_ptr": "*fp32", "N": "i32"},
        "constexprs": {},
    {WARPS}    "grid": (1,),
    },
}
'''

MODES = [(), ("--gluon",), ("--ttgir",), ("-p", "emit-gluon"), ("--format", "json")]


def kernel_file(tmp_path: Path, jit: str, warps, config: str = CONFIG) -> Path:
    """The ring kernel with ``@tle.jit{jit}`` and DEFAULT_CONFIG "num_warps": ``warps`` (left
    out when None)."""
    line = "" if warps is None else f'    "num_warps": {warps},\n'
    f = tmp_path / "kernel.py"
    f.write_text(KERNEL.replace("{JIT}", jit) + config.replace("{WARPS}", line))
    return f


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def config_line(path: Path) -> int:
    """The line of DEFAULT_CONFIG's "num_warps" key."""
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if '"num_warps"' in ln)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "verify")
def test_a_config_num_warps_other_than_the_kernels_is_unusable(capsys, tmp_path, mode):
    f = kernel_file(tmp_path, "(num_warps=4)", 8)
    code, out, err = run(capsys, *mode, f)
    assert code == EXIT_UNUSABLE, err
    assert "Traceback" not in err
    (line,) = [ln for ln in err.splitlines() if "error:" in ln]
    assert line.startswith(f"{f}:{config_line(f)}: error: DEFAULT_CONFIG gives num_warps 8")
    assert "kernel 'k' has num_warps=4" in line
    if mode == ("--format", "json"):
        assert '"exit_code": 2' in out
    else:
        assert out == ""  # no Gluon, TTGIR or report of a kernel the file describes twice


def test_a_bare_jit_has_4_warps_and_the_keyed_config_names_its_line(capsys, tmp_path):
    f = kernel_file(tmp_path, "", 8, KEYED_CONFIG)
    code, _, err = run(capsys, "--gluon", f)
    assert code == EXIT_UNUSABLE
    assert f"{f}:{config_line(f)}: error: DEFAULT_CONFIG gives num_warps 8, but kernel 'k' " \
           f"has num_warps=4" in err


def full_barrier_counts(text: str, pattern: str) -> set[int]:
    return {int(n) for n in re.findall(pattern, text)}


@pytest.mark.parametrize("jit, warps, threads", [
    ("(num_warps=8)", 8, 256),
    ("(num_warps=8)", None, 256),  # no "num_warps" in DEFAULT_CONFIG: the kernel's
    ("(num_warps=4)", 4, 128),
])
def test_gluon_and_ttgir_lower_the_same_warps(capsys, tmp_path, jit, warps, threads):
    f = kernel_file(tmp_path, jit, warps)
    code, gluon, err = run(capsys, "--gluon", f)
    assert code == EXIT_OK, err
    code, ttgir, err = run(capsys, "--ttgir", f)
    assert code == EXIT_OK, err
    # the full barriers: one arrival per thread of the producer (the default partition)
    assert full_barrier_counts(gluon, r"mbarrier\.init\(ring_full\d*\.index\(\d\), count=(\d+)\)") \
        == {threads}
    assert threads in full_barrier_counts(ttgir, r"ttng\.init_barrier %\w+, (\d+) ")
    assert f'"ttg.num-warps" = {threads // 32} : i32' in ttgir
    assert f"partition 'prod': {threads // 32} warps (default partition)" in gluon


def test_a_kir_file_whose_header_contradicts_its_config_is_unusable(capsys, tmp_path):
    """The config a ``.kir`` kernel carries is checked against its header's num_warps too."""
    code, kir, err = run(capsys, "-p", "infer-barriers", "--print-ir",
                         kernel_file(tmp_path, "(num_warps=8)", 8))
    assert code == EXIT_OK, err
    assert " num_warps=8 " in kir.splitlines()[0]
    f = tmp_path / "kernel.kir"
    f.write_text(kir.replace(" num_warps=8 ", " num_warps=4 ", 1)
                 .replace("default warps=8", "default warps=4"))
    code, out, err = run(capsys, "-p", "emit-gluon", f)
    assert code == EXIT_UNUSABLE and out == ""
    assert f"{f}:1: error: DEFAULT_CONFIG gives num_warps 8, but kernel 'k' has num_warps=4" in err

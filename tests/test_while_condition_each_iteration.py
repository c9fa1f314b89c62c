"""A ``while`` condition is evaluated before every iteration, also when it needs statements of its
own: an inlined helper's locals, or an effectful call the builder sequences into a temporary
(frontend/build.py ``s_While``). Those statements run before the loop and again at the end of its
body. Before, they ran once before the loop, so ``while above(p, k):`` with ``above`` loading
``p`` tested the first load's comparison forever (the lowered loop never ended when it was true),
and ``while tl.atomic_add(flag, 0) == 0`` inside a helper read the atomic once."""

from __future__ import annotations

import re
import textwrap

import pytest

from tle_compiler.cli.dump import main

KERNEL = textwrap.dedent('''
    import triton.language as tl
    import tle_compiler as tle


    @tle.jit(num_warps=4)
    def k(x_ptr, c_ptr, y_ptr, N):
        ch = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 64], tl.float32))
        tle.gpu.warp_specialize([(fill, (ch, x_ptr, N)), (drain, (ch, y_ptr, c_ptr, N))], [4],
                                [232])


    def fill(ch, x_ptr, N):
        w = ch.writer()
        offs = tl.arange(0, 64)
        for i in range(N):
            slot = w.acquire(i)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + i * 64 + offs))
            w.commit(i)


    def drain(ch, y_ptr, c_ptr, N):
        rd = ch.reader()
        offs = tl.arange(0, 64)
        n = count(c_ptr)
        for i in range(N):
            res = rd.wait(i)
            tl.store(y_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)) + n)
            rd.release(i)


    def count(c_ptr):
        k = 0
        while above(c_ptr, k):
            k += 1
        return k


    def above(p, k):
        v = tl.load(p)
        return v > k


    DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "c_ptr": "*i32", "y_ptr": "*fp32",
                                    "N": "i32"}, "constexprs": {}, "num_warps": 4, "grid": (1,)}
''')


def test_the_condition_statements_run_again_at_the_end_of_the_body(tmp_path, capsys):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    assert main(["-q", str(path)]) == 0
    assert "verified" in capsys.readouterr().err
    assert main(["--gluon", str(path)]) == 0
    out = capsys.readouterr().out
    drain = out[out.index("def drain("):]
    head = re.search(r"\n(\s+)while (\w+):\n", drain)
    assert head, drain
    indent, test = head.group(1), head.group(2)
    before, body = drain[:head.start()], drain[head.end():]
    body = "\n".join(ln for ln in body.splitlines()
                     if ln.startswith(indent + "    ")) + "\n"
    # the load and the test variable are computed before the loop and again in its body, after
    # the increment (the condition of the next iteration)
    assert before.count("gl.load(c_ptr)") == 1 and body.count("gl.load(c_ptr)") == 1, drain
    assert re.search(rf"\n\s+{test} = ", before) and re.search(rf"\n\s+{test} = ", body), drain
    assert body.index("+ 1)") < body.index("gl.load(c_ptr)"), body


def test_it_compiles(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.lowering import compile_kernel

    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    ttgir = compile_kernel((str(path), "k"), {"x_ptr": "*fp32", "c_ptr": "*i32",
                                              "y_ptr": "*fp32", "N": "i32"}).asm["ttgir"]
    assert "scf.while" in ttgir

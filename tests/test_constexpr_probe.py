"""tle-dump on a kernel a constexpr of which has no value (no DEFAULT_CONFIG, no --param): the
lowering is tried with stand-in values for it (cli/translation_check.PROBE_CONSTEXPRS), so that a
refusal no launch lifts (`tl.debug_barrier(1)`, which Triton 3.6 refuses) is not hidden, while a
kernel that only a value outside the probes translates (a [512] slot filled by `tl.arange(0, C)`, or
two constexprs that must differ, B = 64 and C = 256) keeps its verdict, not translated: its
refusals at each probe are at expressions reading the stand-ins, the translation is made again
with those statements left out, and only what it refuses elsewhere, or a refusal the same at
every value, is the kernel's."""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, run_dump, write_kernel

HEAD = "import triton\nimport triton.language as tl\nimport tle_compiler as tle\n\n\n"

ONE = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 512], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C)), (consume, (kv, y_ptr, N, C))],
                            [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr):
    w = kv.writer()
    for i in range(N):
        s = w.acquire(i)
        t = tl.load(x_ptr + tl.arange(0, C))
        tl.store(tle.gpu.local_ptr(s.tile), t)
        w.commit(i)


def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for i in range(N):
        res = r.wait(i)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(y_ptr + tl.arange(0, 512), t)
        READER
        r.release(i)
'''

TWO = HEAD + '''@tle.jit
def k(x_ptr, y_ptr, N, C: tl.constexpr, B: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64, 256], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, C, B)), (consume, (kv, y_ptr, N, C))],
                            [4], [232])


def produce(kv, x_ptr, N, C: tl.constexpr, B: tl.constexpr):
    w = kv.writer()
    for i in range(N):
        s = w.acquire(i)
        t = tl.load(x_ptr + tl.arange(0, B)[:, None] * C + tl.arange(0, C)[None, :])
        tl.store(tle.gpu.local_ptr(s.tile), t)
        w.commit(i)


def consume(kv, y_ptr, N, C: tl.constexpr):
    r = kv.reader()
    for i in range(N):
        res = r.wait(i)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(y_ptr + tl.arange(0, 64)[:, None] * 256 + tl.arange(0, 256)[None, :], t)
        READER
        r.release(i)
'''


@pytest.mark.parametrize("template", [ONE, TWO], ids=["C=512", "B=64,C=256"])
def test_a_kernel_only_values_past_the_probes_translate_keeps_its_verdict(tmp_path, capsys,
                                                                          template):
    code, err = dump(tmp_path, capsys, template.replace("READER", "pass"))
    expect(code, err, "verified")


def test_the_verdict_says_the_lowering_did_not_run(tmp_path, capsys):
    path = write_kernel(tmp_path, ONE.replace("READER", "pass"), "kernel.py")
    code, out, err = run_dump(capsys, str(path))
    assert code == 0, err
    assert "not translated to Gluon: no value for constexpr C" in out + err


@pytest.mark.parametrize("template", [ONE, TWO], ids=["C=512", "B=64,C=256"])
@pytest.mark.parametrize("stmt", ["tl.debug_barrier(1)", "x = C; tl.debug_barrier(1)",
                                  "tl.debug_barrier(C)"],
                         ids=["plain", "beside-a-read", "reading-it"])
def test_a_refusal_no_value_lifts_is_found_past_the_probes_refusals(tmp_path, capsys, template,
                                                                    stmt):
    """Triton 3.6 refuses an argument to tl.debug_barrier whatever it is: the kernel is
    rejected at that line, though every probe value is first refused at the tile store."""
    text = template.replace("READER", stmt)
    code, err = dump(tmp_path, capsys, text)
    line = next(n for n, ln in enumerate(text.splitlines(), 1) if stmt in ln)
    expect(code, err, ("rejected", f"kernel.py:{line}:", "tl.debug_barrier()"))

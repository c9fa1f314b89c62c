"""The ``tl`` calls a verified kernel may use besides loads, stores and math, lowered to Gluon
(lowering/more_ops.py): the atomics, ``tl.debug_barrier``, ``tl.device_print`` / ``print``,
``tl.device_assert``, ``tl.static_assert``, ``tl.static_print``. Each kernel below is verified by
the frontend and compiled for sm_90a on the CPU; the PTX (or TTGIR) must hold the instruction the
call means, with its operands, ordering and scope, and a debug barrier inside a partition must
be a named barrier over that partition's threads only."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("triton.experimental.gluon")

from .tle_snippets import HEADER, TILE_FILL  # noqa: E402
from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.frontend import read_kernels  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source  # noqa: E402
from tle_compiler.cli.dump import main as dump_main  # noqa: E402

# `fill` (TILE_FILL) is the default partition (4 warps); `drain` a worker of DRAIN_WARPS warps;
# BODY goes after drain's loop, ahead of its final store, and may use acc (a [64, 64] fp32 tile),
# c_ptr (*i32), f_ptr (*fp32) and NT.
KERNEL = HEADER + '''


@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, c_ptr, f_ptr, NT):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT)), (drain, (p, y_ptr, c_ptr, f_ptr, NT))],
                            [DRAIN_WARPS], [128])


''' + TILE_FILL + '''


def drain(p, y_ptr, c_ptr, f_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = p.reader()
    acc = tl.zeros([64, 64], tl.float32)
    for i in range(NT):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        r.release(i)
        acc = acc + v
    BODY
    tl.store(y_ptr + offs, acc.to(tl.bfloat16))
'''

SIG = {"x_ptr": "*bf16", "y_ptr": "*bf16", "c_ptr": "*i32", "f_ptr": "*fp32", "NT": "i32"}


def _write(tmp_path, body: str, warps: int = 4, fill_extra: str = ""):
    src = KERNEL.replace("BODY", body).replace("DRAIN_WARPS", str(warps))
    if fill_extra:
        src = src.replace("        w.commit(i)\n", "        w.commit(i)\n" + fill_extra, 1)
    f = tmp_path / "more_ops.py"
    f.write_text(src)
    return f


def _verified(f):
    """tle-dump's verdict on the file is "verified" (exit 0); the kernel as the frontend read it."""
    assert dump_main(["-q", str(f)]) == 0
    return read_kernels(str(f), name="k")[0]


def _compile(tmp_path, body: str, warps: int = 4, fill_extra: str = ""):
    f = _write(tmp_path, body, warps, fill_extra)
    info = _verified(f)
    c = compile_kernel(info, SIG)
    return c, c.tle_generated.source


def _atoms(ptx: str) -> list[str]:
    return re.findall(r"\batom\.[\w.]+", ptx)


# ---------------------------------------------------------------------------------- atomics

@pytest.mark.parametrize("op, ptx_op", [
    ("add", "add.u32"), ("and", "and.b32"), ("or", "or.b32"), ("xor", "xor.b32"),
    ("max", "max.s32"), ("min", "min.s32"), ("xchg", "exch.b32"),
])
def test_scalar_atomic_on_a_scalar_pointer(tmp_path, op, ptx_op):
    """An atomic whose result is unused still runs: Triton's default sem acq_rel, scope gpu."""
    c, gen = _compile(tmp_path, f"tl.atomic_{op}(c_ptr, NT)")
    assert re.search(rf"= gl\.atomic_{op}\(c_ptr, NT\)", gen)
    atoms = _atoms(c.asm["ptx"])
    assert len(atoms) == 1, atoms
    assert atoms[0].endswith(ptx_op) and ".global" in atoms[0], atoms
    assert "acq_rel" in atoms[0] and ".gpu" in atoms[0], atoms


def test_atomic_cas_by_keyword_and_its_old_value_is_used(tmp_path):
    c, gen = _compile(tmp_path, "old = tl.atomic_cas(pointer=c_ptr, cmp=0, val=NT)\n"
                                "    tl.store(c_ptr + 1 + tl.arange(0, 64), "
                                "tl.full([64], 0, tl.int32) + old)")
    assert re.search(r"(_old\d+) = gl\.atomic_cas\(c_ptr, 0, NT\)", gen)
    atoms = _atoms(c.asm["ptx"])
    assert len(atoms) == 1 and atoms[0].endswith("cas.b32"), atoms


def test_tensor_atomic_with_mask_sem_and_scope(tmp_path):
    """A tensor of pointers: one atom per element a thread holds, predicated by the mask, with
    the ordering and scope the call gives."""
    c, gen = _compile(tmp_path, "tl.atomic_add(f_ptr + tl.arange(0, 64), tl.sum(acc, 1), "
                                "mask=tl.arange(0, 64) < NT, sem='relaxed', scope='cta')")
    assert "sem='relaxed', scope='cta'" in gen and "mask=" in gen
    atoms = _atoms(c.asm["ptx"])
    assert atoms and set(atoms) == {"atom.global.cta.relaxed.add.f32"}, atoms
    ptx = c.asm["ptx"]
    assert re.search(r"@%p\d+ atom\.global\.cta\.relaxed\.add\.f32", ptx), "the mask predicates it"


@pytest.mark.parametrize("sem, scope, want", [
    ("release", "sys", ("sys", "release")), ("acquire", "gpu", ("gpu", "acquire")),
])
def test_tensor_atomic_with_a_scalar_value_is_splatted(tmp_path, sem, scope, want):
    c, gen = _compile(tmp_path, f"tl.atomic_or(c_ptr + tl.arange(0, 64), 3, sem='{sem}', "
                                f"scope='{scope}')")
    assert re.search(r"gl\.atomic_or\(\(c_ptr \+ gl\.arange\(0, 64, layout=(L\d+)\)\), "
                     r"gl\.full\(\[64\], 3, gl\.int32, layout=\1\)", gen), gen
    atoms = set(_atoms(c.asm["ptx"]))
    assert atoms and all(a.endswith("or.b32") and all(w in a.split(".") for w in want)
                         for a in atoms), atoms


def test_scalar_atomic_with_a_runtime_mask(tmp_path):
    c, gen = _compile(tmp_path, "tl.atomic_max(c_ptr, NT, mask=NT > 2)")
    assert re.search(r"gl\.atomic_max\(c_ptr, NT, mask=\(NT > 2\)\)", gen)
    assert len(_atoms(c.asm["ptx"])) == 1


@pytest.mark.parametrize("body, message", [
    ("tl.atomic_or(c_ptr, 3, sem='bogus')", r"sem='bogus' is not one Triton knows"),
    ("tl.atomic_or(c_ptr, 3, scope='block')", r"scope='block' is not one Triton knows"),
    ("tl.atomic_add(c_ptr + tl.arange(0, 64), 1, order='relaxed')",
     r"`tl\.atomic_add` has no keyword `order`"),
    ("tl.atomic_add(c_ptr, tl.arange(0, 64))",
     r"scalar pointer with a tensor val: give a tensor of pointers"),
])
def test_atomic_errors_name_the_argument(tmp_path, body, message):
    """tle-dump translates every kernel it verifies: a refusal of the lowering that no argument
    types lift rejects the kernel (since adversarial round 30, in this kernel of no
    DEFAULT_CONFIG too: the refusal was said, the verdict kept)."""
    f = _write(tmp_path, body)
    assert dump_main(["-q", str(f)]) == 1
    with pytest.raises(TleError, match=message):
        gluon_source((str(f), "k"), {})


def test_atomic_on_shared_memory_says_what_to_write_instead(tmp_path, capsys):
    """Gluon has no atomics on shared memory: a writer's atomic on its own slot is refused, by
    tle-dump where the kernel is read (it was verified before adversarial round 26) and by the
    lowering, and the error says what to do."""
    f = _write(tmp_path, "pass", fill_extra="")
    src = f.read_text().replace("        w.commit(i)\n",
                                "        tl.atomic_add(tle.gpu.local_ptr(s.t), 1)\n"
                                "        w.commit(i)\n", 1)
    f.write_text(src)
    assert dump_main(["-q", str(f)]) == 1
    assert "atomics on global pointers only" in capsys.readouterr().err
    with pytest.raises(TleError, match=r"on shared memory .* global pointers only; update a "
                                       r"global buffer, or load the tile, compute and store it"):
        gluon_source((str(f), "k"), {})


# ---------------------------------------------------------------------------------- barrier

def _named_barriers(ptx: str) -> list[tuple[int, int]]:
    """Every ``bar.sync id, threads`` / ``barrier.sync id, threads`` with a thread count."""
    return [(int(a), int(b)) for a, b in
            re.findall(r"\b(?:bar|barrier)\.sync(?:\.aligned)?\s+(\d+),\s*(\d+);", ptx)]


@pytest.mark.parametrize("warps", [2, 4])
def test_debug_barrier_in_a_worker_syncs_that_partition_only(tmp_path, warps):
    """Inside worker partition 0 Triton lowers the thread barrier to named barrier 2 over the
    partition's 32 * warps threads (ids 0 and 1 are the default partition's and the whole
    CTA's): one more such barrier than without the call, and no new CTA-wide one."""
    base, _ = _compile(tmp_path, "pass", warps)
    c, gen = _compile(tmp_path, "tl.debug_barrier()", warps)
    assert "\n    gl.thread_barrier()\n" in gen.split("def drain(", 1)[1]
    before, after = _named_barriers(base.asm["ptx"]), _named_barriers(c.asm["ptx"])
    assert after.count((2, 32 * warps)) == before.count((2, 32 * warps)) + 1, (before, after)
    assert sorted(set(after)) == sorted(set(before) | {(2, 32 * warps)})
    plain = r"\b(?:bar|barrier)\.sync(?:\.aligned)?\s+\d+;"
    assert len(re.findall(plain, c.asm["ptx"])) == len(re.findall(plain, base.asm["ptx"]))


def test_debug_barrier_in_the_default_partition(tmp_path):
    """In the default partition (4 warps) it is barrier 0 over its 128 threads."""
    base, _ = _compile(tmp_path, "pass", 2)
    c, gen = _compile(tmp_path, "pass", 2, fill_extra="        tl.debug_barrier()\n")
    assert "gl.thread_barrier()" in gen.split("def fill(", 1)[1].split("\ndef ", 1)[0]
    before, after = _named_barriers(base.asm["ptx"]), _named_barriers(c.asm["ptx"])
    assert after.count((0, 128)) == before.count((0, 128)) + 1, (before, after)
    assert after.count((2, 64)) == before.count((2, 64))


# ---------------------------------------------------------------------------------- print, asserts

def test_device_print_and_print(tmp_path):
    c, gen = _compile(tmp_path, "tl.device_print('acc', acc)\n"
                                "    print('n', NT)\n"
                                "    tl.device_print('nt', NT, hex=True)")
    assert "gl.device_print('acc', acc)" in gen
    assert "gl.device_print('n', NT)" in gen
    assert "gl.device_print('nt', NT, hex=True)" in gen
    ttgir = c.asm["ttgir"]
    assert len(re.findall(r"tt\.print \"", ttgir)) == 3, ttgir
    assert re.search(r'tt\.print " nt: " \{hex = true', ttgir)
    assert "call.uni" in c.asm["ptx"] and "vprintf" in c.asm["ptx"]


def test_device_assert(tmp_path):
    """``gl.device_assert`` as Triton's: it checks only in a debug compile, so the default
    compile carries no tt.assert, and the kernel compiles."""
    c, gen = _compile(tmp_path, "tl.device_assert(NT > 0, 'NT must be positive', "
                                "mask=NT < 100)")
    assert "gl.device_assert((NT > 0), 'NT must be positive', mask=(NT < 100))" in gen
    assert "tt.assert" not in c.asm["ttgir"]


def test_static_assert_and_static_print(tmp_path):
    c, gen = _compile(tmp_path, "tl.static_assert(64 > 0, 'tile')\n"
                                "    tl.static_print('compile time')")
    assert "gl.static_assert" not in gen and "gl.static_print" not in gen
    assert "ttg.warp_specialize" in c.asm["ttgir"]


def test_a_false_static_assert_fails_the_lowering_with_its_message(tmp_path, capsys):
    """tle-dump rejects it (Triton refuses to compile it), and so does the lowering, both
    quoting its message."""
    f = _write(tmp_path, "tl.static_assert(64 < 0, 'tile too small')")
    assert dump_main(["-q", str(f)]) == 1
    assert "tl.static_assert failed: tile too small" in capsys.readouterr().err
    with pytest.raises(TleError, match=r"tl\.static_assert failed: tile too small"):
        gluon_source((str(f), "k"), {})


# ---------------------------------------------------------------------------------- math, hints

@pytest.mark.parametrize("body, gluon, ptx", [
    ("acc = tl.fma(acc, acc, acc)", "acc = gl.fma(acc, acc, acc)", r"\bfma\.rn\.f32"),
    ("acc = tl.div_rn(acc, acc + 1.0)", "acc = gl.div_rn(acc, (acc + 1.0))", r"\bdiv\.rn\.f32"),
    ("acc = tl.fdiv(acc, acc + 1.0, ieee_rounding=True)",
     "acc = gl.fdiv(acc, (acc + 1.0), ieee_rounding=True)", r"\bdiv\.full\.f32"),
    ("acc = tl.sqrt_rn(acc)", "acc = gl.sqrt_rn(acc)", r"\bsqrt\.rn\.f32"),
    ("tl.store(c_ptr, tl.umulhi(NT, NT))", "gl.store(c_ptr, gl.umulhi(NT, NT))",
     r"\bmul\.hi\.u32"),
    ("tl.store(c_ptr, tl.xor_sum(tl.arange(0, 64), 0))", "gl.xor_sum(gl.arange(0, 64",
     r"\bxor\.b32"),
])
def test_elementwise_math_and_reductions(tmp_path, body, gluon, ptx):
    c, gen = _compile(tmp_path, body)
    assert gluon in gen
    assert re.search(ptx, c.asm["ptx"])


def test_scalar_store(tmp_path):
    """A store of one value through one pointer (masked by a scalar), as a scalar gl.store."""
    c, gen = _compile(tmp_path, "tl.store(c_ptr + 3, NT * 2, mask=NT > 1)")
    assert "gl.store((c_ptr + 3), (NT * 2), mask=(NT > 1))" in gen
    assert re.search(r"@%p\d+ st\.global\.b32 \[ %rd\d+ \+ 0 \]", c.asm["ptx"])


def test_hints_and_value_ops(tmp_path):
    c, gen = _compile(tmp_path, "o = tl.max_contiguous(tl.multiple_of(tl.arange(0, 64), 64), 64)\n"
                                "    tl.assume(NT > 0)\n"
                                "    z = tl.zeros_like(acc)\n"
                                "    r = tl.expand_dims(tl.sum(acc, 1), 1)\n"
                                "    acc = acc + tl.broadcast_to(r, [64, 64]) + z\n"
                                "    tl.store(c_ptr + o, tl.cast(tl.sum(acc, 1), tl.int32, "
                                "bitcast=True))")
    assert "gl.max_contiguous(gl.multiple_of(gl.arange(0, 64" in gen
    # tl.assume is read, not passed on (adversarial round 76: LLVM's assume of a false
    # condition dropped a mask the verifier had read)
    assert "gl.assume" not in gen and "gl.zeros_like(acc)" in gen
    assert re.search(r"r = gl\.sum\(acc, 1\)\[:, None\]", gen)
    assert ".broadcast_to([64, 64])" in gen and "gl.int32, bitcast=True)" in gen
    ttgir = c.asm["ttgir"]
    assert re.search(r"tt\.contiguity = dense<64>.*tt\.divisibility = dense<64>", ttgir)
    assert "llvm.intr.assume" not in ttgir
    assert re.search(r"tt\.bitcast %\S+ : tensor<64xf32, [^>]+>+ -> tensor<64xi32", ttgir)


@pytest.mark.parametrize("body, message", [
    ("acc = tl.clamp(acc, 0.0, 1.0)", r"`tl\.clamp` is not supported by the lowering: write "
                                      r"tl\.minimum\(tl\.maximum\(x, lo\), hi\)"),
    ("acc = tl.sigmoid(acc)", r"write 1 / \(1 \+ tl\.exp\(-x\)\)"),
    ("acc = tl.cumsum(acc, 1)", r"a scan is not lowered"),
    ("tl.store(c_ptr + tl.arange(0, 64), tl.argmax(acc, 1))", r"`tl\.argmax` .* tl\.min\(tl\.where"),
])
def test_unlowered_calls_say_what_to_write_instead(tmp_path, capsys, body, message):
    """A tl call the lowering does not translate is refused where the kernel is read (tle-dump
    exit 1, check unlowered-call), with the lowering's words of what to write instead, and the
    lowering refuses it the same way: tle-dump never verifies a kernel --gluon refuses."""
    f = _write(tmp_path, body)
    assert dump_main(["-q", str(f)]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err) and "unlowered-call" in err and "verified" not in err, err
    with pytest.raises(TleError, match=message):
        gluon_source((str(f), "k"), {})


@pytest.mark.parametrize("body, message", [
    ("tl.store(c_ptr, tl.arange(0, 64))", r"tl\.store to a scalar pointer: its value must be a "
                                          r"scalar, got a tensor"),
    ("acc = tl.broadcast_to(tl.sum(acc, 1), [64, 64])", r"broadcasts within one rank"),
])
def test_unlowered_forms_say_what_to_write_instead(tmp_path, body, message):
    """As test_atomic_errors_name_the_argument: tle-dump rejects what the lowering refuses."""
    f = _write(tmp_path, body)
    assert dump_main(["-q", str(f)]) == 1
    with pytest.raises(TleError, match=message):
        gluon_source((str(f), "k"), {})


def test_the_barrier_operations_around_the_new_calls_are_the_verified_ones(tmp_path):
    """The control skeleton of the generated Gluon (atomics, a debug barrier, a print and a
    scalar store after the loop) runs the verified mbarrier operations, one by one."""
    from tle_compiler.testing.gluon_trace import LoweredKernel

    f = _write(tmp_path, "old = tl.atomic_add(c_ptr + tl.arange(0, 64), 1, "
                         "mask=tl.arange(0, 64) < NT)\n"
                         "    tl.debug_barrier()\n"
                         "    tl.device_print('old', old)\n"
                         "    tl.atomic_cas(c_ptr, 0, NT)\n"
                         "    tl.store(c_ptr + 1, NT)",
               fill_extra="        tl.debug_barrier()\n")
    _verified(f)
    lk = LoweredKernel((str(f), "k"), {})
    for n in (0, 1, 2, 5):
        params, problems = lk.check({"NT": n})
        assert params == {"NT": n} and problems == [], problems

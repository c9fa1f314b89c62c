"""Eager publish (``@tle.jit(..., eager_publish=True)``; lowering/eager.py, docs/lowering.md "Eager
publish"): per-thread release arrives at the barriers' real shared-memory addresses, counts scaled
by the arriving threads, the row vectors read after a commit laundered through its arrive, and no
partition-wide bar.sync pairs left around the arrives in the compiled kernel."""

from __future__ import annotations

import glob
import os
import re
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import compile_kernel, gluon_source, ptxas_stats  # noqa: E402
from tle_compiler.lowering.compile import kernel_info_of  # noqa: E402
from tle_compiler.lowering.debug import barrier_offsets  # noqa: E402
from tle_compiler.lowering.dumping import default_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# eager publish on the bundled seesaw (the option is measured neutral and off in the bundled
# kernels), read specialised to DEFAULT_CONFIG's constexprs as its launches are
SEESAW = ROOT / "tle_kernels/sparse_mla_seesaw.py"
CX = {"TOPK": 2048, "BLOCK_H": 64}


def _compile(path: Path):
    info = kernel_info_of((str(path), "sparse_mla_seesaw"), CX)
    return info, compile_kernel(info, default_config(str(SEESAW), "sparse_mla_seesaw")["signature"],
                                CX)


@pytest.fixture(scope="module")
def eager_and_plain(tmp_path_factory):
    """The bundled seesaw with mbarrier exchange pipes (as it was before they became named-barrier
    pipes, which have no arrives to publish early), without eager publish (measured neutral on
    it, docs/BENCHMARKS.md) and with the option on."""
    from tests.test_kernels import MBARRIER_EXCHANGE, kernel_copy

    jit = "@tle.jit(num_warps=4, wgmma_pipeline=True)"
    assert "eager_publish" not in SEESAW.read_text()
    d = tmp_path_factory.mktemp("eager")
    (d / "plain").mkdir()
    eager = kernel_copy("sparse_mla_seesaw", d / "sparse_mla_seesaw.py",
                        [(jit, jit[:-1] + ", eager_publish=True)"), *MBARRIER_EXCHANGE])
    plain = kernel_copy("sparse_mla_seesaw", d / "plain" / "sparse_mla_seesaw.py", MBARRIER_EXCHANGE)
    return _compile(eager), _compile(plain)


def _fn(src: str, name: str) -> str:
    return src.split(f"def {name}(", 1)[1].split("@gluon.jit", 1)[0]


def test_arrives_are_per_thread_at_the_allocated_offsets(eager_and_plain):
    (info, c), _ = eager_and_plain
    src = c.tle_generated.source
    for part in ("producer", "consumer0", "consumer1"):
        body = _fn(src, part)
        assert "mbarrier.arrive(" not in body  # no elected arrive left
        assert "_tle_arrive_w4(" in body
    # the offsets baked into the inline asm are where Triton's allocator put the barriers
    offs = barrier_offsets(c.asm["ttgir"])
    baked = {m.group(1): int(m.group(2))
             for m in re.finditer(r"^_TLE_OFF_(\w+) = gl\.constexpr\((\d+)\)", src, re.M)}
    assert baked and all(offs[v] == o for v, o in baked.items())
    assert "mbarrier.arrive.release.cta.shared::cta.b64" in c.asm["ptx"]
    st = ptxas_stats(c)
    assert st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7515


def test_counts_scale_by_the_arriving_threads(eager_and_plain):
    (info, c), (_, cp) = eager_and_plain
    got = {a.var: (a.mode, a.init_counts) for pp in c.tle_generated.plans.values() for a in pp.arrays}
    base = {a.var: (a.mode, a.init_counts) for pp in cp.tle_generated.plans.values() for a in pp.arrays}
    for var, (mode, counts) in base.items():
        emode, ecounts = got[var]
        if mode == "thread":  # cp.async only: already per thread, unchanged
            assert (emode, ecounts) == (mode, counts)
        elif mode == "partition":  # 4-warp partitions: 128 arrivals per partition arrival
            assert emode == "eager" and ecounts == [n * 128 for n in counts]
        else:  # mixed (128 + 1 elected): each thread's release arrive and its cp.async arrive
            assert mode == "mixed" and emode == "eager-mixed"
            assert ecounts == [(n - 1) * 2 for n in counts]
    inits = [int(m.group(1)) for m in re.finditer(r"ttng\.init_barrier %\S+, (\d+)", c.asm["ttgir"])]
    assert inits == [n for pp in c.tle_generated.plans.values() for a in pp.arrays
                     for n in a.init_counts]


def test_commit_launders_the_row_vectors_read_after_it(eager_and_plain):
    (info, c), _ = eager_and_plain
    body = _fn(c.tle_generated.source, "consumer0").splitlines()
    i = next(k for k, ln in enumerate(body) if "_TLE_OFF_max0_full0" in ln)
    first = body[i].strip()
    assert re.match(r"\w+ = _tle_arrive_x\(_TLE_OFF_max0_full0", first)
    names = first.split("eager publish: ", 1)[1].split(" wait")[0].split(", ")
    assert "mx0" in names and "ref" in names  # the lazy reference after the commit reads both
    # every other name is laundered through the first one, right after it
    for k, n in enumerate(names[1:], 1):
        assert body[i + k].strip().startswith(f"{n} = _tle_launder({n}, ")
    # the exp2 of the softmax comes after (reads the laundered mx0 and ref)
    assert any("gl.exp2(" in ln for ln in body[i + len(names):i + len(names) + 8])


def _sass(c) -> str:
    import triton

    tool = glob.glob(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump"))
    if not tool:
        pytest.skip("no cuobjdump in the triton wheel")
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"tle_eager_{os.getpid()}_{id(c)}.cubin"
    path.write_bytes(c.asm["cubin"])
    try:
        return subprocess.run([tool[0], "-sass", str(path)], capture_output=True, text=True,
                              check=True).stdout
    finally:
        path.unlink(missing_ok=True)


def test_no_bar_sync_pairs_around_the_arrives(eager_and_plain):
    """Triton brackets each elected arrive with two partition-wide bar.syncs; per-thread arrives
    need none, so the consumers' named barriers (bar.sync id, 128 threads) nearly all disappear."""
    (_, c), (_, cp) = eager_and_plain
    named = r"BAR\.SYNC\.DEFER_BLOCKING 0x[1-9a-f], 0x80"
    n_eager, n_plain = len(re.findall(named, _sass(c))), len(re.findall(named, _sass(cp)))
    assert n_plain >= 20 and n_eager * 4 <= n_plain, (n_eager, n_plain)


def test_option_off_emits_no_eager_code():
    src = gluon_source((str(ROOT / "tle_kernels/sparse_mla_pipe.py"), "sparse_mla_pipe"), CX).source
    assert "_tle_arrive" not in src and "_TLE_OFF_" not in src and "mbarrier.arrive(" in src

"""The gather probe (benchmarks/gather_probe.py, ``@tle.jit(probe_skip_fills=...)``): a probe copy
skips exactly the named pipes' fills and nothing else of the protocol, and a name that is not a
pipe of the kernel is an error, not a silent no-op."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from benchmarks.gather_probe import dry_run, kernel_name, probe_source  # noqa: E402
from tle_compiler.diagnostics import TleError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEESAW = ROOT / "tle_kernels/sparse_mla_seesaw.py"
PIPE = ROOT / "tle_kernels/sparse_mla_pipe.py"


def _gluon(path: Path) -> str:
    from tle_compiler.lowering.dumping import lowered

    return lowered(str(path), kernel_name(path.read_text()), "gluon")


def _events(src: str) -> list[str]:
    """The barrier operations of a generated kernel, in order (waits, arrives, inits)."""
    return re.findall(r"mbarrier\.\w+\([^)]*\)|async_copy\.mbarrier_arrive\([^)]*\)", src)


def test_probe_source_adds_the_option_to_the_decorator():
    src = SEESAW.read_text()
    out = probe_source(src, ["kv0r", "kv1l"])
    assert "@tle.jit(num_warps=4, wgmma_pipeline=True, probe_skip_fills=('kv0r', 'kv1l'))" in out
    assert out.replace(", probe_skip_fills=('kv0r', 'kv1l')", "") == src
    bare = probe_source("@tle.jit\ndef k():\n    pass\n", ["q"])
    assert bare.startswith("@tle.jit(probe_skip_fills=('q',))")


@pytest.mark.parametrize("path,skip,n_fills", [
    (SEESAW, ["kv0r", "kv1l"], 2),               # one field each
    (SEESAW, ["kv0.kv_l"], 1),                   # one field of a three-field pipe
    (PIPE, ["kv"], 4),                           # kv_l, kv_r, tkv, valid
])
def test_probe_skips_only_the_named_fills(tmp_path, path, skip, n_fills):
    probe = tmp_path / path.name
    probe.write_text(probe_source(path.read_text(), skip))
    assert dry_run(str(probe)) == n_fills
    base, got = _gluon(path), _gluon(probe)
    # the protocol is untouched: the same barrier operations in the same order
    assert _events(got) == _events(base)
    # and only the named fills went: every other shared-memory fill is still there
    fills = lambda s: len(re.findall(r"async_copy_global_to_shared\(|\.index\([^)]*\)\.store\(", s))
    assert fills(base) - fills(got) == n_fills


def test_probe_of_an_unknown_pipe_is_an_error(tmp_path):
    probe = tmp_path / "sparse_mla_pipe.py"
    probe.write_text(probe_source(PIPE.read_text(), ["nope"]))
    with pytest.raises(TleError, match="names no pipe.*nope.*pipes: q, kv, score"):
        dry_run(str(probe))

"""The gather probe (benchmarks/gather_probe.py, ``instrument.skip_fills``): a probe copy skips
exactly the named pipes' fills and nothing else of the protocol, only in the kernels of the file it
names, and a name that is not a pipe of the kernel is an error, not a silent no-op."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from benchmarks.gather_probe import absolute_imports, dry_run, kernel_name  # noqa: E402
from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.lowering import instrument  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEESAW = ROOT / "tle_kernels/sparse_mla_seesaw.py"
PIPE = ROOT / "tle_kernels/sparse_mla_pipe.py"


def _gluon(path: Path) -> str:
    from tle_compiler.lowering.dumping import lowered

    return lowered(str(path), kernel_name(path.read_text()), "gluon")


def _events(src: str) -> list[str]:
    """The barrier operations of a generated kernel, in order (waits, arrives, inits)."""
    return re.findall(r"mbarrier\.\w+\([^)]*\)|async_copy\.mbarrier_arrive\([^)]*\)", src)


def _body(src: str) -> str:
    """The generated module without its first line (which names the source file)."""
    return src.split("\n", 1)[1]


@pytest.mark.parametrize("path,skip,n_fills", [
    (SEESAW, ["kv0r", "kv1l"], 2),               # one field each
    (SEESAW, ["kv0.kv_l"], 1),                   # one field of a three-field pipe
    (PIPE, ["kv"], 4),                           # kv_l, kv_r, tkv, valid
])
def test_probe_skips_only_the_named_fills(tmp_path, path, skip, n_fills):
    probe = tmp_path / path.name
    probe.write_text(absolute_imports(path.read_text(), path))
    assert dry_run(str(probe), skip) == n_fills
    base = _gluon(path)
    with instrument.skip_fills(skip, path=probe):
        got = _gluon(probe)
    # the protocol is untouched: the same barrier operations in the same order
    assert _events(got) == _events(base)
    # and only the named fills went: every other shared-memory fill is still there
    fills = lambda s: len(re.findall(r"async_copy_global_to_shared\(|\.index\([^)]*\)\.store\(", s))
    assert fills(base) - fills(got) == n_fills


def test_skip_applies_only_inside_the_block_and_to_the_named_file(tmp_path):
    probe = tmp_path / PIPE.name
    probe.write_text(absolute_imports(PIPE.read_text(), PIPE))
    base = _gluon(PIPE)
    with instrument.skip_fills(["kv"], path=probe):
        assert "# PROBE:" not in _gluon(PIPE)          # another file: the plain kernel
        assert _gluon(probe).count("# PROBE:") == 4
        with instrument.skip_fills("q"):              # no path: every kernel, nested blocks add up
            assert _gluon(probe).count("# PROBE:") == 7
            assert _gluon(PIPE).count("# PROBE:") == 3
        assert instrument.key(probe) == ((), ("kv",)) and instrument.key(PIPE) == ()
    assert _body(_gluon(probe)) == _body(base)          # after the block: the plain kernel again
    assert instrument.key(probe) == ()


def test_probe_of_an_unknown_pipe_is_an_error(tmp_path):
    probe = tmp_path / "sparse_mla_pipe.py"
    probe.write_text(absolute_imports(PIPE.read_text(), PIPE))
    with pytest.raises(TleError, match="names no pipe.*nope.*pipes: q, kv, score"):
        dry_run(str(probe), ["nope"])


def test_the_command_line_dry_run(tmp_path, capsys, monkeypatch):
    from benchmarks.gather_probe import main

    monkeypatch.setattr("tempfile.mkdtemp", lambda prefix="": str(tmp_path))
    main([str(PIPE), "--skip", "kv", "--skip", "q,score", "--dry-run"])
    out = capsys.readouterr().out
    assert "B: skips the fills of kv" in out and "C: skips the fills of q, score" in out
    assert f"{tmp_path / 'sparse_mla_pipe_skip0.py'}: verified and lowered, 4 fills skipped" in out
    assert (tmp_path / "sparse_mla_pipe_skip1.py").read_text() == PIPE.read_text().replace(
        "from .sparse_mla_common", "from tle_kernels.sparse_mla_common")

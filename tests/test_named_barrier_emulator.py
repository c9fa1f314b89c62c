"""Named-barrier pipes in the CPU emulator (tle_compiler/testing/emulator.py).

A named pipe's acquire does not wait: the emulator asserts instead that the release it would have
waited for already ran, which the verifier's named-release rule guarantees. The verified kernels
of tests/fixtures/named_barrier/ run to their results for several trip counts without that
assertion; the rejected early_acquire kernel, whose writer acquires use 1 before the reader can
have released use 0 (the release waits on a commit the writer makes after that acquire), trips it
every time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tle_compiler.testing.emulator import load_kernel_module  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "named_barrier"


def _rows(n: int, seed: int) -> "torch.Tensor":
    g = torch.Generator().manual_seed(seed)
    return torch.randn(max(n, 1) * 64, generator=g)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_hop_commit_hands_every_row_over(n):
    mod = load_kernel_module(FIXTURES / "hop_commit.ok.py")
    x = _rows(n, 0)
    y, z = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    mod.hop_commit[(1,)](x, y, z, n)
    k = n * 64
    assert torch.equal(y[:k], x[:k] + 1.0) and torch.equal(z[:k], x[:k] * 3.0)
    assert y[k:].isnan().all() and z[k:].isnan().all()


@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_the_exchange_gives_both_sides_the_maximum(n):
    mod = load_kernel_module(FIXTURES / "exchange.ok.py")
    a, b = _rows(n, 1), _rows(n, 2)
    out_a, out_b = torch.full_like(a, float("nan")), torch.full_like(a, float("nan"))
    mod.exchange[(1,)](a, b, out_a, out_b, n)
    k = n * 64
    assert torch.equal(out_a[:k], torch.maximum(a, b)[:k])
    assert torch.equal(out_b[:k], torch.maximum(a, b)[:k])


@pytest.mark.parametrize("n", [0, 1, 4])
def test_three_partitions_combine_both_named_pipes(n):
    mod = load_kernel_module(FIXTURES / "three_partitions.ok.py")
    x, z = _rows(n, 3), _rows(n, 4)
    out_a, out_c = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    mod.three[(1,)](x, z, out_a, out_c, n)
    k = n * 64
    assert torch.equal(out_a[:k], (x + z)[:k]) and torch.equal(out_c[:k], (x - z)[:k])


def test_an_acquire_before_the_release_trips_the_emulator(monkeypatch):
    import tle_compiler.testing.emulator as emulator

    # the reader then waits for a commit the failed writer never makes: cut its wait short
    monkeypatch.setattr(emulator, "TIMEOUT_S", 0.5)
    mod = load_kernel_module(FIXTURES / "early_acquire.bad.py")
    x = torch.arange(128, dtype=torch.float32)
    y = torch.full_like(x, float("nan"))
    with pytest.raises(AssertionError, match=r"named-barrier pipe: acquire\(1\) before the "
                                             r"release of 0"):
        mod.early[(1,)](x, y)


def test_the_same_kernel_with_an_mbarrier_pipe_is_not_an_early_acquire(tmp_path, monkeypatch):
    """The assertion is the named pipe's: with barrier="mbarrier" the acquire waits instead (and
    waits forever: the emulator reports the deadlock the verifier reports)."""
    import tle_compiler.testing.emulator as emulator

    monkeypatch.setattr(emulator, "TIMEOUT_S", 0.5)
    path = tmp_path / "early_mbarrier.py"
    path.write_text((FIXTURES / "early_acquire.bad.py").read_text()
                    .replace('barrier="named", ', ""))
    mod = load_kernel_module(path)
    x = torch.arange(128, dtype=torch.float32)
    # both partitions block for good (the writer in x's acquire(1), which needs x's release(0);
    # the reader in ack's wait(0), which needs the writer's ack commit after that acquire);
    # which one's timeout fires first depends on the machine's load
    with pytest.raises(AssertionError, match=r"deadlock in (acquire\(1\)|wait\(0\))") as err:
        mod.early[(1,)](x, torch.full_like(x, float("nan")))
    assert "before the release" not in str(err.value)

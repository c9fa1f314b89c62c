"""tle-dump on inputs at the edges of the .pipe language and of the verifier's arithmetic: a
capacity or a param domain too large to list, names shared by a pipe and a partition, a file
with no kernel. Each gives an honest verdict or a one-line error, never a traceback or a run out
of memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

RING = """kernel k
param N{domain}
pipe kv capacity={capacity} fields=(a)
partition {writer} default warps=4 {{
  for t in range({trips}) {{
    kv.acquire(t)
    kv.write(t, a)
    kv.commit(t)
  }}
}}
partition consumer warps=4 {{
  for t in range({trips}) {{
    kv.wait(t)
    kv.read(t, a)
    kv.release(t)
  }}
}}
"""


def ring(tmp_path: Path, name: str = "ring.pipe", domain: str = "", capacity: int = 2,
         writer: str = "producer", trips: str = "N") -> Path:
    path = tmp_path / name
    path.write_text(RING.format(domain=domain, capacity=capacity, writer=writer, trips=trips))
    return path


def run(capsys, *args):
    code = main(["-q", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err


def test_the_ring_is_proved(tmp_path, capsys):
    code, err = run(capsys, ring(tmp_path))
    assert code == 0, err


def test_a_capacity_beyond_shared_memory_is_rejected_at_its_line(tmp_path, capsys):
    # a huge capacity made the cutoff plan list ~10^23 values (MemoryError) and the instance
    # checker size per-stage tables by it
    code, err = run(capsys, ring(tmp_path, capacity=10 ** 23))
    assert code == 1
    assert "ring.pipe:3: error:" in err and "[bad-capacity]" in err


def test_the_largest_allocatable_capacity_is_accepted(tmp_path, capsys):
    from tle_compiler.passes.verify_protocol import MAX_CAPACITY

    code, err = run(capsys, ring(tmp_path, capacity=MAX_CAPACITY, trips="3"))
    assert code == 0, err


def test_a_domain_too_large_to_list_is_unknown_not_a_crash(tmp_path, capsys):
    # a finite domain of 10^23 values outside the cutoff theorem's fragment (a loop of step 2
    # over N): every value is needed for "proved", and listing them ran out of memory; the
    # values nearest zero are checked until the budget runs out, and the verdict says so
    code, err = run(capsys, ring(tmp_path, domain=" >= 0 <= 100000000000000000000000",
                                 trips="0, N, 2"))
    assert code == 3, err
    assert "unknown" in err and "budget" in err


def test_a_domain_too_large_to_list_inside_the_fragment_is_proved_by_the_theorem(tmp_path,
                                                                                capsys):
    # inside the fragment the theorem's values (cut to the domain) prove every value of it
    code, err = run(capsys, ring(tmp_path, domain=" >= 0 <= 100000000000000000000000"))
    assert code == 0, err
    assert "every value of N (0 <= N <= 100000000000000000000000)" in err
    assert "cutoff theorem" in err


def test_a_fault_in_a_domain_too_large_to_list_is_still_found(tmp_path, capsys):
    path = ring(tmp_path, domain=" >= 0 <= 100000000000000000000000", trips="3")
    text = path.read_text().replace("kv.read(t, a)\n    kv.release(t)", "kv.release(t)\n    kv.read(t, a)")
    path.write_text(text)
    code, err = run(capsys, path)
    assert code == 1, err


def test_a_huge_bound_on_two_free_params_does_not_hang(tmp_path, capsys):
    path = tmp_path / "two.pipe"
    path.write_text(RING.format(domain="\nparam M", capacity=2, writer="producer", trips="N")
                    .replace("for t in range(N) {\n    kv.wait", "for t in range(M) {\n    kv.wait"))
    code, err = run(capsys, "--bound", 10 ** 12, path)
    assert code == 1, err  # N != M: some reader misses a commit


def test_a_huge_bound_outside_the_fragment_is_not_proved(tmp_path, capsys):
    path = ring(tmp_path, trips="N * 1")
    text = path.read_text().replace("for t in range(N * 1) {\n    kv.acquire",
                                    "for t in range(0, N, 2) {\n    kv.acquire")
    text = text.replace("for t in range(N * 1) {\n    kv.wait", "for t in range(0, N, 2) {\n    kv.wait")
    path.write_text(text)
    code, err = run(capsys, "--bound", 10 ** 12, path)
    assert code == 3, err


def test_a_partition_named_like_a_pipe_says_so(tmp_path, capsys):
    code, err = run(capsys, ring(tmp_path, writer="kv"))
    assert code == 1
    assert "partition 'kv' has the name of a pipe" in err


@pytest.mark.parametrize("text", ["", "# only a comment\n\n  # another\n"])
def test_a_pipe_file_without_a_kernel_is_unusable(tmp_path, capsys, text):
    path = tmp_path / "nothing.pipe"
    path.write_text(text)
    code, err = run(capsys, path)
    assert code == 2
    assert "no kernel" in err and "@tle.jit" not in err


def two_kernels(tmp_path: Path) -> Path:
    """A .pipe file with a proved kernel 'good' and a rejected one 'bad' (a read after release)."""
    good = RING.format(domain="", capacity=2, writer="producer", trips="N")
    bad = good.replace("kv.read(t, a)\n    kv.release(t)", "kv.release(t)\n    kv.read(t, a)")
    path = tmp_path / "two.pipe"
    path.write_text(good.replace("kernel k", "kernel good") + bad.replace("kernel k", "kernel bad"))
    return path


def test_one_bad_kernel_of_two_rejects_the_file(tmp_path, capsys):
    code, err = run(capsys, two_kernels(tmp_path))
    assert code == 1 and "bad: rejected" in err and "good: verified" in err


def test_a_missing_kernel_named_beside_a_present_one_is_unusable(tmp_path, capsys):
    # --kernel good --kernel bda (a typo of the rejected one) verified 'good' alone and exited 0
    path = two_kernels(tmp_path)
    code, err = run(capsys, "--kernel", "good", "--kernel", "bda", path)
    assert code == 2
    assert "no kernel named bda" in err and "verified" not in err


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_quiet_still_writes_the_report_asked_for(tmp_path, capsys, fmt):
    # -q -o left an earlier run's report in place (saying 'proved' for a kernel now rejected)
    path = two_kernels(tmp_path)
    out = tmp_path / f"report.{fmt}"
    out.write_text("stale")
    code, _ = run(capsys, "--format", fmt, "-o", out, path)
    text = out.read_text()
    assert code == 1 and text != "stale"
    if fmt == "json":
        import json

        report = json.loads(text)
        assert report["exit_code"] == 1
        assert [k["verdict"] for k in report["kernels"]] == ["proved", "rejected"]
    else:
        assert "# verdict: rejected" in text


def test_quiet_writes_the_error_of_unusable_input_to_the_json_report(tmp_path, capsys):
    out = tmp_path / "report.json"
    out.write_text("stale")
    code, _ = run(capsys, "-o", out, tmp_path / "missing.pipe")
    import json

    report = json.loads(out.read_text())
    assert code == 2 and report["exit_code"] == 2 and "no such file" in report["error"]


TMA_RING = """kernel tma_ring
param N
pipe kv capacity=2 fields=(a)
partition producer default warps=4 {{
  for t in range(N) {{
    kv.acquire(t)
    kv.tma(t, a, 1024)
    kv.commit(t)
  }}
  kv.acquire(N)
  kv.tma(N, a, {last})
  kv.commit(N)
}}
partition consumer warps=4 {{
  for t in range(N + 1) {{
    kv.wait(t)
    kv.read(t, a)
    kv.release(t)
  }}
}}
"""


@pytest.mark.parametrize("last, expected", [(1024, 0), (512, 1), (2048, 1)])
def test_every_tma_copy_into_a_field_moves_the_same_bytes(tmp_path, capsys, last, expected):
    # the full barrier's expect-tx is one number per field: a last window copying 512 of the
    # 1024 bytes would never complete it (the reader hangs), and it verified
    path = tmp_path / "tma.pipe"
    path.write_text(TMA_RING.format(last=last))
    code, err = run(capsys, path)
    assert code == expected, err
    if expected:
        assert "tma.pipe:" in err and "[tma-window]" in err

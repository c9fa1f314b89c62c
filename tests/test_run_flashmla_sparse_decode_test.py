"""benchmarks/run_flashmla_sparse_decode_test.py on the CPU: its arguments, and the cases it takes
from a stand-in of FlashMLA's test file (the real one lives in a FlashMLA checkout, outside this
repository): only d_qk = 576 cases that check correctness, a seeded sample of the correctness
cases, every corner case, the performance cases only with --production and then without timing
runs, each with the seed FlashMLA's main() would give it; the test imported with ``flash_mla`` =
tle_kernels and a stand-in for ``rich`` when it is not installed."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

from .test_benchmark_scripts import benchmark_module

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "run_flashmla_sparse_decode_test.py"

# A stand-in for FlashMLA's tests/test_flash_mla_sparse_decoding.py: its RawTestParam fields, its
# imports (rich at the top, flash_mla), a gen_testcase() mixing the kinds of case; running a case
# is an error (--list runs none).
FAKE_TEST = '''
import dataclasses
from typing import Optional

import rich.console
import rich.table

import flash_mla

assert callable(flash_mla.flash_mla_with_kvcache) and callable(flash_mla.get_mla_metadata)
assert flash_mla.flash_mla_with_kvcache.__module__ == "tle_kernels.decode_api"


@dataclasses.dataclass
class RawTestParam:
    b: int
    h_q: int
    s_q: int
    h_kv: int
    s_kv: int
    is_varlen: bool
    topk: int
    is_all_indices_invalid: bool = False
    have_zero_seqlen_k: bool = False
    have_topk_length: bool = False
    enable_attn_sink: bool = True
    extra_s_k: Optional[int] = None
    extra_topk: Optional[int] = None
    block_size: int = 64
    extra_block_size: Optional[int] = None
    have_extra_topk_length: bool = False
    d_qk: int = 576
    d_v: int = 512
    check_correctness: bool = True
    num_runs: int = 10
    seed: int = -1


def gen_testcase():
    corr = [RawTestParam(b, 128, 1, 1, 512, True, 64, block_size=bs, num_runs=0)
            for b in (4, 74) for bs in (2, 64, 69)]
    model1 = [RawTestParam(4, 64, 1, 1, 512, True, 64, d_qk=512, num_runs=0) for _ in range(2)]
    corner = [RawTestParam(4, 64, 3, 1, 512, True, 64, is_all_indices_invalid=True, num_runs=0),
              RawTestParam(4, 64, 3, 1, 650, True, 576, have_zero_seqlen_k=True, num_runs=0),
              RawTestParam(74, 64, 3, 1, 650, False, 576, enable_attn_sink=False, num_runs=0)]
    perf = [RawTestParam(64, 128, 2, 1, 32768, True, 2048),
            RawTestParam(128, 128, 2, 1, 32768, True, 2048, seed=7)]
    # indices: corr 0-2, model1 3-4, corr 5-7, corner 8-10, perf 11-12
    return corr[:3] + model1 + corr[3:] + corner + perf


def test_flash_mla(p):
    raise AssertionError("--list must not run a case")
'''


def write_fake(tmp_path: Path) -> Path:
    (tmp_path / "test_flash_mla_sparse_decoding.py").write_text(FAKE_TEST)
    return tmp_path


def run_script(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300)


def listed(stdout: str):
    return [int(m) for m in re.findall(r"^case (\d+):", stdout, flags=re.MULTILINE)]


def runner_module():
    return benchmark_module("run_flashmla_sparse_decode_test")


def test_help_and_missing_test_file(tmp_path):
    r = run_script("--help")
    assert r.returncode == 0, r.stderr
    for word in ("--tests", "--sample", "--all", "--production", "--list", "FlashMLA"):
        assert word in r.stdout, word
    r = run_script("--tests", str(tmp_path))
    assert r.returncode != 0 and "test_flash_mla_sparse_decoding.py" in r.stderr
    r = run_script("--tests", str(write_fake(tmp_path)), "--sample", "-1")
    assert r.returncode != 0 and "--sample" in r.stderr


def test_list_takes_a_sample_of_correctness_and_every_corner_case(tmp_path):
    r = run_script("--tests", str(write_fake(tmp_path)), "--list", "--sample", "4", "--seed", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    cases = listed(r.stdout)
    assert len(cases) == 7 and cases[-3:] == [8, 9, 10], cases      # 4 sampled + 3 corner
    assert set(cases[:4]) <= {0, 1, 2, 5, 6, 7} and cases[:4] == sorted(cases[:4])
    assert ("7 cases: 4 of its 6 correctness cases (seed 1), all 3 corner cases (its 2 "
            "performance cases left out); 2 cases of other head dims not run") in r.stdout
    other = run_script("--tests", str(tmp_path), "--list", "--sample", "4", "--seed", "2")
    assert listed(other.stdout)[-3:] == [8, 9, 10]
    again = run_script("--tests", str(tmp_path), "--list", "--sample", "4", "--seed", "1")
    assert listed(again.stdout) == cases


def test_list_all_and_production(tmp_path):
    r = run_script("--tests", str(write_fake(tmp_path)), "--list", "--all", "--production")
    assert r.returncode == 0, r.stdout + r.stderr
    assert listed(r.stdout) == [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12]
    assert "all 2 performance cases as correctness checks" in r.stdout
    assert "case 12: b=128 s_q=2 h_q=128 s_k=32768 topk=2048" in r.stdout


def test_shards_split_the_choice_between_them(tmp_path):
    """--shard K/N lists every N-th chosen case from the K-th: the shards together are the whole
    choice, each case once; a K outside 0 .. N - 1 or a malformed value is an argparse error."""
    fake = str(write_fake(tmp_path))
    whole = listed(run_script("--tests", fake, "--list", "--all", "--production").stdout)
    parts = []
    for k in range(3):
        r = run_script("--tests", fake, "--list", "--all", "--production", "--shard", f"{k}/3")
        assert r.returncode == 0 and f"shard {k}/3 of them" in r.stdout, r.stdout + r.stderr
        parts.append(listed(r.stdout))
    assert parts[0] == whole[0::3] and sorted(sum(parts, [])) == sorted(whole)
    for bad in ("3/3", "-1/2", "1", "a/b"):
        r = run_script("--tests", fake, "--list", "--shard", bad)
        assert r.returncode == 2 and "--shard" in r.stderr, bad


@dataclasses.dataclass
class Raw:
    d_qk: int = 576
    num_runs: int = 0
    check_correctness: bool = True
    is_all_indices_invalid: bool = False
    have_zero_seqlen_k: bool = False
    enable_attn_sink: bool = True
    seed: int = -1
    extra: Optional[int] = None


def test_select_and_as_run():
    R = runner_module()
    raws = ([Raw() for _ in range(20)] + [Raw(d_qk=512)] * 3 + [Raw(check_correctness=False)]
            + [Raw(have_zero_seqlen_k=True), Raw(enable_attn_sink=False)] + [Raw(num_runs=10)])
    chosen, counts = R.select(raws, 5, 0)
    assert counts == dict(correctness=20, corner=2, performance=1, other=4)
    idx = [i for i, _ in chosen]
    assert len(idx) == 7 and idx[-2:] == [24, 25] and idx[:5] == sorted(idx[:5])
    assert all(i < 20 for i in idx[:5])
    assert [i for i, _ in R.select(raws, 5, 0)[0]] == idx
    assert [i for i, _ in R.select(raws, 5, 3)[0]] != idx
    assert [i for i, _ in R.select(raws, 50, 0)[0]] == list(range(20)) + [24, 25]
    assert [i for i, _ in R.select(raws, 0, 0, everything=True, production=True)[0]] == \
        list(range(20)) + [24, 25, 26]
    # correctness only, FlashMLA main()'s seed (the position in its list) unless the case has one
    assert R.as_run(Raw(num_runs=10), 26) == Raw(num_runs=0, seed=26)
    assert R.as_run(Raw(seed=7), 3).seed == 7


def test_rich_stand_in(monkeypatch):
    R = runner_module()
    for name in ("rich", "rich.console", "rich.table"):
        monkeypatch.setitem(sys.modules, name, None)        # import rich -> ImportError
    R.install_rich_stand_in()
    import rich.console
    import rich.table

    table = rich.table.Table(show_header=True)
    table.add_column("topk")
    table.add_row("2048")
    rich.console.Console(width=120).print(table)

"""A new user's round (5): what README.md and docs/ say against what tle-dump, ``python3 -m
tle_kernels``, the benchmarks' ``--help`` and the Python API do. One test per fix:

- tle-dump: ``-q``'s help said it printed "the exit status" (it prints the diagnostics and each
  kernel's summary line, and no kernel IR); ``-p ""`` runs no pass and exits 0 "not verified",
  which the exit-status lists did not say; the exit-2 lists of README.md and ``--help`` left out a file
  with no kernel, ``--kernel`` naming none, an unknown pass and ``--print-ir`` with
  ``--graph``/``--format json``.
- stale figures of the CLI in README.md (the sample verdict), docs/passes.md (the worked
  example's verdict), docs/kernels.md (the d512 verdict; the seesaw's shared memory), docs/kir.md
  (which command prints its example), docs/tutorial.md (the endings of the lines it shows).
- ``python3 -m tle_kernels --help`` ran the whole main job; arguments were dropped silently on a
  CPU, a misspelt one too.
- the benchmarks' ``--help``: usage named the file (``bench_mla_decode.py``), not the command;
  the description was cut mid-sentence; flags without help (``--sq``, ``--h``, ``--topk``,
  ``--shape``, ``--impl``, ``--cache``) or pointing at "the docstring"; ``--sq 0``, ``--L 0``
  were taken.
- the API: ``d_v=np.int64(512)`` / ``head_dim_v=torch.tensor(512)`` gave "expected 512, got
  np.int64(512)"; the entry points' docstrings said only "see the module docstring".
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from tle_compiler.cli.dump import build_parser, main

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

ROOT = Path(__file__).resolve().parent.parent
RING = ROOT / "tle_kernels" / "examples" / "ring.py"
README = (ROOT / "README.md").read_text()


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def help_of(parser) -> str:
    return parser.format_help()


# ---- tle-dump ------------------------------------------------------------------------------


def test_quiet_help_says_what_it_prints():
    text = " ".join(help_of(build_parser()).split())
    assert "print only diagnostics and the exit status" not in text
    assert ("-q, --quiet print only the diagnostics and each kernel's summary line on stderr: no "
            "report and no kernel IR text (--print-ir, a lowering pass in -p) on stdout") in text


def test_quiet_print_ir_prints_the_summary_and_no_ir_as_the_help_says(capsys):
    code, out, err = run(capsys, "-q", "--print-ir", RING)
    assert code == 0 and out == ""
    assert err.startswith("tle-dump: ring_sum: verified for every value of N_TILES")


def test_an_empty_pipeline_makes_no_claim_as_the_help_says(capsys):
    code, out, err = run(capsys, "-q", "-p", "", RING)
    assert code == 0 and out == ""
    assert err.startswith("tle-dump: ring_sum: not verified (ran no passes; no claim is made")
    from tle_compiler.cli.dump import _epilog

    assert ('0  every kernel proved; also when the pipeline (-p) gives no verdict and finds no '
            'error\n     (-p infer-barriers, or an empty -p "": "not verified", nothing claimed)'
            in _epilog())
    assert 'A pipeline that gives no verdict (`-p infer-barriers`, an empty `-p ""`;' in README


def test_a_file_with_no_kernel_and_a_kernel_not_there_exit_2_as_documented(capsys, tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("import os\n\n\ndef f():\n    return 1\n")
    code, out, err = run(capsys, plain)
    assert code == 2 and err == f"{plain}: error: no @tle.jit kernel that calls tle.gpu.warp_specialize\n"
    code, out, err = run(capsys, "--kernel", "nosuch", RING)
    assert code == 2 and err == f"{RING}: error: no kernel named nosuch (kernels: ring_sum)\n"
    code, out, err = run(capsys, "-p", "no-such-pass", RING)
    assert code == 2 and err.startswith("tle-dump: error: unknown pass 'no-such-pass'")
    code, out, err = run(capsys, "--print-ir", "--graph", RING)
    assert code == 2 and "--graph and --format dot/json do not apply" in err
    # ... and README.md's and --help's exit-2 lists say so
    readme = " ".join(README.split())
    assert ("a file with no kernel (a `.py` with no `@tle.jit` kernel that calls "
            "`tle.gpu.warp_specialize`) or with none that `--kernel` names, a `-p` naming an "
            "unknown pass,") in readme
    assert ("`--print-ir` (or a lowering pass in `-p`) with `--graph`, `--format dot/json` or "
            "`--gluon/--ttgir/--ptx`") in readme
    from tle_compiler.cli.dump import _epilog

    text = " ".join(_epilog().split())
    assert ("a file with no kernel (a .py with no @tle.jit kernel that calls "
            "tle.gpu.warp_specialize) or none of the --kernel names, an unknown pass in -p") in text
    assert "--print-ir (or a lowering pass in -p) with --graph, --format dot/json or" in text


# ---- stale figures of the CLI in the docs ---------------------------------------------------


def _verdict_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("# verdict:"))


def test_readme_sample_verdict_is_what_tle_dump_prints(capsys):
    code, out, _ = run(capsys, "--graph", ROOT / "tle_kernels" / "sparse_mla_pipe.py")
    assert code == 0
    shown = next(line for line in README.splitlines() if line.startswith("# verdict:"))
    assert shown.endswith(", ...")
    assert _verdict_line(out).startswith(shown[:-len(", ...")])
    kv = next(line for line in README.splitlines() if line.startswith("#   kv.empty[g1]"))
    printed = next(line for line in out.splitlines() if line.startswith("#   kv.empty[g1]"))
    assert kv.split() == printed.split()[:len(kv.split()) - 1] + [printed.split()[-1]]


def test_passes_md_worked_example_is_what_tle_dump_prints(capsys):
    page = (ROOT / "docs" / "passes.md").read_text()
    block = page.split("$ tle-dump --no-locations docs/example.pipe\n...\n")[1].split("```")[0]
    code, out, _ = run(capsys, "--no-locations", ROOT / "docs" / "example.pipe")
    assert code == 0
    printed = out.splitlines()
    for line in block.strip().splitlines():
        assert line in printed, line


def test_kernels_md_d512_verdict_is_what_tle_dump_prints(capsys):
    page = (ROOT / "docs" / "kernels.md").read_text()
    block = page.split("$ tle-dump --graph tle_kernels/sparse_mla_seesaw_d512.py\n")[1].split("```")[0]
    lines = block.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("# verdict:"))
    shown = lines[i] + " " + lines[i + 1].lstrip("#").strip()
    assert shown.endswith(", ...")
    code, out, _ = run(capsys, "--graph", ROOT / "tle_kernels" / "sparse_mla_seesaw_d512.py")
    assert code == 0
    assert _verdict_line(out).startswith(shown[:-len(", ...")])


def test_kir_md_names_the_command_that_prints_its_example(capsys):
    page = (ROOT / "docs" / "kir.md").read_text()
    assert ("as `tle-dump -p verify-protocol --print-ir\ntle_kernels/examples/ring.py` prints it"
            in page)
    code, out, _ = run(capsys, "-p", "verify-protocol", "--print-ir", "tle_kernels/examples/ring.py")
    assert code == 0
    assert out == (ROOT / "tests" / "golden" / "kir" / "ring.kir").read_text()


def test_tutorial_names_the_ending_it_leaves_out(capsys, tmp_path):
    page = (ROOT / "docs" / "tutorial.md").read_text()
    ending = "(cutoff theorem, docs/semantics.md: N0 = 49, L = 4, lag 5) (0.15 s)"
    assert f"`{ending}`" in page
    from tests.test_tutorial import write_files

    write_files(tmp_path)
    code, _, err = run(capsys, "-q", tmp_path / "copy_ring.py")
    assert code == 0
    shown = page.split("<!-- tutorial-run: tle-dump -q copy_ring.py -->\n```text\n")[1].split("\n")[0]
    line = err.splitlines()[0]
    assert line.startswith(shown)
    assert re.fullmatch(re.escape(ending.split(" (0.15 s)")[0]) + r" \(\d+\.\d\d s\)",
                        line[len(shown):].strip()), line


def test_kernels_md_seesaw_shared_memory_is_the_compiled_kernels():
    from tle_compiler.lowering import compile_kernel
    from tle_kernels import sparse_mla_seesaw as mod

    cfg = mod.DEFAULT_CONFIG
    c = compile_kernel(mod.sparse_mla_seesaw, cfg["signature"], cfg["constexprs"])
    section = (ROOT / "docs" / "kernels.md").read_text().split("### sparse_mla_seesaw\n")[1]
    shown = re.search(r"shared memory (\d+) B", section).group(1)
    assert int(shown) == c.metadata.shared


# ---- python3 -m tle_kernels -------------------------------------------------------------------


def test_main_job_help_prints_usage_and_runs_nothing(capsys, monkeypatch):
    import tle_compiler.cli.dump as dump
    from tle_kernels.__main__ import main as main_job

    monkeypatch.setattr(dump, "main", lambda argv: pytest.fail("--help ran tle-dump"))
    assert main_job(["--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: python3 -m tle_kernels [-h] [BENCHMARK ARGUMENTS ...]\n")
    assert "python3 -m tle_kernels.bench_sparse_mla --help" in out and err == ""
    assert "`python3 -m tle_kernels --help` says what the main job runs where" in README


def test_main_job_checks_its_arguments_on_a_cpu(capsys, monkeypatch):
    from tle_kernels.__main__ import main as main_job

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as e:
        main_job(["--chek"])
    assert e.value.code == 2
    assert "python3 -m tle_kernels: error: unrecognized arguments: --chek" in capsys.readouterr().err


def test_main_job_says_it_ignores_benchmark_arguments_on_a_cpu(capsys, monkeypatch):
    import tle_compiler.cli.dump as dump
    from tle_kernels.__main__ import main as main_job

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(dump, "main", lambda argv: 1)  # stop after the note: no verification here
    assert main_job(["--quick"]) == 1
    err = capsys.readouterr().err
    assert err == ("python3 -m tle_kernels: note: no CUDA GPU here, so no benchmark runs and its "
                   "arguments (--quick) are ignored\n")


# ---- the benchmarks' --help and arguments -----------------------------------------------------

BENCHES = ["bench_mla_decode", "bench_sparse_decode", "bench_sparse_mla"]


def bench_help(name, capsys) -> str:
    import importlib

    bench = importlib.import_module(f"tle_kernels.{name}")
    with pytest.raises(SystemExit) as e:
        bench.main(["--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", BENCHES)
def test_bench_help_names_the_command_and_shows_the_details(name, capsys):
    out = bench_help(name, capsys)
    assert out.startswith(f"usage: python3 -m tle_kernels.{name} [-h]")
    assert "the docstring" not in out and f"{name}.py" not in out
    # the description is the docstring's whole first paragraph, the rest follows the options
    import importlib

    doc = importlib.import_module(f"tle_kernels.{name}").__doc__
    first = doc.strip().split("\n\n")[0]
    assert first in out
    assert out.index("options:") < out.index(f"    python3 -m tle_kernels.{name} [--check]")


@pytest.mark.parametrize("name", ["bench_mla_decode", "bench_sparse_mla"])
def test_every_bench_flag_has_help(name):
    import importlib

    ap = importlib.import_module(f"tle_kernels.{name}").build_parser()
    bare = [a.option_strings for a in ap._actions if not a.help]
    assert bare == []


def test_sparse_decode_flags_have_help(capsys):
    out = " ".join(bench_help("bench_sparse_decode", capsys).split())
    assert "[{fp8,bf16} ...] KV caches to time (default: fp8 bf16)" in out
    assert "--anchor LIB FlashMLA's own sparse decode built from LIB" in out


@pytest.mark.parametrize("name, argv", [
    ("bench_sparse_mla", ["--sq", "0"]), ("bench_sparse_mla", ["--h", "-1"]),
    ("bench_sparse_mla", ["--topk", "x"]), ("bench_sparse_mla", ["--skv", "8192", "0"]),
    ("bench_mla_decode", ["--L", "0"]), ("bench_mla_decode", ["--reps", "0"]),
])
def test_bench_refuses_a_count_below_one_before_anything_else(name, argv, capsys, monkeypatch):
    import importlib

    bench = importlib.import_module(f"tle_kernels.{name}")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    bad = argv[-1]
    got = repr(bad) if not re.fullmatch(r"-?\d+", bad) else bad
    assert err == (f"python3 -m tle_kernels.{name}: error: argument {argv[0]}: expected an "
                   f"integer of at least 1, got {got}")


# ---- the Python API ---------------------------------------------------------------------------


def _prefill_args():
    bf = torch.bfloat16
    return (torch.zeros(2, 64, 576, dtype=bf), torch.zeros(8, 1, 576, dtype=bf),
            torch.zeros(2, 1, 64, dtype=torch.int32), 0.1)


@pytest.mark.parametrize("value, note", [
    (np.int64(512), "(a numpy.int64, not a Python int)"),
    (torch.tensor(512), "(a torch.Tensor, not a Python int)"),
    (True, "(a bool, not an int)"),
])
def test_d_v_of_another_type_names_the_type(value, note):
    import tle_kernels as K

    with pytest.raises(ValueError) as e:
        K.sparse_mla_prefill(*_prefill_args(), d_v=value)
    assert str(e.value) == (f"d_v: expected 512 (the V dims are kv[..., :512]), got {value!r} "
                            f"{note}")


def test_head_dim_v_of_another_type_names_the_type():
    import tle_kernels as K

    bf = torch.bfloat16
    q = torch.zeros(1, 1, 64, 576, dtype=bf)
    meta, _ = K.get_mla_metadata()
    with pytest.raises(ValueError) as e:  # dense
        K.flash_mla_with_kvcache(q, torch.zeros(2, 64, 1, 576, dtype=bf),
                                 torch.zeros(1, 1, dtype=torch.int32),
                                 torch.zeros(1, dtype=torch.int32), np.int64(512), meta)
    assert str(e.value) == ("head_dim_v: expected 512 (V = k_cache[..., :512]), got "
                            "np.int64(512) (a numpy.int64, not a Python int)")
    with pytest.raises(ValueError) as e:  # sparse
        K.flash_mla_with_kvcache(q, torch.zeros(2, 64, 1, 656, dtype=torch.uint8), None, None,
                                 torch.tensor(512), meta, is_fp8_kvcache=True,
                                 indices=torch.zeros(1, 1, 64, dtype=torch.int32))
    assert str(e.value) == ("head_dim_v: expected 512 (V = the first 512 dims of K), got "
                            "tensor(512) (a torch.Tensor, not a Python int)")


@pytest.mark.parametrize("name", ["sparse_mla_prefill", "flash_mla_sparse_fwd",
                                  "flash_mla_with_kvcache", "get_mla_metadata", "sparse_decode"])
def test_entry_point_docstrings_stand_alone(name):
    import tle_kernels as K

    fn = getattr(K, name)
    doc = inspect.getdoc(fn)
    assert "see the module docstring" not in doc
    params = [p for p in inspect.signature(fn).parameters if p not in ("args", "kwargs")]
    missing = [p for p in params if p not in doc]
    assert missing == [], missing
    if name != "get_mla_metadata":
        assert "Returns" in doc or "returns" in doc.lower()
        assert "512] bf16" in doc


def test_help_examples_say_where_they_run_from():
    from tle_compiler.cli.dump import _epilog

    assert "\nexamples: (run from the root of a checkout of the repository)\n" in _epilog()


# ---- progress on long CPU work: the Triton compile of --ttgir / --ptx --------------------------


def test_ttgir_says_on_a_terminal_that_it_compiles(capsys, monkeypatch):
    import tle_compiler.cli.dump as dump

    code, out, err = run(capsys, "--ttgir", RING)  # not a terminal: stderr as before
    assert code == 0 and err == "" and "ttg.warp_specialize" in out
    monkeypatch.setattr(dump, "_stderr_is_terminal", lambda: True)
    code, out, err = run(capsys, "--ttgir", RING)
    assert code == 0 and err == ("tle-dump: compiling ring_sum for sm_90a with Triton (a first "
                                 "compile takes seconds, a later one of the same kernel is "
                                 "cached) ...\n")
    code, out, err = run(capsys, "--gluon", RING)  # no Triton compile: nothing to announce
    assert code == 0 and err == ""
    code, out, err = run(capsys, "-q", "--ptx", RING)  # -q: diagnostics and summaries only
    assert code == 0 and err == "" and ".entry" in out


def test_the_stderr_wrapper_answers_isatty_for_the_terminal_it_wraps():
    import io

    from tle_compiler.cli.dump import _DropOnError

    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert _DropOnError(Tty()).isatty() is True
    assert _DropOnError(io.StringIO()).isatty() is False
    closed = io.StringIO()
    closed.close()
    assert _DropOnError(closed).isatty() is False


def test_architecture_names_every_api_and_benchmark_of_tle_kernels():
    page = (ROOT / "docs" / "architecture.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| `tle_kernels/` |"))
    for f in sorted((ROOT / "tle_kernels").glob("*.py")):
        if f.name.startswith("bench_") and f.name != "bench_output.py" or f.name.endswith("api.py"):
            assert f"`{f.name}`" in row, f.name
    assert "`python3 -m tle_kernels`" in row


# ---- DEFAULT_CONFIG signatures: another library's type names, misspelt arguments ---------------

def _ring_with_signature(tmp_path, old: str, new: str) -> Path:
    text = RING.read_text()
    assert old in text
    path = tmp_path / "ring.py"
    path.write_text(text.replace(old, new))
    return path


def _config_line(path: Path) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1)
                if ln.startswith("DEFAULT_CONFIG"))


@pytest.mark.parametrize("old, new, arg, says", [
    ('"N_TILES": "i32"', '"N_TILES": "int"', "N_TILES", "'int', which is not Triton's spelling: write 'i32'"),
    ('"x_ptr": "*fp32"', '"x_ptr": "*float32"', "x_ptr",
     "'*float32', which is not Triton's spelling: write '*fp32'"),
    ('"x_ptr": "*fp32"', '"x_ptr": "*f32"', "x_ptr", "'*f32', which is not Triton's spelling: write '*fp32'"),
    ('"N_TILES": "i32"', '"N_TILES": "integer"', "N_TILES", "'integer', which is no Triton type"),
])
def test_a_signature_type_triton_does_not_read_is_unusable_input(capsys, tmp_path, old, new, arg, says):
    path = _ring_with_signature(tmp_path, old, new)
    for flags in ([], ["--gluon"], ["--ptx"], ["-p", "emit-gluon"]):
        code, out, err = run(capsys, *flags, path)
        assert code == 2 and out == "", flags
        assert err.startswith(f"{path}:{_config_line(path)}: error: DEFAULT_CONFIG's \"signature\" "
                              f"types {arg!r} as {says}"), (flags, err)


def test_every_triton_type_string_of_the_repository_is_read():
    from tle_compiler.cli.config import type_problem

    for t in ("*fp32", "*bf16", "*i32", "i32", "i64", "u32", "*u8", "*i8", "i1", "fp32", "*fp8e4nv",
              "constexpr", "*kfp32", "tensordesc<bf16[64, 256]>"):
        assert type_problem(t) == "", t


@pytest.mark.parametrize("old, new, says", [
    ('"N_TILES": "i32"', '"N_TILE": "i32"', "names 'N_TILE', which kernel 'ring_sum' has no argument of"),
    (', "N_TILES": "i32"', '', "gives no type for 'N_TILES', an argument of kernel 'ring_sum'"),
])
def test_lowering_with_a_signature_that_misses_an_argument_is_unusable_input(capsys, tmp_path, old,
                                                                              new, says):
    path = _ring_with_signature(tmp_path, old, new)
    code, out, err = run(capsys, "--ptx", path)
    assert code == 2 and out == ""
    assert err == (f"{path}:{_config_line(path)}: error: DEFAULT_CONFIG's \"signature\" {says} "
                   "(its arguments: x_ptr, out_ptr, stride_x, N_TILES; constexprs may be left "
                   "out); --gluon/--ttgir/--ptx compile with these types\n")
    code, _, err = run(capsys, "-q", path)  # verifying leaves the config aside, as before
    assert code == 0 and "verified for every value of N_TILES" in err


def test_the_signature_rules_are_in_the_help_and_readme():
    from tle_compiler.cli.dump import _epilog

    text = " ".join(_epilog().split())
    assert ('a DEFAULT_CONFIG num_warps other than the kernel\'s @tle.jit one or a signature type '
            'Triton does not read ("int", "*float32")') in text
    assert ("--gluon/--ttgir/--ptx on a file without a DEFAULT_CONFIG or whose signature or "
            "constexprs name no argument of the kernel, or whose signature leaves one untyped") in text
    readme = " ".join(README.split())
    assert ('a `DEFAULT_CONFIG` `"signature"` type Triton does not read (`"int"`, `"*float32"`: the '
            'message gives Triton\'s spelling, `"i32"`, `"*fp32"`; at its line)') in readme
    assert ('a `"signature"` or `"constexprs"` that names an argument the kernel lacks, or a '
            '`"signature"` that gives an argument that is no constexpr no type (with '
            '`--gluon/--ttgir/--ptx`)') in readme


def test_lowering_with_a_constexpr_value_for_no_argument_is_unusable_input(capsys, tmp_path):
    path = _ring_with_signature(tmp_path, '"constexprs": {}', '"constexprs": {"STAGE": 3}')
    code, out, err = run(capsys, "--gluon", path)
    assert code == 2 and out == ""
    assert err == (f"{path}:{_config_line(path)}: error: DEFAULT_CONFIG's \"constexprs\" names "
                   "'STAGE', which kernel 'ring_sum' has no argument of (its arguments: x_ptr, "
                   "out_ptr, stride_x, N_TILES)\n")


# ---- odd PATHs --------------------------------------------------------------------------------


def test_an_empty_path_is_named_not_read_as_the_current_directory(capsys):
    code, out, err = run(capsys, "")
    assert code == 2 and out == ""
    assert err == "tle-dump: error: an empty PATH (''); give a .py, .pipe or .kir file\n"


def test_a_file_with_a_trailing_slash_is_refused_as_the_shell_refuses_it(capsys, tmp_path):
    ring = tmp_path / "ring.py"
    ring.write_text(RING.read_text())
    code, out, err = run(capsys, f"{ring}/")
    assert code == 2 and out == ""
    assert err == f"{ring}/: error: not a directory (a trailing '/' after a file); give the file without the '/'\n"
    code, _, err = run(capsys, f"{tmp_path}/")  # a directory: said so, as before
    assert code == 2 and err == f"{tmp_path}: error: is a directory; give a .py, .pipe or .kir file\n"


def test_the_tutorial_script_says_in_one_line_that_it_needs_a_gpu(tmp_path):
    import os
    import subprocess
    import sys

    from tests.test_tutorial import write_files

    if torch.cuda.is_available():
        pytest.skip("a GPU runs it (tests/gpu/test_tutorial_gpu.py)")
    write_files(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "copy_ring.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("copy_ring.py launches the kernel on a CUDA GPU (Hopper); without one, "
                        "tle-dump copy_ring.py verifies it and tle-dump --gluon copy_ring.py shows "
                        "what it lowers to\n")


def test_python_m_tle_compiler_cli_runs_tle_dump():
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "tle_compiler.cli", "-q", str(RING)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr.startswith("tle-dump: ring_sum: verified for every value of N_TILES")
    assert "also `python3 -m tle_compiler.cli`, where pip's scripts folder is not on" in README


def test_the_decode_docstrings_name_every_sparse_impl():
    from tle_kernels import decode_api, sparse_decode_api

    doc = " ".join(decode_api.flash_mla_with_kvcache.__doc__.split())
    module = " ".join(decode_api.__doc__.split())
    for impl in sparse_decode_api.IMPLS:
        assert f'"{impl}"' in doc or impl in decode_api.IMPLS, impl
        assert f'"{impl}"' in module, impl


@pytest.mark.parametrize("name", BENCHES)
def test_bench_refuses_an_output_path_it_could_not_write_before_the_run(name, capsys, monkeypatch,
                                                                       tmp_path):
    import importlib

    bench = importlib.import_module(f"tle_kernels.{name}")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    missing = tmp_path / "no_such_folder" / "r.json"
    for argv, flag, says in ((["--json", str(missing)], "--json",
                              f"{str(missing)!r}: no folder {str(missing.parent)!r} to write it in"),
                             (["--plot", str(tmp_path)], "--plot",
                              f"{str(tmp_path)!r} is a folder: give a file path")):
        with pytest.raises(SystemExit) as e:
            bench.main(argv)
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err == f"python3 -m tle_kernels.{name}: error: argument {flag}: {says}"
    # '' (no plot) and a file in an existing folder pass the parser (then: no GPU, exit 2)
    assert bench.main(["--plot", "", "--json", str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().err.startswith("error: this benchmark needs a CUDA GPU")


def test_compile_kernel_names_an_argument_typed_in_another_librarys_spelling():
    """Through the API (compile_kernel, a launch's compile) a torch / C type name in the
    signature is the same error tle-dump gives at DEFAULT_CONFIG, naming the argument and
    Triton's spelling (it was a bare KeyError: 'int' from the compile)."""
    pytest.importorskip("triton.experimental.gluon")
    import tle_kernels.examples.ring as ring
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering import compile_kernel

    sig = dict(ring.DEFAULT_CONFIG["signature"])
    arg = next(a for a, t in sig.items() if t == "i32")
    sig[arg] = "int"
    with pytest.raises(TleError, match=rf"argument '{arg}' as 'int', which is not Triton's "
                                       r"spelling: write 'i32'"):
        compile_kernel(ring.ring_sum, sig, ring.DEFAULT_CONFIG.get("constexprs", {}))

"""The bundled SparseMLA kernels: their protocol skeletons, verification, and static budgets.

Each kernel ``tle_kernels/X.py`` has a hand-translated protocol skeleton ``tle_kernels/X.pipe``. The tests
check that (1) the ``.pipe`` parses and verifies, and the simulator agrees for small trip counts;
(2) the frontend reads the same skeleton out of the Python kernel (pipes, partitions, loops and
the sequence of events, locations ignored) and that program verifies too; (3) what can be read off
the Python source without running it holds: the ``DEFAULT_CONFIG`` signature names the kernel's
arguments in order, and the shared-memory buffers fit Hopper's 227 KiB. Pieces whose modules do
not exist yet are skipped.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tle_compiler.ir import READER_VERBS, Access, Event, For, Program, walk_events

KERNELS_DIR = Path(__file__).resolve().parent.parent / "tle_kernels"
# kernel name -> its trip-count param (the persistent seesaw: ROUNDS items of 16 pairs each, read
# specialised to DEFAULT_CONFIG's TOPK)
KERNELS = {"sparse_mla_pipe": "NK", "sparse_mla_seesaw": "ROUNDS"}

HOPPER_SMEM_BYTES = 227 * 1024  # max dynamic shared memory per block on sm_90
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "int8": 1, "i8": 1, "int1": 1, "i1": 1, "int32": 4,
               "i32": 4}


def _need(module: str, name: str):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        pytest.skip(f"{module}.{name} does not exist yet")


def _parsed(kernel: str) -> Program:
    parse_file = _need("tle_compiler.ir.parser", "parse_file")
    module = parse_file(KERNELS_DIR / f"{kernel}.pipe")
    assert [k.name for k in module.kernels] == [kernel]
    return module.kernels[0]


def _from_python(kernel: str) -> Program:
    """The kernel's Program, read as the lowering reads it: specialised to DEFAULT_CONFIG's
    constexprs when its indices need that (the persistent seesaw), generic otherwise."""
    from tle_compiler.lowering.compile import kernel_info_of
    from tle_compiler.lowering.dumping import default_config

    path = KERNELS_DIR / f"{kernel}.py"
    info = kernel_info_of((str(path), kernel), default_config(str(path), kernel)["constexprs"])
    assert info.name == kernel
    return info.program


def _pipes(prog: Program, with_mma: bool) -> dict:
    return {p.name: (p.capacity, tuple(p.fields), tuple(p.readers), p.one_shot)
            + ((tuple(sorted(p.mma)),) if with_mma else ()) for p in prog.pipes}


def _events(prog: Program) -> list[tuple]:
    """(partition, verb, pipe, reader, index) in source order; an SPSC reader is None."""
    return [(part.name, ev.verb, ev.pipe, ev.reader or None, ev.index)
            for part in prog.partitions for ev in walk_events(part.body)]


def _views(prog: Program) -> dict:
    """(pipe, reader) -> the field view written on any of its events (all fields if none)."""
    views: dict = {}
    for part in prog.partitions:
        for ev in walk_events(part.body):
            if ev.verb in READER_VERBS and ev.fields is not None:
                views.setdefault((ev.pipe, ev.reader or None), set()).add(tuple(sorted(ev.fields)))
    return views


def _shape(body) -> tuple:
    """Loop and branch structure with events reduced to (verb, pipe, reader, index); slot
    accesses are left out (the hand-written .pipe files hold the events only)."""
    out = []
    for s in body:
        if isinstance(s, Access):
            continue
        if isinstance(s, Event):
            out.append((s.verb, s.pipe, s.reader or None, s.index))
        elif isinstance(s, For):
            out.append(("for", s.var, s.start, s.stop, s.step, _shape(s.body)))
        else:
            out.append(("if", str(s.cond), _shape(s.then), _shape(s.orelse)))
    return tuple(out)


# ---------------------------------------------------------------- the hand-written .pipe files

@pytest.mark.parametrize("kernel", KERNELS)
def test_pipe_file_verifies(kernel):
    run_pipeline = _need("tle_compiler.passes", "run_pipeline")
    ctx = run_pipeline(_parsed(kernel))
    assert ctx.ok, "\n".join(map(str, ctx.diagnostics))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("trips", range(5))
def test_pipe_file_simulates_cleanly(kernel, trips):
    simulate = _need("tle_compiler.semantics", "simulate")
    result = simulate(_parsed(kernel), {KERNELS[kernel]: trips})
    assert result.ok, "\n".join(map(str, result.errors))


def test_seesaw_consumer0_waiting_for_the_final_max_before_committing_its_own_deadlocks():
    """The seesaw's max order is one-directional: consumer0 commits m0 and goes on, consumer1
    waits for m0 before it commits m_new. It is deadlock-free only because consumer0 commits m0
    before it waits for m_new; waiting first is a two-partition cycle."""
    parse_module = _need("tle_compiler.ir.parser", "parse_module")
    run_pipeline = _need("tle_compiler.passes", "run_pipeline")
    text = (KERNELS_DIR / "sparse_mla_seesaw.pipe").read_text()
    lines = [ln.split("#")[0].strip() for ln in text.splitlines()]
    c1 = next(i for i, ln in enumerate(lines) if ln.startswith("partition consumer1 "))
    g = "(p + 16*r)"
    # consumer1 follows: it waits for m0 before committing m_new (no two-way exchange)
    assert lines.index(f"max0.wait{g}", c1) < lines.index(f"max1.commit{g}", c1)
    at = lines.index(f"max0.acquire{g}")  # consumer0's
    assert at < c1 and lines[at:at + 2] == [f"max0.acquire{g}", f"max0.commit{g}"]
    w = lines.index(f"max1.wait{g}")
    assert at < w < c1 and lines[w:w + 2] == [f"max1.wait{g}", f"max1.release{g}"]
    swapped = lines[:at] + lines[w:w + 2] + lines[at:w] + lines[w + 2:]
    ctx = run_pipeline(parse_module("\n".join(swapped), "swapped.pipe").kernels[0])
    assert not ctx.ok
    assert {d.check for d in ctx.errors} == {"deadlock"}


def test_pipe_kernel_right_must_release_the_probability_tile():
    """Dropping the right consumer's score release leaves the left's next acquire blocked: the
    probability tile cannot be overwritten before the right consumer is done with it."""
    parse_module = _need("tle_compiler.ir.parser", "parse_module")
    run_pipeline = _need("tle_compiler.passes", "run_pipeline")
    text = (KERNELS_DIR / "sparse_mla_pipe.pipe").read_text()
    assert text.count("score.release(ck)") == 1
    ctx = run_pipeline(parse_module(text.replace("score.release(ck)", ""), "norelease.pipe")
                       .kernels[0])
    assert not ctx.ok


# ---------------------------------------------------------------- the Python kernels

@pytest.mark.parametrize("kernel", KERNELS)
def test_frontend_skeleton_matches_pipe_file(kernel):
    expected = _parsed(kernel)
    got = _from_python(kernel)
    with_mma = any(p.mma for p in expected.pipes)  # mma is compared once the .pipe states it
    assert _pipes(got, with_mma) == _pipes(expected, with_mma)
    assert set(got.param_names) == set(expected.param_names)
    assert [(p.name, p.default, p.warps, p.regs) for p in got.partitions] == \
        [(p.name, p.default, p.warps, p.regs) for p in expected.partitions]
    assert _events(got) == _events(expected)
    assert _views(got) == _views(expected)
    for g, e in zip(got.partitions, expected.partitions):
        assert _shape(g.body) == _shape(e.body), f"partition {e.name}: loop structure differs"


@pytest.mark.parametrize("kernel", KERNELS)
def test_frontend_program_verifies(kernel):
    run_pipeline = _need("tle_compiler.passes", "run_pipeline")
    ctx = run_pipeline(_from_python(kernel))
    assert ctx.ok, "\n".join(map(str, ctx.diagnostics))


def _module_ast(kernel: str) -> ast.Module:
    return ast.parse((KERNELS_DIR / f"{kernel}.py").read_text())


def _kernel_def(tree: ast.Module, kernel: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel)


def _default_config(tree: ast.Module) -> dict:
    node = next(n for n in tree.body if isinstance(n, ast.Assign)
                and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["DEFAULT_CONFIG"])
    return ast.literal_eval(node.value)


@pytest.mark.parametrize("kernel", KERNELS)
def test_default_config_names_the_kernel_arguments(kernel):
    tree = _module_ast(kernel)
    fn = _kernel_def(tree, kernel)
    config = _default_config(tree)
    assert list(config["signature"]) == [a.arg for a in fn.args.args]
    constexpr_args = [a.arg for a in fn.args.args if isinstance(a.annotation, ast.Attribute)
                      and a.annotation.attr == "constexpr"]
    assert sorted(config["constexprs"]) == sorted(constexpr_args)
    assert all(config["signature"][a] == "constexpr" for a in constexpr_args)


def _smem_bytes(kernel: str) -> int:
    """Sum of the kernel's shared-memory buffers (every pipe field and free `tle.gpu.alloc`) as the
    frontend builds them with DEFAULT_CONFIG's constexprs (constants imported from other modules
    of the package included)."""
    from tle_compiler.frontend.build import build_file

    tree = _module_ast(kernel)
    (k,) = build_file(KERNELS_DIR / f"{kernel}.py", kernel,
                      bind=dict(_default_config(tree)["constexprs"]))
    bufs = [b for p in k.pipes for b in p.fields] + list(k.buffers)
    total = 0
    for b in bufs:
        elems = 1
        for dim in b.shape:
            elems *= dim
        total += elems * DTYPE_BYTES[b.dtype]
    return total


@pytest.mark.parametrize("kernel,expected", [("sparse_mla_pipe", 230_016),
                                             ("sparse_mla_seesaw", 230_528)])
def test_shared_memory_fits_hopper(kernel, expected):
    total = _smem_bytes(kernel)
    assert total == expected  # the figure each kernel's docstring states
    assert total <= HOPPER_SMEM_BYTES - 1024  # room left for the mbarriers


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_module_imports(kernel):
    tle = importlib.import_module("tle_compiler")
    if not all(hasattr(tle, a) for a in ("jit", "pipe", "gpu")):
        pytest.skip("the tle language surface does not exist yet")
    mod = importlib.import_module(f"tle_kernels.{kernel}")
    assert getattr(mod, kernel).name == kernel and isinstance(mod.DEFAULT_CONFIG, dict)


# ---------------------------------------------------------------- the math, emulated on the CPU

#: Edits of kernel_copy that give the seesaw's four exchange pipes mbarriers again (the bundled
#: kernels hand them over by hardware named barriers): for tests of what the lowering does with
#: mbarrier exchanges on a real kernel (eager publish, the timeline probe's waits).
MBARRIER_EXCHANGE = tuple((f'{n} = tle.pipe(capacity=1, barrier="named",', f"{n} = tle.pipe(capacity=1,")
                          for n in ("max0", "max1", "prob0", "prob1"))


def kernel_copy(kernel: str, path: Path, edits=()) -> Path:
    """A copy of tle_kernels/<kernel>.py at ``path`` with ``edits`` (old, new) applied (each old
    text must occur exactly once) and its package-relative imports made absolute
    (``from tle_kernels.sparse_mla_common import ...``), so that it reads the same outside the
    package: the test inputs that are a bundled kernel with one change."""
    src = (KERNELS_DIR / f"{kernel}.py").read_text()
    for old, new in edits:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    path.write_text(src.replace("\nfrom .", "\nfrom tle_kernels."))
    return path

#
# Until the lowering runs the kernels on a GPU, their math is checked by executing the Python
# source as written against the CPU emulation of the language (tle_compiler/testing/emulator.py):
# `tl.*` on torch tensors, every address bounds-checked (masked or not), shared buffers poisoned
# with NaN, every partition in its own thread and each pipe blocking exactly as docs/semantics.md
# says (acquire(i) waits for every reader's release(i - C), wait(i) for commit(i)). A reader's slot
# shows only its field view, so reading outside the view fails. tl.dot takes bf16 operands only
# (wgmma: bf16 in, fp32 accumulation). This checks the math and the data handed through pipes, not
# the lowering.

def _reference(q, kv, idx, sm_scale):
    """fp32 SparseMLA prefill with FlashMLA's conventions for rows without a valid index."""
    import torch
    s_q, h_q, _ = q.shape
    s_kv = kv.shape[0]
    out, lse, ml = torch.zeros(s_q, h_q, 512), torch.zeros(s_q, h_q), torch.zeros(s_q, h_q)
    for s in range(s_q):
        t = idx[s, 0].long()
        valid = (t >= 0) & (t < s_kv)
        rows = kv[t.clamp(0, s_kv - 1), 0].float()
        logits = (q[s].float() @ rows.T) * sm_scale
        logits[:, ~valid] = float("-inf")
        ml[s] = logits.max(1).values
        if valid.any():
            lse[s] = torch.logsumexp(logits, 1)
            out[s] = torch.softmax(logits, 1) @ rows[:, :512]
        else:
            lse[s] = float("inf")
    return out, lse, ml


def test_seesaw_lazy_rescale_moves_its_reference_mid_item_in_cpu_emulation():
    """The seesaw keeps a reference max per row and rescales its output only when a score
    exceeds the reference by more than 2^TAU (tle_kernels/sparse_mla_seesaw.py, "Lazy rescale").
    Scores spanning ~40 log2 units, with each row's indices in increasing score order, move the
    reference many times inside an item; out, lse and max_logits must still match the reference
    (a skipped or misapplied rescale is off by a factor of at least 2^TAU)."""
    torch = pytest.importorskip("torch")
    from tle_kernels.api import launch_args
    from tle_kernels.sparse_mla_common import TAU

    path = KERNELS_DIR / "sparse_mla_seesaw.py"
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(path, dot_dtypes=(torch.bfloat16,))
    tau = TAU.value
    assert tau == 8.0
    s_q, h_q, s_kv, topk = 3, 128, 700, 512
    g = torch.Generator().manual_seed(3)
    direction = torch.randn(s_q, 1, 576, generator=g)
    q = (direction * 60 + torch.randn(s_q, h_q, 576, generator=g)).bfloat16()
    kv = (torch.randn(s_kv, 1, 576, generator=g) * 0.3).bfloat16()
    sm_scale = 576 ** -0.5
    score = (q.float().mean(1) @ kv[:, 0].float().T) * sm_scale * 1.4426950408889634
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    for s in range(s_q):  # each row's indices by increasing score: its max keeps growing
        idx[s, 0] = idx[s, 0][score[s, idx[s, 0].long()].argsort()]
    # row 1: the higher tile of each pair first, so the reference moves at consumer0's tile
    # (its rescale before P0·V0) rather than at consumer1's (the others' rescales)
    idx[1, 0] = idx[1, 0].view(topk // 128, 2, 64).flip(1).reshape(topk)
    spread = [score[s, idx[s, 0].long()].max() - score[s, idx[s, 0, :128].long()].max()
              for s in range(s_q)]
    assert min(spread) > 4 * tau  # the reference has to move several times per item
    idx[2, 0, :100] = -1              # an invalid start, then valid tiles

    out = torch.full((s_q, h_q, 512), float("nan")).bfloat16()
    lse, ml = torch.full((s_q, h_q), float("nan")), torch.full((s_q, h_q), float("nan"))
    args = (q, kv, idx, out, lse, ml, q.stride(0), q.stride(1), kv.stride(0), idx.stride(0),
            out.stride(0), out.stride(1), lse.stride(0), kv.shape[0], float(sm_scale))
    grid, n_items, n_hb, rounds = launch_args(s_q, h_q, 4, 64)
    mod.sparse_mla_seesaw[grid](*args, n_items, n_hb, rounds, h_q, 1, TOPK=topk, BLOCK_H=64)
    ref_out, ref_lse, ref_ml = _reference(q, kv, idx, sm_scale)
    assert ((out.float() - ref_out).norm() / ref_out.norm()).item() < 5e-3
    assert (out.float() - ref_out).abs().max().item() < 1e-2
    assert torch.allclose(lse, ref_lse, atol=1e-4, rtol=0)
    assert torch.allclose(ml, ref_ml, atol=1e-4, rtol=0)


@pytest.mark.parametrize("kernel,path,topk,persistent",
                         [(k, KERNELS_DIR / f"{k}.py", 256, True) for k in KERNELS]
                         + [("sparse_mla_seesaw", KERNELS_DIR / "sparse_mla_seesaw.py", 256, False)],
                         ids=[*KERNELS, "sparse_mla_seesaw-per_cta"])
def test_kernel_math_matches_reference_in_cpu_emulation(kernel, path, topk, persistent):
    """Each kernel against the fp32 reference, launched as tle_kernels/api.py launches it; the
    seesaw also with ``persistent=False`` (one program per item, ROUNDS = 1)."""
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import load_kernel_module

    mod = load_kernel_module(path, dot_dtypes=(torch.bfloat16,))
    block_h = mod.DEFAULT_CONFIG["constexprs"]["BLOCK_H"]

    s_q, h_q, s_kv = 4, 2 * block_h, 300
    g = torch.Generator().manual_seed(0)
    q = (torch.randn(s_q, h_q, 576, generator=g) * 0.3).bfloat16()
    kv = (torch.randn(s_kv, 1, 576, generator=g) * 0.3).bfloat16()
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    invalid = torch.tensor([-1, s_kv, -2**31, 2**31 - 1], dtype=torch.int32)
    hole = torch.rand(s_q, 1, topk, generator=g) < 0.3
    idx[hole] = invalid[torch.randint(0, 4, (int(hole.sum()),), generator=g)]
    idx[1] = -1           # no valid index at all
    idx[2, 0, :200] = -1  # the first tiles (and pairs) fully invalid, later ones valid
    sm_scale = 576 ** -0.5

    out = torch.full((s_q, h_q, 512), float("nan")).bfloat16()
    lse, ml = torch.full((s_q, h_q), float("nan")), torch.full((s_q, h_q), float("nan"))
    # the launch of tle_kernels/api.py, grid included
    args = (q, kv, idx, out, lse, ml, q.stride(0), q.stride(1), kv.stride(0), idx.stride(0),
            out.stride(0), out.stride(1), lse.stride(0), kv.shape[0], float(sm_scale))
    from tle_kernels.api import PerCtaLaunch, is_persistent, launch_args, takes_argument
    if is_persistent(mod) and not persistent:
        launches = []

        class Recorded:  # the launches PerCtaLaunch makes, then the emulated kernel's
            def __getitem__(self, grid):
                def run(*a, **kw):
                    launches.append((grid, a[-3:]))
                    getattr(mod, kernel)[grid](*a, **kw)
                return run

        PerCtaLaunch(Recorded(), persistent=False)[(s_q, h_q // block_h)](
            *args, TOPK=topk, BLOCK_H=block_h)
        n_items = s_q * h_q // block_h
        assert launches == [((n_items,), (n_items, h_q // block_h, 1))]
    elif is_persistent(mod):
        # persistent: 3 programs for 8 items, so one program's last round repeats the last item
        grid, n_items, n_hb, rounds = launch_args(s_q, h_q, 3, block_h)
        assert grid == (3,) and rounds * 3 > n_items
        heads = {"n_heads": h_q} if takes_argument(getattr(mod, kernel), "n_heads") else {}
        if takes_argument(getattr(mod, kernel), "q_div"):
            heads["q_div"] = 1
        getattr(mod, kernel)[grid](*args, n_items, n_hb, rounds, TOPK=topk, BLOCK_H=block_h,
                                   **heads)
    else:
        getattr(mod, kernel)[(s_q, h_q // block_h)](*args, TOPK=topk, BLOCK_H=block_h)

    ref_out, ref_lse, ref_ml = _reference(q, kv, idx, sm_scale)
    assert not out.float().isnan().any() and not lse.isnan().any() and not ml.isnan().any()
    assert ((out.float() - ref_out).norm() / ref_out.norm()).item() < 5e-3  # bf16 P and out
    assert (out[1] == 0).all()
    assert torch.allclose(lse, ref_lse, atol=1e-6, rtol=0)  # FlashMLA's own tolerance
    assert torch.allclose(ml, ref_ml, atol=1e-6, rtol=0)
    assert (lse[1] == float("inf")).all() and (ml[1] == float("-inf")).all()

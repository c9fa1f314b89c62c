"""The lowering emits exactly the barrier operations the verifier checked.

For every bundled kernel, example and GPU-test kernel (discovered from tle_kernels/), and for small
kernels of loop and control-flow forms (tests/fixtures/lowering_events/), the generated Gluon is run
by tle_compiler.testing.gluon_trace for several values of the runtime trip counts (a trip count the
kernel reads from memory, as the decode kernels read theirs from cache_seqlens, pinned to each value
as a runtime argument is set): the mbarrier
waits and arrives each partition executes must equal, in order, the operations the verified Pipe
IR's events map to (docs/semantics.md's verb table over the plan's barrier arrays), and no release
may hand back a slot that an in-flight wgmma still reads. The comparer and the interpreter are
themselves checked on deliberately wrong expectations and mutated Gluon.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402
from tle_compiler.lowering.dumping import default_config  # noqa: E402
from tle_compiler.testing.gluon_trace import (ARRIVE, ARRIVE_THREAD, WAIT, LoweredKernel,  # noqa: E402
                                              TraceError, compare, data_dependent_names,
                                              release_rings_of, trace_gluon)

from .bundled import tle_kernels  # noqa: E402
from .tle_snippets import HEADER, TILE_FILL  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "lowering_events"
LOOPS = FIXTURES / "loops.py"
CONTROL = FIXTURES / "control.py"
# pipelined attention with a delayed release (also a GPU-test kernel)
PIPELINED = ROOT / "tle_kernels" / "gpu_tests" / "slot_overlap.py"

KERNEL_FILES = ([ROOT / "tle_kernels" / f"{stem}.py" for stem in
                 ("sparse_mla_pipe", "sparse_mla_seesaw", "mla_decode_pipe", "mla_decode_seesaw")]
                + sorted((ROOT / "tle_kernels" / "examples").glob("*.py"))
                + sorted((ROOT / "tle_kernels" / "gpu_tests").glob("*.py")))
TRIP_COUNTS = (0, 1, 2, 3, 5)

# kernels outside the verifier's proved fragment (steps other than 1) are lowered with a warning
pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")


def jit_kernels(path: Path) -> list[tuple[Path, str, dict]]:
    """The ``@tle.jit`` kernels of a file, each with its DEFAULT_CONFIG (its entry when the config
    is keyed by kernel name), as the GPU tests and tle-dump use them."""
    return [(p, name, default_config(str(p), name)) for p, name in tle_kernels(path)]


KERNELS = [k for p in KERNEL_FILES if p.name != "__init__.py" for k in jit_kernels(p)]


# ------------------------------------------------------------------ driving the trip counts

class Runs:
    """Lowers a kernel once per constexpr setting and finds, for each IR param, the kernel inputs
    that give it a wanted value: a param that is an integer argument is set directly; a kernel-level
    variable (``NT = tl.cdiv(N_KV, BN)``, ``NK = TOPK // BK``) is driven through the integer
    arguments and constexprs its definition reads, scaled by the first multiplier (1, the file's
    integer constants, powers of two) for which the traced prologue computes the wanted value; a
    kernel-level variable computed from loaded data or program ids (the decode kernels' ``NK``
    from ``cache_seqlens``), which no input drives, is pinned to the value (gluon_trace's pins)."""

    def __init__(self, path: Path, name: str, config: dict, debug_waits: bool = False):
        self.path, self.name, self.debug_waits = path, name, debug_waits
        self.sig = config["signature"]
        self.cx = dict(config.get("constexprs", {}))
        self.int_args = [a for a, t in self.sig.items() if t in ("i32", "i64")]
        self.int64 = [a for a, t in self.sig.items() if t == "i64"]
        self._lowered: dict[tuple, LoweredKernel] = {}
        self.base = self.lowered(self.cx)
        tree = ast.parse(path.read_text())
        self.consts = sorted({v for n in tree.body if isinstance(n, ast.Assign)
                              for v in [_const_int(n.value)] if v is not None and v > 1})
        self.multipliers: dict[str, tuple[list[str], int]] = {}
        self.pinned = set(self.base.data_params({a: 64 for a in self.int_args}))

    def lowered(self, cx: dict) -> LoweredKernel:
        key = tuple(sorted(cx.items()))
        if key not in self._lowered:
            self._lowered[key] = LoweredKernel((str(self.path), self.name), cx,
                                               debug_waits=self.debug_waits, int64_args=self.int64)
        return self._lowered[key]

    def inputs_of(self, param: str) -> list[str]:
        """The integer arguments and constexprs a kernel-level variable is computed from."""
        defs: dict[str, set[str]] = {}
        for st in self.base.info.node.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                defs[st.targets[0].id] = {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
        seen, todo = set(), [param]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += sorted(defs.get(n, ()))
        return [a for a in self.sig if a in seen and (a in self.int_args or isinstance(self.cx.get(a), int))]

    def setting(self, values: dict[str, int]) -> tuple[dict, dict, dict]:
        """(constexprs, arguments, pins) under which the IR params take ``values``."""
        cx, args = dict(self.cx), {a: 64 for a in self.int_args}
        pins = {p: v for p, v in values.items() if p in self.pinned}
        for p, v in values.items():
            if p in pins:
                continue
            if p in self.int_args:
                args[p] = v
                continue
            inputs, m = self.multiplier(p)
            for a in inputs:
                (args if a in self.int_args else cx)[a] = v * m
        return cx, args, pins

    def multiplier(self, param: str) -> tuple[list[str], int]:
        if param not in self.multipliers:
            inputs = self.inputs_of(param)
            assert inputs, f"{self.name}: IR param {param} is neither an integer argument nor " \
                           f"computed from one"
            for m in [1] + self.consts + [2 ** k for k in range(1, 11)]:
                cx, args = dict(self.cx), {a: 64 for a in self.int_args}
                for a in inputs:
                    (args if a in self.int_args else cx)[a] = 3 * m
                try:
                    lk = self.lowered(cx)
                    if lk.params(lk.trace(args)).get(param) == 3:
                        self.multipliers[param] = (inputs, m)
                        break
                except TleError:
                    continue
            else:
                pytest.fail(f"{self.name}: found no inputs ({', '.join(inputs)}) that drive IR param "
                            f"{param} to 3")
        return self.multipliers[param]

    def check(self, values: dict[str, int]) -> list[str]:
        cx, args, pins = self.setting(values)
        lk = self.lowered(cx)
        params, problems = lk.check(args, pins)
        assert params == values, \
            f"{self.name}: inputs {cx} {args} (pins {pins}) gave params {params}, not {values}"
        return [f"{self.name} with {values}: {p}" for p in problems]


def _const_int(node: ast.AST):
    if isinstance(node, ast.Call) and node.args and ast.unparse(node.func).endswith("constexpr"):
        node = node.args[0]
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def param_grid(program, values=TRIP_COUNTS) -> list[dict[str, int]]:
    """Param values to compare at: ``values`` for each param (fewer when there are several), within
    each param's domain (the values the verifier checks)."""
    if len(program.params) > 1:
        values = (0, 1, 3)
    grid = itertools.product(*[[v for v in values if p.contains(v)] for p in program.params])
    return [dict(zip([p.name for p in program.params], combo)) for combo in grid]


# ------------------------------------------------------------------ every kernel of the repository

def test_every_kernel_file_is_discovered():
    stems = {p.stem for p, _, _ in KERNELS}
    assert {"sparse_mla_pipe", "sparse_mla_seesaw", "mla_decode_pipe", "mla_decode_seesaw", "ring",
            "spmc", "spsc_ring", "seesaw", "one_shot", "close"} <= stems
    assert len(KERNELS) >= 20


@pytest.mark.parametrize("path,name,config", KERNELS, ids=[f"{p.stem}.{n}" for p, n, _ in KERNELS])
def test_kernel_lowering_emits_the_verified_barrier_operations(path, name, config):
    runs = Runs(path, name, config)
    problems = []
    for values in param_grid(runs.base.program):
        problems += runs.check(values)
    assert not problems, "\n".join(problems)


# The seesaw decode's TMA producer (TMA=1: K pages as shifted TMA boxes), read specialised to it.
DECODE_TMA = [(p, n, dict(c, constexprs=dict(c["constexprs"], TMA=1))) for p, n, c in KERNELS
              if n == "mla_decode_seesaw"]


@pytest.mark.parametrize("path,name,config", DECODE_TMA, ids=["mla_decode_seesaw.TMA=1"])
def test_decode_kernel_with_tma_pages_emits_the_verified_barrier_operations(path, name, config):
    """Every copy signals its slot's group's full barrier at its stage, every commit arrives with
    the verified expect-tx, for the pinned pair counts 0, 1, 2, 3 and 5."""
    runs = Runs(path, name, config)
    assert "tma.async_copy_global_to_shared(" in runs.base.gen.source
    problems = []
    for values in param_grid(runs.base.program):
        problems += runs.check(values)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path,name,config", KERNELS, ids=[f"{p.stem}.{n}" for p, n, _ in KERNELS])
def test_kernel_with_debug_waits_emits_the_verified_barrier_operations(path, name, config):
    """Debug waits (lowering/debug.py) turn every wait into a bounded try-wait loop: the same
    waits, in the same order."""
    runs = Runs(path, name, config, debug_waits=True)
    assert "_tle_try_wait(" in runs.base.gen.source and "mbarrier.wait(" not in runs.base.gen.source
    problems = []
    for values in param_grid(runs.base.program, (3,)):
        problems += runs.check(values)
    assert not problems, "\n".join(problems)


def test_eager_publish_arrives_per_thread_where_the_plan_says(tmp_path):
    """eager_publish (lowering/eager.py) on the bundled seesaw: every release and register-filled
    commit is a per-thread arrive at the barrier's shared-memory offset, still one per event."""
    from tests.test_kernels import kernel_copy

    jit = "@tle.jit(num_warps=4, wgmma_pipeline=True)"
    path = kernel_copy("sparse_mla_seesaw", tmp_path / "sparse_mla_seesaw_eager.py",
                       [(jit, jit[:-1] + ", eager_publish=True)")])
    lk = LoweredKernel((str(path), "sparse_mla_seesaw"), {"TOPK": 2048, "BLOCK_H": 64})
    params, problems = lk.check({"ROUNDS": 2})
    assert params == {"ROUNDS": 2} and not problems, "\n".join(problems)
    ops = {o.op for p in lk.trace({"ROUNDS": 2}).partitions for o in p.ops}
    assert ARRIVE_THREAD in ops and ARRIVE not in ops


# ------------------------------------------------------------------ loop and control-flow forms

def _check_fixture(path: Path, name: str, values=TRIP_COUNTS, param: str = "N") -> list[str]:
    lk = LoweredKernel((str(path), name), {})
    problems = []
    for n in values:
        params, found = lk.check({param: n})
        assert params == {param: n}
        problems += [f"{param}={n}: {p}" for p in found]
    return problems


@pytest.mark.parametrize("name", ["step_positional", "step_negative", "static_steps"])
def test_loop_steps_are_read_alike_by_verifier_and_lowering(name):
    """tl.range(0, N, 2), negative constant steps (range(2N - 1, -1, -1), tl.range(2N - 2, -1,
    -2)) and tl.static_range(0, 4, 2)."""
    problems = _check_fixture(LOOPS, name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["step_keyword", "static_step_keyword"])
def test_keyword_steps_are_read_alike_by_verifier_and_lowering(name):
    """tl.range(0, N, step=2) and tl.static_range(0, 4, step=2): Triton 3.6 binds step by keyword
    as well as by position."""
    problems = _check_fixture(LOOPS, name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["if_on_loop_vars", "c_remainder", "delayed_release"])
def test_control_flow_is_read_alike_by_verifier_and_lowering(name):
    """ifs on loop variables (and/or/not, `%`), a C remainder that is -1 only at i = 0 (Python's
    would never be), helpers performing events, `if i > 0: r.release(i - 1)`."""
    problems = _check_fixture(CONTROL, name)
    assert not problems, "\n".join(problems)


def test_callback_commit_is_never_verified_without_being_lowered_alike():
    """`notify(w.commit, i)`: either both sides see the commit, or the kernel is refused at the
    callback (the lowering alone would emit the commit the verifier does not see)."""
    line = next(i for i, ln in enumerate(CONTROL.read_text().splitlines(), 1)
                if "notify(w.commit, i)" in ln)
    try:
        lk = LoweredKernel((str(CONTROL), "callback"), {})
    except TleError as e:
        assert e.loc is not None and e.loc.line == line, str(e)
        return
    problems = [p for n in TRIP_COUNTS for p in lk.check({"N": n})[1]]
    assert not problems, "\n".join(problems)


def test_pipelined_wgmma_releases_only_retired_slots():
    """@tle.jit(wgmma_pipeline=True), the P·V wgmma of tile t - 1 in flight across the back-edge,
    kv(t - 1) released in iteration t."""
    problems = _check_fixture(PIPELINED, "delayed_release", param="NT")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ st_For: loop arguments

def _lowered_for(loop: str, tmp_path, idx: str = "i") -> str:
    """The Gluon loop header the lowering emits for ``for i in <loop>:``, written as the loop of
    both partitions of a producer/consumer kernel with a runtime scalar NT and a constexpr C; the
    pipe events of the loop name index ``idx``."""
    import re

    from tle_compiler.lowering import gluon_source

    body = TILE_FILL.replace("def fill(p, x_ptr, NT):", "def fill(p, x_ptr, NT, C):")
    body = body.replace("for i in range(NT):", f"for i in {loop}:")
    body = body.replace("acquire(i)", f"acquire({idx})").replace("commit(i)", f"commit({idx})")
    assert f"for i in {loop}:" in body and f"commit({idx})" in body
    path = tmp_path / "k.py"
    path.write_text(HEADER + body + f'''
def drain(p, NT, C):
    r = p.reader()
    for i in {loop}:
        r.wait({idx})
        r.release({idx})


@tle.jit
def k(x_ptr, NT, C: tl.constexpr):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT, C)), (drain, (p, NT, C))], [4], [232])
''')
    src = gluon_source((str(path), "k"), {"C": 4}).source
    heads = {ln.strip() for ln in src.splitlines() if re.match(r"\s*for \w*i in ", ln)}
    assert len(heads) == 1, heads  # both partitions: the same loop
    return re.sub(r"^for \w*i in ", "for i in ", heads.pop())


@pytest.mark.parametrize("loop,emitted,idx", [
    ("tl.range(0, NT, step=2)", "range(0, NT, 2)", "i"),
    ("tl.range(NT, step=2)", "range(0, NT, 2)", "i"),
    ("tl.range(arg1=0, arg2=NT, step=2)", "range(0, NT, 2)", "i"),
    ("tl.range(0, NT, 2, num_stages=None, flatten=False)", "range(0, NT, 2)", "i"),
    ("tl.range(NT - 1, -1, -1)", "range((NT - 1), (-1), (-1))", "NT - 1 - i"),
    ("tl.range(0, NT)", "range(NT)", "i"),
    ("range(NT)", "range(NT)", "i"),
    ("range(0, NT, 2)", "range(0, NT, 2)", "i"),  # stage 0 only: phases alternate
    ("tl.static_range(0, C, step=2)", "gl.static_range(0, C, 2)", "i"),
    ("tl.static_range(C, -1, -2)", "gl.static_range(C, (-1), (-2))", "C - i"),
    ("tl.static_range(C)", "gl.static_range(C)", "i"),
])
def test_loop_arguments_are_bound_as_triton_binds_them(loop, emitted, idx, tmp_path):
    assert _lowered_for(loop, tmp_path, idx) == f"for i in {emitted}:"


@pytest.mark.parametrize("loop,message", [
    ("tl.range(0, NT, num_stages=3)", "num_stages=3) is not supported by the lowering"),
    ("tl.range(0, NT, loop_unroll_factor=2)", "loop_unroll_factor=2) is not supported"),
    ("tl.range(0, NT, disable_licm=True)", "disable_licm=True) is not supported"),
])
def test_loop_arguments_the_lowering_cannot_honour_are_errors(loop, message, tmp_path):
    with pytest.raises(TleError, match="lowering") as e:
        _lowered_for(loop, tmp_path)
    assert message in str(e.value)


@pytest.mark.parametrize("loop,message", [
    ("range(0, NT, step=2)", "Python's range takes no keyword arguments"),
    ("tl.range(0, NT, stride=2)", "tl.range has no argument 'stride'"),
    ("tl.range(0, NT, 1, step=2)", "tl.range got two values for 'step'"),
    ("tl.range(0, NT, 0)", "must be a non-zero integer, got 0"),
    ("tl.static_range(0, C, 1, 2)", "takes at most 3 positional arguments"),
    ("tl.range(step=2)", "needs at least its first argument"),
    ("tl.static_range(0, NT)", "unrolls at compile time, but `NT` is only known at run time"),
])
def test_loop_headers_triton_would_refuse_are_frontend_errors(loop, message, tmp_path):
    """Refused by the frontend (check bad-loop), before the verifier or the lowering reads them."""
    with pytest.raises(TleError) as e:
        _lowered_for(loop, tmp_path)
    assert e.value.check == "bad-loop" and message in str(e.value)


def test_a_tl_range_option_is_refused_in_a_whole_kernel(tmp_path):
    """tl.range(..., num_stages=2) is refused at its line, with the lowering's message, instead
    of being dropped: by the frontend's reading (so tle-dump does not verify a kernel the
    compiler refuses) before the lowering would."""
    path = tmp_path / "k.py"
    body = TILE_FILL.replace("for i in range(NT):", "for i in tl.range(0, NT, num_stages=2):")
    assert body != TILE_FILL
    path.write_text(HEADER + body + '''
def drain(p, NT):
    r = p.reader()
    for i in range(NT):
        r.wait(i)
        r.release(i)


@tle.jit
def k(x_ptr, NT):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT)), (drain, (p, NT))], [4], [232])
''')
    with pytest.raises(TleError, match="num_stages=2\\) is not supported by the lowering") as e:
        LoweredKernel((str(path), "k"), {})
    assert e.value.loc.line == path.read_text().splitlines().index(
        "    for i in tl.range(0, NT, num_stages=2):") + 1


# ------------------------------------------------------------------ the comparer can fail

def _ring():
    """The capacity-3 SPSC ring of the GPU tests, traced for 4 tiles: both partitions wrap once."""
    lk = LoweredKernel((str(ROOT / "tle_kernels" / "gpu_tests" / "spsc_ring.py"), "ring_c3"), {})
    return lk, lk.trace({"N_TILES": 4})


def test_comparer_reports_a_dropped_event():
    lk, tr = _ring()
    exp = lk.expected(lk.params(tr))
    assert not compare(exp, tr, lk.partitions, lk.gen.source)
    part = "consume"
    dropped = dict(exp, **{part: exp[part][:3] + exp[part][4:]})  # release(1)'s arrive
    (msg,) = compare(dropped, tr, lk.partitions, lk.gen.source)
    assert "partition 'consume'" in msg and "operation #3" in msg
    assert "8 barrier operations generated, 7 expected" in msg
    assert "ring.wait(2) at t=2" in msg and "spsc_ring.py:" in msg  # the IR event and its line
    assert "generated arrive ring_empty0[1]" in msg and "mbarrier.arrive(ring_empty0" in msg


def test_comparer_reports_a_duplicated_event():
    lk, tr = _ring()
    exp = lk.expected(lk.params(tr))
    part = "produce"
    doubled = dict(exp, **{part: exp[part] + exp[part][-2:]})
    (msg,) = compare(doubled, tr, lk.partitions, lk.gen.source)
    assert f"first difference at operation #{len(exp[part])}" in msg and "generated nothing more" in msg


def test_comparer_reports_a_wrong_parity_in_the_generated_code():
    lk, _ = _ring()
    wrong = lk.gen.source.replace("(((t) // 3) & 1) ^ 1)", "((t) // 3) & 1)", 1)
    assert wrong != lk.gen.source
    tr = trace_gluon(wrong, lk.gen.kernel, {"N_TILES": 4})
    (msg,) = compare(lk.expected({"N_TILES": 4}), tr, lk.partitions, wrong)
    assert "partition 'produce'" in msg and "operation #0" in msg
    assert "expected  wait ring_empty0[0] @ parity 1" in msg
    assert "generated wait ring_empty0[0] @ parity 0" in msg


def test_comparer_reports_a_barrier_operation_the_ir_does_not_have():
    lk, _ = _ring()
    line = "        mbarrier.arrive(ring_empty0.index(_ring_s3), count=1)\n"
    assert lk.gen.source.count(line) == 1
    extra = lk.gen.source.replace(line, line + line)
    tr = trace_gluon(extra, lk.gen.kernel, {"N_TILES": 2})
    (msg,) = compare(lk.expected({"N_TILES": 2}), tr, lk.partitions, extra)
    assert "partition 'consume'" in msg and "operation #2" in msg
    assert "expected  wait ring_full0[1]" in msg and "generated arrive ring_empty0[0]" in msg


@pytest.mark.parametrize("pending,violation", [(0, False), (1, False), (2, True)])
def test_a_release_must_retire_the_wgmmas_reading_its_slot_in_issue_order(pending, violation):
    """In the pipelined attention, the release of kv(t - 1) in iteration t follows [PV(t - 1), S(t)]
    in flight: warpgroup_mma_wait(1) retires PV(t - 1) (groups retire in order; S(t) reads the other
    stage), wait(2) does not. The lowering writes wait(1) itself: the stages t - 1 and t of a
    two-slot ring differ (wgmma_sites.stages_differ), so S(t) stays in flight."""
    lk = LoweredKernel((str(PIPELINED), "delayed_release"), {})
    site = "warpgroup_mma_wait(1, deps=[gl.full([256], 0, gl.int32, layout=L3)])  # kv.release"
    assert lk.gen.source.count(site) == 1
    src = lk.gen.source.replace(site, site.replace("(1,", f"({pending},"))
    tr = trace_gluon(src, lk.gen.kernel, {"NT": 3}, release_rings=release_rings_of(lk.gen.plans))
    found = [v for v in tr.violations if "may still be in flight" in v]
    assert bool(found) == violation, found
    if violation:
        assert "kv_empty0[0]" in found[0] and "kv_v" in found[0] and "t=1" in found[0]


# ------------------------------------------------------------------ trip counts read from memory

DECODE = ROOT / "tle_kernels" / "mla_decode_pipe.py"


def _decode():
    cfg = default_config(str(DECODE), "mla_decode_pipe")
    lk = LoweredKernel((str(DECODE), "mla_decode_pipe"), cfg["constexprs"])
    return lk, {a: 64 for a, t in cfg["signature"].items() if t == "i32"}


def test_a_trip_count_read_from_memory_is_pinned_not_guessed():
    """The pipe decode reads NK from cache_seqlens: no argument drives it, the trace refuses to run
    its loops without a value, and a pin gives it one (as a runtime argument would)."""
    lk, args = _decode()
    assert lk.data_params(args) == ["NK"]
    with pytest.raises(TraceError, match="stage of a barrier operation is not a known integer"):
        lk.trace(args)
    tr = lk.trace(args, {"NK": 3})
    assert tr.pinned == {"NK": 3} and lk.params(tr) == {"NK": 3}
    assert sum(o.key[:2] == (WAIT, "kv_empty0") for o in tr.partition("producer").ops) == 3


def test_comparer_reports_a_wrong_pinned_trip_count():
    """A pin is checked like any param: the Gluon run with NK = 3 against the events verified for
    NK = 2 differs in every partition that loops (producer, left, right)."""
    lk, args = _decode()
    tr = lk.trace(args, {"NK": 3})
    assert not compare(lk.expected({"NK": 3}), tr, lk.partitions, lk.gen.source)
    problems = compare(lk.expected({"NK": 2}), tr, lk.partitions, lk.gen.source)
    assert len(problems) == 3 and all("expected  nothing more" in p for p in problems)
    assert "partition 'producer'" in problems[0] and "partition 'right'" in problems[2]


PINNED = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier


@gluon.jit
def count(M):
    M = M + 0
    return M


@gluon.jit
def part(M, bar):
    for t in range(M):
        mbarrier.arrive(bar.index(t % 4), count=1)


@gluon.jit
def kern(x_ptr, N):
    bar = gl.allocate_shared_memory(gl.int64, [4, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(4):
        mbarrier.init(bar.index(s), count=1)
    K = count(N + 1)
    M = gl.load(x_ptr + gl.program_id(0))
    if gl.program_id(0) > N:
        M = K
    gl.warp_specialize([(part, (M, bar))], [], [])
'''


def test_a_pin_binds_a_kernel_level_name_computed_from_data():
    """M is computed from a load and reassigned under a data-dependent `if`: a pin binds it at
    both. The helper's local M is not the kernel's: K = count(N + 1) keeps its value."""
    assert {"M", "x_ptr"} <= data_dependent_names(PINNED, "kern", {"N": 2})
    assert "K" not in data_dependent_names(PINNED, "kern", {"N": 2})
    tr = trace_gluon(PINNED, "kern", {"N": 2}, pins={"M": 6})
    assert [k[2] for k in tr.partition("part").keys] == [0, 1, 2, 3, 0, 1]
    assert tr.prologue["M"] == 6 and tr.prologue["K"] == 3


@pytest.mark.parametrize("pins,message", [
    ({"K": 5}, "computes 'K' from its arguments and constexprs; set those"),
    ({"N": 5}, "'N' is an argument of 'kern'"),
    ({"L": 5}, "assigns no 'L'"),
    ({"M": 1 << 31}, "a pin is an i32 integer"),
])
def test_a_pin_never_overrides_what_the_arguments_determine(pins, message):
    with pytest.raises(TraceError, match=message):
        trace_gluon(PINNED, "kern", {"N": 2}, pins=pins)


# ------------------------------------------------------------------ the interpreter reads as Triton

MINI = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

C = gl.constexpr(2)


@gluon.jit
def part(N, bar):
{body}


@gluon.jit
def kern(x_ptr, N):
    bar = gl.allocate_shared_memory(gl.int64, [4, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(4):
        mbarrier.init(bar.index(s), count=1)
    gl.warp_specialize([(part, (N, bar))], [], [])
'''


def _mini(body: str, n: int = 3) -> list[tuple]:
    src = MINI.format(body="\n".join("    " + ln for ln in body.strip("\n").splitlines()))
    return trace_gluon(src, "kern", {"N": n}).partition("part").keys


def test_runtime_integers_divide_and_take_remainders_as_c_does():
    keys = _mini("""
for t in range(N):
    mbarrier.wait(bar.index((t - 1) % 2 + 1), ((t - 3) // 2) & 1)
""")
    # t = 0: C gives (-1) % 2 = -1 and (-3) // 2 = -1 (Python: 1 and -2)
    assert keys == [(WAIT, "bar", 0, 1), (WAIT, "bar", 1, 1), (WAIT, "bar", 2, 0)]


def test_constexpr_integers_divide_and_take_remainders_as_python_does():
    keys = _mini("""
mbarrier.wait(bar.index((C - 3) % 4), ((C - 3) // 2) & 1)
for j in gl.static_range(0, 2):
    mbarrier.wait(bar.index((j - 1) % 4), 0)
""")
    assert keys == [(WAIT, "bar", 3, 1), (WAIT, "bar", 3, 0), (WAIT, "bar", 0, 0)]


def test_a_number_assigned_to_a_name_is_a_tensor_and_an_annotated_one_a_constexpr():
    """As Triton: `M = -7` in a jit function is an i32 tensor (C's `%`: -3), `M: gl.constexpr =
    -7` a constexpr (Python's: 1)."""
    keys = _mini("""
M = -7
mbarrier.arrive(bar.index(M % 4 + 3), count=1)
K: gl.constexpr = -7
mbarrier.arrive(bar.index(K % 4 + 2), count=1)
""")
    assert keys == [(ARRIVE, "bar", 0, None), (ARRIVE, "bar", 3, None)]


def test_runtime_integers_are_32_bit():
    keys = _mini("""
if N + 2147483647 < 0:
    mbarrier.arrive(bar.index(1), count=1)
""", n=1)
    assert keys == [(ARRIVE, "bar", 1, None)]


def test_negative_constant_steps_run_as_triton_maps_them():
    keys = _mini("""
for t in range(N - 1, -1, -2):
    mbarrier.arrive(bar.index(t % 4), count=1)
for j in gl.static_range(3, 0, -2):
    mbarrier.arrive(bar.index(j), count=1)
""", n=6)
    assert [k[2] for k in keys] == [5 % 4, 3, 1, 3, 1]


def test_a_barrier_operation_under_a_data_dependent_condition_is_an_error():
    with pytest.raises(TraceError, match="depends on data"):
        _mini("""
if gl.program_id(0) == 0:
    mbarrier.arrive(bar.index(0), count=1)
""")
    with pytest.raises(TraceError, match="trip count depends on data"):
        _mini("""
for t in range(gl.program_id(0)):
    mbarrier.arrive(bar.index(0), count=1)
""")


def test_a_stage_assigned_under_a_data_dependent_condition_is_unknown():
    with pytest.raises(TraceError, match="stage of a barrier operation is not a known integer"):
        _mini("""
s = 0
if gl.program_id(0) == 0:
    s = 1
mbarrier.wait(bar.index(s), 0)
""")


def test_unrecognised_barrier_code_is_an_error():
    with pytest.raises(TraceError, match="inline asm that may touch an mbarrier"):
        _mini('gl.inline_asm_elementwise("mbarrier.arrive.b64 _, [$1];", "=r,r", [N], '
              'dtype=gl.int32, is_pure=False, pack=1)')
    with pytest.raises(TraceError, match="unrecognised operation"):
        _mini("bar.index(0).store(N)")


def test_builtin_range_keywords_are_ignored_as_triton_ignores_them():
    src = MINI.format(body="    for t in range(0, N, step=2):\n        mbarrier.arrive(bar.index(t), count=1)")
    tr = trace_gluon(src, "kern", {"N": 3})
    assert [k[2] for k in tr.partition("part").keys] == [0, 1, 2]
    assert any("keyword arguments of builtin range (step) are ignored by Triton" in v
               for v in tr.violations)

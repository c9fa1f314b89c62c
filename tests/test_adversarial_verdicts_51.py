"""A fifty-first set of adversarial checks, aimed at the instance checker's resumed fast path
(passes/clean_resume.py, Checker.clean) and at tle-dump's memory-race proof computed in a forked
child (cli/beside.py, cli/kernel_checks.py's RacesBeside).

Bugs found, one line each:

(none: the resumed fast path answered as the walk of every event and as the wording path on
every generated, mutated and hand-written protocol below (besides the tests' examples, 7,000
seeds of :func:`_pipe_text` in three orders each, about 20,600 kernels and 88,000 resumed
instances, were compared once); tle-dump's verdict with nothing kept was the default's on every
kernel of tests/cases and tle_kernels (138 files); and tle-dump's output with the race child
was that of main() in-process on every kernel compared: the 66 .py files of tests/cases, the
race kernels below, several files on one command line, --param of a constexpr the race reads
(repeated too), --kernel, --bound and --format json)

Not a verdict bug, noted: the fast path (Checker.clean) keeps one state per slot for every
partition, so a reader's read from another partition than its reader's finds the window that
partition holds open, where :meth:`Checker.check` walks each partition apart and reports
access-outside-window (``c1.read(0, f0)`` in the writer's partition, the one-shot reader's wait
in another's). verify-protocol refuses such a read before any instance is checked
(access-wrong-partition, passes/verify_protocol.py ``_check_accesses``), so the comparisons
below check what that pass lets through, as the sweep does.

What is checked:

* A differential test over random ``.pipe`` texts (:func:`_pipe_text`) whose traces for N + 1
  are often not those for N with events appended: loop bounds N, N + 1, N - 1, 2 * N and M;
  events and accesses under ``if`` on the param, on ``i`` against N and on ``i % 2``; events
  after the loop at index N, N + 1 or under ``if N > 2``; a close at the loop's bound with the
  readers' open-only reads; the writer's readbacks and writes that may not run; SPMC readers with field views; named-barrier pipes; one-shot pipes;
  then drops, duplicates, swaps and re-indexings of single events. Every instance of a sweep of
  N (and M) in the sweep's order and in a shuffled order is checked by a resuming checker, a
  checker that walks every event (``resumes = None``) and the wording path (``check``); any
  disagreement fails.
* The same comparison end to end: the verdict of the verification pipeline with
  ``clean_resume.KEPT = 0`` (nothing kept, nothing resumed) against the default.
* Hand-written protocols where a resumed walk would hide a fault appearing only at a larger N.
* tle-dump in a process of its own (the race proof in a forked child) against main()
  in-process, for race kernels and for one file holding two kernels; and the kernel IR the
  child's outcome is taken for (by identity) unchanged from the fork to the check.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.tracegen import compile_program
from tle_compiler.passes import clean_resume
from tle_compiler.passes.context import PassContext
from tle_compiler.passes.instances import Checker
from tle_compiler.passes.verify_protocol import _check_accesses, check_structure, check_tma_windows

from .protocol_gen import mutated, protocols

ROOT = Path(__file__).resolve().parent.parent

# ----------------------------------------------------------------------------- random protocols

_FIELDS = ("x", "y", "z")


def _pipe_text(seed: int) -> str:
    """A random ``.pipe`` kernel (see the module docstring); mostly well-formed, often faulty."""
    rnd = random.Random(seed)
    two = rnd.random() < 0.35
    n_parts = rnd.randint(2, 4)
    parts = [f"p{k}" for k in range(n_parts)]
    bounds = ["N", "N", "N + 1", "N - 1", "2 * N"] + (["M"] if two else [])
    bound = rnd.choice(bounds)
    decls: list[str] = []
    bodies: dict[str, list[str]] = {p: [] for p in parts}   # inside the loop
    pre: dict[str, list[str]] = {p: [] for p in parts}      # before it
    post: dict[str, list[str]] = {p: [] for p in parts}     # after it
    conds = ["N > 2", "i < N - 1", "i == N - 1", "i % 2 == 0", "i > 0", "N > 3", "i < 3"]

    def guarded(lines: list[str], cond: str) -> list[str]:
        return [f"if {cond} {{", *lines, "}"]

    for p in range(rnd.randint(1, 3)):
        name = f"c{p}"
        kind = rnd.choice(["ring", "ring", "ring", "spmc", "one_shot", "named", "closed"])
        w = rnd.choice(parts)
        others = [q for q in parts if q != w]
        cap = 1 if kind in ("one_shot", "named") else rnd.randint(1, 3)
        fields = _FIELDS[:rnd.randint(1, 3)]
        if kind == "spmc" and len(others) >= 2:
            rparts = rnd.sample(others, 2)
            readers = ["ra", "rb"]
        else:
            rparts = [rnd.choice(others)]
            readers = [None]
        attrs = f"capacity={cap}" + (" one_shot" if kind == "one_shot" else "") + \
            (" named_barrier" if kind == "named" else "") + \
            (f" readers=({', '.join(readers)})" if readers[0] else "") + \
            f" fields=({', '.join(fields)})"
        decls.append(f"pipe {name} {attrs}")
        handles, acc = [], []  # the event handle (with a view) and the access handle
        for r in readers:
            acc.append(name if r is None else f"{name}[{r}]")
            if r is None:
                handles.append(name)
            else:
                view = rnd.sample(fields, rnd.randint(1, len(fields)))
                handles.append(f"{name}[{r} fields=({', '.join(view)})]" if rnd.random() < 0.5
                               else f"{name}[{r}]")
        if kind == "one_shot":
            wl = [f"{name}.acquire(0)"] + [f"{name}.write(0, {f})" for f in fields] + \
                [f"{name}.commit(0)"]
            pre[w] += wl
            for h, a, rp in zip(handles, acc, rparts):
                rl = [f"{h}.wait(0)", f"{a}.read(0, {rnd.choice(fields)})"]
                if rnd.random() < 0.5:
                    rl.append(f"{h}.release(0)")
                (pre if rnd.random() < 0.5 else post)[rp] += rl
            continue
        wl = [f"{name}.acquire(i)"]
        for f in fields:
            line = f"{name}.write(i, {f})"
            wl += guarded([line], rnd.choice(conds)) if rnd.random() < 0.25 else [line]
        if rnd.random() < 0.3:  # the writer reads back a field (after its write, or not)
            f = rnd.choice(fields)
            wl.insert(rnd.randint(1, len(wl)), f"{name}.readback(i, {f})")
        if rnd.random() < 0.2:  # a write that may not run
            wl.insert(1, f"{name}.maywrite(i, {rnd.choice(fields)})")
        wl.append(f"{name}.commit(i)")
        bodies[w].append(wl)
        rls = []
        for h, a, rp in zip(handles, acc, rparts):
            f = rnd.choice(fields)
            verb = "openread" if kind == "closed" and rnd.random() < 0.5 else "read"
            line = f"{a}.{verb}(i, {f})"
            rl = [f"{h}.wait(i)"] + (guarded([line], rnd.choice(conds)) if rnd.random() < 0.25
                                     else [line]) + [f"{h}.release(i)"]
            bodies[rp].append(rl)
            rls.append((h, a, rp))
        if kind == "closed":
            post[w].append(f"{name}.close({bound})")
            for h, a, rp in rls:
                post[rp] += [f"{h}.wait({bound})", f"{h}.release({bound})"]
        elif rnd.random() < 0.3:  # a last use after the loop, at its bound or under an if
            at = bound if rnd.random() < 0.7 else f"{bound} + 1"
            lines = [f"{name}.acquire({at})", f"{name}.write({at}, {fields[0]})",
                     f"{name}.commit({at})"]
            post[w] += guarded(lines, "N > 2") if rnd.random() < 0.3 else lines
            for h, a, rp in rls:
                post[rp] += [f"{h}.wait({at})", f"{a}.read({at}, {fields[0]})",
                             f"{h}.release({at})"]
    # each partition's loop body: its pipes' groups in a random order (a group's own events in
    # order), sometimes interleaved
    loop: dict[str, list[str]] = {}
    for p in parts:
        groups = bodies[p]
        rnd.shuffle(groups)
        if len(groups) >= 2 and rnd.random() < 0.3:  # interleave two groups' events
            a, b = groups[0], groups[1]
            cut = rnd.randint(1, len(a) - 1)
            groups[0:2] = [a[:cut] + b + a[cut:]]
        loop[p] = [line for g in groups for line in g]
    # mutations of single lines (events and accesses outside if-blocks)
    for _ in range(rnd.choice([0, 0, 1, 1, 2])):
        p = rnd.choice(parts)
        block = rnd.choice([loop[p], post[p], pre[p]])
        plain = [k for k, line in enumerate(block) if "(" in line and not line.startswith("if")
                 and not (k + 1 < len(block) and block[k + 1] == "}" and k and
                          block[k - 1].startswith("if"))]
        if not plain:
            continue
        k = rnd.choice(plain)
        m = rnd.choice(["drop", "dup", "swap", "index", "guard", "move"])
        line = block[k]
        if m == "drop":
            del block[k]
        elif m == "dup":
            block.insert(k, line)
        elif m == "swap" and k + 1 < len(block) and "(" in block[k + 1] \
                and not block[k + 1].startswith(("if", "}")):
            block[k], block[k + 1] = block[k + 1], block[k]
        elif m == "index" and "(i" in line:
            block[k] = line.replace("(i", rnd.choice(["(i + 1", "(N - 1 - i", "(2 * i"]), 1)
        elif m == "guard":
            block[k:k + 1] = guarded([line], rnd.choice(conds))
        elif m == "move" and block is loop[p]:
            del block[k]
            post[p].append(line.replace("(i", f"({bound}", 1))
    out = ["kernel gen", "param N"] + (["param M"] if two else []) + decls
    for n, p in enumerate(parts):
        out.append(f"partition {p}{' default' if n == 0 else ''} {{")
        out += ["  " + line for line in pre[p]]
        if loop[p]:
            out.append(f"  for i in range({bound}) {{")
            out += ["    " + line for line in loop[p]]
            out.append("  }")
        out += ["  " + line for line in post[p]]
        out.append("}")
    return "\n".join(out) + "\n"


def _values(program, order: str, seed: int) -> list[dict]:
    """Assignments of the params: N over 0..8 (and M over 0..2), in the sweep's order (N = 0,
    1, -1, 2, -2, ... where the domain holds them) or shuffled."""
    first = [0] + [v for n in range(1, 9) for v in (n, -n)]
    names = [p.name for p in program.params]
    ranges = [[v for v in (first if k == 0 else range(3)) if p.contains(v)]
              for k, p in enumerate(program.params)]
    out = [{}] if not names else []
    if names:
        for m in (ranges[1] if len(names) > 1 else [None]):
            for n in ranges[0]:
                out.append({names[0]: n, **({names[1]: m} if m is not None else {})})
    if order == "shuffled":
        random.Random(seed).shuffle(out)
    elif order == "up":
        out.sort(key=lambda a: tuple(a.values()))
    return out


def _differ(text, order: str, seed: int) -> tuple[int, int]:
    """Checks every assignment of ``text``'s kernel (or of a Program) with a resuming checker,
    a checker that walks every event and the wording path; (instances resumed, instances) or
    (-1, 0) for a program that does not pass the structure checks."""
    program = parse_module(text).kernels[0] if isinstance(text, str) else text
    ctx = PassContext(program)
    # what verify-protocol checks before its sweep (VerifyProtocol.apply): the fast path
    # assumes each endpoint's events and accesses are one partition's (an access from another
    # partition is access-wrong-partition there, never an instance's)
    check_structure(ctx)
    if ctx.ok:
        _check_accesses(ctx)
    if ctx.ok:
        check_tma_windows(ctx)
    if not ctx.ok:
        return -1, 0
    cp = compile_program(program)
    resuming, whole = Checker(cp, ctx.roles()), Checker(cp, ctx.roles())
    whole.resumes = None
    resumed = n = 0
    for params in _values(program, order, seed):
        traces = cp.run(params, 100_000)
        if resuming.resumes is not None:
            resumed += resuming.resumes.find(resuming.without_closed_reads(traces)) is not None
        got = resuming.clean(traces)
        assert got == whole.clean(traces), (params, text)
        res = whole.check(traces)
        assert got == (not res.problems and res.deadlock is None), (params, text)
        n += 1
    assert resuming.named_hops == whole.named_hops, text
    return resumed, n


STATS = {"programs": 0, "instances": 0, "resumed": 0, "clean": 0}


@settings(max_examples=600, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32), st.sampled_from(["sweep", "shuffled", "up"]))
def test_resumed_fast_path_agrees_on_random_pipe_texts(seed, order):
    resumed, n = _differ(_pipe_text(seed), order, seed)
    if resumed >= 0:
        STATS["programs"] += 1
        STATS["instances"] += n
        STATS["resumed"] += resumed


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.one_of(protocols(fault=True, domains=True), mutated()), st.integers(0, 2 ** 16),
       st.sampled_from(["sweep", "shuffled"]))
def test_resumed_fast_path_agrees_on_generated_protocols_with_domains(program, seed, order):
    """tests/protocol_gen.py's protocols with misplaced accesses and other param domains
    (negative values, upper bounds, C remainders), in the sweep's order and shuffled."""
    _differ(program, order, seed)


def test_random_pipe_texts_resume():
    """The generator's kernels pass the structure checks and do resume (the comparison above
    is not vacuous): over 200 fixed seeds."""
    ok = resumed = 0
    for seed in range(200):
        r, _ = _differ(_pipe_text(seed), "sweep", seed)
        if r >= 0:
            ok += 1
            resumed += r
    assert ok >= 100, ok
    assert resumed >= 300, resumed


# ----------------------------------------------------------------------------- end to end

def _dump(path: Path, *args: str) -> tuple[int, str]:
    """tle-dump -q in-process: its exit status and its standard error, seconds aside."""
    from tle_compiler.cli.dump import main
    from tle_compiler.passes import sweep

    sweep._RECENT.clear()
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["-q", *args, str(path)])
    return code, re.sub(r"\(\d+\.\d+ s\)", "(s)", err.getvalue())


def _both(path: Path, monkeypatch, *args: str) -> tuple[int, str]:
    """tle-dump's answer with nothing resumed and with the default; asserts they are one."""
    with monkeypatch.context() as m:
        m.setattr(clean_resume, "KEPT", 0)
        whole = _dump(path, *args)
    got = _dump(path, *args)
    assert got == whole, path.read_text(encoding="utf-8")
    return got


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2 ** 32))
def test_tle_dump_answers_alike_without_resuming(tmp_path_factory, monkeypatch, seed):
    path = tmp_path_factory.mktemp("gen") / "gen.pipe"
    path.write_text(_pipe_text(seed), encoding="utf-8")
    _both(path, monkeypatch)


def test_nothing_kept_means_nothing_resumed():
    """``KEPT = 0`` (the switch the end-to-end comparison uses) keeps no instance."""
    r = clean_resume.Resumes()
    old, clean_resume.KEPT = clean_resume.KEPT, 0
    try:
        r.keep([([0], [0])], clean_resume.CleanState.fresh(1, 1, 1, 1, 1, None))
    finally:
        clean_resume.KEPT = old
    assert not r.kept and r.find([([0, 1], [0, 0])]) is None


# ----------------------------------------------------------------------------- hand-written

#: a ring whose faults appear only past a few values of N, where the sweep resumes from the
#: clean instances before them: EXTRA_W / EXTRA_R are the writer's / reader's lines after the
#: loop, W_BODY / R_BODY lines in its body
RING = """kernel late
param N
pipe c capacity=2 fields=(x, z)
pipe d capacity=1 fields=(x)
partition w default {
  for i in range(N) {
    c.acquire(i)
    c.write(i, x)
W_BODY
    c.commit(i)
  }
EXTRA_W
}
partition r {
  for i in range(N) {
    c.wait(i)
    c.read(i, x)
R_BODY
    c.release(i)
  }
EXTRA_R
}
"""

LATE = {
    # z written from i = 6 on and read at i = 5 only: unwritten at N = 6, clean up to N = 5
    "unwritten-field at N = 6": dict(W_BODY="if i > 5 {\n c.write(i, z)\n}",
                                     R_BODY="if i == 5 {\n c.read(i, z)\n}"),
    # a last use two indices past the loop's, from N = 4 on: stage 0's uses 0, 2, N + 2 alias
    # (index N + 2 of an even use with phase 1)
    "phase aliasing from N = 4": dict(
        EXTRA_W="if N > 3 {\n c.acquire(N + 2)\n c.write(N + 2, x)\n c.commit(N + 2)\n}",
        EXTRA_R="if N > 3 {\n c.wait(N + 2)\n c.read(N + 2, x)\n c.release(N + 2)\n}"),
    # the reader waits on d at i = 4, which the writer commits after its loop (from N = 5 on):
    # from N = 7 on the writer's acquire(6) needs the reader's release(4) first, a deadlock
    "deadlock from N = 7": dict(
        R_BODY="if i == 4 {\n d.wait(0)\n d.release(0)\n}",
        EXTRA_W="if N > 4 {\n d.acquire(0)\n d.commit(0)\n}"),
    # a read of the slot past its release at the last iteration, N = 3 on
    "access after release at N = 3": dict(EXTRA_R="if N > 2 {\n c.read(N - 1, x)\n}"),
    # the writer's readback of z, written only at i < 3: stale from i = 3 on
    "readback of an unwritten window at N = 4": dict(
        W_BODY="if i < 3 {\n c.write(i, z)\n}\nc.readback(i, z)"),
}


def _late(name: str) -> str:
    parts = {"W_BODY": "", "R_BODY": "", "EXTRA_W": "", "EXTRA_R": "", **LATE[name]}
    text = RING
    for k, v in parts.items():
        text = text.replace(k, v)
    return text


@pytest.mark.parametrize("name", sorted(LATE))
def test_a_fault_past_clean_values_is_found_resumed(name, tmp_path, monkeypatch):
    """Each kernel is rejected, by the resuming sweep as by the one that resumes nothing; the
    instance checker finds it clean below the fault's value and faulty from it, resuming."""
    text = _late(name)
    path = tmp_path / "late.pipe"
    path.write_text(text, encoding="utf-8")
    code, err = _both(path, monkeypatch)
    assert code == 1 and "rejected" in err, err
    program = parse_module(text).kernels[0]
    ctx = PassContext(program)
    check_structure(ctx)
    assert ctx.ok
    cp = compile_program(program)
    checker = Checker(cp, ctx.roles())
    assert checker.resumes is not None
    got = [checker.clean(cp.run({"N": n}, 10_000)) for n in range(9)]
    first = int(re.search(r"N = (\d)", name).group(1))
    assert got == [n < first for n in range(9)], got


# ----------------------------------------------------------------------------- the child's races

def _race_files(tmp_path: Path) -> dict[str, Path]:
    """Race kernels: two kernels of one name-space (a racy ``k`` and a safe ``k2``); one name
    defined twice (Python keeps the second, racy ``k``); a row pitch of a constexpr D, racy
    for some D (refused without --param, proved with D = 32), and the same with a
    DEFAULT_CONFIG's D = 64 (proved with it after the refusal without: the race check's
    ``extra``, which the verdict names)."""
    from .test_global_races import RACES, RING, ring

    racy, safe = RACES["two stores of one address"], ring()
    body = "import tle_compiler as tle\n"
    two = racy + "\n\n" + safe.split(body, 1)[1].replace("def k(", "def k2(") \
        .replace("produce", "produce2").replace("consume", "consume2")
    dup = safe + "\n\n" + racy.split(body, 1)[1].replace("produce", "produce2") \
        .replace("consume", "consume2")
    cx = RING
    for a, b in (("N, S)", "N, S, D)"), ("def k(x_ptr, y_ptr, N, S, D)",
                                           "def k(x_ptr, y_ptr, N, S, D: tl.constexpr)"),
                 ("BEFORE", "pass"), ("WINDOW", "pass"),
                 ("AFTER", "tl.store(y_ptr + t * D + offs, tl.load(x_ptr + offs))"),
                 ("LATE", "tl.store(y_ptr + 8192 + t * D + offs, v)")):
        cx = cx.replace(a, b)
    files = {"two": two, "dup": dup, "cx": cx, "cxcfg": cx + '\nDEFAULT_CONFIG = {"constexprs": {"D": 64}}\n'}
    out = {}
    for name, text in files.items():
        out[name] = tmp_path / f"{name}.py"
        out[name].write_text(text, encoding="utf-8")
    return out


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("args", [["two", "dup"], ["--param", "D=32", "cx", "cxcfg", "two"],
                                  ["--kernel", "k", "cxcfg", "cx", "two"],
                                  ["cxcfg", "cxcfg"]])
def test_a_process_with_the_child_prints_what_main_prints(args, tmp_path, capsys):
    """tle-dump as a process (the race proofs in a forked child, taken where their inputs
    match) prints what main() in-process (no child) prints: several files on one command
    line, kernels refused and proved, one name in two kernels, --param and --kernel."""
    from tle_compiler.cli.dump import main

    files = _race_files(tmp_path)
    argv = [str(files[a]) if a in files else a for a in args]
    code = main(argv)
    got = capsys.readouterr()
    r = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", *argv], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), TLE_DUMP_FORK="1"),
                       capture_output=True, text=True)

    def timeless(text: str) -> str:
        text = re.sub(r"\(\d+\.\d+ s(; the file \d+\.\d+ s)?\)", "(s)", text)
        # a race's witness values (the iterations, the address, the argument values) are the
        # model z3 returns, which may differ with what the process checked before (a file
        # checked in-process before another, or by the forked child): the same verdicts,
        # lines, partitions and kinds, not always the same launch
        text = re.sub(r" at [^()]*?=[^()]*?\) and ", " at W) and ", text)
        text = re.sub(r" at [^()]*?=[^()]*?\) can reach the same global address [^,(]*"
                      r"(\(with [^)]*\))?", " at W) can reach the same global address A", text)
        return text

    assert (r.returncode, r.stdout, timeless(r.stderr)) == (code, got.out, timeless(got.err))
    assert "error" in got.err or "DEFAULT_CONFIG" in got.err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
@pytest.mark.parametrize("kernel", ["tle_kernels/examples/ring.py", "tle_kernels/examples/spmc.py",
                                    "two", "cxcfg"])
def test_the_race_check_inputs_are_not_changed_after_the_fork(kernel, tmp_path, monkeypatch):
    """RacesBeside takes the child's outcome where the kernel IR is the same object and the
    other inputs are equal: the kernel IR must then be unchanged from the fork (verification,
    the translation made ahead) to the check, or the child proved another kernel than the one
    checked. Each kernel IR is pickled when loaded and again when its race check is due."""
    import pickle

    from tle_compiler.cli import dump

    files = _race_files(tmp_path)
    path = str(files[kernel]) if kernel in files else str(ROOT / kernel)
    loaded_kirs: dict[int, bytes] = {}
    checked: list[str] = []
    load, check = dump.load, dump.check_memory_races

    def kir_of(loaded, name):
        info = loaded.infos.get(name)
        return getattr(info, "kir", None) or loaded.kirs.get(name)

    def loading(p, fixed, *rest):
        got = load(p, fixed, *rest)
        for name in got.infos:
            kir = kir_of(got, name)
            if kir is not None:
                loaded_kirs[id(kir)] = pickle.dumps(kir)
        return got

    def checking(rep, loaded, beside=None):
        kir = kir_of(loaded, rep.program.name)
        if kir is not None and id(kir) in loaded_kirs:
            assert pickle.dumps(kir) == loaded_kirs[id(kir)], rep.program.name
            checked.append(rep.program.name)
        return check(rep, loaded, beside)

    monkeypatch.setattr(dump, "load", loading)
    monkeypatch.setattr(dump, "check_memory_races", checking)
    monkeypatch.setattr(dump, "_BESIDE", True)
    monkeypatch.setenv("TLE_DUMP_FORK", "1")
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        dump._main(["-q", path])
    assert checked

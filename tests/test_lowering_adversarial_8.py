"""Pipelined wgmma through inlined helpers and renames, eighth round (lowering adversarial round 8),
against 76af5ed: a tensor name bound to another name shares its layout (an anchor), and a
block-local name read last by a rename (``acc = _update9_acc``, an inlined helper's return) hands
its in-flight wgmma result on (lowering/translate.py ``assign``, ``moves_a_temporary``).

Tried (each kernel the P·V form of tests/test_lowering_helper_accumulator.py with
``@tle.jit(wgmma_pipeline=True)``, ``r.release(t - 1)`` in iteration t; each lowered, its Gluon
read by an abstract interpreter for register reads of an in-flight wgmma result (``_inflight_
reads`` below), ``LoweredKernel.check`` run for several trip counts, compiled for sm_90a with
ptxas's wgmma serialisation looked for): a helper returning the accumulator and a row sum of it
or of the scores; a helper called twice in one iteration; the helper's result read in the next
statement; a helper local rescaled under an ``if``, bound in both branches of an ``if``, bound
to another local that is returned; a local renamed and read again (directly, through another
helper); the helper called in one or both branches of an ``if``, in a ``static_range`` and a
runtime inner loop; a transposed value, a sliced row factor, a register dot operand and shared-
memory tiles renamed; a helper with its own loop of products, its product in an ``if``, its
local rescaled in an ``if`` after the product; a kernel name bound before the loop, assigned the
product and renamed; a block-local name read in the next iteration before it is bound or after
the loop, a ``return`` inside a helper's ``if`` (the frontend refuses them).

Wrong and fixed (lowering/translate.py):
* test_a_helper_local_bound_to_another_local_stays_in_flight: ``out = acc; return out`` in the
  helper failed with "internal: the wgmmas in flight at a loop back-edge (()) differ from the
  loop head's": ``_update_out``, bound once, got no anchor, the row factor gave it another layout
  than the product, and its conversion read the in-flight result in the emitting walk only
  (schedule-wgmma's collecting walk does not see conversions). Now a name bound to a name read
  last there is anchored to it on its first binding too: the product stays in flight.
* test_a_helper_accumulator_rescaled_under_an_if_stays_in_flight (helper_if, helper_branch_
  local): a helper local assigned in an ``if`` of the helper (or first
  bound in both branches) was not a block local, so it stayed an alias of the result: the
  back-edge waited, with the helper's name and ``acc`` both dependencies of the wait, and ptxas
  serialised every wgmma of the kernel (C7514; before 76af5ed a conversion waited, unserialised).
  Now assignments nested in the block count, and the first statement naming the local may be an
  ``if`` that binds it in both branches before reading it.
* test_a_renamed_value_read_again_waits_at_its_conversion: ``acc = x`` with ``x`` read again
  (``l + tl.sum(x, 1)``) stays an alias, as it must; the anchor then removed the conversion that
  used to wait (for ``x`` alone), and the read's wait had ``x`` and ``acc`` as dependencies: ptxas
  serialised the kernel (C7514). The anchor is now only for a name read last by the rename.

Checked and found right (pinned below): the tuple returns, the second call, the next statement's
read, the branches' end waits, the inner loops (the helper's own included), the rescale after the
product (waited for in its branch), the layout renames, the frontend refusals.

Left (not from 76af5ed, the same before it): a wait whose dependencies are two names of one value
(``b`` renamed to ``acc`` and read again, both of the same layout so nothing converts; ``x``
bound before the loop, assigned the product and renamed to ``acc``, both carried) makes ptxas
serialise the kernel (C7514): test_two_names_of_one_result_at_a_wait_serialise (strict xfail)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source, ptxas_stats  # noqa: E402
from tle_compiler.testing.gluon_trace import LoweredKernel  # noqa: E402

from .test_lowering_helper_accumulator import KERNEL  # noqa: E402

# the kernel of tests/test_lowering_helper_accumulator.py up to its mma partition (named k):
# each case here writes the partition and its helpers
HEAD = KERNEL[:KERNEL.index("def mma(")].replace("def helper_acc(", "def k(").rstrip("\n") + "\n\n"
SIG = {"a_ptr": "*bf16", "b_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32", "NT": "i32"}
TRIPS = (0, 1, 2, 3, 5)

# the partition up to its tile's wait and the release of the tile before
_LOOP = '''
def mma(ab, o_ptr, NT):
    r = ab.reader()
    acc = tl.zeros([BM, DV], tl.float32)
    l = tl.zeros([BM], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        if t > 0:
            r.release(t - 1)
'''
_PRE = _LOOP + '''        s = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)))
        m = tl.max(s, 1)
'''
_POST = '''
    if NT > 0:
        r.release(NT - 1)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * DV + tl.arange(0, DV)[None, :], acc)
    tl.store(o_ptr + tl.arange(0, BM), l)
'''
# the helper of tests/test_lowering_helper_accumulator.py's kernel: rows rescaled, then P·V
_UPDATE = "\n\n" + KERNEL[KERNEL.index("def update("):]
_PV = "tl.dot(s.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)), acc)"

CASES = {
    # --- wrong before, fixed
    "local_alias": _PRE + "        acc = update_out(res, s, m, acc)\n" + _POST + f'''

def update_out(res, s, m, acc):
    acc = acc * m[:, None]
    acc = {_PV}
    out = acc
    return out
''',
    "helper_if": _PRE + "        acc = update_if(res, s, m, acc, t)\n" + _POST + f'''

def update_if(res, s, m, acc, t):
    acc = acc * m[:, None]
    if t % 2 == 0:
        acc = acc * 2.0
    acc = {_PV}
    return acc
''',
    "helper_branch_local": _PRE + "        acc = update_y(res, s, m, acc, t)\n" + _POST + '''

def update_y(res, s, m, acc, t):
    if t % 2 == 0:
        y = acc * m[:, None]
    else:
        y = acc * 0.5
    y = tl.dot(s.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)), y)
    return y
''',
    "read_after_rename": _PRE + f'''        x = acc * m[:, None]
        x = {_PV.replace(", acc)", ", x)")}
        acc = x
        l = rowsum(l, x)
''' + _POST + '''

def rowsum(l, y):
    return l + tl.sum(y, 1)
''',
    # --- found right
    "tuple_acc_sum": _PRE + "        acc, l = update_sum(res, s, m, acc)\n" + _POST + f'''

def update_sum(res, s, m, acc):
    acc = acc * m[:, None]
    acc = {_PV}
    return acc, tl.sum(acc, 1)
''',
    "tuple_scores_sum": _PRE + "        acc, l = update_ssum(res, s, m, acc)\n" + _POST + f'''

def update_ssum(res, s, m, acc):
    acc = acc * m[:, None]
    acc = {_PV}
    return acc, tl.sum(s, 1)
''',
    "twice": _PRE + "        acc = update(res, s, m, acc)\n        acc = update(res, s, m, acc)\n"
    + _POST + _UPDATE,
    "read_next": _PRE + "        acc = update(res, s, m, acc)\n        l = l + tl.sum(acc, 1)\n"
    + _POST + _UPDATE,
    "both_branches": _PRE + '''        if t % 2 == 0:
            acc = update(res, s, m, acc)
        else:
            acc = update(res, s, m * 2.0, acc)
''' + _POST + _UPDATE,
    "one_branch": _PRE + "        if t % 2 == 0:\n            acc = update(res, s, m, acc)\n"
    + _POST + _UPDATE,
    "static_inner": _PRE + "        for u in tl.static_range(2):\n"
                           "            acc = update(res, s, m, acc)\n" + _POST + _UPDATE,
    "runtime_inner": _PRE + "        for u in range(2):\n            acc = update(res, s, m, acc)\n"
    + _POST + _UPDATE,
    "trans_rename": _PRE + "        acc = update_t(res, tl.trans(s), m, acc)\n" + _POST + '''

def update_t(res, st, m, acc):
    u = st
    p = tl.trans(u)
    acc = acc * m[:, None]
    acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)), acc)
    return acc
''',
    "slice_operand_rename": _PRE + "        acc = update_q(res, s, m, acc)\n" + _POST + '''

def update_q(res, s, m, acc):
    f = m
    p = s.to(tl.bfloat16)
    q = p
    acc = acc * f[:, None]
    acc = tl.dot(q, tl.load(tle.gpu.local_ptr(res.slot.v)), acc)
    return acc
''',
    "smem_rename": _LOOP + '''\
        a = tl.load(tle.gpu.local_ptr(res.slot.a))
        a2 = a
        b = tl.load(tle.gpu.local_ptr(res.slot.b))
        b2 = b
        s = tl.dot(a2, b2)
        v = tl.load(tle.gpu.local_ptr(res.slot.v))
        acc = update_w(s, v, acc)
''' + _POST + '''

def update_w(s, v, acc):
    w = v
    acc = tl.dot(s.to(tl.bfloat16), w, acc)
    return acc
''',
    "helper_inner_loop": _PRE + "        acc = update_l(res, s, m, acc)\n" + _POST + f'''

def update_l(res, s, m, acc):
    acc = acc * m[:, None]
    for u in range(2):
        acc = {_PV}
    return acc
''',
    "helper_if_after_dot": _PRE + "        acc = update_a(res, s, m, acc, t)\n" + _POST + f'''

def update_a(res, s, m, acc, t):
    acc = acc * m[:, None]
    acc = {_PV}
    if t % 2 == 0:
        acc = acc * 2.0
    return acc
''',
    "helper_dot_in_branch": _PRE + "        acc = update_d(res, s, m, acc, t)\n" + _POST + f'''

def update_d(res, s, m, acc, t):
    acc = acc * m[:, None]
    if t % 2 == 0:
        acc = {_PV}
    return acc
''',
    # --- left: serialised by ptxas, as before 76af5ed
    "alias_read_later": _PRE + "        acc, l = update_b(res, s, m, acc, l)\n" + _POST + '''

def update_b(res, s, m, acc, l):
    acc = acc * m[:, None]
    b = tl.dot(s.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)), acc)
    acc = b
    l = l + tl.sum(b, 1)
    return acc, l
''',
    "carried_pair": _PRE.replace("    l = tl.zeros", "    x = tl.zeros([BM, DV], tl.float32)\n"
                                                   "    l = tl.zeros")
    + f"        x = {_PV}\n        acc = x\n" + _POST,
}
#: wgmma serialised by ptxas (C7514): two names of one result are dependencies of one wait
LEFT_SERIALISED = ("alias_read_later", "carried_pair")


def _path(tmp_path: Path, case: str) -> Path:
    path = tmp_path / f"adv8_{case}.py"
    path.write_text(HEAD + CASES[case])
    return path


def _mma(tmp_path: Path, case: str) -> tuple[Path, str]:
    path = _path(tmp_path, case)
    src = gluon_source((str(path), "k")).source
    return path, src[src.index("def mma("):].split("\n\n\n")[0]


def _loop(mma: str) -> str:
    """The outer loop's lines, up to its exit's wait (or the end of the function)."""
    start = mma.index("    for t in range(NT):")
    end = mma.find("# loop exit", start)
    return mma[start:mma.rfind("\n", 0, end) if end > start else len(mma)]


class _Inflight:
    """An abstract run of a generated partition function: which names hold the result of a wgmma
    not yet waited for, and every register read of one (``reads``). ``warpgroup_mma`` and
    ``warpgroup_mma_init`` put their target in flight, ``a = b`` makes ``a`` an alias of ``b``,
    ``warpgroup_mma_wait(0, ...)`` retires everything; any other use of an in-flight name (a
    conversion, arithmetic, a reduction, a store) is a read. Loop bodies run twice (the second
    from the back-edge's state), both branches of an ``if`` from the state before it."""

    def __init__(self):
        self.reads: list[str] = []

    def run(self, body: list, live: set) -> set:
        for st in body:
            live = self.stmt(st, live)
        return live

    def stmt(self, st, live: set) -> set:
        if isinstance(st, ast.For):
            self.use(st.iter, live)
            end = self.run(st.body, set(live))
            end = self.run(st.body, live | end)
            return live | end
        if isinstance(st, ast.If):
            self.use(st.test, live)
            return self.run(st.body, set(live)) | self.run(st.orelse, set(live))
        value = st.value if isinstance(st, (ast.Assign, ast.Expr)) else None
        targets = [n.id for t in getattr(st, "targets", ()) for n in ast.walk(t)
                   if isinstance(n, ast.Name)]
        call = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            else None
        if call == "warpgroup_mma_wait":
            if not (isinstance(value.args[0], ast.Constant) and value.args[0].value == 0):
                raise AssertionError(f"line {st.lineno}: only waits for all are modelled")
            return set()
        if call == "warpgroup_mma":
            self.use(value.args[:2], live)  # the accumulator (third) may be in flight
            return (live - set(targets)) | set(targets)
        if call == "warpgroup_mma_init":
            return live | set(targets)
        if isinstance(value, ast.Name):
            return (live - set(targets)) | (set(targets) if value.id in live else set())
        if value is not None:
            self.use(value, live)
        return live - set(targets)

    def use(self, nodes, live: set) -> None:
        for node in nodes if isinstance(nodes, list) else [nodes]:
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and n.id in live:
                    self.reads.append(f"line {n.lineno}: {ast.unparse(node)}")


def _inflight_reads(mma: str) -> list[str]:
    fn = ast.parse(mma).body[0]
    walker = _Inflight()
    walker.run(fn.body, set())
    return walker.reads


def test_the_in_flight_reader_finds_an_unwaited_read():
    """The oracle itself: a conversion of a result before its wait is a read."""
    src = ("def mma(x):\n    acc = warpgroup_mma_init(acc)\n    for t in range(NT):\n"
           "        o = acc\n        y = gl.convert_layout(o, L0)\n"
           "        acc = warpgroup_mma(a, b, acc, is_async=True)\n"
           "    acc = warpgroup_mma_wait(0, deps=[acc])\n    z = acc + 1\n")
    assert len(_inflight_reads(src)) == 2  # the conversion, in both walks of the body
    assert not _inflight_reads(src.replace("        y = gl.convert_layout(o, L0)\n", ""))


def _carried(mma: str) -> bool:
    return ("acc = warpgroup_mma_init(acc)  # in flight across the back-edge" in mma
            and "loop back-edge" not in _loop(mma))


# ------------------------------------------------------------------ every case


@pytest.mark.parametrize("case", list(CASES))
def test_no_register_read_of_an_in_flight_result_and_no_early_release(tmp_path, case):
    path, mma = _mma(tmp_path, case)
    assert not _inflight_reads(mma), (_inflight_reads(mma), mma)
    lk = LoweredKernel((str(path), "k"), {})
    for n in TRIPS:
        _, problems = lk.check({"NT": n})
        assert not problems, (n, problems)


@pytest.mark.parametrize("case", [c for c in CASES if c not in LEFT_SERIALISED])
def test_the_kernel_compiles_with_asynchronous_wgmmas(tmp_path, case):
    st = ptxas_stats(compile_kernel((str(_path(tmp_path, case)), "k"), SIG))
    assert st["ok"], st["log"]
    assert not st["wgmma_serialized"], st["log"]


@pytest.mark.xfail(strict=True, reason="left: a wait with two names of one value (C7514)")
@pytest.mark.parametrize("case", LEFT_SERIALISED)
def test_two_names_of_one_result_at_a_wait_serialise(tmp_path, case):
    _, mma = _mma(tmp_path, case)
    assert re.search(r"warpgroup_mma_wait\(0, deps=\[[^\]]*\bacc\b", mma), mma
    st = ptxas_stats(compile_kernel((str(_path(tmp_path, case)), "k"), SIG))
    assert st["ok"], st["log"]
    assert not st["wgmma_serialized"], st["log"]


# ------------------------------------------------------------------ wrong and fixed


def test_a_helper_local_bound_to_another_local_stays_in_flight(tmp_path):
    _, mma = _mma(tmp_path, "local_alias")
    assert _carried(mma), mma
    loop = _loop(mma)
    assert re.search(r"^\s+acc = _\w*out$", loop, re.M), loop
    # neither the helper's local nor the returned name is converted (a read of the result)
    assert not re.search(r"gl\.convert_layout\(_\w*(acc|out)\b", loop), loop


@pytest.mark.parametrize("case", ["helper_if", "helper_branch_local"])
def test_a_helper_accumulator_rescaled_under_an_if_stays_in_flight(tmp_path, case):
    """helper_if: rescaled in an ``if`` of the helper; helper_branch_local: first bound in both
    branches of one."""
    _, mma = _mma(tmp_path, case)
    assert _carried(mma), mma
    # the only wait in the body is the one for the scores (the release's waits in place)
    waits = [ln for ln in _loop(mma).splitlines() if "= warpgroup_mma_wait(" in ln]
    assert len(waits) == 1 and waits[0].strip().endswith("# s is read"), waits


def test_a_renamed_value_read_again_waits_at_its_conversion(tmp_path):
    _, mma = _mma(tmp_path, "read_after_rename")
    loop = _loop(mma).splitlines()
    rename = next(i for i, ln in enumerate(loop) if re.match(r"\s+acc = ", ln))
    sums = next(i for i, ln in enumerate(loop) if "gl.sum(x, 1)" in ln)
    waits = [i for i, ln in enumerate(loop) if "warpgroup_mma_wait(" in ln and "x is read" in ln]
    # one wait, for x alone, before the rename (a conversion) and so before the sum
    assert len(waits) == 1 and waits[0] < rename < sums, loop
    assert re.search(r"deps=\[x, _a\d+\]", loop[waits[0]]), loop[waits[0]]
    assert "acc = gl.convert_layout(x," in loop[rename], loop[rename]


# ------------------------------------------------------------------ found right


@pytest.mark.parametrize("case", ["tuple_scores_sum", "twice", "trans_rename",
                                  "slice_operand_rename", "smem_rename"])
def test_a_helper_product_only_the_loop_reads_stays_in_flight(tmp_path, case):
    _, mma = _mma(tmp_path, case)
    assert _carried(mma), mma
    assert not re.search(r"\bacc = gl\.convert_layout\(", _loop(mma)), mma


@pytest.mark.parametrize("case,read", [("tuple_acc_sum", r"gl\.sum\(_\w+acc, 1\)"),
                                       ("read_next", r"gl\.sum\(acc, 1\)"),
                                       ("twice", r"_update\d+_acc = \(acc \*")])
def test_a_read_of_the_helper_product_in_the_iteration_waits_first(tmp_path, case, read):
    _, mma = _mma(tmp_path, case)
    loop = _loop(mma).splitlines()
    use = max(i for i, ln in enumerate(loop) if re.search(read, ln))
    prev = max(i for i, ln in enumerate(loop[:use]) if "warpgroup_mma(" in ln)
    assert any("= warpgroup_mma_wait(0" in ln for ln in loop[prev:use]), loop[prev:use + 1]


def test_a_helper_local_rescaled_after_its_product_waits_in_the_branch(tmp_path):
    """The helper's local (moved on to ``acc`` by the return) is read in an ``if`` after its dot:
    the branch waits before the read and makes it in flight again; the product is carried."""
    _, mma = _mma(tmp_path, "helper_if_after_dot")
    assert _carried(mma), mma
    loop = _loop(mma).splitlines()
    read = next(i for i, ln in enumerate(loop) if re.search(r"_acc = \(_\w+_acc \* 2\.0\)", ln))
    assert "_acc is read" in loop[read - 1] and "warpgroup_mma_init(" in loop[read + 1], loop


@pytest.mark.parametrize("case,ends", [("both_branches", ("if", "else")), ("one_branch", ("if",)),
                                       ("helper_dot_in_branch", ("if",)),
                                       ("static_inner", ()), ("runtime_inner", ()),
                                       ("helper_inner_loop", ())])
def test_a_helper_in_a_branch_or_an_inner_loop_is_waited_for_there(tmp_path, case, ends):
    _, mma = _mma(tmp_path, case)
    loop = _loop(mma)
    for e in ends:
        assert f"# end of the {e} branch" in loop, loop
    if case == "static_inner":  # an unrolled loop is not pipelined: it drains each iteration
        assert "# loop back-edge" in loop and "warpgroup_mma_init" not in mma, mma
    if case == "runtime_inner":  # the inner loop carries it; its rescale waits for it
        assert mma.count("acc = warpgroup_mma_init(acc)") == 1 and "# acc is read" in loop, loop
    if case == "helper_inner_loop":  # the helper's loop carries its local; its exit waits
        inner = mma.index("        for _update_l")
        assert re.search(r"_acc = warpgroup_mma_init\(_\w+_acc\)", mma[:inner]), mma
        assert re.search(r"_acc, _a\d+ = warpgroup_mma_wait\(0, .*# loop exit", mma[inner:]), mma


@pytest.mark.parametrize("body,words", [
    ("        if t > 0:\n            l = l + tl.sum(x, 1)\n        for u in range(1):\n"
     f"            x = {_PV}\n            acc = x\n", "name 'x' is not defined here"),
    (f"        x = {_PV}\n        acc = x\n    l = tl.sum(x, 1)\n", "bound only inside the loop"),
])
def test_a_block_local_read_where_triton_has_no_value_is_refused(tmp_path, body, words):
    path = tmp_path / "adv8_refused.py"
    path.write_text(HEAD + _PRE + body + _POST)
    with pytest.raises(TleError, match=re.escape(words)):
        gluon_source((str(path), "k"))


def test_a_return_inside_a_helper_if_is_refused(tmp_path):
    path = tmp_path / "adv8_return.py"
    path.write_text(HEAD + _PRE + "        acc = upd(res, s, acc, t)\n" + _POST + f'''

def upd(res, s, acc, t):
    if t == 0:
        return {_PV}
    acc = {_PV}
    return acc
''')
    with pytest.raises(TleError, match="`return` is allowed only as a helper's last statement"):
        gluon_source((str(path), "k"))

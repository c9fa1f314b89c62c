"""Slot accesses in the Pipe IR: where a partition touches a slot field, in program order, with
the index of the event that handed the slot out; and every misuse of a slot rejected end to end
(frontend + verifier, and tle-dump's exit status with the access's PATH:LINE)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as dump_main
from tle_compiler.diagnostics import TleError
from tle_compiler.frontend import read_kernels, read_source
from tle_compiler.ir import Access, Event, For, If, walk_accesses
from tle_compiler.passes import verify

ROOT = Path(__file__).resolve().parent.parent
HEAD = "import triton.language as tl\nimport tle_compiler as tle\n\n"


def source(text: str) -> str:
    return HEAD + textwrap.dedent(text)


def line_with(text: str, needle: str, nth: int = 0) -> int:
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) > nth, f"{needle!r} not in the kernel"
    return hits[nth]


def read_one(text: str, path: str = "k.py"):
    (prog,) = read_source(text, path).kernels
    return prog


def partition(prog, name):
    return next(p for p in prog.partitions if p.name == name)


def flat(body) -> list[str]:
    """Events and accesses in order, through loops and both branches of ifs, as text:
    ``wait(i)``, ``read(i, x)@line``, ``write(i, x)@line`` (reader names when given)."""
    out: list[str] = []
    for s in body:
        if isinstance(s, Event):
            out.append(f"{s.verb}({s.index})")
        elif isinstance(s, Access):
            who = f"[{s.reader}]" if s.reader else ""
            out.append(f"{s.verb}{who}({s.index}, {s.field}) {s.op}@{s.loc.line}")
        elif isinstance(s, For):
            out += [f"for {s.var}"] + flat(s.body) + ["end"]
        elif isinstance(s, If):
            out += [f"if {s.cond}"] + flat(s.then) + ["else"] + flat(s.orelse) + ["end"]
    return out


SPSC = '''
@tle.jit
def k(x_ptr, N):
    p = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 16, 16], tl.bfloat16),
                 y=tle.gpu.alloc([2, 16, 16], tl.bfloat16))
    tle.gpu.warp_specialize([(prod, (p, x_ptr, N)), (cons, (p, x_ptr, N))], [4], [200])


def offs():
    return tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]

'''


def spsc(prod: str, cons: str) -> str:
    return source(SPSC + "\ndef prod(p, x_ptr, N):\n" + textwrap.indent(textwrap.dedent(prod), "    ")
                  + "\n\ndef cons(p, x_ptr, N):\n" + textwrap.indent(textwrap.dedent(cons), "    "))


PRODUCER = '''
w = p.writer()
for i in range(N):
    slot = w.acquire(i)
    tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + offs()))
    tl.store(tle.gpu.local_ptr(slot.y), tl.load(x_ptr + offs()))
    w.commit(i)
'''


def errors(text: str, path: str = "k.py") -> list:
    return verify(read_one(text, path)).errors


def assert_rejected_at(text: str, needle: str, check: str, tmp_path, message: str = ""):
    """The kernel is rejected at the line holding ``needle``: by the verifier (read_source +
    verify) or already by the frontend, and by tle-dump (exit 1, PATH:LINE: printed)."""
    line = line_with(text, needle)
    try:
        errs = errors(text)
    except TleError as e:
        assert (e.loc.line, e.check) == (line, check), f"{e.loc} [{e.check}] {e.message}"
        assert message in e.message, e.message
    else:
        hits = [d for d in errs if d.loc.line == line and d.check == check]
        assert hits, [str(d) for d in errs]
        assert message in hits[0].message, hits[0].message
    path = tmp_path / "kernel.py"
    path.write_text(text)
    code = dump_main(["-q", str(path)])
    assert code == 1


def capture_dump(capsys, tmp_path, text: str) -> tuple[int, str]:
    path = tmp_path / "kernel.py"
    path.write_text(text)
    code = dump_main(["-q", str(path)])
    out, err = capsys.readouterr()
    return code, out + err


# -- where accesses go --------------------------------------------------------------------------

def test_spsc_accesses_follow_program_order_with_the_event_index():
    text = spsc(PRODUCER, '''
        r = p.reader()
        acc = tl.zeros([16, 16], tl.float32)
        for i in range(N):
            res = r.wait(i)
            acc += tl.load(tle.gpu.local_ptr(res.slot.x)).to(tl.float32)
            r.release(i)
    ''')
    prog = read_one(text)
    st = line_with(text, "tl.store(tle.gpu.local_ptr(slot.x)")
    assert flat(partition(prog, "prod").body) == [
        "for i", "acquire(i)", f"write(i, x) tl.store@{st}", f"write(i, y) tl.store@{st + 1}",
        "commit(i)", "end"]
    ld = line_with(text, "acc += tl.load")
    assert flat(partition(prog, "cons").body) == [
        "for i", "wait(i)", f"read(i, x) tl.load@{ld}", "release(i)", "end"]
    (a,) = walk_accesses(partition(prog, "cons").body)
    assert (a.side, a.pipe, a.field, str(a.index), a.reader, a.op, a.loc.file) == \
        ("reader", "p", "x", "i", None, "tl.load", "k.py")


def test_spmc_accesses_name_their_reader_and_stay_inside_its_view():
    text = source('''
        @tle.jit
        def k(N):
            p = tle.pipe(capacity=2, readers=("a", "b"), x=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                         y=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
            tle.gpu.warp_specialize([(prod, (p, N)), (ra, (p, N)), (rb, (p, N))], [4, 4],
                                    [200, 200])


        def prod(p, N):
            w = p.writer()
            for i in range(N):
                s = w.acquire(i)
                tl.store(tle.gpu.local_ptr(s.x), tl.zeros([64, 64], tl.bfloat16))
                tl.store(tle.gpu.local_ptr(s.y), tl.zeros([64, 64], tl.bfloat16))
                w.commit(i)


        def ra(p, N):
            r = p.reader("a")
            q = tl.zeros([64, 64], tl.bfloat16)
            for i in range(N):
                res = r.wait(i)
                s = tl.dot(q, tl.trans(tl.load(tle.gpu.local_ptr(res.slot.x))))
                t = tl.dot(q, tl.load(tle.gpu.local_ptr(res.slot.y)))
                r.release(i)


        def rb(p, N):
            r = p.reader("b", fields=("y",))
            for i in range(N):
                res = r.wait(2 * i - i)
                v = tl.load(tle.gpu.local_ptr(res.slot.y))
                r.release(i)
    ''')
    prog = read_one(text)
    dot1, dot2 = line_with(text, "s = tl.dot"), line_with(text, "t = tl.dot")
    # the load and the dot of one slot field with no event between: one access (the first)
    assert flat(partition(prog, "ra").body) == [
        "for i", "wait(i)", f"read[a](i, x) tl.load@{dot1}", f"read[a](i, y) tl.load@{dot2}",
        "release(i)", "end"]
    assert flat(partition(prog, "rb").body) == [
        "for i", "wait(i)", f"read[b](i, y) tl.load@{line_with(text, 'v = tl.load')}",
        "release(i)", "end"]
    assert prog.pipe("p").mma == ("x", "y")
    assert verify(prog).errors == []


def test_a_dot_reads_its_operands_where_it_runs():
    text = spsc(PRODUCER, '''
        r = p.reader()
        q = tl.zeros([16, 16], tl.bfloat16)
        for i in range(N):
            res = r.wait(i)
            k = tl.load(tle.gpu.local_ptr(res.slot.x))
            kt = tl.trans(k)
            v = tl.load(tle.gpu.local_ptr(res.slot.y)).T
            r.release(i)
            s = tl.dot(q, kt)
            o = tl.dot(s.to(tl.bfloat16), v)
    ''')
    prog = read_one(text)
    ld, vl = line_with(text, "k = tl.load"), line_with(text, "v = tl.load")
    d1, d2 = line_with(text, "s = tl.dot"), line_with(text, "o = tl.dot")
    assert flat(partition(prog, "cons").body) == [
        "for i", "wait(i)", f"read(i, x) tl.load@{ld}", f"read(i, y) tl.load@{vl}", "release(i)",
        f"read(i, x) tl.dot@{d1}", f"read(i, y) tl.dot@{d2}", "end"]


def test_pointer_arithmetic_and_views_keep_the_slot():
    text = spsc('''
        w = p.writer()
        for i in tl.static_range(2):
            slot = w.acquire(i)
            ptr = tle.gpu.local_ptr(slot.x) + 0
            tl.store(ptr, tl.zeros([16, 16], tl.bfloat16))
            w.commit(i)
    ''', '''
        r = p.reader()
        for i in tl.static_range(2):
            res = r.wait(i)
            t = tl.reshape(tl.load(tle.gpu.local_ptr(res.slot.x)[:, :]), [256])
            r.release(i)
    ''')
    prog = read_one(text)
    assert flat(partition(prog, "prod").body)[1:4] == [
        "acquire(i)", f"write(i, x) tl.store@{line_with(text, 'tl.store(ptr')}", "commit(i)"]
    assert flat(partition(prog, "cons").body)[2] == \
        f"read(i, x) tl.load@{line_with(text, 't = tl.reshape')}"


def test_helpers_receive_and_return_slots():
    text = spsc('''
        w = p.writer()
        for i in range(N):
            fill(w.acquire(i), x_ptr)
            w.commit(i)
    ''', '''
        r = p.reader()
        q = tl.zeros([16, 16], tl.bfloat16)
        for i in range(N):
            k = tile_of(r.wait(i))
            s = tl.dot(q, k)
            r.release(i)
    ''') + textwrap.dedent('''

        def fill(slot, x_ptr):
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + offs()))


        def tile_of(res):
            return tl.load(tle.gpu.local_ptr(res.slot.x))
    ''')
    prog = read_one(text)
    assert flat(partition(prog, "prod").body) == [
        "for i", "acquire(i)", f"write(i, x) tl.store@{line_with(text, 'tl.store(tle.gpu.local_ptr(slot.x)')}",
        "commit(i)", "end"]
    assert flat(partition(prog, "cons").body) == [
        "for i", "wait(i)", f"read(i, x) tl.load@{line_with(text, 'return tl.load')}",
        "release(i)", "end"]  # the dot's read follows the load with no event between
    assert verify(prog).errors == []


def test_accesses_inside_ifs_and_nested_loops_keep_their_place():
    text = spsc('''
        w = p.writer()
        for i in range(N):
            slot = w.acquire(i)
            if i >= 2:                                 # y: once on each stage, kept after
                tl.store(tle.gpu.local_ptr(slot.x), tl.zeros([16, 16], tl.bfloat16))
            else:
                tl.store(tle.gpu.local_ptr(slot.y), tl.zeros([16, 16], tl.bfloat16))
            for j in tl.static_range(2):
                tl.store(tle.gpu.local_ptr(slot.x), tl.zeros([16, 16], tl.bfloat16))
            w.commit(i)
    ''', '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            x = tl.load(tle.gpu.local_ptr(res.slot.x))
            if tl.sum(tl.sum(x, 1), 0) > 0:            # data: the read may happen
                y = tl.load(tle.gpu.local_ptr(res.slot.y))
            j = 0
            while j < 3:                               # no events: its reads stay, in order
                z = tl.load(tle.gpu.local_ptr(res.slot.y)) + x
                j += 1
            r.release(i)
    ''')
    prog = read_one(text)
    s1, s3 = (line_with(text, "tl.store(tle.gpu.local_ptr(slot.x)", k) for k in (0, 1))
    s2 = line_with(text, "tl.store(tle.gpu.local_ptr(slot.y)")
    assert flat(partition(prog, "prod").body) == [
        "for i", "acquire(i)", "if i >= 2", f"write(i, x) tl.store@{s1}", "else",
        f"write(i, y) tl.store@{s2}", "end", "for j", f"write(i, x) tl.store@{s3}", "end",
        "commit(i)", "end"]
    assert flat(partition(prog, "cons").body) == [
        "for i", "wait(i)", f"read(i, x) tl.load@{line_with(text, 'x = tl.load')}",
        f"read(i, y) tl.load@{line_with(text, 'y = tl.load')}", "release(i)", "end"]
    # (the while loop's read of y repeats the if's, with no event between: recorded once)
    assert verify(prog).errors == []


def test_a_slot_of_an_outer_loop_is_the_same_slot_in_an_inner_loop():
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            for j in range(4):
                v = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
    ''')
    prog = read_one(text)
    assert flat(partition(prog, "cons").body) == [
        "for i", "wait(i)", "for j", f"read(i, x) tl.load@{line_with(text, 'v = tl.load')}", "end",
        "release(i)", "end"]


def test_the_writer_may_read_back_its_own_slot_before_the_commit():
    text = spsc('''
        w = p.writer()
        for i in range(N):
            slot = w.acquire(i)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + offs()))
            tl.store(tle.gpu.local_ptr(slot.y), tl.load(tle.gpu.local_ptr(slot.x)))
            w.commit(i)
    ''', '''
        r = p.reader()
        for i in range(N):
            r.wait(i)
            r.release(i)
    ''')
    prog = read_one(text)
    body = flat(partition(prog, "prod").body)
    # the load of x is the writer's readback (rule 7: after the window's write of x), not a write
    y_line = line_with(text, 'tl.store(tle.gpu.local_ptr(slot.y)')
    assert body[2:6] == [f"write(i, x) tl.store@{line_with(text, 'tl.store(tle.gpu.local_ptr(slot.x)')}",
                         f"readback(i, x) tl.load@{y_line}",
                         f"write(i, y) tl.store@{y_line}",
                         "commit(i)"]
    assert verify(prog).errors == []


def test_an_unknown_function_receiving_a_slot_pointer_is_an_access():
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            ptr = tle.gpu.local_ptr(res.slot.x)
            r.release(i)
            tl.multiple_of(ptr, 16)
    ''')
    prog = read_one(text)
    assert flat(partition(prog, "cons").body)[3] == \
        f"read(i, x) tl.multiple_of@{line_with(text, 'tl.multiple_of')}"


# -- misuse, end to end ---------------------------------------------------------------------------

def test_a_read_after_the_release_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            r.release(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.x))
    ''')
    assert_rejected_at(text, "v = tl.load", "access-outside-window", tmp_path, "after release")


def test_a_store_after_the_commit_is_rejected(tmp_path):
    text = spsc('''
        w = p.writer()
        for i in range(N):
            slot = w.acquire(i)
            w.commit(i)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + offs()))
    ''', '''
        r = p.reader()
        for i in range(N):
            r.wait(i)
            r.release(i)
    ''')
    assert_rejected_at(text, "tl.store(tle", "access-outside-window", tmp_path, "after commit")


def test_a_read_where_the_wait_did_not_happen_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            if i > 0:
                res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.x))
            if i > 0:
                r.release(i)
    ''')
    assert_rejected_at(text, "v = tl.load", "unknown-slot", tmp_path, "cannot tell which slot")


def test_a_read_of_a_slot_waited_in_the_previous_iteration_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        res = r.wait(0)
        for i in range(N):
            v = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
            res = r.wait(i + 1)
        r.release(N)
    ''')
    assert_rejected_at(text, "v = tl.load", "unknown-slot", tmp_path, "slots are per iteration")


def test_a_slot_used_after_its_loop_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            r.release(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.x))
    ''')
    assert_rejected_at(text, "v = tl.load", "unknown-slot", tmp_path, "`res` is assigned inside the loop")


def test_a_tile_loaded_in_a_loop_and_multiplied_after_it_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        q = tl.zeros([16, 16], tl.bfloat16)
        k = q
        for i in range(N):
            res = r.wait(i)
            k = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
        s = tl.dot(q, k)
    ''')
    assert_rejected_at(text, "s = tl.dot", "unknown-slot", tmp_path, "`k` is assigned inside the loop")


def test_a_read_of_index_i_while_holding_i_plus_one_is_rejected(tmp_path):
    text = source('''
        @tle.jit
        def k(N):
            p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
            tle.gpu.warp_specialize([(prod, (p,)), (cons, (p,))], [4], [200])


        def prod(p):
            w = p.writer()
            for i in tl.static_range(2):
                w.acquire(i)
                w.commit(i)


        def cons(p):
            r = p.reader()
            first = r.wait(0)
            r.release(0)
            second = r.wait(1)
            v = tl.load(tle.gpu.local_ptr(first.slot.x))
            r.release(1)
    ''')
    assert_rejected_at(text, "v = tl.load", "access-outside-window", tmp_path,
                       "held for index 1")


def test_a_dot_on_a_tile_loaded_before_the_release_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        q = tl.zeros([16, 16], tl.bfloat16)
        for i in range(N):
            res = r.wait(i)
            k = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
            s = tl.dot(q, tl.trans(k))
    ''')
    assert_rejected_at(text, "s = tl.dot", "access-outside-window", tmp_path, "after release")


def test_a_readers_store_into_its_slot_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            tl.store(tle.gpu.local_ptr(res.slot.x), tl.zeros([16, 16], tl.bfloat16))
            r.release(i)
    ''')
    assert_rejected_at(text, "tl.store(tle.gpu.local_ptr(res.slot.x)", "reader-write", tmp_path,
                       "a reader may not write into its slot")


def test_a_reader_slot_passed_to_an_opaque_function_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            other.consume(res.slot)
            r.release(i)
    ''').replace("import tle_compiler as tle\n", "import tle_compiler as tle\nimport other\n")
    assert_rejected_at(text, "other.consume", "opaque-call", tmp_path, "receives a pipe slot")


TWO_SLOTS = '''
r = p.reader()
for i in range(N):
    a = r.wait(2 * i)
    b = r.wait(2 * i + 1)
{choose}
    v = tl.load(tle.gpu.local_ptr(s.x))
    r.release(2 * i)
    r.release(2 * i + 1)
'''


@pytest.mark.parametrize("choose", [
    "    if i % 2 == 0:\n        s = a.slot\n    else:\n        s = b.slot",
    "    s = a.slot if i % 2 == 0 else b.slot",
])
def test_a_slot_chosen_by_a_condition_is_rejected_at_its_access(tmp_path, choose):
    prod = PRODUCER.replace("range(N)", "range(2 * N)")
    text = spsc(prod, TWO_SLOTS.format(choose=choose))
    assert_rejected_at(text, "v = tl.load", "unknown-slot", tmp_path, "cannot tell which slot")


def test_the_same_slot_on_both_branches_is_fine():
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            if i % 2 == 0:
                res = r.wait(i)
            else:
                res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
    ''')
    prog = read_one(text)
    assert verify(prog).errors == []


def test_register_values_outlive_their_slot():
    text = spsc(PRODUCER, '''
        r = p.reader()
        acc = tl.zeros([16, 16], tl.float32)
        last = tl.zeros([16, 16], tl.bfloat16)
        for i in range(N):
            res = r.wait(i)
            acc += tl.load(tle.gpu.local_ptr(res.slot.x)).to(tl.float32)
            last = tl.load(tle.gpu.local_ptr(res.slot.y))
            done = res.is_closed
            r.release(i)
        tl.store(x_ptr + offs(), acc + tl.max(last, 1)[:, None])
    ''')
    assert verify(read_one(text)).errors == []


def test_a_closed_flag_does_not_outlive_its_slot(tmp_path):
    """`res.is_closed` loads the flag from the slot where it stands: after the loop `res` may be
    any iteration's result, and its slot has been handed back (tests/test_closed_flag_reads.py)."""
    text = spsc(PRODUCER, '''
        r = p.reader()
        for i in range(N):
            res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
        done = res.is_closed
    ''')
    assert_rejected_at(text, "done = res.is_closed", "unknown-slot", tmp_path,
                       "cannot tell which slot")


def test_a_slot_in_a_tuple_carried_by_a_loop_is_rejected(tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        pair = (r.wait(0), 0)
        for i in range(N):
            v = tl.load(tle.gpu.local_ptr(pair[0].slot.x))
            r.release(i)
            pair = (r.wait(i + 1), i)
        r.release(N)
    ''')
    assert_rejected_at(text, "v = tl.load", "unknown-slot", tmp_path, "cannot tell which slot")


def test_the_rejection_names_the_access_line_in_tle_dump(capsys, tmp_path):
    text = spsc(PRODUCER, '''
        r = p.reader()
        q = tl.zeros([16, 16], tl.bfloat16)
        for i in range(N):
            res = r.wait(i)
            k = tl.load(tle.gpu.local_ptr(res.slot.x))
            r.release(i)
            s = tl.dot(q, k)
    ''')
    code, out = capture_dump(capsys, tmp_path, text)
    assert code == 1
    assert f"{tmp_path / 'kernel.py'}:{line_with(text, 's = tl.dot')}:" in out
    assert "[access-outside-window]" in out


# -- free shared buffers --------------------------------------------------------------------------

FREE = '''
@tle.jit
def k(N):
    scratch = tle.gpu.alloc([16, 16], tl.float32)
    p = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 16], tl.float32))
    tle.gpu.warp_specialize([(a, (p, scratch, N)), (b, (p, scratch, N))], [4], [200])


def a(p, scratch, N):
    {a}


def b(p, scratch, N):
    {b}
'''

STORE = "tl.store(tle.gpu.local_ptr(scratch), tl.zeros([16, 16], tl.float32))"
LOAD = "v = tl.load(tle.gpu.local_ptr(scratch))"


def test_a_free_buffer_written_by_one_partition_and_read_by_another_is_a_race():
    text = source(FREE.format(a=STORE, b=LOAD))
    with pytest.raises(TleError) as ei:
        read_source(text, "k.py")
    e = ei.value
    assert e.check == "buffer-race" and e.loc.line == line_with(text, LOAD)
    assert (f"'a' writes it (tl.store at line {line_with(text, STORE)}) and 'b' reads it "
            f"(tl.load at line {line_with(text, LOAD)})") in e.message


@pytest.mark.parametrize("a, b", [
    (LOAD, LOAD),                                 # two readers: no race
    (STORE + "\n    " + LOAD, "pass"),            # one partition only
])
def test_free_buffers_without_a_cross_partition_write_are_fine(a, b):
    read_one(source(FREE.format(a=a, b=b)))


def test_a_pipe_field_buffer_used_directly_is_rejected():
    text = source('''
        @tle.jit
        def k(N):
            buf = tle.gpu.alloc([1, 16], tl.float32)
            p = tle.pipe(capacity=1, x=buf)
            tle.gpu.warp_specialize([(a, (p, buf)), (b, (p,))], [4], [200])


        def a(p, buf):
            tl.store(tle.gpu.local_ptr(buf), tl.zeros([1, 16], tl.float32))


        def b(p):
            pass
    ''')
    with pytest.raises(TleError, match="reaches the buffer of field 'x' of pipe 'p' directly") as ei:
        read_source(text, "k.py")
    assert ei.value.loc.line == line_with(text, "tl.store(")


# -- every bundled kernel still verifies ------------------------------------------------------------

BUNDLED = sorted([ROOT / "tle_kernels" / "sparse_mla_pipe.py", ROOT / "tle_kernels" / "sparse_mla_seesaw.py",
                  *(ROOT / "tle_kernels" / "examples").glob("[!_]*.py"),
                  *(ROOT / "tle_kernels" / "gpu_tests").glob("[!_]*.py")])


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_bundled_kernels_read_with_accesses_and_verify(path, capsys):
    from tle_compiler.lowering.compile import kernel_info_of
    from tle_compiler.lowering.dumping import default_config

    if path.stem in ("sparse_mla_seesaw", "ring_stages"):  # read only specialised: with its
        # DEFAULT_CONFIG (ring_stages: a pipe capacity read from a constexpr)
        cfg = default_config(str(path), path.stem)
        infos = [kernel_info_of((str(path), path.stem), cfg["constexprs"])]
    else:
        infos = read_kernels(path)
    for info in infos:
        accesses = [a for p in info.program.partitions for a in walk_accesses(p.body)]
        assert accesses, f"{info.name}: no slot access recorded"
        errs = verify(info.program).errors
        assert errs == [], [str(d) for d in errs]
    code = dump_main(["-q", str(path)])
    assert code == 0, capsys.readouterr().err

"""A field stored in both branches of an ``if``/``else`` on data is surely written.

Under rule 7 (docs/semantics.md) a store under an ``if`` whose condition depends on data may not
run, so it fills nothing (Pipe IR ``P.maywrite(i, f)``). But when both branches of one
``if``/``else`` store the field (an ``elif`` chain ending in ``else``, nested ones too), one of them
runs, so the field is written once the ``if`` is done: the frontend records that write as one
that runs, after the branches' accesses. A read-back in a branch after that branch's own store
reads what it wrote (legal); one before it still finds the field unwritten, and two separate ``if``s whose conditions complement each other
are not combined (the verifier does not compare data conditions): they stay ``unwritten-field``.

The verifier's fast path, its wording path, verify() and the simulator agree on each kernel
(``agree`` of tests/test_unwritten_may_write.py).
"""

from __future__ import annotations

import pytest

from tle_compiler.ir.nodes import walk_accesses

from .test_unwritten_may_write import READ_T, STORE_T, agree, dump, kernel, line_of, program_of

FLAG = "tl.load(flag_ptr + i) != 0"
STORE_U = STORE_T.replace("s.t", "s.u")
READBACK_T = "tl.store(out_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(s.t)))"

#: windows in which t is surely written: both branches store it
SURE = {
    "if-else": f"""
if {FLAG}:
    {STORE_T}
else:
    {STORE_T}
""",
    "elif-else": f"""
f = tl.load(flag_ptr + i)
if f == 0:
    {STORE_T}
elif f == 1:
    {STORE_U}
    {STORE_T}
else:
    {STORE_T}
""",
    "nested": f"""
if {FLAG}:
    if tl.load(flag_ptr + i + 1) != 0:
        {STORE_T}
    else:
        {STORE_T}
else:
    {STORE_T}
""",
    "affine-if-in-branch": f"""
if {FLAG}:
    if i == 0:
        {STORE_T}
    else:
        {STORE_T}
else:
    {STORE_T}
""",
    "affine-disjunct": f"""
if ({FLAG}) | (i == 3):
    {STORE_T}
else:
    {STORE_T}
""",
    "readback-after": f"""
if {FLAG}:
    {STORE_T}
else:
    {STORE_T}
{READBACK_T}
""",
}

#: windows in which t is not surely written, with the line the fault is reported at
UNSURE = {
    "else-writes-u": (f"""
if {FLAG}:
    {STORE_T}
else:
    {STORE_U}
""", READ_T),
    "elif-without-else": (f"""
f = tl.load(flag_ptr + i)
if f == 0:
    {STORE_T}
elif f == 1:
    {STORE_T}
""", READ_T),
    "loop-in-branch": (f"""
if {FLAG}:
    {STORE_T}
else:
    for kk in range(2):
        {STORE_T}
""", READ_T),
    # the else path reads t back before storing it: the store of the other branch is no help
    "readback-before-own-store": (f"""
if {FLAG}:
    {STORE_T}
else:
    {READBACK_T}
    {STORE_T}
""", READBACK_T),
    # complementary conditions in two separate ifs are not compared (docs/semantics.md rule 7)
    "two-complementary-ifs": (f"""
f = tl.load(flag_ptr + i)
if f != 0:
    {STORE_T}
if f == 0:
    {STORE_T}
""", READ_T),
}


@pytest.mark.parametrize("name", list(SURE))
def test_a_field_stored_in_both_branches_is_surely_written(tmp_path, capsys, name):
    text = kernel(SURE[name])
    path = tmp_path / "k.py"
    path.write_text(text)
    code, err = dump(path, capsys)
    assert code == 0, err
    assert "verified for every value of N" in err
    assert not agree(program_of(text, str(path)))


@pytest.mark.parametrize("name", list(UNSURE))
def test_a_field_not_stored_on_every_path_stays_unwritten(tmp_path, capsys, name):
    window, at = UNSURE[name]
    text = kernel(window)
    path = tmp_path / "k.py"
    path.write_text(text)
    code, err = dump(path, capsys)
    assert code == 1, err
    assert f"{path}:{line_of(text, at)}: error: " in err and "[unwritten-field]" in err, err
    assert line_of(text, at) in agree(program_of(text, str(path)))


def test_the_frontend_records_the_branches_writes_as_one_write_that_runs():
    """Both branches' stores of t are one record (the first branch's, upgraded to a write that
    runs); the store of u only the elif branch makes stays a write that may not run."""
    accesses = [a for part in program_of(kernel(SURE["elif-else"])).partitions
                for a in walk_accesses(part.body) if a.side == "writer"]
    assert sorted((a.field, a.verb) for a in accesses) == [("t", "write"), ("u", "maywrite")]
    accesses = [a for part in program_of(kernel(UNSURE["else-writes-u"][0])).partitions
                for a in walk_accesses(part.body) if a.side == "writer"]
    assert sorted((a.field, a.verb) for a in accesses) == [("t", "maywrite"),
                                                           ("u", "maywrite")]


def test_a_read_back_after_its_own_branch_store_is_legal():
    """A branch that stores t and then reads it back reads what it wrote, wherever the branch
    runs (with or without an else): legal; a read-back before the branch's own store is not
    (``readback-before-own-store`` above)."""
    for window in (f"""
if {FLAG}:
    {STORE_T}
    {READBACK_T}
else:
    {STORE_T}
""", f"""
{STORE_T}
if {FLAG}:
    {STORE_U}
    {READBACK_T.replace("s.t", "s.u")}
"""):
        text = kernel(window)
        assert not agree(program_of(text)), window
    # only a store in the branch's own statement list counts, not one in a loop of the branch
    text = kernel(f"""
if {FLAG}:
    for kk in range(2):
        {STORE_T}
    {READBACK_T}
else:
    {STORE_T}
""")
    assert line_of(text, READBACK_T) in agree(program_of(text))

"""Frontend fixes of round 23's bugs (tests/test_adversarial_verdicts_23.py, _cli_4.py): TMA
copies whose destination is a view of a slot field, whose offsets are floats, whose descriptor is
an integer the protocol reads, or whose one descriptor argument fills two slot shapes, are
refused at the copy's line; the verdicts of plain copies are unchanged."""

from __future__ import annotations

import textwrap

import pytest

from .test_adversarial_python_semantics import run_dump, write_kernel

HEAD = "import triton.language as tl\nimport tle_compiler as tle\n\n\n"

TMA = HEAD + '''@tle.jit
def k(x_desc, y_desc, out_ptr, N):
    tle.assume(N >= 0)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                 u=tle.gpu.alloc([2, U], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_desc, y_desc, N)), (drain, (p, out_ptr, N))], [4],
                            [232])


def fill(p, x_desc, y_desc, N):
    w = p.writer()
    for i in range(N):
        s = w.acquire(i)
FILL
        w.commit(i)


def drain(p, out_ptr, N):
    r = p.reader()
    for i in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        u = tl.load(tle.gpu.local_ptr(res.slot.u))
        r.release(i)
        tl.store(out_ptr + tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :], v)
        tl.store(out_ptr + tl.arange(0, 64), tl.sum(tl.reshape(u, [64, 64]), 0))
'''


def kernel(fill: str, u: str = "64, 64") -> str:
    return TMA.replace("FILL", textwrap.indent(textwrap.dedent(fill).rstrip("\n"), " " * 8)
                       ).replace("U", u)


def dump(tmp_path, capsys, text: str):
    code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, text)))
    assert "internal error" not in err, err
    return code, err


def line_of(text: str, needle: str, nth: int = 0) -> int:
    return [n for n, ln in enumerate(text.splitlines(), 1) if needle in ln][nth]


PLAIN = ("tle.gpu.tma_load(s.t, x_desc, [i * 64, 0])\n"
         "tle.gpu.tma_load(s.u, x_desc, [i * 64, 64])\n")


def test_plain_copies_of_one_descriptor_into_two_fields_of_one_shape_are_verified(tmp_path,
                                                                                    capsys):
    code, err = dump(tmp_path, capsys, kernel(PLAIN))
    assert code == 0 and ": verified for " in err, err


@pytest.mark.parametrize("dst", ["s.t[0]", "tl.reshape(s.t, [4096])", "tl.trans(s.t)", "s.t.T",
                                 "tl.multiple_of(s.t, 16)"])
def test_a_copy_into_a_view_of_a_field_is_refused_at_its_line(tmp_path, capsys, dst):
    text = kernel(PLAIN.replace("tma_load(s.t,", f"tma_load({dst},"))
    code, err = dump(tmp_path, capsys, text)
    assert code == 1 and f":{line_of(text, 'tma_load(')}: error:" in err, err
    assert "[bad-tma]" in err and "the slot field itself" in err, err


def test_a_field_bound_to_a_name_first_is_the_field_itself(tmp_path, capsys):
    text = kernel("f = s.t\n" + PLAIN.replace("tma_load(s.t,", "tma_load(f,"))
    code, err = dump(tmp_path, capsys, text)
    assert code == 0 and ": verified for " in err, err


@pytest.mark.parametrize("offsets", ["[0.5, 0]", "[i * 64, 1.0]"])
def test_a_float_offset_is_refused_at_the_copy(tmp_path, capsys, offsets):
    text = kernel(PLAIN.replace("[i * 64, 0]", offsets))
    code, err = dump(tmp_path, capsys, text)
    assert code == 1 and f":{line_of(text, 'tma_load(s.t')}: error:" in err, err
    assert "must be integers" in err and "[bad-tma]" in err, err


def test_the_loop_count_as_the_descriptor_is_refused_at_the_copy(tmp_path, capsys):
    text = kernel(PLAIN.replace("tma_load(s.u, x_desc,", "tma_load(s.u, N,"))
    code, err = dump(tmp_path, capsys, text)
    assert code == 1 and f":{line_of(text, 'tma_load(s.u')}: error:" in err, err
    assert "kernel argument 'N' is the descriptor" in err and "[bad-tma]" in err, err


def test_an_unused_integer_argument_as_the_descriptor_is_not_a_protocol_param(tmp_path, capsys):
    """y_desc is read by no event: it is only a descriptor (its box the compile checks)."""
    text = kernel(PLAIN.replace("tma_load(s.u, x_desc,", "tma_load(s.u, y_desc,"))
    code, err = dump(tmp_path, capsys, text)
    assert code == 0 and ": verified for " in err, err


@pytest.mark.parametrize("u,ok", [("64, 32", False), ("1, 64, 64", True), ("64, 64, 1", False),
                                  ("64, 1, 64", True), ("4096", False)])
def test_one_descriptor_fills_fields_one_box_fits(tmp_path, capsys, u, ok):
    """A descriptor has one box: two fields it fills must both be that box with unit dimensions
    dropped (lowering/descriptors.py box_fits_field), else the second copy is refused."""
    text = kernel(PLAIN, u=u).replace(
        "tl.sum(tl.reshape(u, [64, 64]), 0)", "tl.sum(tl.reshape(u, [64, 64]), 0)"
        if u.count("64") == 2 else "tl.sum(tl.reshape(u, [4096]), 0)")
    code, err = dump(tmp_path, capsys, text)
    if ok:
        assert code == 0 and ": verified for " in err, err
        return
    assert code == 1 and f":{line_of(text, 'tma_load(s.u')}: error:" in err, err
    assert "a tensor descriptor has one box" in err and "[signature]" in err, err


def test_two_descriptors_for_two_slot_shapes_are_verified(tmp_path, capsys):
    text = kernel(PLAIN.replace("tma_load(s.u, x_desc,", "tma_load(s.u, y_desc,"), u="64, 32")
    code, err = dump(tmp_path, capsys, text)
    assert code == 0 and ": verified for " in err, err


# ------------------------------------------------ --print-ir of a field buffer; a param's name

FIELD_ALIAS = HEAD + '''@tle.jit
def ring(x_ptr, N_):
    ring_buf = tle.gpu.alloc([2, 64], tl.int32)
    kv = tle.pipe(capacity=2, tile=ring_buf)
PASS
    tle.gpu.warp_specialize([(produce, (kv, BUFS, x_ptr, N_)), (consume, (kv, x_ptr, N_))],
                            [4], [232])


def produce(kv, bufs, x_ptr, N_):
    w = kv.writer()
    for t in range(N_):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N_):
    r = kv.reader()
    for t in range(N_):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
'''


@pytest.mark.parametrize("pre,bufs", [("", "(ring_buf,)"), ("    bb = (ring_buf, 3)", "bb"),
                                      ("", "ring_buf")])
def test_print_ir_of_a_field_buffer_handed_on_unused(tmp_path, capsys, pre, bufs):
    """The KIR names no pipe field's buffer: handed to a partition that never uses it, the item
    is None there (--print-ir was an internal error), and the verdict is kept."""
    text = FIELD_ALIAS.replace("PASS", pre).replace("BUFS", bufs)
    code, out, err = run_dump(capsys, "--print-ir", str(write_kernel(tmp_path, text)))
    assert code == 0 and "internal error" not in err, err
    assert "ring_buf" not in out.split("partition produce")[1].split("\n")[0], out


def test_a_param_keeps_its_arguments_trailing_underscore(tmp_path, capsys):
    text = FIELD_ALIAS.replace("PASS", "").replace("BUFS", "3")
    path = str(write_kernel(tmp_path, text))
    code, _, err = run_dump(capsys, "-q", "--param", "N_=3", path)
    assert code == 0 and "verified for N_ = 3" in err, err
    code, _, err = run_dump(capsys, "-q", path)
    assert code == 0 and "every value of N_ " in err, err


def test_arguments_n_and_n_underscore_are_two_params(tmp_path, capsys):
    text = FIELD_ALIAS.replace("PASS", "").replace("BUFS", "3").replace(
        "def ring(x_ptr, N_):", "def ring(x_ptr, N_, N):").replace(
        "(consume, (kv, x_ptr, N_))", "(consume, (kv, x_ptr, N))")
    code, _, err = run_dump(capsys, "-q", str(write_kernel(tmp_path, text)))
    assert code == 1 and "N_=" in err and "N=" in err, err

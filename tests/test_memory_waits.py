"""A ``while`` loop that waits on memory is refused (frontend/memory_waits.py, check
``memory-wait``): it synchronizes partitions (or CTAs) outside the pipes, which the verifier does
not see. The first kernel here hangs on the GPU for N >= 2 (the reader spins on a flag the writer
sets only after its loop, whose second acquire needs the reader's first release), and tle-dump
said "verified ... deadlock-free" for it. Loops that read only what was fixed before them, or an
input the kernel never writes, or that read memory their condition does not depend on, stay
verified."""

from __future__ import annotations

import textwrap

import pytest

from tle_compiler.cli.dump import main

HEAD = textwrap.dedent('''
    import triton.language as tl
    import tle_compiler as tle


    @tle.jit(num_warps=4)
    def k(x_ptr, flag_ptr, y_ptr, N):
        PROLOGUE
        ch = tle.pipe(capacity=1, x=tle.gpu.alloc([1, 64], tl.float32))
        tle.gpu.warp_specialize([(fill, (ch, x_ptr, FLAG_ARG, N)), (drain, (ch, y_ptr, FLAG_ARG, N))],
                                [4], [232])


    def fill(ch, x_ptr, flag_ptr, N):
        w = ch.writer()
        offs = tl.arange(0, 64)
        for i in range(N):
            slot = w.acquire(i)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + i * 64 + offs))
            w.commit(i)
        SIGNAL


    def drain(ch, y_ptr, flag_ptr, N):
        rd = ch.reader()
        offs = tl.arange(0, 64)
        WAIT
        for i in range(N):
            res = rd.wait(i)
            tl.store(y_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
            rd.release(i)


    def spin(flag_ptr):
        while tl.atomic_add(flag_ptr, 0) == 0:
            pass
''')
CONFIG = ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "flag_ptr": "*i32", '
          '"y_ptr": "*fp32", "N": "i32"}, "constexprs": {}, "num_warps": 4, "grid": (1,)}\n')


def kernel(wait: str, signal: str = "tl.atomic_xchg(flag_ptr, 1)", prologue: str = "",
           flag_arg: str = "flag_ptr") -> str:
    def block(code, indent):
        return textwrap.indent(textwrap.dedent(code).strip("\n"), " " * indent).lstrip()
    return (HEAD.replace("WAIT", block(wait, 4)).replace("SIGNAL", block(signal, 4))
            .replace("PROLOGUE", block(prologue or "pass", 4)).replace("FLAG_ARG", flag_arg)
            + CONFIG)


REFUSED = {
    "an atomic spin": kernel("""
        while tl.atomic_add(flag_ptr, 0) == 0:
            pass
        """),
    "an atomic spin through a compare-and-swap": kernel("""
        while tl.atomic_cas(flag_ptr, 1, 1) != 1:
            pass
        """),
    "a load spin on a flag the writer stores": kernel("""
        while tl.load(flag_ptr, volatile=True) == 0:
            pass
        """, signal="tl.store(flag_ptr, 1)"),
    "a flag refreshed in the body": kernel("""
        f = tl.load(flag_ptr)
        while f == 0:
            f = tl.load(flag_ptr)
        """, signal="tl.store(flag_ptr, 1)"),
    "a flag refreshed through another name": kernel("""
        f = 0
        g = 0
        while f == 0:
            g = tl.load(flag_ptr + 0)
            f = g * 2
        """, signal="tl.store(flag_ptr, 1)"),
    "a flag passed through a kernel-body name": kernel("""
        while tl.load(flag_ptr) == 0:
            pass
        """, signal="tl.store(flag_ptr, 1)", prologue="fp = flag_ptr + 0", flag_arg="fp"),
    "a spin in a helper": kernel("spin(flag_ptr)"),
    "a counter stepped by a flag the writer stores": kernel("""
        k = 0
        while k < 8:
            k += 1 + tl.load(flag_ptr + k)
        """, signal="tl.store(flag_ptr, 1)"),
    "a grid barrier in the kernel body": kernel(
        "pass", signal="pass",
        prologue="tl.atomic_add(flag_ptr, 1)\nwhile tl.atomic_add(flag_ptr, 0) < tl.num_programs(0):"
                 "\n    pass"),
}

VERIFIED = {
    "a loop over an input the kernel never writes": kernel("""
        k = 0
        while tl.load(flag_ptr) > k:
            k += 1
        """, signal="pass"),
    "a loop on a value loaded before it": kernel("""
        n = tl.load(flag_ptr)
        k = 0
        while n > k:
            k += 1
        """, signal="tl.store(flag_ptr + 1, 1)"),  # not the flag drain loads: no race (memory-race)
    # the flag memory written by this partition (the other's store to it, unordered against
    # these loads, is a race: memory-race)
    "a load in the body the condition does not read": kernel("""
        tl.store(flag_ptr + 8, 1)
        k = 0
        acc = 0
        while k < 4:
            acc += tl.load(flag_ptr + k)
            k += 1
        """, signal="pass"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_loop_waiting_on_memory_is_refused(tmp_path, capsys, name):
    path = tmp_path / "k.py"
    path.write_text(REFUSED[name])
    assert main(["-q", str(path)]) == 1
    err = capsys.readouterr().err
    assert "[memory-wait]" in err and "through a pipe" in err, err
    assert "verified" not in err, err


@pytest.mark.parametrize("name", list(VERIFIED))
def test_a_loop_that_waits_for_nothing_is_verified(tmp_path, capsys, name):
    path = tmp_path / "k.py"
    path.write_text(VERIFIED[name])
    assert main(["-q", str(path)]) == 0, capsys.readouterr().err
    assert "verified" in capsys.readouterr().err


def test_a_counter_read_in_its_own_step_is_followed_to_its_memory(tmp_path, capsys):
    """The refusal names the argument the counter's loads go through, not shared memory (a
    name read in its own assignment was followed until the walk's depth ran out, which answered
    "it may be shared memory")."""
    path = tmp_path / "k.py"
    path.write_text(REFUSED["a counter stepped by a flag the writer stores"])
    assert main(["-q", str(path)]) == 1
    err = capsys.readouterr().err
    assert "a load through `flag_ptr`" in err and "shared memory" not in err, err


def test_a_counter_stepped_by_an_input_waits_for_nothing(tmp_path, capsys):
    """The same loop over an input the kernel never writes waits on no memory; it is refused as
    a loop that may not end (a step of 1 + a loaded value may be 0), not as a memory wait."""
    path = tmp_path / "k.py"
    path.write_text(kernel("""
        k = 0
        while k < 8:
            k += 1 + tl.load(flag_ptr + k)
        """, signal="pass"))
    assert main(["-q", str(path)]) == 1
    err = capsys.readouterr().err
    assert "[endless-loop]" in err and "[memory-wait]" not in err, err

"""A CPU emulation of TLE kernels, to check the GPU tests' kernels, harness and references (and the
stamp kernels) before spending device time.

A kernel file is executed as Python with ``tl`` and ``tle`` replaced by a small torch emulation:
pointers are (flat tensor, offset tensor), every partition runs in its own thread, shared buffers
are real per-stage tensors (so a protocol bug shows as stale data), and each pipe blocks exactly as
docs/semantics.md says: ``acquire(i)`` waits until every reader released ``i - C``, ``wait(i)``
until ``i`` was committed or closed. A blocked wait longer than ``TIMEOUT_S`` is a deadlock.

``load_kernel_module(path)`` returns a namespace whose ``@tle.jit`` kernels launch as
``kernel[grid](*args, **constexprs)`` on CPU torch tensors. This checks the math and the harness,
not the lowering.
"""

from __future__ import annotations

import itertools
import threading
import types
from pathlib import Path

import torch

TIMEOUT_S = 20.0


class Ptr:
    def __init__(self, buf: torch.Tensor, off):
        self.buf = buf
        self.off = torch.as_tensor(off, dtype=torch.int64)

    def __add__(self, other):
        return Ptr(self.buf, self.off + torch.as_tensor(other).to(torch.int64))

    __radd__ = __add__


_program = {"id": (0, 0, 0), "grid": (1, 1, 1)}  # the running program (one at a time)


def _where(c, a, b):
    c = torch.as_tensor(c)
    a, b = torch.as_tensor(a), torch.as_tensor(b)
    if not a.is_floating_point() and b.is_floating_point():
        a = a.to(b.dtype)
    if not b.is_floating_point() and a.is_floating_point():
        b = b.to(a.dtype)
    return torch.where(c, a, b)


def _load(p: Ptr, mask=None, other=0):
    assert bool(((p.off >= 0) & (p.off < p.buf.numel())).all()), "load out of bounds"
    v = p.buf[p.off].clone()
    return v if mask is None else torch.where(mask, v, torch.tensor(other, dtype=v.dtype))


def _store(p: Ptr, v, mask=None):
    v = torch.as_tensor(v)
    off, v = torch.broadcast_tensors(p.off, v)
    assert bool(((off >= 0) & (off < p.buf.numel())).all()), "store out of bounds"
    if mask is not None:
        mask = torch.broadcast_to(torch.as_tensor(mask), off.shape)
        off, v = off[mask], v[mask]
    p.buf[off.reshape(-1)] = v.reshape(-1).to(p.buf.dtype)


def _dot(a, b, acc=None, **_):
    if a.dtype in (torch.bfloat16, torch.float16):
        r = a.float() @ b.float()  # wgmma: 16-bit operands, fp32 accumulation
    else:
        r = a @ b
    return r if acc is None else r + acc


def _range(*args, **_):
    return range(*(int(a) for a in args))


def make_language():
    tl = types.SimpleNamespace(
        constexpr=lambda x: x,
        bfloat16=torch.bfloat16, float16=torch.float16, float32=torch.float32,
        int8=torch.int8, int16=torch.int16, int32=torch.int32, int64=torch.int64,
        program_id=lambda axis: int(_program["id"][axis]),
        num_programs=lambda axis: int(_program["grid"][axis]),
        arange=lambda a, b: torch.arange(a, b, dtype=torch.int32),
        full=lambda shape, v, dt: torch.full(list(shape), v, dtype=dt),
        zeros=lambda shape, dt: torch.zeros(list(shape), dtype=dt),
        load=_load, store=_store, dot=_dot, trans=lambda x: x.T, where=_where,
        maximum=torch.maximum, minimum=torch.minimum,
        max=lambda x, axis: x.max(axis).values, min=lambda x, axis: x.min(axis).values,
        sum=lambda x, axis: x.sum(axis), exp2=torch.exp2, log2=torch.log2,
        range=_range, static_range=_range, cdiv=lambda a, b: -(-a // b))

    class Slot:
        def __init__(self, pipe, i, view):
            for f, buf in pipe.fields.items():
                if view is None or f in view:
                    setattr(self, f, buf[i % pipe.capacity])

    class Pipe:
        def __init__(self, capacity, one_shot=False, readers=(), scope="cta", name=None, **fields):
            assert all(b.shape[0] == capacity for b in fields.values())
            self.capacity, self.one_shot, self.fields = capacity, one_shot, fields
            self.cv = threading.Condition()
            self.committed: set[int] = set()
            self.closed: set[int] = set()
            self.released = {r: set() for r in (tuple(readers) or (None,))}

        def block_until(self, pred, what):
            with self.cv:
                assert self.cv.wait_for(pred, timeout=TIMEOUT_S), f"deadlock in {what}"

        def writer(self):
            pipe = self

            class Writer:
                def acquire(self, i):
                    i = int(i)
                    if not pipe.one_shot and i >= pipe.capacity:
                        pipe.block_until(lambda: all(i - pipe.capacity in r
                                                     for r in pipe.released.values()),
                                         f"acquire({i})")
                    return Slot(pipe, i, None)

                def commit(self, i):
                    with pipe.cv:
                        pipe.committed.add(int(i))
                        pipe.cv.notify_all()

                def close(self, i):
                    self.acquire(i)
                    with pipe.cv:
                        pipe.closed.add(int(i))
                        pipe.committed.add(int(i))
                        pipe.cv.notify_all()
            return Writer()

        def reader(self, name=None, fields=None):
            pipe = self
            assert name in pipe.released, f"undeclared reader {name!r}"

            class Reader:
                def wait(self, i):
                    i = int(i)
                    pipe.block_until(lambda: i in pipe.committed, f"wait({i})")
                    return types.SimpleNamespace(slot=Slot(pipe, i, fields),
                                                 is_closed=i in pipe.closed)

                def release(self, i):
                    with pipe.cv:
                        pipe.released[name].add(int(i))
                        pipe.cv.notify_all()
            return Reader()

    def alloc(shape, dtype, scope=None):
        if dtype.is_floating_point:
            return torch.full(list(shape), float("nan"), dtype=dtype)
        return torch.full(list(shape), -999_999_999, dtype=dtype)  # poison: stale reads show

    def local_ptr(buf, indices=None):
        return Ptr(buf.view(-1), torch.arange(buf.numel()).reshape(buf.shape))

    def warp_specialize(functions_and_args, warps=None, regs=None):
        errors = []
        pid, grid = _program["id"], _program["grid"]

        def run(fn, args):
            try:
                fn(*args)
            except BaseException as e:  # re-raised in the launching thread
                errors.append(e)
        threads = [threading.Thread(target=run, args=fa, daemon=True) for fa in functions_and_args]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert _program["id"] == pid and _program["grid"] == grid
        if errors:
            raise errors[0]

    class Kernel:
        def __init__(self, fn):
            self.fn = fn
            self.name = fn.__name__

        def __getitem__(self, grid):
            grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))

            def launch(*args, **constexprs):
                wrapped = [Ptr(a.reshape(-1), 0) if isinstance(a, torch.Tensor) else a
                           for a in args]
                for a in args:
                    if isinstance(a, torch.Tensor):
                        assert a.is_contiguous(), "kernel arguments must be contiguous"
                _program["grid"] = grid
                for pid in itertools.product(*(range(g) for g in grid)):
                    _program["id"] = pid
                    self.fn(*wrapped, **constexprs)
            return launch

    def jit(fn=None, **_):
        return Kernel(fn) if fn is not None else (lambda f: Kernel(f))

    gpu = types.SimpleNamespace(alloc=alloc, local_ptr=local_ptr, warp_specialize=warp_specialize,
                                smem="smem")
    tle = types.SimpleNamespace(jit=jit, pipe=Pipe, gpu=gpu)
    return tl, tle


def load_kernel_module(path) -> types.SimpleNamespace:
    """Execute a TLE kernel file against the emulation; returns its namespace as an object."""
    path = Path(path)
    tl, tle = make_language()
    source = path.read_text()
    lines = ["" if ln.startswith(("import ", "from ")) else ln for ln in source.splitlines()]
    ns = {"tl": tl, "tle": tle, "__name__": f"emulated_{path.stem}"}
    exec(compile("\n".join(lines), str(path), "exec"), ns)
    return types.SimpleNamespace(**{k: v for k, v in ns.items() if not k.startswith("__")})


def emulated_launch(kernel, grid, args, **constexprs) -> None:
    """``launch`` hook for :func:`tle_compiler.testing.stamp_kernels.launch_stamp_module`."""
    kernel[grid](*args, **constexprs)

"""A CPU emulation of the TLE language, to check kernels' math, the data they hand through pipes,
and their test harnesses before spending device time. It checks the math, not the lowering.

A kernel file is executed as Python, as a module of its package, with ``triton.language`` and
``tle_compiler`` replaced by a small torch emulation (the modules it imports from its package run
against the same emulation):

- pointers are a flat tensor plus an int64 offset tensor (:class:`Ptr`); ``tl.load`` / ``tl.store``
  require every address to be in bounds, masked or not (a kernel must clamp invalid indices before
  it forms an address, as the SparseMLA kernels do);
- ``tl.*`` work on CPU torch tensors: bf16/fp16/fp32 and integer dtypes, ``tl.dot`` with fp32
  accumulation for 16-bit operands (operands of one dtype, optionally restricted to ``dot_dtypes``),
  ``trans``, ``exp2``, ``log2``, ``max``, ``min``, ``sum``, ``maximum``, ``minimum``, ``where``,
  ``full``, ``zeros``, ``arange``, ``cdiv``, ``range`` / ``static_range``, ``tensor.to(dtype)``;
- ``tl.program_id(axis)`` / ``tl.num_programs(axis)`` are int32 scalars of the running launch:
  ``kernel[grid](*args, **constexprs)`` runs every program of the grid in turn, one at a time;
- ``tle.gpu.alloc`` buffers are poisoned (NaN, or a large negative integer), so a stale read shows;
- ``tle.gpu.tma_load(dst, desc, offsets)`` copies the box of a host tensor descriptor (``base``,
  ``shape``, ``strides``, as ``triton.tools.tensor_descriptor.TensorDescriptor`` has them) into
  the slot field at once, zero-filling what lies outside the tensor (negative coordinates
  included); a descriptor of higher rank (one offset per dimension) brings its ``block_shape``,
  whose extra dimensions are 1, reshaped to the field;
- every ``warp_specialize`` partition runs in its own thread, and each pipe blocks exactly as
  docs/semantics.md says: ``acquire(i)`` waits until every reader released ``i - C`` (one-shot pipes
  never wait), ``wait(i)`` until ``i`` was committed or closed. A blocked call longer than
  ``TIMEOUT_S`` is reported as a deadlock. A reader's slot shows only its field view: reading a
  field outside it raises ``AttributeError``.

``load_kernel_module(path)`` returns a namespace whose ``@tle.jit`` kernels launch as
``kernel[grid](*args, **constexprs)`` on contiguous CPU torch tensors (a tensor argument becomes a
pointer to its first element). ``emulated_launch`` is the ``launch`` hook for
:func:`tle_compiler.testing.stamp_kernels.launch_stamp_module`.

torch is imported here, so import this module only where torch is available.
"""

from __future__ import annotations

import builtins
import itertools
import math
import os
import threading
import types
from pathlib import Path

import torch

from ..frontend.modules import find_absolute, in_folder, module_name_of
from ..frontend.source_text import read_python

TIMEOUT_S = 20.0
INT_POISON = -999_999_999  # clamped to the dtype's minimum for narrow integer buffers

__all__ = ["TIMEOUT_S", "Ptr", "emulated_launch", "load_kernel_module", "make_language"]


class Ptr:
    """A pointer (or block of pointers): ``buf`` flat, ``off`` an int64 tensor of offsets."""

    def __init__(self, buf: torch.Tensor, off):
        self.buf = buf
        self.off = torch.as_tensor(off, dtype=torch.int64)

    def __add__(self, other):
        return Ptr(self.buf, self.off + torch.as_tensor(other).to(torch.int64))

    __radd__ = __add__


def _where(c, a, b):
    c = torch.as_tensor(c)
    a, b = torch.as_tensor(a), torch.as_tensor(b)
    if not a.is_floating_point() and b.is_floating_point():
        a = a.to(b.dtype)
    if not b.is_floating_point() and a.is_floating_point():
        b = b.to(a.dtype)
    return torch.where(c, a, b)


def _in_bounds(off: torch.Tensor, buf: torch.Tensor) -> bool:
    return bool(((off >= 0) & (off < buf.numel())).all())


def _load(p: Ptr, mask=None, other=0):
    # Every address must be in bounds, masked or not: a masked lane still forms its address.
    assert _in_bounds(p.off, p.buf), "load out of bounds"
    v = p.buf[p.off].clone()
    return v if mask is None else torch.where(mask, v, torch.tensor(other, dtype=v.dtype))


def _store(p: Ptr, v, mask=None):
    v = torch.as_tensor(v)
    off, v = torch.broadcast_tensors(p.off, v)
    assert _in_bounds(off, p.buf), "store out of bounds"
    if mask is not None:
        mask = torch.broadcast_to(torch.as_tensor(mask), off.shape)
        off, v = off[mask], v[mask]
    p.buf[off.reshape(-1)] = v.reshape(-1).to(p.buf.dtype)


def _range(*args, **_):
    return range(*(int(a) for a in args))


def _poisoned(shape, dtype):
    if dtype.is_floating_point:
        return torch.full(list(shape), float("nan"), dtype=dtype)
    return torch.full(list(shape), max(INT_POISON, torch.iinfo(dtype).min), dtype=dtype)


def make_language(dot_dtypes=None):
    """A fresh ``(tl, tle)`` pair. ``dot_dtypes``: the operand dtypes ``tl.dot`` accepts (any, when
    None; the two operands must share one dtype either way)."""
    program = {"id": (0, 0, 0), "grid": (1, 1, 1)}  # the running program (one at a time)

    def program_id(axis):
        return torch.tensor(program["id"][axis], dtype=torch.int32)

    def num_programs(axis):
        return torch.tensor(program["grid"][axis], dtype=torch.int32)

    def dot(a, b, acc=None, **_):
        assert a.dtype == b.dtype, f"tl.dot operands differ: {a.dtype} and {b.dtype}"
        assert dot_dtypes is None or a.dtype in dot_dtypes, \
            f"tl.dot operands are {a.dtype}, expected one of {tuple(dot_dtypes)}"
        if a.dtype in (torch.bfloat16, torch.float16):
            r = a.float() @ b.float()  # wgmma: 16-bit operands, fp32 accumulation
        else:
            r = a @ b
        return r if acc is None else r + acc

    def _binary(op):
        """A torch binary op that takes Python numbers as Triton does (as a tensor of the other
        operand's dtype)."""
        def f(a, b):
            if not isinstance(a, torch.Tensor):
                a = torch.tensor(a, dtype=b.dtype if isinstance(b, torch.Tensor) else None)
            if not isinstance(b, torch.Tensor):
                b = torch.tensor(b, dtype=a.dtype)
            return op(a, b)
        return f

    tl = types.SimpleNamespace(
        constexpr=lambda x: x,
        bfloat16=torch.bfloat16, float16=torch.float16, float32=torch.float32,
        int8=torch.int8, int16=torch.int16, int32=torch.int32, int64=torch.int64,
        program_id=program_id, num_programs=num_programs,
        arange=lambda a, b: torch.arange(a, b, dtype=torch.int32),
        full=lambda shape, v, dt: torch.full(list(shape), v, dtype=dt),
        zeros=lambda shape, dt: torch.zeros(list(shape), dtype=dt),
        load=_load, store=_store, dot=dot, trans=lambda x: x.T, where=_where,
        maximum=_binary(torch.maximum), minimum=_binary(torch.minimum),
        max=lambda x, axis: x.max(axis).values, min=lambda x, axis: x.min(axis).values,
        sum=lambda x, axis: x.sum(axis), exp2=torch.exp2, log2=torch.log2,
        range=_range, static_range=_range, cdiv=lambda a, b: -(-a // b))

    class Slot:
        def __init__(self, pipe, i, view):
            self._view = view
            for f, buf in pipe.fields.items():
                if view is None or f in view:
                    setattr(self, f, buf[i % pipe.capacity])

        def __getattr__(self, name):  # only called for a missing attribute
            raise AttributeError(f"slot field {name!r} is outside this reader's view "
                                 f"{tuple(self._view or ())}")

    class Pipe:
        def __init__(self, capacity, one_shot=False, readers=(), scope="cta", name=None,
                     barrier="mbarrier", **fields):
            assert all(b.shape[0] == capacity for b in fields.values())
            self.capacity, self.one_shot, self.fields = capacity, one_shot, fields
            # a named-barrier pipe has no empty side: its acquire does not wait, and the release
            # it would wait for must have run already (the verifier proves it implied)
            self.named = barrier == "named"
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
                    if pipe.named and i >= pipe.capacity:
                        with pipe.cv:
                            assert all(i - pipe.capacity in r for r in pipe.released.values()), \
                                f"named-barrier pipe: acquire({i}) before the release of " \
                                f"{i - pipe.capacity}"
                    elif not pipe.one_shot and i >= pipe.capacity:
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
            assert fields is None or set(fields) <= set(pipe.fields), \
                f"view {tuple(fields)} names fields the pipe lacks"

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
        return _poisoned(shape, dtype)  # stale reads show

    def local_ptr(buf, indices=None):
        return Ptr(buf.view(-1), torch.arange(buf.numel()).reshape(buf.shape))

    def warp_specialize(functions_and_args, warps=None, regs=None):
        errors = []
        pid, grid = program["id"], program["grid"]

        def run(fn, args):
            # a scalar is a value in Triton: each partition gets its own copy, so an augmented
            # assignment (``left -= 1``, in place on a torch tensor) cannot reach another partition
            args = tuple(a.clone() if isinstance(a, torch.Tensor) and a.dim() == 0 else a
                         for a in args)
            try:
                fn(*args)
            except BaseException as e:  # noqa: BLE001 (re-raised in the launching thread)
                errors.append(e)
        threads = [threading.Thread(target=run, args=fa, daemon=True) for fa in functions_and_args]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert program["id"] == pid and program["grid"] == grid
        if errors:
            raise errors[0]

    class Kernel:
        def __init__(self, fn):
            self.fn = fn
            self.name = fn.__name__

        def __getitem__(self, grid):
            def launch(*args, **constexprs):
                g = grid(constexprs) if callable(grid) else grid
                g = tuple(int(n) for n in (g if isinstance(g, (tuple, list)) else (g,)))
                g = g + (1,) * (3 - len(g))
                for a in args:
                    if isinstance(a, torch.Tensor):
                        assert a.is_contiguous(), "kernel arguments must be contiguous"
                wrapped = [Ptr(a.reshape(-1), 0) if isinstance(a, torch.Tensor) else a
                           for a in args]
                program["grid"] = g
                try:
                    for pid in itertools.product(*(range(n) for n in g)):
                        program["id"] = pid
                        self.fn(*wrapped, **constexprs)
                finally:
                    program["id"], program["grid"] = (0, 0, 0), (1, 1, 1)
            return launch

    def jit(fn=None, **_):
        return Kernel(fn) if fn is not None else (lambda f: Kernel(f))

    def scale_rows(x, factor):
        return x * factor[:, None]

    def tma_load(dst, desc, offsets):
        """A TMA copy: the box of ``desc`` (a host tensor descriptor: ``base``, ``shape``,
        ``strides`` in elements) at ``offsets`` into ``dst`` (a slot field), elements outside the
        tensor zero-filled as TMA does. It lands at once here; the verifier makes sure nothing
        reads it before the readers' wait."""
        src = desc.base.as_strided(tuple(int(n) for n in desc.shape),
                                   tuple(int(n) for n in desc.strides))
        # the box: the field's shape, or the descriptor's block (extra unit dimensions) when the
        # copy gives an offset per dimension of a higher-rank descriptor
        box_shape = [int(n) for n in (desc.block_shape if len(offsets) != dst.dim()
                                      else dst.shape)]
        if len(offsets) != len(box_shape) or len(box_shape) != src.dim() or \
                math.prod(box_shape) != dst.numel():
            raise ValueError(f"tma_load: {len(offsets)} offsets, a box {box_shape} over a "
                             f"{src.dim()}-D tensor, and a field of shape {list(dst.shape)}")
        coords, valid = [], torch.ones(tuple(box_shape), dtype=torch.bool)
        for d, (off, n) in enumerate(zip(offsets, box_shape)):
            c = int(off) + torch.arange(n)  # negative and past-the-end coordinates zero-fill
            shape = [1] * len(box_shape)
            shape[d] = n
            ok = ((c >= 0) & (c < src.shape[d])).reshape(shape)
            valid = valid & ok
            coords.append(c.clamp(0, src.shape[d] - 1).reshape(shape))
        box = src[tuple(torch.broadcast_tensors(*coords))].to(dst.dtype)
        box = torch.where(valid, box, torch.zeros((), dtype=dst.dtype))
        dst.copy_(box.reshape(dst.shape))

    def prefetch_l2(ptr, nbytes, mask=None):
        """A hint about caches: nothing to emulate (its arguments were evaluated)."""

    def launch_dependents():
        """Scheduling of the next launch: nothing to emulate."""

    gpu = types.SimpleNamespace(alloc=alloc, local_ptr=local_ptr, warp_specialize=warp_specialize,
                                scale_rows=scale_rows, tma_load=tma_load, prefetch_l2=prefetch_l2,
                                launch_dependents=launch_dependents, smem="smem")
    def assume(cond):  # tle.assume: a launch checks it (lowering/runtime.py); so does emulation
        if not cond:
            raise ValueError("a tle.assume condition does not hold for this launch")

    tle = types.SimpleNamespace(jit=jit, pipe=Pipe, gpu=gpu, assume=assume)
    return tl, tle


class _EmulatedImports:
    """Runs user modules against one emulated language, as Python imports them: each module once
    (by file), under its dotted name, with ``__package__`` set so its relative imports resolve;
    ``triton.language`` (and Gluon's) is the emulated ``tl``, ``tle_compiler`` the emulated
    ``tle``; libraries (frontend/modules.py: the standard library, torch, ...) are imported for
    real. A package's ``__init__.py`` is not run (only the modules imported from it): a
    package is an empty module whose submodules are set as they are imported."""

    def __init__(self, tl, tle):
        self.tl, self.tle = tl, tle
        self.modules: dict[str, types.ModuleType] = {}  # dotted name -> module
        self.builtins = dict(vars(builtins), __import__=self.import_)
        gluon = types.SimpleNamespace(language=tl)
        self.triton = types.SimpleNamespace(language=tl, experimental=types.SimpleNamespace(
            gluon=gluon))

    def load(self, path) -> types.ModuleType:
        """The module of file ``path``, run (once) as a module of its package."""
        name, package = module_name_of(str(path))
        return self.module(name, str(Path(path).resolve()), package)

    def module(self, name: str, path: str, package: str) -> types.ModuleType:
        if name in self.modules:
            return self.modules[name]
        parent, _, leaf = name.rpartition(".")
        if parent:
            self.package(parent, os.path.dirname(path) if os.path.basename(path) != "__init__.py"
                         else os.path.dirname(os.path.dirname(path)))
        mod = types.ModuleType(name)
        mod.__file__, mod.__package__ = path, package
        mod.__dict__["__builtins__"] = self.builtins
        if os.path.basename(path) == "__init__.py":
            mod.__path__ = [os.path.dirname(path)]
        self.modules[name] = mod  # before it runs: a circular import sees it, as in Python
        if parent:
            setattr(self.modules[parent], leaf, mod)
        source = read_python(path)  # decoded as Python's import decodes it (BOM, coding)
        exec(compile(source, path, "exec"), mod.__dict__)  # noqa: S102 (test-only)
        return mod

    def package(self, name: str, folder: str) -> types.ModuleType:
        """Package ``name`` (folder ``folder``) as an empty module (its __init__.py not run)."""
        if name in self.modules:
            return self.modules[name]
        parent, _, leaf = name.rpartition(".")
        mod = types.ModuleType(name)
        mod.__path__, mod.__package__ = [folder], name
        mod.__file__ = os.path.join(folder, "__init__.py")
        self.modules[name] = mod
        if parent:
            setattr(self.package(parent, os.path.dirname(folder)), leaf, mod)
        return mod

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        """``__import__`` of the emulated modules."""
        if level:
            package = (globals or {}).get("__package__") or ""
            bits = package.rsplit(".", level - 1) if package else []
            if len(bits) < level:
                raise ImportError("attempted relative import with no known parent package")
            base = bits[0]
            name = f"{base}.{name}" if name else base
        top = name.split(".")[0]
        if top == "triton":
            mod = self.triton
            for part in name.split(".")[1:] if fromlist else ():
                mod = getattr(mod, part)
            return mod
        if top == "tle_compiler":
            return self.tle
        if name not in self.modules and self.file_of(name) is None:
            return builtins.__import__(name, globals, locals, fromlist, level)
        mod = self.dotted(name)
        for item in fromlist or ():
            sub = f"{name}.{item}"
            if item != "*" and not hasattr(mod, item) and self.file_of(sub) is not None:
                self.dotted(sub)
        if fromlist:
            return mod
        return self.modules[top]

    def file_of(self, name: str):
        """The file of user module ``name`` (a known emulated package's submodule, or found as
        Python finds it), None for a library."""
        parent, _, leaf = name.rpartition(".")
        if parent and parent in self.modules and hasattr(self.modules[parent], "__path__"):
            return in_folder(self.modules[parent].__path__[0], leaf)
        return find_absolute(name)

    def dotted(self, name: str) -> types.ModuleType:
        """Module ``name`` and its parent packages, run emulated."""
        if name in self.modules:
            return self.modules[name]
        path = self.file_of(name)
        if path is None:
            raise ImportError(f"No module named {name!r}")
        parent = name.rpartition(".")[0]
        if parent:
            self.dotted(parent)
        if os.path.basename(path) == "__init__.py":
            return self.package(name, os.path.dirname(path))
        return self.module(name, path, parent)


def load_kernel_module(path, dot_dtypes=None) -> types.SimpleNamespace:
    """Execute a TLE kernel file against a fresh emulation (see :func:`make_language` for
    ``dot_dtypes``) as a module of its package: its imports run as Python runs them, the modules
    of its package (or any user module) emulated the same way, ``triton.language`` and
    ``tle_compiler`` replaced by the emulation. Returns the module's namespace as an object."""
    tl, tle = make_language(dot_dtypes)
    mod = _EmulatedImports(tl, tle).load(path)
    return types.SimpleNamespace(**{k: v for k, v in vars(mod).items() if not k.startswith("__")})


def emulated_launch(kernel, grid, args, **constexprs) -> None:
    """``launch`` hook for :func:`tle_compiler.testing.stamp_kernels.launch_stamp_module`."""
    kernel[grid](*args, **constexprs)

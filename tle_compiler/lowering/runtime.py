"""Launching a lowered kernel: ``kernel[grid](*args, **constexprs)``.

The signature is derived from the arguments (a torch tensor → ``*<dtype>``, a host tensor
descriptor → ``tensordesc<dtype[block]>``, int → ``i32``/``i64``, float → ``fp32``, bool → ``i1``); the compiled kernel is cached per (signature, constexprs,
num_warps, debug-waits bound: ``kernel[grid](..., debug_waits=True)`` or ``TLE_DEBUG_WAITS=1``,
docs/lowering.md "Debug waits"; the integers divisible by 16; what lowering/instrument.py turns on).
Launch goes to the current CUDA stream through Triton's CompiledKernel launcher. Without a GPU,
compiling still works (``compile_kernel``) and launching raises a TleError that says so.
"""

from __future__ import annotations

import numbers
from types import SimpleNamespace

from typing import Any

from ..diagnostics import TleError
from ..ir.i32 import fits_i32

TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64",
                "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


def descriptor_type(name: str, value: Any, kernel: str, loc=None) -> str:
    """``tensordesc<bf16[64, 256]>`` for a host tensor descriptor (``triton.tools.
    tensor_descriptor.TensorDescriptor``: base tensor, shape, strides, block shape), with
    ``,LAYOUT`` for a Gluon descriptor that carries one (it must be the ring's: compile.py)."""
    dt = str(value.base.dtype).replace("torch.", "")
    if dt not in TORCH_DTYPES:
        raise TleError(f"{kernel}: argument '{name}' is a tensor descriptor of unsupported dtype "
                       f"{dt}", loc, check="bad-argument")
    block = ", ".join(str(int(d)) for d in value.block_shape)
    layout = getattr(value, "layout", None)
    return f"tensordesc<{TORCH_DTYPES[dt]}[{block}]" + (f",{layout!r}>" if layout is not None
                                                        else ">")


def arg_type(name: str, value: Any, kernel: str, loc=None) -> str:
    if all(hasattr(value, a) for a in ("base", "shape", "strides", "block_shape")):
        return descriptor_type(name, value, kernel, loc)
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        dt = str(value.dtype).replace("torch.", "")
        if dt not in TORCH_DTYPES:
            raise TleError(f"{kernel}: argument '{name}' is a tensor of unsupported dtype {dt}",
                           loc, check="bad-argument")
        return "*" + TORCH_DTYPES[dt]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if fits_i32(value) else "i64"
    if isinstance(value, float):
        return "fp32"
    raise TleError(f"{kernel}: argument '{name}' is a {type(value).__name__}; a @tle.jit kernel takes "
                   f"torch tensors, tensor descriptors (for tle.gpu.tma_load), ints, floats and "
                   f"bools (constexprs by keyword or position)", loc, check="bad-argument")


class Runtime:
    """Per-kernel cache of compiled variants."""

    def __init__(self, kernel):
        self.kernel = kernel
        self._info = None
        self._specialized = False  # the kernel reads only with its constexprs bound (compile.py)
        self.cache: dict = {}
        self._verified: dict = {}  # integer constexprs of a specialised read -> its KernelInfo

    @property
    def info(self):
        """The kernel's frontend info; for a kernel that is verified per specialisation
        (compile.kernel_info_of), a stand-in with its name, arguments and constexprs."""
        if self._info is None:
            from ..frontend import SPECIALIZABLE, kernel_signature

            try:
                self._info = self.kernel.kernel_info()
            except TleError as e:
                if e.check not in SPECIALIZABLE or not self.kernel.file:
                    raise
                args, cx = kernel_signature(self.kernel.file, self.kernel.name)
                if not cx:
                    raise
                self._specialized = True
                self._info = SimpleNamespace(name=self.kernel.name, args=args, constexprs=cx)
        return self._info

    def bind(self, args: tuple, kwargs: dict, loc=None) -> dict:
        names = self.info.args
        if len(args) > len(names):
            raise TleError(f"{self.info.name} takes {len(names)} arguments, got {len(args)}",
                           loc, check="bad-argument")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TleError(f"{self.info.name} has no argument '{k}' (arguments: "
                               f"{', '.join(names)})", loc, check="bad-argument")
            if k in bound:
                raise TleError(f"{self.info.name}: argument '{k}' given twice", loc,
                               check="bad-argument")
            bound[k] = v
        missing = [n for n in names if n not in bound]
        if missing:
            raise TleError(f"{self.info.name}: missing argument(s) {', '.join(missing)}",
                           loc, check="bad-argument")
        return bound

    def verified_info(self, bound: dict):
        """The KernelInfo the launch's protocol was verified as: the kernel's, or for a kernel
        verified per specialisation its reading with the launch's integer constexprs."""
        info = self.info
        if not self._specialized:
            return info
        cx = tuple(sorted((n, bound[n]) for n in info.constexprs
                          if isinstance(bound[n], int) and not isinstance(bound[n], bool)))
        if cx not in self._verified:
            self._verified[cx] = self.kernel.kernel_info(bind=dict(cx))
        return self._verified[cx]

    def assumptions(self, bound: dict) -> tuple:
        """The kernel's tle.assume comparisons (frontend.context.Assumption)."""
        return self.verified_info(bound).assumptions

    def check_integer_params(self, bound: dict) -> None:
        """Every kernel argument that is a param of the verified protocol (``param_args``: a
        loop bound, a pipe index, a condition around pipe events) is an integer: the verdict is
        over integers (docs/semantics.md), and a float there would be compiled as an fp32
        argument whose loop bounds and indices no proof covers. The arguments a derived param is
        computed from (``M = N // 2``: N) are checked too. A ValueError names the argument and its
        value."""
        info = self.verified_info(bound)
        checked = dict(getattr(info, "param_args", {}))
        # the arguments a derived param is computed from (M = N // 2: N) decide it as well
        program = getattr(info, "program", None)
        for base in getattr(program, "bases", ()):
            name = getattr(base, "name", base)
            if name in bound and name not in checked.values():
                checked[f"{name} (a derived param's base)"] = name
        for param, arg in sorted(checked.items()):
            if arg not in bound:
                continue
            value = bound[arg]
            # (other types, a str say, get arg_type's error when the signature is made)
            if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
                shown = f" (param {param} of its protocol)" if param != arg else ""
                raise ValueError(f"{self.info.name}: argument {arg}{shown} decides the kernel's "
                                 f"pipe protocol, which is verified for integers only, so it must "
                                 f"be an integer, got {type(value).__name__} {value!r}")

    def check_assumptions(self, bound: dict) -> None:
        """Every param a ``tle.assume`` bounds satisfies it: the protocol was verified only for
        those values, so a launch outside them could race or hang. The param is a kernel argument
        or is computed from arguments (``M = N // 64``: its ``steps``, evaluated here as the GPU
        computes them: C's ``//`` and ``%``, each step in two's complement i32, or i64 where an
        argument it uses is passed as i64, so ``(N * 3) // 64`` at N = 715827883 is the GPU's
        -33554431, not 33554432). A ValueError names the arguments, their values, the param's
        value and the assumption's line (and the steps that wrapped)."""
        from ..ir.derived import LaunchWidthError, derive_on_gpu

        # the arguments' own assumptions first: a derived param's may divide by one of them
        for a in sorted(self.assumptions(bound), key=lambda a: a.arg is None):
            names = a.arguments
            if not names or any(n not in bound for n in names):
                continue
            for n in names:
                value = bound[n]
                if isinstance(value, bool) or not isinstance(value, int):
                    what = "bounded" if a.arg is not None else f"used to compute {a.param}, " \
                                                                f"bounded"
                    raise ValueError(f"{self.info.name}: argument {n} is {what} by `{a.text}` "
                                     f"({a.loc}), so it must be an integer, got "
                                     f"{type(value).__name__} {value!r}")
            if a.arg is not None:
                value = bound[a.arg]
                if not a.holds(value):
                    raise ValueError(f"{self.info.name}: argument {a.arg} = {value} violates "
                                     f"`{a.text}` ({a.loc}): the kernel's protocol is verified "
                                     f"only for the values it allows")
                continue
            given = ("argument " if len(names) == 1 else "arguments ") + \
                ", ".join(f"{n} = {bound[n]}" for n in names)
            gives = "gives" if len(names) == 1 else "give"
            leaves = "leaves" if len(names) == 1 else "leave"
            # runtime arguments are typed by their value, as compile() types them; a
            # constexpr is a compile-time constant (the GPU sees it as i32 or i64 alike)
            wide = frozenset(n for n in names if arg_type(n, bound[n], self.info.name) == "i64")
            last = a.steps[-1]
            try:
                got = derive_on_gpu(a.steps, {n: bound[n] for n in names}, wide)
            except LaunchWidthError as e:
                raise ValueError(f"{self.info.name}: {given} cannot be checked against "
                                 f"`{a.text}` ({a.loc}): in {a.param} = {last.definition}, {e}; "
                                 f"pass the i32 arguments as values the GPU computes exactly")
            env, wrapped = got if got is not None else (None, [])
            if env is None:
                raise ValueError(f"{self.info.name}: {given} {leaves} {a.param} undefined "
                                 f"(`{last}` divides by zero), so `{a.text}` ({a.loc}) cannot "
                                 f"hold")
            value = env[last.name]
            if not a.holds(value):
                how = f"; the GPU's integers wrap: {', '.join(wrapped)}" if wrapped else ""
                raise ValueError(f"{self.info.name}: {given} {gives} {a.param} = {value} "
                                 f"({a.param} = {last.definition}{how}), which violates "
                                 f"`{a.text}` ({a.loc}): the kernel's protocol is verified only "
                                 f"for the values it allows")

    def compile(self, bound: dict, num_warps=None, debug_waits=None, loc=None):
        from . import instrument
        from .compile import compile_kernel, debug_waits_enabled

        info = self.info
        cx = {n: bound[n] for n in info.constexprs}
        sig = {n: arg_type(n, bound[n], info.name, loc) for n in info.args if n not in info.constexprs}
        dbg = debug_waits_enabled(debug_waits)  # a Bound (part of the key) or None; env: TLE_DEBUG_WAITS
        # Triton-style specialisation: integers that are multiples of 16 get tt.divisibility 16
        # (16-byte cp.async gathers need to know the rows are aligned)
        div = frozenset(n for n in sig if sig[n] in ("i32", "i64") and bound[n] % 16 == 0)
        # what lowering/instrument.py turns on for this kernel (a probe's compile is its own entry)
        key = (tuple(sorted(sig.items())), tuple(sorted(cx.items())), num_warps, dbg,
               tuple(sorted(div)), instrument.key(self.kernel.file))
        if key not in self.cache:
            # the kernel itself whenever constexprs are given: compile.kernel_info_of reads it
            # specialised to them where it must (a reading affine only with them as numbers) or
            # where that reading is the one verified (compile.verified_reading); the key holds
            # every constexpr, so another value is another compile
            target = self.kernel if self._specialized or cx else info
            self.cache[key] = compile_kernel(target, sig, cx, num_warps=num_warps,
                                             debug_waits=dbg or False,
                                             divisible_ints=set(div))
        return self.cache[key]

    def launch(self, grid, args: tuple, kwargs: dict, loc=None) -> None:
        """``loc``: the launching line (errors about the arguments point there)."""
        kwargs = dict(kwargs)
        num_warps = kwargs.pop("num_warps", None)
        debug_waits = kwargs.pop("debug_waits", None)
        bound = self.bind(args, kwargs, loc)
        self.check_assumptions(bound)  # (its message first for an argument an assumption bounds)
        self.check_integer_params(bound)
        compiled = self.compile(bound, num_warps, debug_waits, loc)
        try:
            import torch
            has_gpu = torch.cuda.is_available()
        except ImportError:  # pragma: no cover
            has_gpu = False
        if not has_gpu:
            raise TleError(f"cannot launch '{self.info.name}': no CUDA GPU on this machine (the "
                           f"kernel compiled for sm_90a; use tle_compiler.lowering.compile_kernel or "
                           f"`tle-dump --ttgir` to inspect it)", loc, check="no-gpu")
        g = grid(bound) if callable(grid) else grid
        g = tuple(g) + (1,) * (3 - len(tuple(g)))
        compiled[g](*[bound[n] for n in self.info.args])
